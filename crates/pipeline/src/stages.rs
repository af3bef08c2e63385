//! The handler an import puts on its ring: the sink stage.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use ringpipe_ring::{EventHandler, HandlerError};

use crate::digest::RowsDigest;
use crate::{Checkpoint, ImportIdentity, Retryable, Row, Sink};

/// A ring slot of an import: a reused row, and whether it holds a record to
/// write (the producer publishes empty slots when the source ends
/// mid-claim, and skips records an earlier run committed).
#[derive(Debug)]
pub(crate) struct RowEvent {
    pub(crate) row: Row,
    pub(crate) filled: bool,
}

impl RowEvent {
    pub(crate) fn new(columns: usize) -> Self {
        RowEvent {
            row: Row::with_columns(columns),
            filled: false,
        }
    }
}

/// What the stages of one run report to the runner. Counters are relaxed:
/// the runner reads them after joining the threads (which synchronises) or
/// for progress display, where a recent value is enough.
#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) rows_written: AtomicU64,
    pub(crate) rows_diverted: AtomicU64,
    pub(crate) commits: AtomicU64,
    pub(crate) rewinds: AtomicU64,
    /// The number of the region's first record, set by the producer before
    /// it publishes that record (0 until then).
    pub(crate) region_start: AtomicU64,
    /// Set when the run will not succeed, so sinks skip `close`.
    pub(crate) failed: AtomicBool,
    /// The first `close` that failed: its shard and error.
    pub(crate) close_error: Mutex<Option<ShardError>>,
}

impl RunState {
    pub(crate) fn mark_failed(&self) {
        // Relaxed: a flag read after the threads are joined, or as a hint.
        self.failed.store(true, Ordering::Relaxed);
    }
}

/// A sink's error and the shard it came from, as it travels through the
/// ring's failure path; the import takes the typed error back out.
#[derive(Debug, thiserror::Error)]
#[error("shard {shard}: {error}")]
pub(crate) struct ShardError {
    pub(crate) shard: usize,
    pub(crate) error: ringpipe_ring::BoxError,
}

/// Drives one shard's [`Sink`]: begin a batch at its first owned row, write
/// each row, commit with the checkpoint at the end of the batch, roll back
/// on rewind.
pub(crate) struct SinkStage<K> {
    sink: K,
    /// This shard's number across the whole import.
    shard: usize,
    /// The import's identity, written with every checkpoint.
    identity: Option<Arc<ImportIdentity>>,
    /// Whether a batch is open (begun, not yet committed or rolled back).
    open: bool,
    /// Rows written since the last successful commit.
    pending: u64,
    /// The record number of the last row written.
    last_record: u64,
    /// The digest of the rows committed (`None`: not known).
    committed_crc: Option<u32>,
    /// That digest continued with the open batch's rows.
    batch_crc: Option<RowsDigest>,
    /// When the current batch first failed retryably.
    failing_since: Option<Instant>,
    /// How long a batch may keep failing retryably before it fails for good.
    retry_for: Duration,
    state: Arc<RunState>,
}

impl<K: Sink> SinkStage<K> {
    /// The stage of `shard`, whose earlier commits' rows digest to
    /// `committed_crc` (`Some(0)`: none; `None`: not known).
    pub(crate) fn new(
        sink: K,
        (shard, committed_crc): (usize, Option<u32>),
        identity: Option<Arc<ImportIdentity>>,
        retry_for: Duration,
        state: Arc<RunState>,
    ) -> Self {
        SinkStage {
            sink,
            shard,
            identity,
            open: false,
            pending: 0,
            last_record: 0,
            committed_crc,
            batch_crc: None,
            failing_since: None,
            retry_for,
            state,
        }
    }

    /// Turns a sink error into the processor's vocabulary: a rewind while
    /// the retry budget lasts, else fatal. A fatal error is rolled back
    /// here, because the processor only calls `on_rewind` for retryable ones.
    fn classify(&mut self, error: K::Error) -> HandlerError {
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        let shard = self.shard;
        let wrapped = |error: K::Error| ShardError {
            shard,
            error: Box::new(error),
        };
        if error.is_retryable() && since.elapsed() < self.retry_for {
            return HandlerError::rewind(wrapped(error));
        }
        self.abandon_batch();
        HandlerError::fatal(wrapped(error))
    }

    fn abandon_batch(&mut self) {
        self.pending = 0;
        self.open = false;
        if let Err(rollback) = self.sink.rollback() {
            log::warn!(
                "shard {}: rollback after a fatal error failed: {rollback}",
                self.shard
            );
        }
    }

    fn write(&mut self, row: &Row) -> Result<(), K::Error> {
        if !self.open {
            self.sink.begin()?;
            self.open = true;
            self.batch_crc = self.committed_crc.map(RowsDigest::after);
        }
        self.sink.write(row)?;
        if let Some(digest) = &mut self.batch_crc {
            digest.add(row);
        }
        self.pending += 1;
        self.last_record = row.position().record;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), K::Error> {
        let checkpoint = Checkpoint {
            import: self.identity.as_deref(),
            shard: self.shard,
            last_record: self.last_record,
            // Relaxed: stored before the first record was published, and
            // this shard has taken at least one record since.
            region_start: self.state.region_start.load(Ordering::Relaxed),
            rows_crc: self.batch_crc.as_ref().map(RowsDigest::value),
        };
        self.sink.commit(&checkpoint)?;
        self.committed_crc = checkpoint.rows_crc;
        let diverted = self.sink.last_commit_diverted().min(self.pending);
        // Relaxed: counters (see `RunState`).
        let state = &self.state;
        state
            .rows_written
            .fetch_add(self.pending - diverted, Ordering::Relaxed);
        state.rows_diverted.fetch_add(diverted, Ordering::Relaxed);
        state.commits.fetch_add(1, Ordering::Relaxed);
        self.pending = 0;
        self.open = false;
        self.failing_since = None;
        Ok(())
    }
}

impl<K: Sink> EventHandler<RowEvent> for SinkStage<K> {
    fn on_event(
        &mut self,
        event: &RowEvent,
        _: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError> {
        if event.filled {
            self.write(&event.row).map_err(|e| self.classify(e))?;
        }
        if end_of_batch && self.open {
            self.commit().map_err(|e| self.classify(e))?;
        }
        Ok(())
    }

    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        log::debug!(
            "shard {}: rolling back a batch to replay it (attempt {attempt})",
            self.shard
        );
        self.pending = 0;
        self.open = false;
        // Relaxed: a counter (see `RunState`).
        self.state.rewinds.fetch_add(1, Ordering::Relaxed);
        let shard = self.shard;
        self.sink.rollback().map_err(|error| {
            HandlerError::fatal(ShardError {
                shard,
                error: Box::new(error),
            })
        })
    }

    fn on_shutdown(&mut self) {
        // Relaxed: a hint. A sink that misses a failure and closes anyway
        // only finds that nothing is left to close.
        if self.state.failed.load(Ordering::Relaxed) {
            return;
        }
        if let Err(error) = self.sink.close() {
            self.state.mark_failed();
            let error = ShardError {
                shard: self.shard,
                error: Box::new(error),
            };
            self.state.close_error.lock().get_or_insert(error);
        }
    }
}
