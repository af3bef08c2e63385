//! The sink's error type and the classification of server error codes.
//!
//! Neither the `mysql` crate nor the server says which errors are worth a
//! retry; that judgement lives here, in [`MysqlError::is_retryable`] and the
//! crate-private [`MysqlError::is_row_error`] (an error that one record can
//! cause, so that bisecting the batch can find that record).

use std::path::PathBuf;

use mysql_common::proto::codec::error::PacketCodecError;
use ringpipe_pipeline::{RecordPosition, Retryable};

/// Server error codes this crate classifies, one constant each.
pub mod codes {
    /// `ER_UNKNOWN_COM_ERROR`. A Galera node outside the primary component
    /// (joining, leaving, partitioned) refuses every statement with it and
    /// the message "WSREP has not yet prepared node for application use":
    /// that one is retryable on a new connection (see
    /// [`MysqlError::is_node_not_ready`](crate::MysqlError::is_node_not_ready)).
    pub const UNKNOWN_COM_ERROR: u16 = 1047;
    /// `ER_ERROR_DURING_COMMIT`. A Galera node that dropped out of the
    /// primary component while a transaction committed fails the `COMMIT`
    /// with it and a message naming the provider status "Not connected to
    /// Primary Component": that one is retryable on a new connection (see
    /// [`MysqlError::is_node_not_ready`](crate::MysqlError::is_node_not_ready)).
    pub const ERROR_DURING_COMMIT: u16 = 1180;
    /// `ER_TOO_MANY_CONNECTIONS`: the server is full; retry later.
    pub const TOO_MANY_CONNECTIONS: u16 = 1040;
    /// `ER_ACCESS_DENIED_ERROR`: the server refused the login.
    pub const ACCESS_DENIED: u16 = 1045;
    /// `ER_SERVER_SHUTDOWN`: the server is shutting down; retry after failover.
    pub const SERVER_SHUTDOWN: u16 = 1053;
    /// `ER_LOCK_WAIT_TIMEOUT`: another transaction held a lock too long; retry.
    pub const LOCK_WAIT_TIMEOUT: u16 = 1205;
    /// `ER_LOCK_DEADLOCK`: InnoDB chose this transaction as a deadlock victim; retry.
    pub const LOCK_DEADLOCK: u16 = 1213;
    /// `ER_SP_DOES_NOT_EXIST`, for a savepoint: the transaction that set it
    /// has ended.
    pub const SAVEPOINT_DOES_NOT_EXIST: u16 = 1305;
    /// `ER_OPTION_PREVENTS_STATEMENT` (e.g. `--read-only` during failover); retry.
    pub const OPTION_PREVENTS_STATEMENT: u16 = 1290;
    /// `ER_READ_ONLY_MODE`: the server is read-only (failover in progress); retry.
    pub const READ_ONLY_MODE: u16 = 1836;
    /// MariaDB `ER_CONNECTION_KILLED`: our connection was killed; retry on a new one.
    pub const CONNECTION_KILLED: u16 = 1927;
    /// `CR_SERVER_GONE_ERROR` (client code): connection lost; retry.
    pub const SERVER_GONE: u16 = 2006;
    /// `CR_SERVER_LOST` (client code): connection lost during a query; retry.
    pub const SERVER_LOST: u16 = 2013;

