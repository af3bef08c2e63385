//! The consuming end of a pipeline: the [`Sink`] trait, the checkpoint it
//! commits with, and how its errors say whether a retry can succeed.

use std::convert::Infallible;
use std::io;

use crate::{ImportIdentity, Row};

/// A per-shard writer that commits its rows once per batch.
///
/// A sink is three calls: [`begin`](Sink::begin) a batch, [`write`](Sink::write)
/// its rows, [`commit`](Sink::commit) them together with a [`Checkpoint`].
/// The import makes one sink per shard, drives each from its own thread and
/// never shares it; everything else (which rows a shard gets, retries,
/// resumption) is the import's business.
///
/// # Contract
///
/// For every batch that holds at least one of its rows, a sink sees
/// `begin`, then `write` for each row in record order, then `commit`. When
/// `commit` returns `Ok`, every row written since `begin` is durable, and so
/// is the checkpoint: both or neither. A resumable import relies on that to
/// skip exactly the committed records after a crash
/// ([`Target::checkpoints`](crate::Target::checkpoints)).
///
/// When `begin`, `write` or `commit` fails with an error whose
/// [`Retryable::is_retryable`] is true, the import calls
/// [`rollback`](Sink::rollback) and replays the same rows from `begin`
/// (with backoff, for as long as the import's retry budget lasts). Any other
/// error ends the import after `rollback`; the typed error comes back to the
/// caller. [`close`](Sink::close) runs once after the last commit of a
/// successful import.
///
/// # Examples
///
/// A sink that appends rows to a `Vec` and keeps its checkpoint beside them:
///
/// ```
/// use ringpipe_pipeline::{Checkpoint, Row, Sink};
///
/// #[derive(Default)]
/// struct Memory {
///     pending: Vec<String>,
///     committed: Vec<String>,
///     last_record: u64,
/// }
///
/// impl Sink for Memory {
///     type Error = std::convert::Infallible;
///     fn write(&mut self, row: &Row) -> Result<(), Self::Error> {
///         self.pending.push(row.text(0).unwrap_or("NULL").to_owned());
///         Ok(())
///     }
///     fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), Self::Error> {
///         self.committed.append(&mut self.pending);
///         self.last_record = checkpoint.last_record;
///         Ok(())
///     }
///     fn rollback(&mut self) -> Result<(), Self::Error> {
///         self.pending.clear();
///         Ok(())
///     }
/// }
/// ```
pub trait Sink: Send {
    /// The sink's own error; [`Retryable`] says whether a replay may succeed.
    type Error: Retryable + std::error::Error + Send + Sync + 'static;

    /// Opens a batch (a database sink starts a transaction). The default
    /// does nothing.
    ///
    /// # Errors
    ///
    /// Retryable (replay the batch) or fatal, per [`Retryable`].
    fn begin(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Accepts one row of the open batch. Nothing needs to be durable yet.
    ///
    /// # Errors
    ///
    /// Retryable (replay the batch) or fatal, per [`Retryable`].
    fn write(&mut self, row: &Row) -> Result<(), Self::Error>;

    /// Makes every row written since [`begin`](Sink::begin) durable, and
    /// `checkpoint` with them.
    ///
    /// # Errors
    ///
    /// Retryable (replay the batch) or fatal; on error nothing of the batch
    /// may be durable.
    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), Self::Error>;

    /// Discards everything written since the last successful commit, before
    /// a replay or after a fatal error. The default does nothing, for sinks
    /// whose `begin` discards what an earlier batch left uncommitted.
    ///
    /// # Errors
    ///
    /// When the rollback itself fails; the batch then fails for good.
    fn rollback(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// How many of the rows of the last successful commit were set aside
    /// instead of stored (a database sink diverting bad records to a reject
    /// file). The import counts the rest as written. The default is 0.
    fn last_commit_diverted(&self) -> u64 {
        0
    }

    /// Finishes the shard after its last commit of a successful import.
    ///
    /// # Errors
    ///
    /// When closing fails (for example a final check fails).
    fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What a batch's commit records: how far this shard of this import got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint<'a> {
    /// The import, or `None` when it keeps no checkpoints (its input cannot
    /// be read again, such as a pipe): the sink then stores none.
    pub import: Option<&'a ImportIdentity>,
    /// The shard committing, numbered across the whole import.
    pub shard: usize,
    /// The number (1-based, in the whole input) of the last record of the
    /// batch: every record this shard owns up to it is committed.
    pub last_record: u64,
    /// The number of the first record of the shard's region (1 for the
    /// first region of the input). Where regions start is found while the
    /// import runs; a resumable target stores it with the checkpoint
    /// ([`StoredCheckpoint::region_start`](crate::StoredCheckpoint::region_start))
    /// so that a resume can refuse to split the input elsewhere
    /// ([`ResumeError::Split`](crate::ResumeError::Split)).
    pub region_start: u64,
    /// The CRC-32 of every row this shard has committed in this import, in
    /// record order, this batch's included; `None` when not known (a shard
    /// resumed from a checkpoint stored without it). A resumable target
    /// stores it ([`StoredCheckpoint::rows_crc`](crate::StoredCheckpoint::rows_crc))
    /// so that a resume can refuse an input whose committed records changed
    /// ([`ResumeError::InputChanged`](crate::ResumeError::InputChanged)).
    pub rows_crc: Option<u32>,
}

/// Says whether the operation that failed may succeed if repeated.
///
/// Implemented for [`std::io::Error`] (by its kind) and for
/// [`Infallible`]; implement it for your own sink's error type.
pub trait Retryable {
    /// `true` when the same rows may succeed if replayed (deadlock, lost
    /// connection, lock wait timeout, ...); `false` when they never will
    /// (bad value, duplicate key, missing column, ...).
    fn is_retryable(&self) -> bool;
}

impl Retryable for io::Error {
    /// Interruptions, timeouts and dropped connections are worth a retry;
    /// anything else (a missing file, a full disk, bad data) is not.
    fn is_retryable(&self) -> bool {
        use io::ErrorKind::*;
        matches!(
            self.kind(),
            Interrupted
                | WouldBlock
                | TimedOut
                | ConnectionReset
                | ConnectionAborted
                | ConnectionRefused
                | BrokenPipe
                | NotConnected
        )
    }
}

impl Retryable for Infallible {
    fn is_retryable(&self) -> bool {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_retryable_by_kind() {
        let timed_out = io::Error::from(io::ErrorKind::TimedOut);
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert!(timed_out.is_retryable());
        assert!(!missing.is_retryable());
    }
}
