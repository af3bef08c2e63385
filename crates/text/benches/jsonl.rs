//! JSON Lines read throughput, in the same process, rotated over rounds,
//! on the same file:
//!
//! - `JsonlSource`: rows with NULLs, positions, checked keys (each once)
//!   and values as text;
//! - `serde_json Value`: each line read and parsed into a
//!   `serde_json::Value`, what a program of its own would start from (no
//!   rows, no duplicate-key check: a `Value` keeps the last).
//!
//! ```text
//! RINGPIPE_BENCH_RECORDS=1000000 cargo bench -p ringpipe-text --bench jsonl
//! ```

use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::path::Path;

use ringpipe_text::{write_jsonl, JsonlSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

mod support;

fn main() {
    let records = support::records();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("catalogue.jsonl");
    let catalogue = Catalogue::new(records);
    let rows = catalogue.products().map(|p| p.values().to_vec());
    write_jsonl(File::create(&path).expect("create"), &PRODUCT_COLUMNS, rows)
        .expect("write catalogue");
    print!("catalogue as JSON Lines: ");
    support::run(
        &path,
        records,
        &[
            ("JsonlSource", with_source),
            ("serde_json Value", with_values),
        ],
    );
}

/// Reads `path` with `JsonlSource`; the number of records.
fn with_source(path: &Path) -> u64 {
    support::count(JsonlSource::open(path, TextConfig::new(PRODUCT_COLUMNS)).expect("open"))
}

/// Reads `path` a line at a time into `serde_json::Value`s; the number of
/// records.
fn with_values(path: &Path) -> u64 {
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path).expect("open"));
    let mut line = String::new();
    let mut records = 0;
    while reader.read_line(&mut line).expect("read") > 0 {
        let value: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        black_box(value);
        records += 1;
        line.clear();
    }
    records
}
