//! CSV read throughput, in the same process, rotated over rounds, on the
//! same file:
//!
//! - `CsvSource`: rows with NULLs, positions and checked text;
//! - `csv-core fields`: `csv-core`'s `read_field` loop, noting whether each
//!   field was quoted and checking it as UTF-8, which is what the source
//!   needs from a splitter, and how it used `csv-core` before it had its
//!   own (no rows: the splitter alone);
//! - `csv-core records`: its `read_record` loop, each record checked as
//!   UTF-8 once: the fastest `csv-core` reads, but it cannot tell a quoted
//!   field from an unquoted one, which decides NULL.
//!
//! ```text
//! RINGPIPE_BENCH_RECORDS=1000000 cargo bench -p ringpipe-text --bench csv
//! ```
//!
//! The file is the generated product catalogue as CSV (multi-byte text,
//! quoted fields with commas and quotes, `\N` for NULL), read once before
//! the rounds so that every contender reads it from the page cache.

use std::env;
use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Instant;

use csv_core::{ReadFieldResult, ReadRecordResult};
use ringpipe_pipeline::{Row, Source};
use ringpipe_text::{write_csv, CsvSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

const ROUNDS: usize = 5;

fn main() {
    let records: u64 = env::var("RINGPIPE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("catalogue.csv");
    let catalogue = Catalogue::new(records);
    let rows = catalogue.products().map(|p| p.values().to_vec());
    write_csv(
        File::create(&path).expect("create"),
        &PRODUCT_COLUMNS,
        rows,
        "\\N",
    )
    .expect("write catalogue");
    let mut bytes = Vec::new();
    File::open(&path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .expect("read back");
    let mb = bytes.len() as f64 / 1e6;
    println!("catalogue: {records} records, {mb:.1} MB of CSV");

    type Contender = (&'static str, fn(&Path) -> u64);
    let contenders: [Contender; 3] = [
        ("CsvSource", with_source),
        ("csv-core fields", with_fields),
        ("csv-core records", with_records),
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
        "{:<16} {:>8} {:>12} {:>22}",
        "reader", "MB/s", "records/s", "time ÷ CsvSource's"
    );
    for ((name, _), times) in contenders.iter().zip(&seconds) {
        let t = median(times.clone());
        // Median of the per-round ratios of this reader's time to CsvSource's.
        let ratio = median(times.iter().zip(&seconds[0]).map(|(c, s)| c / s).collect());
        println!(
            "{name:<16} {:>8.1} {:>12.0} {ratio:>22.2}",
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

/// Reads `path` with `CsvSource`; the number of records.
fn with_source(path: &Path) -> u64 {
    let config = TextConfig::new(PRODUCT_COLUMNS).null_string("\\N");
    let mut source = CsvSource::open(path, config).expect("open");
    let mut row = Row::with_columns(PRODUCT_COLUMNS.len());
    let mut records = 0;
    while source.next_row(&mut row).expect("read") {
        black_box(&row);
        records += 1;
    }
    records
}

/// Reads `path` with `csv-core`'s field loop, noting whether each field was
/// quoted and checking it as UTF-8; the number of records after the header.
fn with_fields(path: &Path) -> u64 {
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path).expect("open"));
    let mut core = csv_core::Reader::new();
    let mut out = vec![0u8; 1 << 16];
    // Whether the field being read was quoted, once its first byte is seen.
    let (mut records, mut len, mut field_quoted) = (0u64, 0usize, None);
    loop {
        let input = reader.fill_buf().expect("read");
        let quoted = *field_quoted.get_or_insert(input.first() == Some(&b'"'));
        let (result, nin, nout) = core.read_field(input, &mut out[len..]);
        reader.consume(nin);
        len += nout;
        match result {
            ReadFieldResult::InputEmpty => {}
            ReadFieldResult::OutputFull => out.resize(out.len() * 2, 0),
            ReadFieldResult::Field { record_end } => {
                let text = std::str::from_utf8(&out[..len]).expect("UTF-8");
                black_box((text, quoted));
                records += u64::from(record_end);
                len = 0;
                field_quoted = None;
            }
            ReadFieldResult::End => return records - 1,
        }
    }
}

/// Reads `path` with `csv-core`'s record loop, checking each record's
/// fields as UTF-8; the number of records after the header.
fn with_records(path: &Path) -> u64 {
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path).expect("open"));
    let mut core = csv_core::Reader::new();
    let (mut out, mut ends) = (vec![0u8; 1 << 16], vec![0usize; 64]);
    let (mut records, mut len) = (0u64, 0usize);
    loop {
        let input = reader.fill_buf().expect("read");
        let (result, nin, nout, nend) = core.read_record(input, &mut out[len..], &mut ends);
        reader.consume(nin);
        len += nout;
        match result {
            ReadRecordResult::InputEmpty => {}
            ReadRecordResult::OutputFull => out.resize(out.len() * 2, 0),
            ReadRecordResult::OutputEndsFull => panic!("more fields than the catalogue has"),
            ReadRecordResult::Record => {
                let text = std::str::from_utf8(&out[..len]).expect("UTF-8");
                black_box((text, &ends[..nend]));
                records += 1;
                len = 0;
            }
            ReadRecordResult::End => return records - 1,
        }
    }
}
