//! Regions read in parallel: the same rows, the same record numbers and
//! the same error positions as one region, whatever the split.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use ringpipe_pipeline::Source;
use ringpipe_text::{write_csv, write_jsonl, CsvSource, JsonlSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

use crate::common::{land, try_land, Random, Rows};

fn csv(path: &Path, regions: usize) -> Vec<CsvSource> {
    let config = TextConfig::new(PRODUCT_COLUMNS).null_string("\\N");
    CsvSource::open_regions(path, config, regions).unwrap()
}

fn jsonl(path: &Path, regions: usize) -> Vec<JsonlSource> {
    JsonlSource::open_regions(path, TextConfig::new(PRODUCT_COLUMNS), regions).unwrap()
}

#[test]
fn one_two_and_three_regions_land_identically() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::new(3_000).seed(11).extras(true);
    let rows = || catalogue.products().map(|p| p.values().to_vec());
    let (c, j) = (dir.path().join("c.csv"), dir.path().join("c.jsonl"));
    write_csv(
        BufWriter::new(File::create(&c).unwrap()),
        &PRODUCT_COLUMNS,
        rows(),
        "\\N",
    )
    .unwrap();
    write_jsonl(
        BufWriter::new(File::create(&j).unwrap()),
        &PRODUCT_COLUMNS,
        rows(),
    )
    .unwrap();
    let expected: Rows = (1..).zip(rows()).collect();
    // The last of three regions starts about two thirds in.
    let mut row = ringpipe_pipeline::Row::with_columns(PRODUCT_COLUMNS.len());
    let mut last = csv(&c, 3).pop().unwrap();
    assert!(last.next_row(&mut row).unwrap());
    assert!(
        (1_900..2_100).contains(&last.records_before()),
        "{}",
        last.records_before()
    );
    let mut last = jsonl(&j, 3).pop().unwrap();
    assert!(last.next_row(&mut row).unwrap());
    assert!(
        (1_900..2_100).contains(&last.records_before()),
        "{}",
        last.records_before()
    );
    for regions in 1..=3 {
        assert_eq!(csv(&c, regions).len(), regions);
        assert_eq!(land(csv(&c, regions)), expected, "CSV in {regions} regions");
        assert_eq!(
            land(jsonl(&j, regions)),
            expected,
            "JSONL in {regions} regions"
        );
    }
}

/// A CSV whose middle is one quoted field of many lines that look like
/// records, with CRLF line ends and empty lines around it.
fn quoted_newlines() -> (Vec<u8>, Rows) {
    let mut text = b"id,v\r\n".to_vec();
    let mut rows = Rows::new();
    let fake: String = (0..400).map(|i| format!("{i},fake\r\n\r\n")).collect();
    for id in 1..=300u64 {
        let v = match id {
            150 => format!("start\r\n{fake}end"),
            _ => format!("value {id}"),
        };
        text.extend_from_slice(format!("{id},\"{v}\"\r\n").as_bytes());
        if id % 7 == 0 {
            text.extend_from_slice(b"\r\n");
        }
        rows.insert(id, vec![Some(id.to_string()), Some(v)]);
    }
    (text, rows)
}

#[test]
fn quoted_newlines_across_a_split_point_land_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.csv");
    let (text, expected) = quoted_newlines();
    std::fs::write(&path, &text).unwrap();
    let config = TextConfig::new(["id", "v"]);
    for regions in 1..=4 {
        let sources = CsvSource::open_regions(&path, config.clone(), regions).unwrap();
        assert_eq!(land(sources), expected, "{regions} regions");
    }
}

#[test]
fn a_fault_in_a_later_region_names_its_place_in_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let (c, j) = (dir.path().join("f.csv"), dir.path().join("f.jsonl"));
    let mut csv_text = String::from("id,v\n");
    let mut jsonl_text = String::new();
    for id in 1..=2_000 {
        match id {
            1_700 => {
                csv_text.push_str("1700\n");
                jsonl_text.push_str("{\"id\": 1700, \"v\": \"a\", \"v\": \"b\"}\n");
            }
            _ => {
                csv_text.push_str(&format!("{id},\"two\nlines\"\n"));
                jsonl_text.push_str(&format!("{{\"id\": {id}, \"v\": \"x\"}}\n\n"));
            }
        }
    }
    std::fs::write(&c, csv_text).unwrap();
    std::fs::write(&j, jsonl_text).unwrap();
    let config = TextConfig::new(["id", "v"]);
    for regions in 1..=3 {
        let sources = CsvSource::open_regions(&c, config.clone(), regions).unwrap();
        let (error, rows) = try_land(sources).unwrap_err();
        // Record 1700 starts on line 1 + 2 × 1699 + 1.
        assert!(
            error.contains("f.csv:3400:2: record 1700: 2 fields as in the header, found 1"),
            "{regions} regions: {error}"
        );
        // Every record before the fault landed.
        assert!(
            (1..1_700).all(|r| rows.contains_key(&r)),
            "{regions} regions"
        );
        let sources = JsonlSource::open_regions(&j, config.clone(), regions).unwrap();
        let (error, rows) = try_land(sources).unwrap_err();
        assert!(
            error.contains("f.jsonl:3399:24: record 1700: a JSON object (the key \"v\" twice)"),
            "{regions} regions: {error}"
        );
        assert!(
            (1..1_700).all(|r| rows.contains_key(&r)),
            "{regions} regions"
        );
    }
}

