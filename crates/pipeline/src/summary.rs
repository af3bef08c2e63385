//! What a pipeline run reports: its summary, its progress, its failure.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ringpipe_ring::{BoxError, BuildError, Failure, RingError};

use crate::stages::{RunState, ShardError};
use crate::{ResumeError, SourceProgress};

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Records the source produced.
    pub rows_read: u64,
    /// Records not sent to the sinks because an earlier run committed them.
    pub rows_skipped: u64,
    /// Rows the sinks committed (each exactly once, whatever was replayed).
    pub rows_written: u64,
    /// Rows the sinks set aside instead of storing
    /// ([`Sink::last_commit_diverted`](crate::Sink::last_commit_diverted)).
    pub rows_diverted: u64,
    /// Successful sink commits (transactions committed).
    pub commits: u64,
    /// Batches rolled back and replayed.
    pub rewinds: u64,
    /// Number of sink shards.
    pub shards: usize,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The import (its part) had already finished: a resume found its
    /// completion marker and read nothing.
    pub already_complete: bool,
}

/// A progress reading, passed to the callback of
/// [`Import::run_with_progress`](crate::Import::run_with_progress).
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

/// Why one region's run failed, its errors still boxed; the import turns
/// it into the caller's typed [`ImportError`](crate::ImportError).
#[derive(Debug)]
pub(crate) enum RunError {
    /// A sink could not be created (nothing was read).
    SinkSetup { shard: usize, error: BoxError },
    /// The source stopped with an error; rows before it were committed.
    Source(BoxError),
    /// A sink failed for good; rows of earlier batches stay committed.
    Sink(Box<Failure>),
    /// A sink's final `close` failed.
    SinkClose(ShardError),
    /// The source's records fall into other regions than the checkpoints
    /// record, or differ from what was committed; nothing from that point
    /// on was written.
    Resume(Box<ResumeError>),
    /// The ring itself failed (a thread panicked outside a handler).
    Ring(RingError),
    /// The ring could not be started.
    Build(BuildError),
    /// Stopped early because another region of the same run failed; what
    /// was read before the stop was committed.
    Stopped,
}

/// A failed run: the error, and what the run did before it.
#[derive(Debug)]
pub(crate) struct RunFailure {
    pub(crate) error: RunError,
    pub(crate) summary: RunSummary,
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
            already_complete: self.already_complete && other.already_complete,
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
        already_complete: false,
    }
}
