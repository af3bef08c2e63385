//! The reject file: one line per bad record, shared by every shard of a
//! sink, that survives kills and resumes with each record in it once.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use parking_lot::Mutex;

use crate::RecordPosition;

/// The file of an import's bad records.
///
/// A line is `record<TAB>line:column<TAB>reason<TAB>values`, where the
/// values are the sink's own line of the record (newline included) and
/// tabs and line breaks in the reason become spaces.
///
/// A sink writes a batch's bad records before the batch's `COMMIT`:
/// [`write`](Self::write) returns once they are on disk, so a kill after
/// the `COMMIT` cannot lose them. A kill before it leaves lines for a batch
/// that did not commit; the resumed import meets the same records again,
/// and the file, opened with `resuming`, already holds their numbers and
/// skips them. So once a resumed import finishes, each bad record is in
/// the file once, whichever side of the `COMMIT` the kill came.
///
/// ```
/// use ringpipe_pipeline::{RecordPosition, RejectFile};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("rejects.tsv");
/// let at = |record| RecordPosition { record, line: record + 1, column: 1, ..Default::default() };
/// RejectFile::open(&path, false)?.write([(at(3), "too long", &b"3\tx\n"[..])])?;
/// // A resumed import keeps the line and writes record 3 only once.
/// let resumed = RejectFile::open(&path, true)?;
/// resumed.write([(at(3), "too long", &b"3\tx\n"[..]), (at(8), "no", &b"8\ty\n"[..])])?;
/// let text = std::fs::read_to_string(&path)?;
/// assert_eq!(text, "3\t4:1\ttoo long\t3\tx\n8\t9:1\tno\t8\ty\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct RejectFile {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: File,
    /// Record numbers the file holds a line of.
    written: HashSet<u64>,
}

impl RejectFile {
    /// Opens `path`: a fresh import (`resuming == false`) empties it, a
    /// resumed one appends to it and reads the record numbers it holds.
    ///
    /// # Errors
    ///
    /// When the file cannot be created, opened or read.
    pub fn open(path: &Path, resuming: bool) -> io::Result<Self> {
        let mut written = HashSet::new();
        let file = match resuming {
            false => File::create(path)?,
            true => {
                match File::open(path) {
                    Ok(existing) => {
                        for line in BufReader::new(existing).split(b'\n') {
                            if let Some(record) = record_number(&line?) {
                                written.insert(record);
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                OpenOptions::new().create(true).append(true).open(path)?
            }
        };
        Ok(RejectFile {
            inner: Mutex::new(Inner { file, written }),
        })
    }

    /// Appends a line for each of `records` (position, reason, values line)
    /// the file does not hold yet, and syncs the file.
    ///
    /// # Errors
    ///
    /// When the lines cannot be written or synced; none of them counts as
    /// written then.
    pub fn write<'a>(
        &self,
        records: impl IntoIterator<Item = (RecordPosition, &'a str, &'a [u8])>,
    ) -> io::Result<()> {
        let mut inner = self.inner.lock();
        let mut text = Vec::new();
        let mut new = Vec::new();
        for (p, reason, values) in records {
            if inner.written.contains(&p.record) || new.contains(&p.record) {
                continue;
            }
            let reason = reason.replace(['\t', '\n', '\r'], " ");
            let head = format!("{}\t{}:{}\t{reason}\t", p.record, p.line, p.column);
            text.extend_from_slice(head.as_bytes());
            text.extend_from_slice(values);
            new.push(p.record);
        }
        if new.is_empty() {
            return Ok(());
        }
        inner.file.write_all(&text)?;
        inner.file.sync_data()?;
        inner.written.extend(new);
        Ok(())
    }
}

/// The record number a reject-file line starts with.
fn record_number(line: &[u8]) -> Option<u64> {
    let number = line.split(|&b| b == b'\t').next()?;
    std::str::from_utf8(number).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(record: u64) -> RecordPosition {
        RecordPosition {
            record,
            ..RecordPosition::default()
        }
    }

    #[test]
    fn a_fresh_import_empties_the_file_and_a_resumed_one_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rejects.tsv");
        std::fs::write(&path, "1\t2:1\told\tx\n").unwrap();
        let resumed = RejectFile::open(&path, true).unwrap();
        resumed.write([(at(1), "again", &b"x\n"[..])]).unwrap();
        resumed
            .write([(at(5), "bad\tvalue", &b"y\n"[..]), (at(5), "twice", b"y\n")])
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "1\t2:1\told\tx\n5\t0:0\tbad value\ty\n");
        RejectFile::open(&path, false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[test]
    fn a_resume_without_a_file_creates_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none-yet.tsv");
        RejectFile::open(&path, true)
            .unwrap()
            .write([(at(2), "r", &b"v\n"[..])])
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "2\t0:0\tr\tv\n");
    }
}
