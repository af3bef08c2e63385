//! The bad-record budget and reject file, shared by every shard: a
//! batch's bad records are in the file before its `COMMIT` ([`RejectFile`]).

use std::path::Path;
use std::sync::Arc;

use ringpipe_pipeline::{RecordPosition, RejectBudget, RejectFile};

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
    /// The reject file, if configured.
    file: Option<RejectFile>,
}

impl RejectLog {
    /// A log allowing `max_bad` records, writing to `path` if given: a
    /// fresh import empties it, a resumed one appends to it.
    pub(crate) fn open(
        max_bad: u64,
        path: Option<&Path>,
        resuming: bool,
    ) -> Result<Arc<Self>, MysqlError> {
        let file = path
            .map(|path| RejectFile::open(path, resuming))
            .transpose()
            .map_err(MysqlError::RejectFile)?;
        Ok(Arc::new(RejectLog {
            budget: RejectBudget::new(max_bad),
            file,
        }))
    }

    /// Appends the batch's bad records the file does not hold yet, and
    /// syncs it.
    pub(crate) fn write(&self, rejected: &[Rejected]) -> Result<(), MysqlError> {
        let Some(file) = self.file.as_ref().filter(|_| !rejected.is_empty()) else {
            return Ok(());
        };
        let reasons: Vec<String> = rejected.iter().map(|r| r.error.to_string()).collect();
        let lines = rejected
            .iter()
            .zip(&reasons)
            .map(|(r, reason)| (r.position, reason.as_str(), &r.values[..]));
        file.write(lines).map_err(MysqlError::RejectFile)
    }
}

/// The TSV line of a record's values, for the reject file.
pub(crate) fn values_line(row: &impl Values) -> Vec<u8> {
    let mut line = Vec::new();
    tsv::push_row(&mut line, row);
    line
}
