//! The bad-record budget and the reject file, shared by every shard.
//!
//! A batch's bad records are written to the file (flushed and synced)
//! before its `COMMIT`, and their count is taken from the budget only when
//! the commit succeeds. A kill between the two leaves lines in the file for
//! a batch that did not commit; the resume meets the same records again,
//! and the file, reopened for appending, skips the record numbers it
//! already holds. So after a resume that finishes, each bad record is in
//! the file once, whether or not the kill came before the `COMMIT`.
//!
//! A line is `record<TAB>line:column<TAB>reason<TAB>values`, the values in
//! the text COPY escaping (`\N` for NULL, `\t`, `\n`, `\r`, `\\`, `\0`).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Mutex;

use ringpipe_pipeline::{RecordPosition, RejectBudget, Row};

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

/// The reject file and the record numbers it holds.
#[derive(Debug)]
struct RejectFile {
    file: File,
    written: HashSet<u64>,
}

/// How many records may be set aside, and where they go.
#[derive(Debug)]
pub(crate) struct RejectLog {
    /// Budget over all shards: records set aside by committed batches (and
    /// reserved by a batch whose `COMMIT` is in flight or unknown).
    pub(crate) budget: RejectBudget,
    file: Option<Mutex<RejectFile>>,
}

impl RejectLog {
    /// A log allowing `max_bad` records, writing to `path` if given: a
    /// fresh import empties it, a resumed one appends to it.
    pub(crate) fn open(max_bad: u64, path: Option<&Path>, resuming: bool) -> Result<Self, PgError> {
        let file = match path {
            None => None,
            Some(path) => Some(Mutex::new(open_file(path, resuming)?)),
        };
        Ok(RejectLog {
            budget: RejectBudget::new(max_bad),
            file,
        })
    }

    /// Appends the records the file does not hold yet, and syncs it.
    pub(crate) fn write(&self, rejected: &[Rejected]) -> Result<(), PgError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut text = Vec::new();
        let mut new = Vec::new();
        for r in rejected {
            if file.written.contains(&r.position.record) || new.contains(&r.position.record) {
                continue;
            }
            let reason = r.reason.replace(['\t', '\n', '\r'], " ");
            let p = r.position;
            let head = format!("{}\t{}:{}\t{}\t", p.record, p.line, p.column, reason);
            text.extend_from_slice(head.as_bytes());
            text.extend_from_slice(&r.values);
            new.push(p.record);
        }
        if new.is_empty() {
            return Ok(());
        }
        file.file
            .write_all(&text)
            .and_then(|()| file.file.sync_data())
            .map_err(PgError::RejectFile)?;
        file.written.extend(new);
        Ok(())
    }
}

/// The reject file: emptied, or opened for appending with the record
/// numbers of its lines.
fn open_file(path: &Path, resuming: bool) -> Result<RejectFile, PgError> {
    if !resuming {
        let file = File::create(path).map_err(PgError::RejectFile)?;
        return Ok(RejectFile {
            file,
            written: HashSet::new(),
        });
    }
    let mut written = HashSet::new();
    if let Ok(existing) = File::open(path) {
        for line in BufReader::new(existing).split(b'\n') {
            let line = line.map_err(PgError::RejectFile)?;
            let number = line.split(|&b| b == b'\t').next().unwrap_or_default();
            if let Some(record) = std::str::from_utf8(number)
                .ok()
                .and_then(|n| n.parse().ok())
            {
                written.insert(record);
            }
        }
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(PgError::RejectFile)?;
    Ok(RejectFile { file, written })
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

    fn rejected(record: u64) -> Rejected {
        Rejected {
            position: RecordPosition {
                record,
                ..RecordPosition::default()
            },
            reason: "bad\tvalue".into(),
            values: b"x\n".to_vec(),
        }
    }

    #[test]
    fn a_resumed_file_keeps_its_lines_and_skips_their_records() {
        let path = std::env::temp_dir().join(format!("ringpipe-pg-rejects-{}", std::process::id()));
        let log = RejectLog::open(9, Some(&path), false).unwrap();
        log.write(&[rejected(3), rejected(5)]).unwrap();
        let log = RejectLog::open(9, Some(&path), true).unwrap();
        log.write(&[rejected(5), rejected(8)]).unwrap();
        log.write(&[rejected(8)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "3\t0:0\tbad value\tx\n5\t0:0\tbad value\tx\n8\t0:0\tbad value\tx\n"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn values_are_escaped_like_text_copy() {
        let mut row = Row::with_columns(3);
        row.set(1, "a\tb\\c\0");
        row.set(2, "");
        assert_eq!(values_line(&row), b"\\N\ta\\tb\\\\c\\0\t\n");
    }
}
