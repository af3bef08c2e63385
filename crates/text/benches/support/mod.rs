//! What the read benchmarks share: the catalogue's size, its file's size,
//! reading a source's rows, and the rounds that time every reader in
//! rotated order and report each against the first.

use std::env;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use ringpipe_pipeline::{Row, Source};

/// Rounds, each timing every reader once, starting with a different one.
const ROUNDS: usize = 5;

/// A reader: its name, and how it reads a file (the records it counted).
pub type Reader = (&'static str, fn(&Path) -> u64);

/// Records to generate: `RINGPIPE_BENCH_RECORDS`, default 200,000.
pub fn records() -> u64 {
    env::var("RINGPIPE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// Times `readers` on `path` (`records` records) and prints MB/s,
/// records/s and the median of each reader's per-round time over the
/// first reader's. The file is read once first, so every reader finds it
/// in the page cache.
pub fn run(path: &Path, records: u64, readers: &[Reader]) {
    let bytes = std::fs::read(path).expect("read the file");
    let mb = bytes.len() as f64 / 1e6;
    drop(bytes);
    let mut seconds = vec![Vec::new(); readers.len()];
    for round in 0..ROUNDS {
        for k in 0..readers.len() {
            let i = (round + k) % readers.len();
            let (name, read) = readers[i];
            let started = Instant::now();
            let counted = read(path);
            seconds[i].push(started.elapsed().as_secs_f64());
            assert_eq!(
                counted, records,
                "{name} counted the wrong number of records"
            );
        }
    }
    let first = readers[0].0;
    println!("{mb:.1} MB, {records} records");
    println!(
        "{:<17} {:>8} {:>12} {:>24}",
        "reader",
        "MB/s",
        "records/s",
        format!("time ÷ {first}'s")
    );
    for ((name, _), times) in readers.iter().zip(&seconds) {
        let t = median(times.clone());
        let ratio = median(times.iter().zip(&seconds[0]).map(|(c, s)| c / s).collect());
        println!(
            "{name:<17} {:>8.1} {:>12.0} {ratio:>24.2}",
            mb / t,
            records as f64 / t
        );
    }
}

/// Reads every row of `source`; the number of records.
pub fn count(mut source: impl Source) -> u64 {
    let mut row = Row::with_columns(source.columns().len());
    let mut records = 0;
    while source.next_row(&mut row).expect("read") {
        black_box(&row);
        records += 1;
    }
    records
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}
