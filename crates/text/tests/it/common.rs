//! What the tests share: an import into a target that records what it
//! commits, by record number, and a deterministic random generator.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use ringpipe_pipeline::{Checkpoint, Import, Row, Sink, Source, Value};

/// The committed rows by record number.
pub type Rows = BTreeMap<u64, Vec<Option<String>>>;

type Table = Arc<Mutex<Rows>>;

/// Keeps each committed row by record number.
pub struct Recorder {
    pending: Vec<(u64, Vec<Option<String>>)>,
    table: Table,
}

impl Sink for Recorder {
    type Error = Infallible;
    fn begin(&mut self) -> Result<(), Infallible> {
        self.pending.clear();
        Ok(())
    }
    fn write(&mut self, row: &Row) -> Result<(), Infallible> {
        let values = row
            .values()
            .map(|v| {
                v.map(|v| match v {
                    Value::Text(text) => text.to_owned(),
                    Value::Bytes(bytes) => format!("bytes {bytes:?}"),
                })
            })
            .collect();
        self.pending.push((row.position().record, values));
        Ok(())
    }
    fn commit(&mut self, _: &Checkpoint<'_>) -> Result<(), Infallible> {
        let mut table = self.table.lock().unwrap();
        for (record, values) in self.pending.drain(..) {
            assert!(
                table.insert(record, values).is_none(),
                "record {record} twice"
            );
        }
        Ok(())
    }
}

/// Imports `regions` with 2 shards per region; panics on failure.
pub fn land<S: Source>(regions: Vec<S>) -> Rows {
    try_land(regions).unwrap_or_else(|e| panic!("{}", e.0))
}

/// Imports `regions` with 2 shards per region: the rows, or the error's
/// text with the rows committed before it.
pub fn try_land<S: Source>(regions: Vec<S>) -> Result<Rows, (String, Rows)> {
    let table = Table::default();
    let shared = Arc::clone(&table);
    let shards = 2 * regions.len();
    let run = Import::new(move |_| {
        Ok(Recorder {
            pending: Vec::new(),
            table: Arc::clone(&shared),
        })
    })
    .shards(shards)
    .batch_rows(97)
    .run(regions);
    let rows = Arc::try_unwrap(table).unwrap().into_inner().unwrap();
    match run {
        Ok(_) => Ok(rows),
        Err(failure) => Err((failure.error.to_string(), rows)),
    }
}

/// `rows` as the rows of a table: text cells, `None` for `NULL`.
pub fn cells(rows: &[&[Option<&str>]]) -> Vec<Vec<Option<String>>> {
    rows.iter()
        .map(|row| row.iter().map(|c| c.map(str::to_owned)).collect())
        .collect()
}

/// A small deterministic generator (xorshift), so failures reproduce.
pub struct Random(pub u64);

impl Random {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// One of `from`.
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}