    /// `ER_BAD_NULL_ERROR`: NULL into a NOT NULL column.
    pub const BAD_NULL: u16 = 1048;
    /// `ER_BAD_FIELD_ERROR`: unknown column.
    pub const BAD_FIELD: u16 = 1054;
    /// `ER_DUP_ENTRY`: duplicate key.
    pub const DUP_ENTRY: u16 = 1062;
    /// `ER_NOT_ALLOWED_COMMAND`: `LOAD DATA LOCAL` is disabled.
    pub const NOT_ALLOWED_COMMAND: u16 = 1148;
    /// `ER_NO_SUCH_TABLE`: the table does not exist.
    pub const NO_SUCH_TABLE: u16 = 1146;
    /// `ER_NO_REFERENCED_ROW` (old form): foreign key has no parent.
    pub const NO_REFERENCED_ROW: u16 = 1216;
    /// `WARN_NULL_TO_NOTNULL`: LOAD DATA turned NULL into a default.
    pub const NULL_TO_NOTNULL: u16 = 1263;
    /// `ER_WARN_DATA_OUT_OF_RANGE`: numeric value out of range.
    pub const DATA_OUT_OF_RANGE: u16 = 1264;
    /// `WARN_DATA_TRUNCATED`: value truncated.
    pub const DATA_TRUNCATED: u16 = 1265;
    /// `ER_WARN_DEPRECATED_SYNTAX`: MySQL >= 8.0.20 flags `VALUES(col)` in
    /// upserts; harmless, so never treated as a data error.
    pub const WARN_DEPRECATED_SYNTAX: u16 = 1287;
    /// `ER_TRUNCATED_WRONG_VALUE`: incorrect date/time/number value.
    pub const TRUNCATED_WRONG_VALUE: u16 = 1292;
    /// `ER_WARN_INVALID_TIMESTAMP`: a `TIMESTAMP` naming a local time the
    /// session's time zone skips (a DST gap), as `LOAD DATA` reports it
    /// (an INSERT fails with 1292 instead).
    pub const WARN_INVALID_TIMESTAMP: u16 = 1299;
    /// `ER_NO_DEFAULT_FOR_FIELD`: a NOT NULL column without default was left out.
    pub const NO_DEFAULT_FOR_FIELD: u16 = 1364;
    /// `ER_TRUNCATED_WRONG_VALUE_FOR_FIELD`: incorrect value for a column (bad text).
    pub const TRUNCATED_WRONG_VALUE_FOR_FIELD: u16 = 1366;
    /// `ER_DATA_TOO_LONG`: string longer than the column.
    pub const DATA_TOO_LONG: u16 = 1406;
    /// `ER_NO_REFERENCED_ROW_2`: foreign key has no parent.
    pub const NO_REFERENCED_ROW_2: u16 = 1452;
    /// `ER_DUP_ENTRY_WITH_KEY_NAME`: duplicate key (variant).
    pub const DUP_ENTRY_WITH_KEY_NAME: u16 = 1586;
    /// MySQL `ER_CHECK_CONSTRAINT_VIOLATED`.
    pub const CHECK_CONSTRAINT_VIOLATED: u16 = 3819;
    /// MariaDB `ER_CONSTRAINT_FAILED`: a CHECK constraint failed.
    pub const CONSTRAINT_FAILED: u16 = 4025;
}

