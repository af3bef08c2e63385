//! `--dry-run`'s preview: the first rows as they would be written.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use ringpipe_pipeline::{Checkpoint, Row, Sink, Target, Value};

/// A dry run's target: stores nothing, keeps the `limit` first records (by
/// record number, whichever shard had them) to show.
#[derive(Debug, Clone)]
pub struct Preview {
    limit: usize,
    rows: Arc<Mutex<BTreeMap<u64, Vec<Option<String>>>>>,
}

/// One shard of a [`Preview`].
pub struct PreviewSink {
    preview: Preview,
    /// Set once this shard's records all come after a full preview's.
    done: bool,
}

impl Preview {
    /// A preview of the first `limit` records.
    pub fn new(limit: usize) -> Self {
        Preview {
            limit,
            rows: Arc::default(),
        }
    }

    /// The kept rows, in record order.
    pub fn rows(&self) -> Vec<Vec<Option<String>>> {
        let rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        rows.values().cloned().collect()
    }

    /// The kept rows as a table under `columns`, for a terminal.
    pub fn table<'a>(&'a self, columns: &'a [String]) -> Table<'a> {
        Table {
            columns,
            rows: self.rows(),
        }
    }
}

impl Target for Preview {
    type Sink = PreviewSink;

    fn open(&self, _: usize) -> Result<PreviewSink, Infallible> {
        Ok(PreviewSink {
            preview: self.clone(),
            done: self.limit == 0,
        })
    }
}

impl Sink for PreviewSink {
    type Error = Infallible;

    fn write(&mut self, row: &Row) -> Result<(), Infallible> {
        if self.done {
            return Ok(());
        }
        let record = row.position().record;
        let mut rows = self
            .preview
            .rows
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        rows.insert(record, row.values().map(|v| v.map(shown)).collect());
        if rows.len() > self.preview.limit {
            rows.pop_last();
            // A shard's records only grow: once one misses a full preview,
            // every later one will.
            self.done = rows
                .last_key_value()
                .is_some_and(|(&last, _)| record > last);
        }
        Ok(())
    }

    fn commit(&mut self, _: &Checkpoint<'_>) -> Result<(), Infallible> {
        Ok(())
    }
}

/// A value as the preview shows it: text as it is, bytes in hex.
fn shown(value: Value<'_>) -> String {
    match value {
        Value::Text(text) => text.to_owned(),
        Value::Bytes(bytes) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
            format!("0x{hex}")
        }
    }
}

/// The preview as an aligned text table; `NULL` for SQL NULL, control
/// characters escaped, long values cut.
pub struct Table<'a> {
    columns: &'a [String],
    rows: Vec<Vec<Option<String>>>,
}

/// Characters of a value shown before it is cut.
const CELL: usize = 30;

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| row.iter().map(|v| cell(v.as_deref())).collect())
            .collect();
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|c| {
                let values = cells.iter().map(|row| row[c].chars().count());
                values.fold(self.columns[c].chars().count(), usize::max)
            })
            .collect();
        let line = |f: &mut fmt::Formatter<'_>, values: &[String]| {
            for (value, width) in values.iter().zip(&widths) {
                write!(f, "| {value:<width$} ")?;
            }
            writeln!(f, "|")
        };
        line(f, self.columns)?;
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        line(f, &rule)?;
        cells.iter().try_for_each(|row| line(f, row))
    }
}

/// One value as a table cell.
fn cell(value: Option<&str>) -> String {
    let Some(value) = value else {
        return "NULL".into();
    };
    let escaped: String = value
        .chars()
        .flat_map(|c| {
            let control = c.is_control().then(|| c.escape_default());
            control
                .into_iter()
                .flatten()
                .chain((!c.is_control()).then_some(c))
        })
        .collect();
    match escaped.char_indices().nth(CELL) {
        Some((at, _)) => format!("{}…", &escaped[..at]),
        None => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringpipe_pipeline::RecordPosition;

    #[test]
    fn keeps_the_first_records_of_all_shards_and_shows_null_and_bytes() {
        let preview = Preview::new(2);
        let mut sinks = [preview.open(0).unwrap(), preview.open(1).unwrap()];
        let mut row = Row::with_columns(2);
        for (shard, record) in [(1, 2), (0, 3), (1, 4), (0, 1)] {
            let sink = &mut sinks[shard];
            row.clear();
            row.set(0, &record.to_string());
            row.set_bytes(1, &[0xff]);
            row.set_position(RecordPosition {
                record,
                ..RecordPosition::default()
            });
            sink.write(&row).unwrap();
        }
        let columns = ["id".to_owned(), "blob".to_owned()];
        let table = preview.table(&columns).to_string();
        assert_eq!(
            table,
            "| id | blob |\n| -- | ---- |\n| 1  | 0xFF |\n| 2  | 0xFF |\n"
        );
        assert_eq!(cell(None), "NULL");
        assert_eq!(cell(Some("a\tb")), "a\\tb");
    }
}
