//! The sink's error type and which server errors are worth a retry.
//!
//! Neither the `postgres` crate nor the server says which errors a replay
//! can cure; that judgement lives in [`PgError::is_retryable`], by SQLSTATE.

use postgres::error::SqlState;
use ringpipe_pipeline::{RecordPosition, Retryable};

/// What the sink was doing when opening a connection failed (the context
/// [`PgError::connect_failure`] recognises).
pub(crate) const CONNECTING: &str = "connecting to PostgreSQL";

/// Everything that can go wrong between the sink and the server.
///
/// `Display` never contains a password: the URL is never shown, and the
/// server's messages do not carry credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// The configuration is unusable (bad URL, bad identifier, no key, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The server (or the connection to it) failed while doing `context`.
    #[error("{context}: {}", describe(source))]
    Server {
        /// What the sink was doing.
        context: String,
        /// The driver's error.
        source: postgres::Error,
    },
    /// Sending to the server failed (`lost`: the connection is gone).
    #[error("{context}: {source}")]
    Io {
        /// What the sink was doing.
        context: &'static str,
        /// The error.
        source: std::io::Error,
        /// Whether the connection is closed since.
        lost: bool,
    },
    /// The server did not answer within the net timeout; the connection
    /// was dropped (retryable, as a lost connection).
    #[error("{context}: no answer from the server within {} s; the connection was dropped", .after.as_secs_f64())]
    TimedOut {
        /// What the sink was doing.
        context: String,
        /// The limit that passed.
        after: std::time::Duration,
    },
    /// A value cannot be sent as its column's type (record `record`).
    #[error("record {record}, column {column:?}: {why}")]
    BadValue {
        /// The record's number in the input (1-based).
        record: u64,
        /// The column's name.
        column: String,
        /// What is wrong.
        why: String,
    },
    /// A record the server refused, with no bad records allowed.
    #[error("record {} (line {}, column {}): {}", .position.record, .position.line, .position.column, .source.reason())]
    BadRecord {
        /// Where the record came from.
        position: RecordPosition,
        /// Why it was refused.
        source: Box<PgError>,
    },
    /// More than `max_bad` records were refused, over all shards and every
    /// run of the import.
    #[error("more than {max_bad} bad records{}; record {} (line {}, column {}) failed: {reason}", ringpipe_pipeline::RejectBudget::note_earlier(*.earlier), .position.record, .position.line, .position.column)]
    TooManyBadRecords {
        /// The configured budget.
        max_bad: u64,
        /// Those of them the runs a resumed import continues set aside.
        earlier: u64,
        /// The record that exceeded it.
        position: RecordPosition,
        /// Why it was refused.
        reason: String,
    },
    /// The reject file could not be opened or written.
    #[error("reject file: {0}")]
    RejectFile(std::io::Error),
    /// The connection was lost during the `COMMIT` of a batch, and without
    /// checkpoints nothing can tell whether it was stored.
    #[error(
        "the connection was lost during the COMMIT of the batch through record {last}, \
         and without checkpoints (the input is a pipe) it cannot be known whether it was \
         stored; check the table, and import from a file to be able to resume"
    )]
    CommitUnknown {
        /// The batch's last record.
        last: u64,
    },
    /// A shard's checkpoint already covered a batch it had not committed:
    /// another import of the same input and part is writing the table.
    #[error(
        "shard {shard}'s checkpoint already covers record {last}, which this import has not \
         committed: is another import of the same input running?"
    )]
    CheckpointAhead {
        /// The shard.
        shard: usize,
        /// The batch's last record.
        last: u64,
    },
}

impl PgError {
    /// Wraps a driver error with what the sink was doing.
    pub(crate) fn server(source: postgres::Error, context: impl Into<String>) -> Self {
        PgError::Server {
            context: context.into(),
            source,
        }
    }

    /// Why opening a connection failed, when that is this error and the
    /// server never answered (refused, unreachable, timed out): the
    /// driver's description. `None` for every other error, the server's
    /// refusals (a wrong password, no such database) included.
    pub fn connect_failure(&self) -> Option<String> {
        match self {
            PgError::Server { context, source }
                if context == CONNECTING && source.as_db_error().is_none() =>
            {
                Some(describe(source))
            }
            PgError::TimedOut { context, after } if context == CONNECTING => {
                Some(format!("no answer within {} s", after.as_secs_f64()))
            }
            _ => None,
        }
    }

    /// What one record's refusal says: the message without what the sink
    /// was doing (a COPY of so many rows), as a bad record is reported.
    pub fn reason(&self) -> String {
        match self {
            PgError::Server { source, .. } => describe(source),
            // The record's number goes with its position.
            PgError::BadValue { column, why, .. } => format!("column {column:?}: {why}"),
            other => other.to_string(),
        }
    }

    /// Whether a call ran out of time (the connection was dropped).
    pub fn is_timeout(&self) -> bool {
        matches!(self, PgError::TimedOut { .. })
    }

    /// Whether the server rolled the transaction back for a conflict with
    /// another: a deadlock (40P01) or a serialization failure (40001).
    pub fn is_conflict(&self) -> bool {
        matches!(self.sqlstate(), Some("40001" | "40P01"))
    }