#[test]
fn more_regions_than_records_leave_the_rest_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "{\"id\": 1}\n{\"id\": 2}\n").unwrap();
    let sources = JsonlSource::open_regions(&path, TextConfig::new(["id"]), 8).unwrap();
    assert_eq!(land(sources).len(), 2);
    let path = dir.path().join("s.csv");
    std::fs::write(&path, "id\n1\n2\n").unwrap();
    let sources = CsvSource::open_regions(&path, TextConfig::new(["id"]), 8).unwrap();
    assert_eq!(land(sources).len(), 2);
}

/// A CSV of awkward records: quoted newlines and quotes, CR, LF and CRLF
/// ends, empty lines, byte-order-mark characters at line starts, and now
/// and then a record of another width.
fn awkward_csv(random: &mut Random) -> String {
    let fields = [
        "x",
        "",
        "plain words",
        "\"q,\"\"uo\"\"\nted\"",
        "\"\r\n\"",
        "\"\"",
        "\u{feff}bom",
        "caf\u{e9}",
        "a\"b",
        "\"a\nb\nc\nd\"",
        "\"1,2\"",
        "\"\n\n\"",
    ];
    let ends = ["\n", "\r\n", "\r", "\n\n", "\r\n\r\n"];
    let mut text = String::from("a,b,c\n");
    for _ in 0..200 + random.below(300) {
        let width = match random.below(3_000) {
            0 => 2,
            1 => 4,
            _ => 3,
        };
        let record: Vec<&str> = (0..width).map(|_| random.pick(&fields)).collect();
        text.push_str(&record.join(","));
        text.push_str(random.pick(&ends));
    }
    text
}

#[test]
fn awkward_csv_and_jsonl_read_the_same_in_any_number_of_regions() {
    // A longer hunt: RINGPIPE_TEXT_SPLIT_FUZZ_SECS=600 RINGPIPE_TEXT_SPLIT_FUZZ_SEED=7.
    let hunt = ringpipe_hunt::Hunt::from_env("RINGPIPE_TEXT_SPLIT_FUZZ", 60, 0x9e37_79b9_7f4a_7c15);
    let dir = tempfile::tempdir().unwrap();
    let mut random = Random(hunt.seed() | 1);
    let config = TextConfig::new(["a", "b", "c"]);
    for case in 0.. {
        if !hunt.more(case) {
            hunt.report(case, "files read alike in 1 to 4 regions");
            break;
        }
        let path = dir.path().join("case.csv");
        std::fs::write(&path, awkward_csv(&mut random)).unwrap();
        let open = |regions| CsvSource::open_regions(&path, config.clone(), regions).unwrap();
        let whole = try_land(open(1));
        for regions in 2..=4 {
            let split = try_land(open(regions));
            match (&whole, &split) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "case {case}, {regions} regions"),
                (Err(a), Err(b)) => assert_eq!(a.0, b.0, "case {case}, {regions} regions"),
                _ => panic!("case {case}, {regions} regions: {whole:?} vs {split:?}"),
            }
        }
        // The same values as JSON Lines, with blank lines between.
        let path = dir.path().join("case.jsonl");
        let mut text = String::new();
        for (i, row) in whole
            .as_ref()
            .map_or(&Rows::new(), |r| r)
            .values()
            .enumerate()
        {
            let object: serde_json::Map<_, _> = ["a", "b", "c"]
                .iter()
                .zip(row)
                .map(|(k, v)| (k.to_string(), v.clone().into()))
                .collect();
            text.push_str(&serde_json::to_string(&object).unwrap());
            text.push_str(if i % 5 == 0 { "\n \t\r\n" } else { "\n" });
        }
        std::fs::write(&path, text).unwrap();
        // A case whose CSV failed leaves no object: an empty input, which
        // reads the same (as nothing) in any number of regions.
        let config = config.clone().allow_empty(true);
        let open = |regions| JsonlSource::open_regions(&path, config.clone(), regions).unwrap();
        let whole = land(open(1));
        for regions in 2..=4 {
            assert_eq!(land(open(regions)), whole, "case {case}, {regions} regions");
        }
    }
}

