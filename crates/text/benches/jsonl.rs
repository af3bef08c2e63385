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

use std::env;
use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Instant;

use ringpipe_pipeline::{Row, Source};
use ringpipe_text::{write_jsonl, JsonlSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

const ROUNDS: usize = 5;

fn main() {
    let records: u64 = env::var("RINGPIPE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("catalogue.jsonl");
    let catalogue = Catalogue::new(records);
    let rows = catalogue.products().map(|p| p.values().to_vec());
    write_jsonl(File::create(&path).expect("create"), &PRODUCT_COLUMNS, rows)
        .expect("write catalogue");
    let mut bytes = Vec::new();
    File::open(&path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .expect("read back");
    let mb = bytes.len() as f64 / 1e6;
    println!("catalogue: {records} records, {mb:.1} MB of JSON Lines");

    type Contender = (&'static str, fn(&Path) -> u64);
    let contenders: [Contender; 2] = [
        ("JsonlSource", with_source),
        ("serde_json Value", with_values),
    ];
    let mut seconds = vec![Vec::new(); contenders.len()];
    for round in 0..ROUNDS {
        for k in 0..contenders.len() {
            let i = (round + k) % contenders.len();
            let (name, read) = contenders[i];
            let started = Instant::now();
            let counted = read(&path);
            seconds[i].push(started.elapsed().as_secs_f64());
            assert_eq!(
                counted, records,
                "{name} counted the wrong number of records"
            );
        }
    }
    println!(
        "{:<17} {:>8} {:>12} {:>22}",
        "reader", "MB/s", "records/s", "time ÷ JsonlSource's"
    );
    for ((name, _), times) in contenders.iter().zip(&seconds) {
        let t = median(times.clone());
        // Median of the per-round ratios of this reader's time to JsonlSource's.
        let ratio = median(times.iter().zip(&seconds[0]).map(|(c, s)| c / s).collect());
        println!(
            "{name:<17} {:>8.1} {:>12.0} {ratio:>22.2}",
            mb / t,
            records as f64 / t
        );
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Reads `path` with `JsonlSource`; the number of records.
fn with_source(path: &Path) -> u64 {
    let config = TextConfig::new(PRODUCT_COLUMNS);
    let mut source = JsonlSource::open(path, config).expect("open");
    let mut row = Row::with_columns(PRODUCT_COLUMNS.len());
    let mut records = 0;
    while source.next_row(&mut row).expect("read") {
        black_box(&row);
        records += 1;
    }
    records
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
