//! The bad-record budget and reject file, shared by every shard.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ringpipe_pipeline::RecordPosition;

use crate::encode::{tsv, Values};
use crate::MysqlError;

/// One bad record found in a batch, waiting for the batch's commit.
#[derive(Debug)]
pub(crate) struct Rejected {
    /// Where the record came from.
    pub(crate) position: RecordPosition,
    /// Why the server refused it.
    pub(crate) error: MysqlError,
    /// The record's values as a TSV line (newline included).
    pub(crate) values: Vec<u8>,
}

/// How many records may be diverted, and where they go.
#[derive(Debug)]
pub(crate) struct RejectLog {
    /// Budget over all shards.
    max_bad: u64,
    /// Records diverted so far (committed batches only).
    used: AtomicU64,
    /// The reject file, if configured; a mutex because shards share it.
    file: Option<Mutex<BufWriter<File>>>,
}

impl RejectLog {
    /// A log allowing `max_bad` records, creating (truncating) `path` if given.
    pub(crate) fn new(max_bad: u64, path: Option<&Path>) -> Result<Arc<Self>, MysqlError> {
        let file = match path {
            Some(path) => Some(Mutex::new(BufWriter::new(
                File::create(path).map_err(MysqlError::RejectFile)?,
            ))),
            None => None,
        };
        Ok(Arc::new(RejectLog {
            max_bad,
            used: AtomicU64::new(0),
            file,
        }))
    }

    /// The configured budget.
    pub(crate) fn max_bad(&self) -> u64 {
        self.max_bad
    }

    /// Records diverted so far (reserved by batches that committed or are
    /// still in flight).
    pub(crate) fn used(&self) -> u64 {
        // Relaxed: a reading for reports, taken after the shards finished.
        self.used.load(Ordering::Relaxed)
    }

    /// Whether `more` records beyond those already taken would still fit.
    pub(crate) fn fits(&self, more: u64) -> bool {
        // Relaxed: an advisory read; `reserve` makes the binding decision.
        self.used.load(Ordering::Relaxed) + more <= self.max_bad
    }

    /// Takes `count` records from the budget; `false` (and nothing taken)
    /// when they do not fit.
    pub(crate) fn reserve(&self, count: u64) -> bool {
        // Relaxed: the counter guards only itself; no other memory depends on it.
        let before = self.used.fetch_add(count, Ordering::Relaxed);
        if before + count <= self.max_bad {
            return true;
        }
        self.used.fetch_sub(count, Ordering::Relaxed);
        false
    }

    /// Gives back `count` records reserved for a batch that did not commit.
    pub(crate) fn release(&self, count: u64) {
        // Relaxed: see `reserve`.
        self.used.fetch_sub(count, Ordering::Relaxed);
    }

    /// Appends the committed batch's bad records to the reject file.
    pub(crate) fn write(&self, rejected: &[Rejected]) -> Result<(), MysqlError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for r in rejected {
            let reason = r.error.to_string().replace(['\t', '\n', '\r'], " ");
            let p = r.position;
            write!(file, "{}\t{}:{}\t{}\t", p.record, p.line, p.column, reason)
                .and_then(|()| file.write_all(&r.values))
                .map_err(MysqlError::RejectFile)?;
        }
        file.flush().map_err(MysqlError::RejectFile)
    }
}

/// The TSV line of a record's values, for the reject file.
pub(crate) fn values_line(row: &impl Values) -> Vec<u8> {
    let mut line = Vec::new();
    tsv::push_row(&mut line, row);
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_never_overdrawn() {
        let log = RejectLog::new(3, None).unwrap();
        assert!(log.reserve(2));
        assert!(!log.reserve(2));
        assert!(log.fits(1) && !log.fits(2));
        assert!(log.reserve(1));
        assert!(!log.reserve(1));
    }
}