    /// The SQLSTATE of a server error, if it is one.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PgError::Server { source, .. } => source.code().map(SqlState::code),
            PgError::BadRecord { source, .. } => source.sqlstate(),
            _ => None,
        }
    }

    /// Whether one record can cause this error, so that the batch is
    /// searched for it: a value the encoder refused, a data exception
    /// (class 22: bad syntax, out of range, too long), an integrity
    /// violation (class 23: duplicate key, NOT NULL, CHECK, foreign key)
    /// or a row over a size limit (54000).
    pub fn is_row_error(&self) -> bool {
        if matches!(self, PgError::BadValue { .. }) {
            return true;
        }
        if self.lost_connection() {
            return false;
        }
        self.sqlstate()
            .is_some_and(|code| code.starts_with("22") || code.starts_with("23") || code == "54000")
    }

    /// Whether the server refused to write because the session is
    /// read-only (25006): a standby, such as a primary after a failover,
    /// or a role whose sessions start read-only
    /// (`default_transaction_read_only`). The session will not write again;
    /// a new one may reach the new primary (a URL with several hosts and
    /// `target_session_attrs=read-write` picks it).
    pub fn read_only(&self) -> bool {
        self.sqlstate() == Some("25006")
    }

    /// Whether the connection is gone (closed, or the error is not the
    /// server's but the socket's).
    pub(crate) fn lost_connection(&self) -> bool {
        match self {
            PgError::Server { source, .. } => {
                source.is_closed() || (source.as_db_error().is_none() && !is_misuse(source))
            }
            PgError::Io { source, lost, .. } => *lost || source.is_retryable(),
            PgError::TimedOut { .. } => true,
            _ => false,
        }
    }
}

/// Whether the driver refused a call before sending it (a parameter or
/// column of another type, a wrong count): the connection is as it was,
/// and the same call fails again. The driver keeps its error kinds
/// private; its messages name them.
fn is_misuse(error: &postgres::Error) -> bool {
    const MISUSES: [&str; 6] = [
        "error serializing parameter",
        "error deserializing column",
        "invalid column",
        "query returned an unexpected number of",
        "expected ",
        "error encoding message to server",
    ];
    let text = error.to_string();
    MISUSES.iter().any(|misuse| text.starts_with(misuse))
}

/// Whether a SQLSTATE names a failure that a replay may not meet again.
pub fn retryable_sqlstate(code: &str) -> bool {
    matches!(
        code,
        // serialization_failure, deadlock_detected
        "40001" | "40P01"
        // admin_shutdown, crash_shutdown, cannot_connect_now,
        // idle_session_timeout (the server closed a session left idle)
        | "57P01" | "57P02" | "57P03" | "57P05"
        // lock_not_available (`lock_timeout` expired), as MySQL's lock
        // wait timeout is retried
        | "55P03"
        // too_many_connections
        | "53300"
        // read_only_sql_transaction: a standby, as a failed-over primary
        // becomes; the sink connects again (see `PgError::read_only`)
        | "25006"
    ) || code.starts_with("08") // connection exceptions
}

impl Retryable for PgError {
    /// Serialization failures, deadlocks, shutdowns, connection errors and
    /// a closed connection are retryable; data and schema errors are not.
    fn is_retryable(&self) -> bool {
        match self.sqlstate() {
            Some(code) => retryable_sqlstate(code),
            None => self.lost_connection(),
        }
    }
}

/// The server's message with its SQLSTATE, detail and hint, or the
/// driver's own message.
fn describe(error: &postgres::Error) -> String {
    let Some(db) = error.as_db_error() else {
        // The driver's own message names only the kind ("error connecting
        // to server"); what happened is in its causes.
        let mut text = error.to_string();
        let mut cause = std::error::Error::source(error);
        while let Some(inner) = cause {
            text.push_str(&format!(": {inner}"));
            cause = inner.source();
        }
        return text;
    };
    let mut text = format!("{} {}: {}", db.severity(), db.code().code(), db.message());
    if let Some(detail) = db.detail() {
        text.push_str(&format!(" (detail: {detail})"));
    }
    if let Some(hint) = db.hint() {
        text.push_str(&format!(" (hint: {hint})"));
    }
    match db
        .where_()
        .map(|context| (context, context.strip_prefix("COPY ")))
    {
        // The line a COPY's context names counts the COPY's own rows, not
        // the input's: only the column it names, if any, is kept.
        Some((_, Some(copy))) => {
            if let Some(at) = copy.find(", column ") {
                text.push_str(&format!(" ({})", &copy[at + 2..]));
            }
        }
        Some((context, None)) => text.push_str(&format!(" (where: {context})")),
        None => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_are_classified() {
        for code in [
            "40001", "40P01", "57P01", "57P05", "55P03", "08006", "08000", "53300", "25006",
        ] {
            assert!(retryable_sqlstate(code), "{code}");
        }
        for code in ["23505", "22P02", "42P01", "22001", "23502"] {
            assert!(!retryable_sqlstate(code), "{code}");
        }
        let bad = PgError::BadValue {
            record: 1,
            column: "c".into(),
            why: "x".into(),
        };
        assert!(bad.is_row_error() && !bad.is_retryable());
        assert!(!PgError::CommitUnknown { last: 3 }.is_row_error());
    }

    #[test]
    fn a_failed_connection_says_why() {
        // Nothing listens on port 1; the refusal is the driver's cause.
        let refused = postgres::Config::new()
            .host("127.0.0.1")
            .port(1)
            .user("nobody")
            .connect(postgres::NoTls)
            .err()
            .expect("nothing listens on port 1");
        let error = PgError::server(refused, CONNECTING);
        let message = error.to_string();
        assert!(
            message.starts_with("connecting to PostgreSQL: error connecting to server: "),
            "{message}"
        );
        assert!(message.len() > "connecting to PostgreSQL: error connecting to server: ".len());
        let why = error.connect_failure().unwrap();
        assert!(message.ends_with(&why) && why.starts_with("error connecting to server: "));
        assert_eq!(PgError::Config("x".into()).connect_failure(), None);
    }

    #[test]
    fn configuration_errors_are_fatal() {
        assert!(!PgError::Config("x".into()).is_retryable());
    }
}
