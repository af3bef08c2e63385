//! The bad-record budget and the reject file, shared by every shard.
//!
//! A batch's bad records are written to the file before its `COMMIT`
//! ([`RejectFile`] says why a kill on either side of it loses none), and
//! their count is taken from the budget only when the commit succeeds.
//! The values are in the text COPY escaping (`\N` for NULL, `\t`, `\n`,
//! `\r`, `\\`, `\0`).

use std::path::Path;

use ringpipe_pipeline::{RecordPosition, RejectBudget, RejectFile, Row};

use crate::PgError;

/// One bad record of a batch.
#[derive(Debug, Clone)]
pub(crate) struct Rejected {
    /// Where the record came from.
    pub(crate) position: RecordPosition,
    /// Why it was refused (the server's message, or the encoder's).
    pub(crate) reason: String,
    /// The record's values as a line (newline included).
    pub(crate) values: Vec<u8>,
}

/// How many records may be set aside, and where they go.
#[derive(Debug)]
pub(crate) struct RejectLog {
    /// Budget over all shards: records set aside by committed batches (and
    /// reserved by a batch whose `COMMIT` is in flight or unknown).
    pub(crate) budget: RejectBudget,
    file: Option<RejectFile>,
}

impl RejectLog {
    /// A log allowing `max_bad` records, writing to `path` if given: a
    /// fresh import empties it, a resumed one appends to it.
    pub(crate) fn open(max_bad: u64, path: Option<&Path>, resuming: bool) -> Result<Self, PgError> {
        let file = path
            .map(|path| RejectFile::open(path, resuming))
            .transpose()
            .map_err(PgError::RejectFile)?;
        Ok(RejectLog {
            budget: RejectBudget::new(max_bad),
            file,
        })
    }

    /// Appends the records the file does not hold yet, and syncs it.
    pub(crate) fn write(&self, rejected: &[Rejected]) -> Result<(), PgError> {
        let Some(file) = self.file.as_ref().filter(|_| !rejected.is_empty()) else {
            return Ok(());
        };
        let lines = rejected
            .iter()
            .map(|r| (r.position, r.reason.as_str(), &r.values[..]));
        file.write(lines).map_err(PgError::RejectFile)
    }
}

/// A record's values as a reject-file line, newline included.
pub(crate) fn values_line(row: &Row) -> Vec<u8> {
    let mut line = Vec::new();
    push_values_line(row, &mut line);
    line
}

/// Appends a record's values as a reject-file line, newline included.
pub(crate) fn push_values_line(row: &Row, line: &mut Vec<u8>) {
    for (index, value) in row.values().enumerate() {
        if index > 0 {
            line.push(b'\t');
        }
        let Some(value) = value else {
            line.extend_from_slice(b"\\N");
            continue;
        };
        for &byte in value.as_bytes() {
            match byte {
                b'\t' => line.extend_from_slice(b"\\t"),
                b'\n' => line.extend_from_slice(b"\\n"),
                b'\r' => line.extend_from_slice(b"\\r"),
                b'\\' => line.extend_from_slice(b"\\\\"),
                0 => line.extend_from_slice(b"\\0"),
                other => line.push(other),
            }
        }
    }
    line.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_like_text_copy() {
        let mut row = Row::with_columns(3);
        row.set(1, "a\tb\\c\0");
        row.set(2, "");
        assert_eq!(values_line(&row), b"\\N\ta\\tb\\\\c\\0\t\n");
    }
}