/// Everything that can go wrong between the sink and the server.
///
/// `Display` never contains a password: URLs are shown redacted and driver
/// messages do not carry credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MysqlError {
    /// The configuration is unusable (bad URL, wrong column count, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An identifier (table or column name) cannot be used.
    #[error("invalid identifier {name:?}: {reason}")]
    Identifier {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The password file could not be read.
    #[error("cannot read password file {path}: {source}")]
    PasswordFile {
        /// The file that was named in the configuration.
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// The server answered with an error.
    #[error("server error {code} ({state}) during {context}: {message}")]
    Server {
        /// The server's error number (see [`codes`]).
        code: u16,
        /// The SQLSTATE.
        state: String,
        /// The server's message.
        message: String,
        /// What the sink was doing.
        context: &'static str,
    },
    /// The connection failed or broke (I/O, protocol, TLS): always retryable.
    #[error("connection failure during {context}: {message}")]
    Connection {
        /// The driver's description.
        message: String,
        /// What the sink was doing.
        context: &'static str,
    },
    /// The server stopped answering: a read or write waited longer than the
    /// network timeout (`--net-timeout`). Retryable: the connection is
    /// dropped, so the server rolls back, and the batch is replayed on a new
    /// one.
    #[error(
        "connection timed out during {context}: the server did not answer within the \
         network timeout ({message})"
    )]
    TimedOut {
        /// The I/O error's description.
        message: String,
        /// What the sink was doing.
        context: &'static str,
    },
    /// The server sent something this client must not accept: a length,
    /// count or sequence number out of bounds or out of order, or a packet
    /// it cannot read. Not retryable (a server that breaks the protocol
    /// once will do so again); the connection is closed.
    #[error("protocol error during {context}: {what}")]
    Protocol {
        /// What was wrong, with the offending value and the limit.
        what: String,
        /// What the sink was doing.
        context: &'static str,
    },
    /// The server asked for an authentication method this client cannot
    /// answer.
    #[error(
        "authentication plugin {plugin} is not supported; use mysql_native_password \
         (or ed25519, parsec, caching_sha2_password) for this user"
    )]
    UnsupportedAuth {
        /// The plugin the server named.
        plugin: String,
    },
    /// The driver failed without a connection problem (bad URL value, ...).
    #[error("driver error during {context}: {message}")]
    Driver {
        /// The driver's description.
        message: String,
        /// What the sink was doing.
        context: &'static str,
    },
    /// The table or a mapped column is missing.
    #[error("schema check failed: {0}")]
    Schema(String),
    /// The server accepted a statement but reported a warning that would
    /// have changed data silently (e.g. LOAD DATA turning a bad value to 0).
    #[error("server warning {code} ({level}) treated as an error: {message}")]
    Warning {
        /// `Warning` or `Error`.
        level: String,
        /// The warning's code (see [`codes`]).
        code: u16,
        /// The server's message.
        message: String,
    },
    /// A load reported fewer rows than were sent.
    #[error("the server stored {affected} of {expected} rows: rows were skipped")]
    RowsSkipped {
        /// Rows sent.
        expected: u64,
        /// Rows the server reported.
        affected: u64,
    },
    /// One record is too large for a single statement (`max_allowed_packet`).
    #[error("record {} (line {}, column {}) needs {bytes} bytes in one statement; the limit is {limit} (max_allowed_packet)", .position.record, .position.line, .position.column)]
    RowTooLarge {
        /// Where the record came from.
        position: RecordPosition,
        /// Bytes the record needs.
        bytes: usize,
        /// The statement size limit.
        limit: usize,
    },
    /// A value the server would store altered (rounded, cut) without an
    /// error: refused before it is sent.
    #[error("column `{column}`: {why}")]
    BadValue {
        /// The column's name.
        column: String,
        /// What the server would do to the value.
        why: String,
    },
    /// A record failed and no bad-record budget was left: the import halts.
    #[error("record {} (line {}, column {}) failed: {source}", .position.record, .position.line, .position.column)]
    BadRecord {
        /// Where the record came from.
        position: RecordPosition,
        /// Why the server refused it.
        source: Box<MysqlError>,
    },
    /// More than `max_bad` records failed across all shards and every run
    /// of the import.
    #[error("more than {max_bad} bad records{}; record {} (line {}, column {}) failed: {source}", ringpipe_pipeline::RejectBudget::note_earlier(*.earlier), .position.record, .position.line, .position.column)]
    TooManyBadRecords {
        /// The configured budget.
        max_bad: u64,
        /// Those of them the runs a resumed import continues set aside.
        earlier: u64,
        /// The record that exceeded it.
        position: RecordPosition,
        /// Why the server refused it.
        source: Box<MysqlError>,
    },
    /// The reject file could not be written.
    #[error("cannot write reject file: {0}")]
    RejectFile(std::io::Error),
    /// The batch's transaction ended before its `COMMIT` without an error
    /// reaching the sink: the savepoint that opened it was gone. What ran
    /// after the loss is rolled back and the batch replayed (retryable, and
    /// counted as a conflict: it was rolled back by the server).
    #[error(
        "the server rolled back the transaction of the batch ending at record {last} without \
         reporting it (its savepoint was gone before COMMIT)"
    )]
    TransactionLost {
        /// The last record of the batch.
        last: u64,
    },
    /// The connection was lost during `COMMIT` and the import keeps no
    /// checkpoints (its input is a pipe), so whether the batch committed
    /// cannot be known: sending it again could store its rows twice.
    #[error(
        "the connection was lost during the COMMIT of records {first}..={last}, and without \
         checkpoints (the input is a pipe) it cannot be known whether they were stored; \
         check the table, and import from a file to be able to resume"
    )]
    CommitUnknown {
        /// The first record of the batch.
        first: u64,
        /// The last record of the batch.
        last: u64,
    },
}

