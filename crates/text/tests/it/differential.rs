//! The same catalogue as XML, CSV and JSON Lines lands as identical rows
//! (through [`Import`] into a target that records what it commits).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Cursor};
use std::path::Path;

use crate::common::land;
use ringpipe_text::{write_csv, write_jsonl, CsvSource, JsonlSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

fn write(catalogue: &Catalogue, dir: &Path) {
    let rows = || catalogue.products().map(|p| p.values().to_vec());
    catalogue.write_file(dir.join("c.xml")).unwrap();
    let csv = BufWriter::new(File::create(dir.join("c.csv")).unwrap());
    write_csv(csv, &PRODUCT_COLUMNS, rows(), "\\N").unwrap();
    let jsonl = BufWriter::new(File::create(dir.join("c.jsonl")).unwrap());
    write_jsonl(jsonl, &PRODUCT_COLUMNS, rows()).unwrap();
}

#[test]
fn xml_csv_and_jsonl_land_identically() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::new(3_000).seed(7).extras(true);
    write(&catalogue, dir.path());
    let config = TextConfig::new(PRODUCT_COLUMNS);
    let xml = XmlSource::open(dir.path().join("c.xml"), catalogue.config()).unwrap();
    let csv = CsvSource::open(&dir.path().join("c.csv"), config.clone().null_string("\\N"));
    let jsonl = JsonlSource::open(&dir.path().join("c.jsonl"), config).unwrap();
    let from_xml = land(vec![xml]);
    assert_eq!(from_xml.len(), 3_000);
    let expected: BTreeMap<u64, Vec<Option<String>>> = catalogue
        .products()
        .map(|p| (p.id, p.values().to_vec()))
        .collect();
    assert_eq!(from_xml, expected);
    assert_eq!(land(vec![csv.unwrap()]), expected);
    assert_eq!(land(vec![jsonl]), expected);
}

#[test]
fn gzip_inputs_read_the_same() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(File::create(&path).unwrap(), Default::default());
    gz.write_all(b"id,name\n1,a\n2,\"b\nc\"\n").unwrap();
    gz.finish().unwrap();
    let source = CsvSource::open(&path, TextConfig::new(["id", "name"])).unwrap();
    let rows = land(vec![source]);
    assert_eq!(rows[&2], vec![Some("2".into()), Some("b\nc".into())]);
}

#[test]
fn hostile_values_survive_both_formats() {
    let values = [
        "",
        " lead and trail ",
        "a,b;c",
        "\"quoted\" \"\"",
        "new\nline\r\n",
        "tab\t",
        "back\\slash \\N",
        "caf\u{e9} \u{1F600}",
        "{\"json\": [1]}",
        "\u{0}nul",
    ];
    let rows: Vec<Vec<Option<String>>> = values
        .iter()
        .enumerate()
        .map(|(i, v)| vec![Some(i.to_string()), Some(v.to_string()), None])
        .collect();
    let columns = ["id", "v", "n"];
    let (mut csv, mut jsonl) = (Vec::new(), Vec::new());
    write_csv(&mut csv, &columns, rows.clone(), "NULL").unwrap();
    write_jsonl(&mut jsonl, &columns, rows.clone()).unwrap();
    let config = TextConfig::new(columns);
    let csv = CsvSource::from_reader(
        Cursor::new(csv),
        "h.csv",
        config.clone().null_string("NULL"),
    );
    let jsonl = JsonlSource::from_reader(Cursor::new(jsonl), "h.jsonl", config);
    let expected: BTreeMap<u64, Vec<Option<String>>> = (1..).zip(rows).collect();
    assert_eq!(land(vec![csv.unwrap()]), expected);
    assert_eq!(land(vec![jsonl]), expected);
}
