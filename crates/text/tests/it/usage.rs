//! Fields that feed no column are counted, over every region of the
//! input, so that the import can report them: a CSV header field no
//! column takes, in every record; a JSON key that names no column, where
//! it comes.

use std::fmt::Write;

use ringpipe_pipeline::IgnoredFields;
use ringpipe_text::{CsvSource, JsonlSource, TextConfig};

use crate::common::land;

const RECORDS: u64 = 3_000;

fn counts(ignored: IgnoredFields) -> Vec<(String, u64)> {
    assert_eq!(ignored.others, 0);
    ignored.names
}

#[test]
fn csv_header_fields_no_column_takes_are_counted_in_every_region() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let mut text = String::from("id,note,name,extra\n");
    for id in 1..=RECORDS {
        writeln!(text, "{id},n{id},name {id},x").unwrap();
    }
    std::fs::write(&path, text).unwrap();
    let regions = CsvSource::open_regions(&path, TextConfig::new(["id", "name"]), 3).unwrap();
    assert_eq!(regions.len(), 3);
    let usage = regions[0].column_usage();
    assert_eq!(land(regions).len() as u64, RECORDS);
    assert!(usage.unfilled().is_empty());
    let expected = [("note".to_owned(), RECORDS), ("extra".to_owned(), RECORDS)];
    assert_eq!(counts(usage.ignored()), expected);
}

#[test]
fn json_keys_naming_no_column_are_counted_where_they_come() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut text = String::new();
    for id in 1..=RECORDS {
        match id % 3 {
            0 => writeln!(text, r#"{{"id":{id},"title":"t","tags":[1]}}"#),
            _ => writeln!(text, r#"{{"id":{id},"tags":null}}"#),
        }
        .unwrap();
    }
    std::fs::write(&path, text).unwrap();
    let config = TextConfig::new(["id", "name"]);
    let regions = JsonlSource::open_regions(&path, config, 2).unwrap();
    let usage = regions[0].column_usage();
    assert_eq!(land(regions).len() as u64, RECORDS);
    assert_eq!(usage.unfilled(), ["name"]);
    // `tags` in every object (its `null` too: the key was there), `title`
    // in every third.
    let mut got = counts(usage.ignored());
    got.sort();
    let expected = [
        ("tags".to_owned(), RECORDS),
        ("title".to_owned(), RECORDS / 3),
    ];
    assert_eq!(got, expected);
}
