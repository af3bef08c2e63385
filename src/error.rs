//! Errors the binary reports, each one line, each with its exit code.

use ringpipe_mysql::MysqlError;
use ringpipe_ring::pipeline::{PipelineError, PipelineFailure};
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
    /// The server cannot be reached or refuses the set-up.
    #[error("{0}")]
    Database(#[from] MysqlError),
    /// The import ran and stopped with an error. The rows committed are
    /// those before the fault and, when the file was read in regions, some
    /// of the later regions' rows too; the checkpoint records both.
    #[error("{error} ({written} rows committed)", error = .0.error, written = .0.summary.rows_written)]
    Import(Box<PipelineFailure>),
    /// A dry run stopped with an error; nothing was written.
    #[error("{error} (dry run: nothing committed; {read} records read)", error = .0.error, read = .0.summary.rows_read)]
    DryRun(Box<PipelineFailure>),
    /// Writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Input(_) => 3,
            CliError::Database(_) => 4,
            CliError::Import(failure) | CliError::DryRun(failure) => match failure.error {
                PipelineError::Source(_) => 3,
                PipelineError::Sink(_)
                | PipelineError::SinkSetup { .. }
                | PipelineError::SinkClose(_) => 4,
                _ => 1,
            },
            CliError::Io(_) => 1,
        }
    }
}

impl CliError {
    /// The error of a dry run that stopped.
    pub fn dry_run(failure: PipelineFailure) -> Self {
        CliError::DryRun(Box::new(failure))
    }
}

impl From<PipelineFailure> for CliError {
    fn from(failure: PipelineFailure) -> Self {
        CliError::Import(Box::new(failure))
    }
}
