//! Errors the binary reports, each one line, each with its exit code.

use ringpipe_mysql::MysqlError;
use ringpipe_pipeline::{ImportError, ImportFailure, ResumeError, RunSummary};
use ringpipe_postgres::PgError;
use ringpipe_text::TextError;
use ringpipe_xml::XmlError;

/// Why `ringpipe` failed. Exit codes: 2 usage, 3 input, 4 database, 1 other.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The arguments are inconsistent.
    #[error("{0}")]
    Usage(String),
    /// The input cannot be read or is not valid XML.
    #[error("{0}")]
    Input(#[from] XmlError),
    /// A CSV or JSON Lines input cannot be read or does not fit.
    #[error("{0}")]
    Text(#[from] TextError),
    /// The server cannot be reached or refuses the set-up.
    #[error("{0}")]
    Database(#[from] MysqlError),
    /// A database error, in the user's terms (see `hint`).
    #[error("{0}")]
    Described(String),
    /// The PostgreSQL server cannot be reached or refuses the set-up.
    #[error("{0}")]
    Postgres(#[from] PgError),
    /// The import ran (or tried to) and stopped with an error. The rows
    /// committed are those before the fault and, when the file was read in
    /// regions, some of the later regions' rows too; the checkpoints record
    /// both.
    #[error("{0}")]
    Import(Box<ImportFailed>),
    /// Writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A failed import, in the user's terms.
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", self.done())]
pub struct ImportFailed {
    /// What went wrong.
    message: String,
    /// The exit code it deserves.
    exit: u8,
    /// What was done before it.
    summary: RunSummary,
    /// Whether nothing was meant to be written.
    dry_run: bool,
}

impl ImportFailed {
    /// What the run had done, for the end of the line.
    fn done(&self) -> String {
        match (self.dry_run, self.summary.rows_read) {
            (_, 0) => String::new(),
            (true, read) => format!(" (dry run: {read} records read before it)"),
            (false, _) => format!(" ({} rows committed)", self.summary.rows_written),
        }
    }
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Input(_) | CliError::Text(_) => 3,
            CliError::Database(_) | CliError::Described(_) | CliError::Postgres(_) => 4,
            CliError::Import(failed) => failed.exit,
            CliError::Io(_) => 1,
        }
    }

    /// A failed import; `describe` puts the sink's error in the user's terms.
    pub fn import<SE: std::fmt::Display, KE: std::fmt::Display>(
        failure: &ImportFailure<SE, KE>,
        dry_run: bool,
        describe: impl Fn(&KE) -> String,
    ) -> Self {
        let exit = match &failure.error {
            ImportError::Settings(_) | ImportError::Resume(_) => 2,
            ImportError::Source(_) => 3,
            ImportError::Target(_)
            | ImportError::SinkSetup { .. }
            | ImportError::Sink { .. }
            | ImportError::SinkClose { .. } => 4,
            _ => 1,
        };
        let message = match &failure.error {
            // Also met by a fresh part import whose neighbours disagree.
            ImportError::Resume(why @ ResumeError::Split(_)) => format!(
                "{why}; import it with the version of ringpipe that wrote those checkpoints, \
                 or start over (every part of it, without --resume)"
            ),
            ImportError::Resume(why) => format!("cannot resume: {why}; {}", resume_fix(why)),
            ImportError::Source(error) => error.to_string(),
            ImportError::Target(error)
            | ImportError::SinkSetup { error, .. }
            | ImportError::Sink { error, .. }
            | ImportError::SinkClose { error, .. } => describe(error),
            other => other.to_string(),
        };
        CliError::Import(Box::new(ImportFailed {
            message,
            exit,
            summary: failure.summary,
            dry_run,
        }))
    }
}

/// What to do about an import that cannot resume: the flags that make it
/// the interrupted one again when only its layout differs, else start over.
fn resume_fix(why: &ResumeError) -> String {
    let start_over = "rerun without --resume to start over";
    let ResumeError::Layout { was, now } = why else {
        return start_over.to_owned();
    };
    let mut flags = Vec::new();
    if was.regions != now.regions {
        flags.push(format!("--regions {}", was.regions));
    }
    if was.shard_block != now.shard_block {
        flags.push(format!("--shard-block {}", was.shard_block));
    }
    match flags.is_empty() {
        true => start_over.to_owned(),
        false => format!("resume it with {}, or {start_over}", flags.join(" ")),
    }
}
