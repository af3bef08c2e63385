//! Values the columns cannot hold: one bad record stops the import on every
//! write path, with exactly the batches before it committed.

use std::collections::BTreeSet;
use std::path::Path;

use super::{
    assert_committed_exactly, committed_before, import, reference, Input, Parts, EXIT_DATABASE,
    SEED,
};
use crate::common::{fresh_table, stderr};

/// Records of the catalogue in the value tests.
pub(super) const VALUE_ROWS: u64 = 3_000;
/// Every write path of `--write-path`.
pub(super) const PATHS: [&str; 4] = ["insert", "prepared", "load-data", "bulk"];

/// A bad record and what the server says about it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Bad {
    /// `price` is `twelve`.
    Price,
    /// `updated` is `2024-13-45 25:00:00`.
    Date,
    /// `sku` has 40 characters (the column holds 32).
    LongSku,
    /// No `name` (NOT NULL).
    NoName,
    /// A copy of this earlier record: same id twice.
    CopyOf(u64),
}

impl Bad {
    /// The record's text at position `r`.
    fn record(self, r: u64, parts: &Parts) -> String {
        let plain = |field: &str| {
            format!("  <product id=\"{r}\">\n    <sku>BAD-{r}</sku>\n    {field}\n  </product>\n")
        };
        match self {
            Bad::Price => plain("<name>n</name><price>twelve</price>"),
            Bad::Date => plain("<name>n</name><updated>2024-13-45 25:00:00</updated>"),
            Bad::LongSku => format!(
                "  <product id=\"{r}\">\n    <sku>{}</sku>\n    <name>n</name>\n  </product>\n",
                "L".repeat(40)
            ),
            Bad::NoName => plain("<price>1.00</price>"),
            Bad::CopyOf(earlier) => parts.records[earlier as usize - 1].clone(),
        }
    }

    /// What the server's complaint contains.
    pub(super) fn reason(self) -> &'static str {
        match self {
            Bad::Price => "Incorrect decimal value",
            Bad::Date => "Incorrect datetime value",
            Bad::LongSku => "too long",
            Bad::NoName => "'name'",
            Bad::CopyOf(_) => "Duplicate entry",
        }
    }
}

/// The 3,000-record catalogue with `bad` records put at their positions.
pub(super) fn with_bad_records(dir: &Path, bad: &[(u64, Bad)]) -> Input {
    let parts = Parts::new(VALUE_ROWS, SEED);
    let mut records = parts.records.clone();
    for &(r, kind) in bad {
        records[r as usize - 1] = kind.record(r, &parts);
    }
    Input::write(
        dir.join("values.xml"),
        &parts.header,
        &records,
        parts.footer.as_bytes(),
    )
}

/// Imports the catalogue with one bad record at `at` on each of `paths`:
/// exit 4, the message names the record, its line:column and the reason,
/// and exactly the batches before the failing one are committed.
fn stops_at_bad_value(name: &str, at: u64, bad: Bad, paths: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &[(at, bad)]);
    let reference = reference(VALUE_ROWS, SEED);
    let skip = BTreeSet::from([at]);
    for path in paths {
        let table = format!("rel_val_{name}_{}", path.replace('-', "_"));
        let _table = fresh_table(&table);
        let output = import(&input.path, &table, &["--write-path", path]);
        let message = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(EXIT_DATABASE),
            "{path}: {message}"
        );
        let (line, column) = input.record_at(at);
        let record = format!("record {at} (line {line}, column {column}) failed");
        assert!(
            message.contains(&record),
            "{path}: want {record:?} in: {message}"
        );
        assert!(message.contains(bad.reason()), "{path}: {message}");
        let (stored, _) = assert_committed_exactly(&table, &reference, at, &skip);
        assert_eq!(
            committed_before(&message),
            stored.len() as u64,
            "{path}: {message}"
        );
        assert!(
            !stored.contains(&at),
            "{path}: the bad record's id is stored"
        );
        eprintln!("{table}: {} rows kept exactly: {message}", stored.len());
    }
}

#[test]
fn bad_value_non_numeric_price_stops_on_every_path() {
    stops_at_bad_value("price", 2_101, Bad::Price, &PATHS);
}

#[test]
fn bad_value_duplicate_key_from_an_earlier_batch_stops_on_every_path() {
    // Records 11 and 2,201 are both on shard 0, 1,095 shard rows apart.
    stops_at_bad_value("dup_far", 2_201, Bad::CopyOf(11), &PATHS);
}

#[test]
fn bad_value_duplicate_key_in_the_same_batch_stops_on_every_path() {
    // Records 2,199 and 2,201: neighbours on shard 0.
    stops_at_bad_value("dup_near", 2_201, Bad::CopyOf(2_199), &PATHS);
}

#[test]
fn bad_value_out_of_range_date_stops() {
    stops_at_bad_value("date", 2_102, Bad::Date, &["bulk", "load-data"]);
}

#[test]
fn bad_value_too_long_sku_stops() {
    stops_at_bad_value("sku", 2_103, Bad::LongSku, &["bulk", "load-data"]);
}

#[test]
fn bad_value_null_into_not_null_stops() {
    stops_at_bad_value("null", 2_104, Bad::NoName, &["bulk", "load-data"]);
}
