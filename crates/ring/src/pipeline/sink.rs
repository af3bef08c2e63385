//! The consuming end of a pipeline.

use super::Row;

/// A per-shard writer that commits once per ring batch.
///
/// The pipeline makes one sink per shard (see `Pipeline::shards`); shard `i`
/// receives exactly the rows whose ring sequence `% shards == i`, in sequence
/// order. Each sink is driven from its own thread and never shared.
///
/// # Contract
///
/// For every ring batch that holds at least one of its rows, a sink sees:
///
/// 1. [`write`](Sink::write) for each row, in order. A sink may buffer,
///    encode or send rows here; nothing needs to be durable yet.
/// 2. [`flush`](Sink::flush) after the batch's last row. When `flush`
///    returns `Ok`, every row written since the previous successful flush is
///    durable (for a database: committed). This is the only point at which
///    rows count as done.
///
/// If `write` or `flush` fails with an error whose
/// [`SinkError::is_retryable`] is true, the pipeline calls
/// [`rollback`](Sink::rollback), which must discard everything since the last
/// successful flush, and then replays the same rows from the batch's start
/// (with backoff, under the pipeline's rewind strategy). A non-retryable
/// error stops the pipeline after `rollback`. [`close`](Sink::close) runs once
/// at the end of a successful run, after the last `flush`; it is not called
/// after a failure.
pub trait Sink: Send {
    /// The error a sink fails with.
    type Error: SinkError;

    /// Accepts one row of the current batch.
    ///
    /// # Errors
    ///
    /// Retryable (rewind the batch) or fatal, per [`SinkError::is_retryable`].
    fn write(&mut self, row: &Row) -> Result<(), Self::Error>;

    /// Makes every row written since the last flush durable.
    ///
    /// # Errors
    ///
    /// Retryable (rewind the batch) or fatal; on error nothing of the batch
    /// may be durable.
    fn flush(&mut self) -> Result<(), Self::Error>;

    /// Discards everything written since the last successful flush.
    ///
    /// # Errors
    ///
    /// When the rollback itself fails; the pipeline then treats the batch as
    /// failed for good.
    fn rollback(&mut self) -> Result<(), Self::Error>;

    /// How many of the rows made durable by the last successful
    /// [`flush`](Sink::flush) were set aside instead of stored (a database
    /// sink diverting bad records to a reject file). The pipeline counts the
    /// rest as written. The default is 0: every flushed row was stored.
    fn last_flush_diverted(&self) -> u64 {
        0
    }

    /// Finishes the shard after its last flush.
    ///
    /// # Errors
    ///
    /// When closing fails (for example a final check fails).
    fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// An error that says whether retrying the same batch can succeed.
pub trait SinkError: std::error::Error + Send + Sync + 'static {
    /// `true` when the same rows may succeed if replayed (deadlock, lost
    /// connection, lock wait timeout, ...); `false` when they never will
    /// (bad value, duplicate key, missing column, ...).
    fn is_retryable(&self) -> bool;
}
