//! The producing end of a pipeline.

use crate::Row;

/// A stream of records that fills ring slots in place.
///
/// A source runs on one thread (the pipeline's producer). For each record it
/// overwrites a preallocated [`Row`] — one column per name in
/// [`Source::columns`], in that order — so no row is allocated per record.
///
/// # Contract
///
/// * `next_row` returns `Ok(true)` after filling `row` with the next record,
///   and `Ok(false)` at the end of input; after `Ok(false)` it is not called
///   again.
/// * On `Err`, the source has stopped: everything emitted before the error is
///   complete and correct, and nothing after it is emitted. The pipeline
///   commits the earlier records and reports the error.
/// * `row` arrives with stale contents from an earlier record; the source
///   must [`Row::clear`] it (or set every column) before filling it.
pub trait Source: Send {
    /// The error a source stops with. Its `Display` should name the input,
    /// the position (line:column), the record number and what was expected.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Column names, in the order `next_row` fills them.
    fn columns(&self) -> &[String];

    /// Fills `row` with the next record; `Ok(false)` at end of input.
    ///
    /// # Errors
    ///
    /// Malformed or unreadable input; the source must not be called again.
    fn next_row(&mut self, row: &mut Row) -> Result<bool, Self::Error>;

    /// Records of the input before this source's first: non-zero for a
    /// source that reads a later region of an input (see
    /// [`Import::run`](crate::Import::run)), so that record numbers, and the
    /// checkpoints and resumption built on them, count in the whole input.
    /// Read after each call to `next_row`, so a source may learn it late.
    fn records_before(&self) -> u64 {
        0
    }

    /// How far the source has read, for progress reporting.
    fn progress(&self) -> SourceProgress {
        SourceProgress::default()
    }
}

/// A progress reading from a [`Source`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceProgress {
    /// Bytes consumed from the underlying input (compressed bytes for `.gz`).
    pub bytes_read: u64,
    /// Total input size when known (a regular file), for an ETA.
    pub bytes_total: Option<u64>,
    /// Records emitted so far.
    pub records: u64,
}
