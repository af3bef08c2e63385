//! How an import fails: typed errors of the caller's source and sink.

use ringpipe_ring::{BoxError, HandlerError, RingError};

use crate::stages::ShardError;
use crate::summary::RunError;
use crate::{Layout, RunSummary};

/// Why an import failed, with the source's error type `SE` and the sink's
/// `KE` as the caller defined them.
///
/// Whatever the error, every batch committed before it stays committed
/// exactly once; a resumable import continues from there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError<SE, KE> {
    /// The settings contradict each other or the input (nothing was read).
    #[error("{0}")]
    Settings(String),
    /// The import cannot resume (nothing was read).
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The destination failed to prepare, or to read or clear checkpoints.
    #[error("{0}")]
    Target(KE),
    /// A shard's sink could not be opened (nothing was read).
    #[error("cannot open the sink of shard {shard}: {error}")]
    SinkSetup {
        /// The shard.
        shard: usize,
        /// The sink's error.
        error: KE,
    },
    /// The source stopped with an error.
    #[error("{0}")]
    Source(SE),
    /// A sink failed for good (a fatal error, or a retryable one past the
    /// retry budget).
    #[error("{error}")]
    Sink {
        /// The shard whose sink failed.
        shard: usize,
        /// The sink's error.
        error: KE,
    },
    /// A sink's final `close` failed.
    #[error("closing the sink of shard {shard} failed: {error}")]
    SinkClose {
        /// The shard.
        shard: usize,
        /// The sink's error.
        error: KE,
    },
    /// A source or sink panicked; the message is the panic's.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The ring failed outside the source and the sinks.
    #[error("internal error: {0}")]
    Ring(String),
}

impl<SE, KE> ImportError<SE, KE> {
    /// The sink's error, if a sink failed.
    pub fn sink_error(&self) -> Option<&KE> {
        match self {
            ImportError::Target(error)
            | ImportError::SinkSetup { error, .. }
            | ImportError::Sink { error, .. }
            | ImportError::SinkClose { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Why an import cannot resume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The interrupted import differs from this one.
    #[error("the interrupted import had {what} {was}, this one has {now}")]
    Differs {
        /// What differs: part count, input, shard count or mapping.
        what: &'static str,
        /// The interrupted import's.
        was: String,
        /// This import's.
        now: String,
    },
    /// The interrupted import was the same but for its [`Layout`]: it
    /// dealt the records to the shards another way.
    #[error(
        "the interrupted import read the input in {} region(s) with shard blocks of {} records, \
         this one in {} with blocks of {}",
        was.regions, was.shard_block, now.regions, now.shard_block
    )]
    Layout {
        /// The interrupted import's.
        was: Layout,
        /// This import's.
        now: Layout,
    },
    /// This import splits the input into regions elsewhere than the
    /// interrupted one did, or than the input's other parts did, so its
    /// regions would take records that other checkpoints cover, or skip
    /// records nobody committed (see
    /// [`Checkpoint::region_start`](crate::Checkpoint::region_start)).
    /// Nothing from the first such record on was written.
    #[error("the input is split into regions elsewhere than its checkpoints record: {0}")]
    Split(String),
    /// The records a shard committed read differently now: the input
    /// changed since the interrupted import (an edit that kept its size
    /// and its first and last MiB, which the fingerprint reads). The
    /// import stops at that shard's last committed record; rows of other
    /// shards read before it may have been written, so the import must
    /// start over.
    #[error(
        "the records shard {shard} committed up to record {record} are not the same in \
         the input now: it changed since the interrupted import"
    )]
    InputChanged {
        /// The shard, numbered across the import.
        shard: usize,
        /// The last record it committed.
        record: u64,
    },
    /// The input cannot be recognised again (a pipe or stdin).
    #[error("resuming needs an input that can be read again, not a pipe")]
    NoCheckpoints,
}

/// A failed import: the error, and what was done before it.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ImportFailure<SE, KE> {
    /// Why the import failed.
    pub error: ImportError<SE, KE>,
    /// What was done before the failure (committed rows stay committed).
    pub summary: RunSummary,
}

impl<SE, KE> ImportError<SE, KE>
where
    SE: std::error::Error + 'static,
    KE: std::error::Error + 'static,
{
    /// The typed error of a failed run.
    pub(crate) fn from_run(error: RunError) -> Self {
        match error {
            RunError::SinkSetup { shard, error } => match error.downcast::<KE>() {
                Ok(error) => ImportError::SinkSetup {
                    shard,
                    error: *error,
                },
                Err(other) => ImportError::Ring(other.to_string()),
            },
            RunError::Source(error) => match error.downcast::<SE>() {
                Ok(error) => ImportError::Source(*error),
                Err(other) => ImportError::Ring(other.to_string()),
            },
            RunError::Sink(failure) => Self::from_handler(failure.error),
            RunError::SinkClose(ShardError { shard, error }) => match error.downcast::<KE>() {
                Ok(error) => ImportError::SinkClose {
                    shard,
                    error: *error,
                },
                Err(other) => ImportError::Ring(other.to_string()),
            },
            RunError::Ring(RingError::Failed(failure)) => Self::from_handler(failure.error),
            RunError::Ring(other) => ImportError::Ring(other.to_string()),
            RunError::Build(error) => ImportError::Ring(error.to_string()),
            RunError::Resume(error) => ImportError::Resume(*error),
            RunError::Stopped => ImportError::Ring("stopped with no region failing".into()),
        }
    }

    /// The typed error inside a handler's failure.
    fn from_handler(error: HandlerError) -> Self {
        let boxed: BoxError = match error {
            HandlerError::Rewind(error) | HandlerError::Fatal(error) => error,
            HandlerError::Panicked(message) => return ImportError::Panicked(message),
            other => return ImportError::Ring(other.to_string()),
        };
        match boxed.downcast::<ShardError>() {
            Ok(shard_error) => match shard_error.error.downcast::<KE>() {
                Ok(error) => ImportError::Sink {
                    shard: shard_error.shard,
                    error: *error,
                },
                Err(other) => ImportError::Ring(other.to_string()),
            },
            Err(other) => ImportError::Ring(other.to_string()),
        }
    }
}
