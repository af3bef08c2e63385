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

use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::path::Path;

use csv_core::{ReadFieldResult, ReadRecordResult};
use ringpipe_text::{write_csv, CsvSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

mod support;

fn main() {
    let records = support::records();
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
    print!("catalogue as CSV: ");
    support::run(
        &path,
        records,
        &[
            ("CsvSource", with_source),
            ("csv-core fields", with_fields),
            ("csv-core records", with_records),
        ],
    );
}

/// Reads `path` with `CsvSource`; the number of records.
fn with_source(path: &Path) -> u64 {
    let config = TextConfig::new(PRODUCT_COLUMNS).null_string("\\N");
    support::count(CsvSource::open(path, config).expect("open"))
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
