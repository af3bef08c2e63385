//! Your own destination: XML records as CSV files, one per shard, resumable
//! exactly like the database import.
//!
//! A sink is three calls: `begin` a batch, `write` its rows, `commit` them
//! together with a checkpoint. Here `commit` appends the batch to the
//! shard's file, syncs it, then replaces the shard's checkpoint file (file
//! length, last record, its region's first record, the digest of its
//! rows) in one rename. After a crash, `open` cuts the data file back to
//! the length its checkpoint names, and the import skips the records
//! committed before. The error type is plain `io::Error`.
//!
//! Run: `cargo run --example custom_sink -- [DIR]`

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ringpipe_pipeline::{fingerprint, Checkpoint, Import, ImportIdentity, Row, Sink};
use ringpipe_pipeline::{Part, StoredCheckpoint, Target};
use ringpipe_xml::gen::Catalogue;
use ringpipe_xml::{XmlConfig, XmlSource};

/// A directory of `part-N.csv` files, one per shard.
struct CsvTarget {
    dir: PathBuf,
}

/// One shard's file and the batch on its way into it.
struct CsvSink {
    file: File,
    len: u64,
    batch: Vec<u8>,
    checkpoint: PathBuf,
}

impl CsvTarget {
    fn data(&self, shard: usize) -> PathBuf {
        self.dir.join(format!("part-{shard}.csv"))
    }
    fn checkpoint(&self, shard: usize) -> PathBuf {
        self.dir.join(format!("part-{shard}.checkpoint"))
    }
    fn stored(&self) -> io::Result<Vec<(usize, String)>> {
        let mut stored = Vec::new();
        for shard in 0.. {
            match fs::read_to_string(self.checkpoint(shard)) {
                Ok(text) => stored.push((shard, text)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(e),
            }
        }
        Ok(stored)
    }
}

impl Target for CsvTarget {
    type Sink = CsvSink;

    fn prepare(&self, resuming: bool) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        if !resuming {
            for shard in 0.. {
                match fs::remove_file(self.data(shard)) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    other => other?,
                }
            }
        }
        Ok(())
    }

    fn open(&self, shard: usize) -> io::Result<CsvSink> {
        // Committed length: what the checkpoint names (0 without one).
        let len = match fs::read_to_string(self.checkpoint(shard)) {
            Ok(text) => field(&text, 4)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e),
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data(shard))?;
        file.set_len(len)?; // drop whatever a crash left uncommitted
        let checkpoint = self.checkpoint(shard);
        Ok(CsvSink {
            file,
            len,
            batch: Vec::new(),
            checkpoint,
        })
    }

    fn checkpoints(&self) -> io::Result<Vec<StoredCheckpoint>> {
        self.stored()?
            .into_iter()
            .map(|(shard, text)| {
                let line = |n: usize| text.lines().nth(n).unwrap_or_default().to_owned();
                let identity = ImportIdentity {
                    input: line(0),
                    shards: field(&text, 1)? as u32,
                    mapping: line(2),
                    part: Part::WHOLE,
                };
                Ok(StoredCheckpoint {
                    identity,
                    shard,
                    last_record: field(&text, 3)?,
                    region_start: field(&text, 5)?,
                    // "-": not known.
                    rows_crc: line(6).parse().ok(),
                    complete: false,
                    // This sink sets no record aside.
                    diverted: 0,
                })
            })
            .collect()
    }

    fn clear_checkpoints(&self) -> io::Result<()> {
        for (shard, _) in self.stored()? {
            fs::remove_file(self.checkpoint(shard))?;
        }
        Ok(())
    }
}

/// Line `n` of a checkpoint file, as a number.
fn field(text: &str, n: usize) -> io::Result<u64> {
    let line = text.lines().nth(n).unwrap_or_default();
    line.parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad checkpoint"))
}

impl Sink for CsvSink {
    type Error = io::Error;

    fn begin(&mut self) -> io::Result<()> {
        self.batch.clear();
        Ok(())
    }