/// The driver's own description: the `mysql` crate's `Display` of a
/// driver or I/O error is its `Debug` (`DriverError { … }`).
fn driver_message(error: &mysql::Error) -> String {
    match error {
        mysql::Error::DriverError(e) => e.to_string(),
        mysql::Error::IoError(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// Codes for which replaying the same rows can succeed.
const RETRYABLE: &[u16] = &[
    codes::TOO_MANY_CONNECTIONS,
    codes::SERVER_SHUTDOWN,
    codes::LOCK_WAIT_TIMEOUT,
    codes::LOCK_DEADLOCK,
    codes::OPTION_PREVENTS_STATEMENT,
    codes::READ_ONLY_MODE,
    codes::CONNECTION_KILLED,
    codes::SERVER_GONE,
    codes::SERVER_LOST,
];

/// Codes one record can cause: bisecting the batch will find the record.
const ROW_ERRORS: &[u16] = &[
    codes::BAD_NULL,
    codes::DUP_ENTRY,
    codes::NO_REFERENCED_ROW,
    codes::NULL_TO_NOTNULL,
    codes::DATA_OUT_OF_RANGE,
    codes::DATA_TRUNCATED,
    codes::TRUNCATED_WRONG_VALUE,
    codes::WARN_INVALID_TIMESTAMP,
    codes::NO_DEFAULT_FOR_FIELD,
    codes::TRUNCATED_WRONG_VALUE_FOR_FIELD,
    codes::DATA_TOO_LONG,
    codes::NO_REFERENCED_ROW_2,
    codes::DUP_ENTRY_WITH_KEY_NAME,
    codes::CHECK_CONSTRAINT_VIOLATED,
    codes::CONSTRAINT_FAILED,
];

impl MysqlError {
    /// Wraps a driver error, recording what the sink was doing.
    pub(crate) fn driver(error: mysql::Error, context: &'static str) -> Self {
        match error {
            mysql::Error::MySqlError(e) => MysqlError::Server {
                code: e.code,
                state: e.state,
                message: e.message,
                context,
            },
            mysql::Error::UrlError(e) => MysqlError::Config(e.to_string()),
            mysql::Error::DriverError(mysql::DriverError::UnknownAuthPlugin(plugin)) => {
                MysqlError::UnsupportedAuth { plugin }
            }
            mysql::Error::IoError(e) | mysql::Error::CodecError(PacketCodecError::Io(e))
                if is_timeout(&e) =>
            {
                MysqlError::TimedOut {
                    message: e.to_string(),
                    context,
                }
            }
            e if e.is_connectivity_error() => MysqlError::Connection {
                message: driver_message(&e),
                context,
            },
            e => MysqlError::Driver {
                message: driver_message(&e),
                context,
            },
        }
    }

    /// The server error code, when the error came from the server.
    pub fn code(&self) -> Option<u16> {
        match self {
            MysqlError::Server { code, .. } | MysqlError::Warning { code, .. } => Some(*code),
            MysqlError::BadRecord { source, .. } | MysqlError::TooManyBadRecords { source, .. } => {
                source.code()
            }
            _ => None,
        }
    }

    /// Wraps an I/O error of a connection: [`MysqlError::TimedOut`] when a
    /// read or write timeout expired, [`MysqlError::Connection`] otherwise.
    pub(crate) fn io(error: &std::io::Error, context: &'static str) -> Self {
        let message = error.to_string();
        if is_timeout(error) {
            MysqlError::TimedOut { message, context }
        } else {
            MysqlError::Connection { message, context }
        }
    }

    /// Whether a read or write timed out (see [`MysqlError::TimedOut`]).
    pub fn is_timeout(&self) -> bool {
        matches!(self, MysqlError::TimedOut { .. })
    }

    /// Whether the server rolled the transaction back as a deadlock victim
    /// or, on Galera, for a certification conflict with a transaction
    /// committed on another node (both are `ER_LOCK_DEADLOCK`), or without
    /// saying so ([`MysqlError::TransactionLost`]).
    pub fn is_conflict(&self) -> bool {
        match self {
            MysqlError::Server { code, .. } => *code == codes::LOCK_DEADLOCK,
            MysqlError::TransactionLost { .. } => true,
            _ => false,
        }
    }

    /// Whether a Galera node refused the statement because it is not in
    /// the primary component (it is joining, leaving or cut off): error
    /// 1047 with a message starting "WSREP", or a `COMMIT` failed with 1180
    /// because the node left it meanwhile (the provider status "Not
    /// connected to Primary Component"; the transaction did not replicate).
    /// The session is of no use until the node rejoins, and a leaving node
    /// closes it anyway; as after a lost connection, the replay first asks
    /// the checkpoint whether the batch committed.
    pub fn is_node_not_ready(&self) -> bool {
        matches!(self, MysqlError::Server { code, message, .. }
            if (*code == codes::UNKNOWN_COM_ERROR && message.starts_with("WSREP"))
                || (*code == codes::ERROR_DURING_COMMIT
                    && message.contains("Not connected to Primary Component")))
    }

    /// Whether the server refused to write because it is read-only
    /// (`--read-only`, as a primary demoted by a failover is): the session
    /// may stay bound to that server, so the retry opens a new one, which
    /// a proxy or a moved address may take to the new primary.
    /// `ER_OPTION_PREVENTS_STATEMENT` counts only when its message names
    /// a read-only option: the code also stands for others, such as
    /// `--secure-file-priv`.
    pub fn is_read_only(&self) -> bool {
        matches!(self, MysqlError::Server { code, message, .. }
            if *code == codes::READ_ONLY_MODE
                || (*code == codes::OPTION_PREVENTS_STATEMENT && message.contains("read-only")))
    }

    /// Whether the connection is gone (so the server rolled back for us),
    /// or as good as gone: a Galera node out of the primary component
    /// ([`is_node_not_ready`](Self::is_node_not_ready)), whose session is
    /// dropped so that the transaction ends with it and the retry opens a
    /// new one.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            MysqlError::Connection { .. } | MysqlError::TimedOut { .. } => true,
            MysqlError::Server { .. } if self.is_node_not_ready() => true,
            MysqlError::Server { code, .. } => matches!(
                *code,
                codes::SERVER_GONE | codes::SERVER_LOST | codes::CONNECTION_KILLED
            ),
            _ => false,
        }
    }

    /// Whether the error is caused by one record's values, so that the
    /// sink may search the batch for it.
    pub(crate) fn is_row_error(&self) -> bool {
        match self {
            MysqlError::Server { code, .. } | MysqlError::Warning { code, .. } => {
                ROW_ERRORS.contains(code)
            }
            MysqlError::RowsSkipped { .. } => true,
            _ => false,
        }
    }
}

impl Retryable for MysqlError {
    fn is_retryable(&self) -> bool {
        match self {
            MysqlError::Connection { .. }
            | MysqlError::TimedOut { .. }
            | MysqlError::TransactionLost { .. } => true,
            MysqlError::Server { code, .. } => RETRYABLE.contains(code) || self.is_node_not_ready(),
            _ => false,
        }
    }
}

/// Whether `error` is an expired socket timeout (`SO_RCVTIMEO` and
/// `SO_SNDTIMEO` report `WouldBlock` on Unix, `TimedOut` elsewhere).
fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> MysqlError {
        server_saying(code, "m")
    }

    fn server_saying(code: u16, message: &str) -> MysqlError {
        MysqlError::Server {
            code,
            state: "HY000".into(),
            message: message.into(),
            context: "test",
        }
    }

    #[test]
    fn transient_server_errors_are_retryable() {
        for code in [1213, 1205, 1053, 1040, 1290, 1836, 2006, 2013] {
            assert!(server(code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn a_read_only_server_is_retried_on_a_new_session() {
        let option = |name: &str| {
            format!(
                "The MariaDB server is running with the --{name} option so it cannot execute \
                 this statement"
            )
        };
        for error in [
            server_saying(1290, &option("read-only")),
            server_saying(1290, &option("super-read-only")),
            server(1836),
        ] {
            assert!(error.is_read_only(), "{error}");
            assert!(!error.is_connection_lost(), "{error}");
        }
        assert!(!server(1213).is_read_only());
        assert!(!server_saying(1290, &option("secure-file-priv")).is_read_only());
    }

    #[test]
    fn a_galera_node_out_of_the_cluster_is_a_lost_connection_and_a_deadlock_a_conflict() {
        let error_1047 = |message: &str| MysqlError::Server {
            code: 1047,
            state: "08S01".into(),
            message: message.into(),
            context: "test",
        };
        let not_ready = error_1047("WSREP has not yet prepared node for application use");
        assert!(not_ready.is_retryable() && not_ready.is_connection_lost());
        assert!(!not_ready.is_conflict());
        let unknown_command = error_1047("Unknown command");
        assert!(!unknown_command.is_retryable() && !unknown_command.is_connection_lost());
        // The message MariaDB 10.11 gives a COMMIT on a node that left
        // the primary component.
        let left = server_saying(
            1180,
            "Error while appending streaming replication fragment(provider status: Not \
             connected to Primary Component)",
        );
        assert!(left.is_node_not_ready() && left.is_retryable() && left.is_connection_lost());
        let disk = server_saying(
            1180,
            "Got error 28 \"No space left on device\" during COMMIT",
        );
        assert!(!disk.is_retryable() && !disk.is_connection_lost());
        assert!(server(1213).is_conflict() && !server(1205).is_conflict());
        let lost = MysqlError::TransactionLost { last: 7 };
        assert!(lost.is_conflict() && lost.is_retryable() && !lost.is_connection_lost());
        assert!(!lost.is_row_error());
    }

    #[test]
    fn data_errors_are_fatal_and_row_attributable() {
        for code in [1406, 1366, 1292, 1299, 1265, 1264, 1048, 1062] {
            let e = server(code);
            assert!(!e.is_retryable(), "{code}");
            assert!(e.is_row_error(), "{code}");
        }
    }

    #[test]
    fn schema_errors_are_fatal_and_not_blamed_on_a_row() {
        for code in [1054, 1146, 1064] {
            let e = server(code);
            assert!(!e.is_retryable() && !e.is_row_error(), "{code}");
        }
    }

    #[test]
    fn io_errors_are_retryable_connection_losses() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone");
        let e = MysqlError::driver(mysql::Error::IoError(io), "flush");
        assert!(e.is_retryable() && e.is_connection_lost());
    }

    #[test]
    fn timeouts_are_retryable_losses_and_protocol_errors_are_fatal() {
        let stalled = std::io::Error::from(std::io::ErrorKind::WouldBlock);
        let e = MysqlError::driver(mysql::Error::IoError(stalled), "commit");
        assert!(e.is_timeout() && e.is_retryable() && e.is_connection_lost());
        let stalled = PacketCodecError::Io(std::io::ErrorKind::TimedOut.into());
        let e = MysqlError::driver(mysql::Error::CodecError(stalled), "commit");
        assert!(e.is_timeout() && e.is_retryable());
        let e = MysqlError::Protocol {
            what: "a column count of 70000 (the limit is 4096)".into(),
            context: "connect",
        };
        assert!(!e.is_retryable() && !e.is_connection_lost());
        assert!(e.to_string().contains("70000"));
    }

    #[test]
    fn bad_record_names_the_record_and_keeps_the_code() {
        let e = MysqlError::BadRecord {
            position: RecordPosition {
                record: 17,
                line: 40,
                column: 3,
                byte_offset: 0,
            },
            source: Box::new(server(1062)),
        };
        assert!(e.to_string().starts_with("record 17 (line 40, column 3)"));
        assert_eq!(e.code(), Some(1062));
        assert!(!e.is_retryable());
    }
}
