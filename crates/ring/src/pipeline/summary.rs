//! What a pipeline run reports: its summary, its progress, its failure.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::stages::RunState;
use super::SourceProgress;
use crate::{BoxError, BuildError, Failure, RingError};

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Records the source produced.
    pub rows_read: u64,
    /// Records not sent to the sinks because an earlier run committed them
    /// ([`Pipeline::resume_after`](super::Pipeline::resume_after)).
    pub rows_skipped: u64,
    /// Rows the sinks committed (each exactly once, whatever was replayed).
    pub rows_written: u64,
    /// Rows the sinks set aside instead of storing
    /// ([`Sink::last_flush_diverted`](super::Sink::last_flush_diverted)).
    pub rows_diverted: u64,
    /// Successful sink flushes (transactions committed).
    pub commits: u64,
    /// Batches rolled back and replayed.
    pub rewinds: u64,
    /// Number of sink shards.
    pub shards: usize,
    /// Wall time of the run.
    pub elapsed: Duration,
}

/// A progress reading, passed to the callback of
/// [`Pipeline::run_with_progress`](super::Pipeline::run_with_progress) on the source's thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Records read so far.
    pub rows_read: u64,
    /// Rows committed so far.
    pub rows_written: u64,
    /// The source's own reading (bytes read, total size).
    pub source: SourceProgress,
    /// Time since the run started.
    pub elapsed: Duration,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A sink could not be created (nothing was read).
    #[error("cannot open sink for shard {shard}: {error}")]
    SinkSetup {
        /// The shard whose sink failed.
        shard: usize,
        /// Why.
        error: BoxError,
    },
    /// The source stopped with an error; rows before it were committed.
    #[error("{0}")]
    Source(BoxError),
    /// A sink failed for good; rows of earlier batches stay committed.
    #[error("{0}")]
    Sink(Box<Failure>),
    /// A sink's final `close` failed.
    #[error("closing a sink failed: {0}")]
    SinkClose(String),
    /// The ring itself failed (a thread panicked outside a handler).
    #[error(transparent)]
    Ring(RingError),
    /// The ring could not be started.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Stopped early because another region of the same run failed; what
    /// was read before the stop was committed.
    #[error("stopped: another region of the input failed")]
    Stopped,
}

/// A failed run: the error, and what the run did before it.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct PipelineFailure {
    /// Why the run failed.
    pub error: PipelineError,
    /// What was done before the failure (committed rows stay committed).
    pub summary: RunSummary,
}

impl RunSummary {
    /// The summary of several runs done at once: counts added up, the
    /// longest wall time.
    pub fn merge(self, other: RunSummary) -> RunSummary {
        RunSummary {
            rows_read: self.rows_read + other.rows_read,
            rows_skipped: self.rows_skipped + other.rows_skipped,
            rows_written: self.rows_written + other.rows_written,
            rows_diverted: self.rows_diverted + other.rows_diverted,
            commits: self.commits + other.commits,
            rewinds: self.rewinds + other.rewinds,
            shards: self.shards + other.shards,
            elapsed: self.elapsed.max(other.elapsed),
        }
    }
}

impl Progress {
    /// The progress of several runs done at once.
    pub fn merge(self, other: &Progress) -> Progress {
        // A source that knows no total adds none (a later region of a
        // file, whose first region reports the file's whole size).
        let total = match (self.source.bytes_total, other.source.bytes_total) {
            (Some(a), Some(b)) => Some(a + b),
            (known, None) | (None, known) => known,
        };
        Progress {
            rows_read: self.rows_read + other.rows_read,
            rows_written: self.rows_written + other.rows_written,
            source: SourceProgress {
                bytes_read: self.source.bytes_read + other.source.bytes_read,
                bytes_total: total,
                records: self.source.records + other.source.records,
            },
            elapsed: self.elapsed.max(other.elapsed),
        }
    }
}

/// The summary of a run from its shared counters.
pub(crate) fn summary(
    state: &RunState,
    shards: usize,
    (rows_read, rows_skipped): (u64, u64),
    started: Instant,
) -> RunSummary {
    RunSummary {
        rows_read,
        rows_skipped,
        rows_written: state.rows_written.load(Ordering::Relaxed),
        rows_diverted: state.rows_diverted.load(Ordering::Relaxed),
        commits: state.commits.load(Ordering::Relaxed),
        rewinds: state.rewinds.load(Ordering::Relaxed),
        shards,
        elapsed: started.elapsed(),
    }
}
