//! The handlers a pipeline puts on its ring: the sink stage and the
//! clearing stage.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Row, Sink, SinkError};
use crate::{EventHandler, EventHandlerMut, HandlerError};

/// A ring slot of an import: a reused row, and whether it holds a record
/// (the producer publishes one empty slot when the source ends mid-claim).
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
    /// Set when the run will not succeed, so sinks skip `close`.
    pub(crate) failed: AtomicBool,
    pub(crate) close_error: Mutex<Option<String>>,
}

impl RunState {
    pub(crate) fn mark_failed(&self) {
        self.failed.store(true, Ordering::Relaxed);
    }
}

/// Drives one shard's [`Sink`]: write each owned row, flush (commit) at the
/// end of each batch, roll back on rewind.
pub(crate) struct SinkStage<K> {
    sink: K,
    /// Rows written since the last successful flush.
    pending: u64,
    state: Arc<RunState>,
}

impl<K: Sink> SinkStage<K> {
    pub(crate) fn new(sink: K, state: Arc<RunState>) -> Self {
        SinkStage {
            sink,
            pending: 0,
            state,
        }
    }

    /// Turns a sink error into the processor's vocabulary. A fatal error is
    /// rolled back here, because the processor only calls `on_rewind` for
    /// retryable ones.
    fn classify(&mut self, error: K::Error) -> HandlerError {
        if error.is_retryable() {
            return HandlerError::rewind(error);
        }
        self.pending = 0;
        if let Err(rollback) = self.sink.rollback() {
            log::warn!("rollback after a fatal sink error failed: {rollback}");
        }
        HandlerError::fatal(error)
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
            self.sink.write(&event.row).map_err(|e| self.classify(e))?;
            self.pending += 1;
        }
        if end_of_batch && self.pending > 0 {
            self.sink.flush().map_err(|e| self.classify(e))?;
            let diverted = self.sink.last_flush_diverted().min(self.pending);
            let stored = self.pending - diverted;
            self.state.rows_written.fetch_add(stored, Ordering::Relaxed);
            self.state
                .rows_diverted
                .fetch_add(diverted, Ordering::Relaxed);
            self.state.commits.fetch_add(1, Ordering::Relaxed);
            self.pending = 0;
        }
        Ok(())
    }

    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        log::debug!("rewinding a sink batch (attempt {attempt})");
        self.pending = 0;
        self.state.rewinds.fetch_add(1, Ordering::Relaxed);
        self.sink.rollback().map_err(HandlerError::fatal)
    }

    fn on_shutdown(&mut self) {
        if self.state.failed.load(Ordering::Relaxed) {
            return;
        }
        if let Err(error) = self.sink.close() {
            self.state.mark_failed();
            self.state
                .close_error
                .lock()
                .get_or_insert(error.to_string());
        }
    }
}

/// The final stage: marks each slot empty and frees oversized column
/// buffers, so one huge record does not stay resident for the whole run.
pub(crate) struct ClearStage {
    pub(crate) keep_bytes: usize,
}

impl EventHandlerMut<RowEvent> for ClearStage {
    fn on_event(&mut self, event: &mut RowEvent, _: i64, _: bool) -> Result<(), HandlerError> {
        event.filled = false;
        event.row.shrink_to(self.keep_bytes);
        Ok(())
    }
}
