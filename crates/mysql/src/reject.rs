//! The bad-record budget and reject file, shared by every shard.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use ringpipe_pipeline::{RecordPosition, RejectBudget};

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
    pub(crate) budget: RejectBudget,
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
            budget: RejectBudget::new(max_bad),
            file,
        }))
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