#[test]
fn only_the_region_at_the_input_end_refuses_an_input_without_records() {
    let dir = tempfile::tempdir().unwrap();
    // Blank lines only: no record in any region.
    let blank = dir.path().join("blank.jsonl");
    std::fs::write(&blank, " \n".repeat(50_000)).unwrap();
    for regions in 1..=3 {
        let error = try_land(jsonl(&blank, regions)).unwrap_err().0;
        assert!(
            error.contains("no record in the input"),
            "{regions}: {error}"
        );
    }
    // Blank lines, then records: the first region may hold none of them.
    let late = dir.path().join("late.jsonl");
    let mut text = " \n".repeat(50_000);
    text.push_str("{\"id\": \"1\"}\n{\"id\": \"2\"}\n");
    std::fs::write(&late, text).unwrap();
    for regions in 1..=3 {
        assert_eq!(land(jsonl(&late, regions)).len(), 2, "{regions} regions");
    }
}

#[test]
fn a_fault_after_a_quoted_line_end_is_on_the_line_it_is_on() {
    // The line of a fault after a closing quote left out the line ends
    // of the quoted field read in the same buffer, so one source and a
    // split read could name different lines (found by libFuzzer).
    use ringpipe_pipeline::{Row, Source};
    use ringpipe_text::{CsvSource, TextConfig};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "a,b\n0,\"x\"\",x\n\"z,\"\n,\"3\n").unwrap();
    let config = || TextConfig::new(["a", "b"]);
    let first_error = |sources: Vec<CsvSource>| {
        let mut row = Row::with_columns(2);
        for mut source in sources {
            loop {
                match source.next_row(&mut row) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(error) => return error.to_string(),
                }
            }
        }
        panic!("no error");
    };
    let whole = first_error(vec![CsvSource::open(&path, config()).unwrap()]);
    assert!(
        whole.contains(
            "t.csv:3:2: record 1: the delimiter or the record's end after a field's closing quote"
        ),
        "{whole}"
    );
    for regions in 2..=4 {
        let split = first_error(CsvSource::open_regions(&path, config(), regions).unwrap());
        assert_eq!(split, whole, "{regions} regions");
    }
}

/// A record as read: its number, line, offset and values.
type Read = (u64, u64, u64, Vec<Option<String>>);

/// Each record of `sources`, drained in order, then the error that stopped
/// them, if one did.
fn positions(sources: Vec<CsvSource>) -> (Vec<Read>, Option<String>) {
    use ringpipe_pipeline::{Row, Source};
    let mut records = Vec::new();
    for mut source in sources {
        let mut row = Row::with_columns(source.columns().len());
        loop {
            match source.next_row(&mut row) {
                Ok(true) => {}
                Ok(false) => break,
                Err(error) => return (records, Some(error.to_string())),
            }
            let at = row.position();
            let values = (0..row.len())
                .map(|i| row.text(i).map(str::to_owned))
                .collect();
            records.push((at.record, at.line, at.byte_offset, values));
        }
    }
    (records, None)
}

#[test]
fn one_column_files_with_empty_lines_and_any_line_ends_read_the_same_in_any_regions() {
    let dir = tempfile::tempdir().unwrap();
    let mut random = Random(0x5eed_1234_abcd_0001);
    let values = ["a", "", "\"\"", "\"x\ry\r\nz\"", "long value here"];
    let ends = ["\n", "\r\n", "\r"];
    for case in 0..20 {
        let mut text = format!("v{}", random.pick(&ends));
        let records = 300 + random.below(300);
        for _ in 0..records {
            let value = random.pick(&values);
            text.push_str(value);
            // An empty line's `\n` after a `\r` would make one `\r\n`.
            let end = match random.pick(&ends) {
                "\n" if value.is_empty() && text.ends_with('\r') => "\r",
                end => end,
            };
            text.push_str(end);
        }
        let path = dir.path().join("one.csv");
        std::fs::write(&path, &text).unwrap();
        let config = TextConfig::new(["v"]).null_string("");
        let open = |regions| CsvSource::open_regions(&path, config.clone(), regions).unwrap();
        let whole = positions(open(1));
        assert_eq!((whole.0.len(), &whole.1), (records, &None), "case {case}");
        for regions in 2..=4 {
            assert_eq!(
                positions(open(regions)),
                whole,
                "case {case}, {regions} regions"
            );
        }
    }
}
