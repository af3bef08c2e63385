//! Opening inputs: byte-order marks, UTF-16, gzip.

use std::fs::File;
use std::io::Write;

use ringpipe_text::{CsvSource, JsonlSource, TextConfig};

use crate::common::{cells, land};

#[test]
fn a_utf8_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("b.csv");
    std::fs::write(&csv, b"\xef\xbb\xbfid,v\n1,\xef\xbb\xbfx\n").unwrap();
    let source = CsvSource::open(&csv, TextConfig::new(["id", "v"])).unwrap();
    // Only the file's mark: a value's own U+FEFF stays.
    let rows: Vec<_> = land(vec![source]).into_values().collect();
    assert_eq!(rows, cells(&[&[Some("1"), Some("\u{feff}x")]]));
    let jsonl = dir.path().join("b.jsonl");
    std::fs::write(&jsonl, b"\xef\xbb\xbf{\"id\": 1}\n").unwrap();
    let source = JsonlSource::open(&jsonl, TextConfig::new(["id"])).unwrap();
    assert_eq!(land(vec![source]).len(), 1);
}

#[test]
fn utf16_is_refused_by_its_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.csv");
    let mut text = vec![0xff, 0xfe];
    text.extend("id\n1\n".encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(&path, text).unwrap();
    let error = CsvSource::open(&path, TextConfig::new(["id"]))
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains("is UTF-16LE (by its byte-order mark)"),
        "{error}"
    );
    let error = JsonlSource::open(&path, TextConfig::new(["id"]))
        .err()
        .unwrap();
    assert!(error.to_string().contains("iconv -f UTF-16LE"), "{error}");
}

#[test]
fn gzip_with_a_byte_order_mark_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(File::create(&path).unwrap(), Default::default());
    gz.write_all(b"\xef\xbb\xbfid,name\n1,a\n2,\"b\nc\"\n")
        .unwrap();
    gz.finish().unwrap();
    // Asked for three regions, gzip reads as one.
    let sources = CsvSource::open_regions(&path, TextConfig::new(["id", "name"]), 3).unwrap();
    assert_eq!(sources.len(), 1);
    let rows: Vec<_> = land(sources).into_values().collect();
    assert_eq!(
        rows,
        cells(&[&[Some("1"), Some("a")], &[Some("2"), Some("b\nc")]])
    );
}

#[test]
fn a_csv_of_only_a_byte_order_mark_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.csv");
    std::fs::write(&path, b"\xef\xbb\xbf").unwrap();
    let error = CsvSource::open(&path, TextConfig::new(["id"]))
        .err()
        .unwrap();
    assert!(error.to_string().contains("the input is empty"), "{error}");
    let allowed = TextConfig::new(["id"]).allow_empty(true);
    for regions in 1..=3 {
        let sources = CsvSource::open_regions(&path, allowed.clone(), regions).unwrap();
        assert!(land(sources).is_empty(), "{regions} regions");
    }
}