    fn write(&mut self, row: &Row) -> io::Result<()> {
        // RFC 4180: every value quoted, `"` doubled; NULL is an empty field.
        for (i, value) in row.values().enumerate() {
            if i > 0 {
                self.batch.push(b',');
            }
            if let Some(value) = value {
                let text = String::from_utf8_lossy(value.as_bytes()).replace('"', "\"\"");
                self.batch
                    .extend_from_slice(format!("\"{text}\"").as_bytes());
            }
        }
        self.batch.push(b'\n');
        Ok(())
    }

    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> io::Result<()> {
        self.file.write_all(&self.batch)?;
        self.file.sync_data()?;
        self.len += self.batch.len() as u64;
        self.batch.clear();
        let Some(import) = checkpoint.import else {
            return Ok(());
        };
        let rows_crc = checkpoint
            .rows_crc
            .map_or_else(|| "-".to_owned(), |crc| crc.to_string());
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{rows_crc}\n",
            import.input,
            import.shards,
            import.mapping,
            checkpoint.last_record,
            self.len,
            checkpoint.region_start
        );
        let temporary = self.checkpoint.with_extension("tmp");
        fs::write(&temporary, text)?;
        fs::rename(&temporary, &self.checkpoint)
    }
}

/// Imports `file` (the catalogue's product records) into `dir`.
fn import(
    file: &Path,
    config: XmlConfig,
    dir: &Path,
    resume: bool,
) -> Result<u64, Box<dyn std::error::Error>> {
    let regions = XmlSource::open_regions(file, config, 2)?;
    let summary = Import::new(CsvTarget {
        dir: dir.to_owned(),
    })
    .shards(2)
    .batch_rows(500)
    .checkpoints(fingerprint(file)?, "catalogue as csv")
    .resume(resume)
    .run(regions)?;
    Ok(summary.rows_written)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let work = tempfile::tempdir()?;
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| work.path().join("csv"), PathBuf::from);
    let file = work.path().join("products.xml");
    let catalogue = Catalogue::new(10_000);
    catalogue.write_file(&file)?;
    let rows = import(&file, catalogue.config(), &dir, false)?;
    println!("wrote {rows} records as CSV into {}:", dir.display());
    for shard in 0..2 {
        let path = dir.join(format!("part-{shard}.csv"));
        let text = fs::read_to_string(&path)?;
        println!(
            "  {} ({} lines), first line:",
            path.display(),
            text.lines().count()
        );
        println!("    {}", text.lines().next().unwrap_or_default());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crash after some commits (simulated: a checkpoint file rolled back
    /// to an earlier batch and garbage appended), then `resume`: every
    /// record lands exactly once.
    #[test]
    fn an_interrupted_csv_import_resumes_exactly() {
        let work = tempfile::tempdir().unwrap();
        let (file, dir) = (work.path().join("p.xml"), work.path().join("csv"));
        let records: String = (1..=3_000)
            .map(|id| format!("<item><id>{id}</id><name>item {id}</name></item>\n"))
            .collect();
        fs::write(&file, format!("<items>\n{records}</items>\n")).unwrap();
        let config = || XmlConfig::new("item", ["id".to_owned(), "name".to_owned()]);
        let target = CsvTarget { dir: dir.clone() };
        assert_eq!(import(&file, config(), &dir, false).unwrap(), 3_000);
        let whole: Vec<String> = (0..2)
            .map(|s| fs::read_to_string(target.data(s)).unwrap())
            .collect();

        // Put shard 1 back to its state after its first 500 records, with
        // a torn write behind it: as if the process died there.
        let id = |line: &str| {
            line.split(',')
                .next()
                .unwrap()
                .trim_matches('"')
                .parse::<u64>()
                .unwrap()
        };
        let kept: Vec<&str> = whole[1].lines().take(500).collect();
        let committed: String = kept.iter().map(|l| format!("{l}\n")).collect();
        let checkpoint = |last_record: u64, len: usize, region_start: u64| {
            let input = fingerprint(&file).unwrap();
            let mapping = "catalogue as csv;shard-block=500;regions=2";
            // The rows' digest is not known to this hand-made checkpoint.
            format!("{input}\n2\n{mapping}\n{last_record}\n{len}\n{region_start}\n-\n")
        };
        // The second region starts after the first region's records.
        let second_start = whole[0].lines().count() as u64 + 1;
        fs::write(target.data(1), format!("{committed}\"torn")).unwrap();
        fs::write(
            target.checkpoint(1),
            checkpoint(id(kept[499]), committed.len(), second_start),
        )
        .unwrap();
        let last_of_0 = id(whole[0].lines().last().unwrap());
        fs::write(
            target.checkpoint(0),
            checkpoint(last_of_0, whole[0].len(), 1),
        )
        .unwrap();
        let remaining = whole[1].lines().count() as u64 - 500;

        assert_eq!(import(&file, config(), &dir, true).unwrap(), remaining);
        for (shard, whole) in whole.iter().enumerate() {
            let now = fs::read_to_string(target.data(shard)).unwrap();
            assert_eq!(&now, whole, "shard {shard}");
        }
    }
}
