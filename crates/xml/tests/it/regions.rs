//! A file split into regions parses to exactly what one source gives: the
//! same rows at the same positions and record numbers, the same error at
//! the same place, whatever the split points land on.

use std::path::Path;

use ringpipe_xml::gen::{write_catalogue, Catalogue, Layout};
use ringpipe_xml::{XmlConfig, XmlSource};

use crate::common::{assert_same, drain, Drained};

/// Every region drained in turn, as one run (stopping at the first error);
/// also returns how many regions emitted anything.
fn drain_regions(path: &Path, config: XmlConfig, regions: usize) -> (usize, Drained) {
    let sources = XmlSource::open_regions(path, config, regions).expect("open regions");
    assert!(sources.len() == regions || sources.len() == 1);
    let mut count = 0;
    let mut all = Drained {
        rows: Vec::new(),
        positions: Vec::new(),
        error: None,
    };
    for source in sources {
        let part = drain(source);
        count += usize::from(!part.rows.is_empty() || part.error.is_some());
        all.rows.extend(part.rows);
        all.positions.extend(part.positions);
        if part.error.is_some() {
            all.error = part.error;
            break;
        }
    }
    (count, all)
}

/// Writes `xml` to a file and checks every region count against one source.
/// Returns how many regions emitted rows for each count.
fn check(xml: &[u8], config: &XmlConfig, what: &str) -> Vec<usize> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.xml");
    std::fs::write(&path, xml).unwrap();
    check_file(&path, config, what)
}

/// Checks the file at `path` read in 1, 2, 3, 4, 7 and 16 regions against
/// one source; how many regions emitted rows for each count.
pub(crate) fn check_file(path: &Path, config: &XmlConfig, what: &str) -> Vec<usize> {
    let whole = drain(XmlSource::open(path, config.clone()).unwrap());
    [1, 2, 3, 4, 7, 16]
        .into_iter()
        .map(|regions| {
            let (count, split) = drain_regions(path, config.clone(), regions);
            assert!(count <= regions, "{what}: {count} regions of {regions}");
            assert_same(&split, &whole, &format!("{what}, {regions} regions"));
            count
        })
        .collect()
}

fn catalogue_xml(catalogue: &Catalogue) -> Vec<u8> {
    let mut xml = Vec::new();
    write_catalogue(catalogue, &mut xml).unwrap();
    xml
}

#[test]
fn generated_catalogues_split_into_the_same_rows() {
    for (seed, layout) in [
        (1, Layout::Elements),
        (2, Layout::Attributes),
        (3, Layout::Fields),
    ] {
        let catalogue = Catalogue::new(300).seed(seed).layout(layout).extras(true);
        let counts = check(
            &catalogue_xml(&catalogue),
            &catalogue.config(),
            &format!("{layout:?}"),
        );
        assert_eq!(counts, [1, 2, 3, 4, 7, 16], "{layout:?}: every split found");
    }
}

/// Records whose surroundings hold what a byte search for `<product` would
/// take for a record: comments, CDATA, processing instructions, attribute
/// values, records nested in records, and records at two depths.
fn trap_document(records: usize) -> String {
    let mut xml = String::from(
        "\u{FEFF}<?xml version=\"1.0\"?>\n<!DOCTYPE catalog [\n  <!ENTITY co \"Acme\">\n  \
         <!-- the catalogue's <product> type -->\n]>\n<catalog>\n",
    );
    for i in 1..=records {
        let body = match i % 6 {
            0 => format!("<!-- <product><id>x{i}</id></product> -->\n"),
            1 => format!("<note><![CDATA[<product><id>y{i}</id></product>]]></note>\n"),
            2 => format!("<?pi <product><id>z{i}</id></product> ?>\n"),
            3 => "<link title=\"&lt;product>\" rel='a>b'/>\n".to_owned(),
            4 => "<group>\n  ".to_owned(),
            _ => String::new(),
        };
        xml.push_str(&body);
        xml.push_str(&format!(
            "<product id=\"{i}\"><name>n{i} &amp; caf\u{e9}</name>\
             <rel><product id=\"in{i}\"><name>inner</name></product></rel>\
             <!-- </product> --><![CDATA[</product>]]><?pi </product>?>\
             <x a='/>' b=\"/product>\"/><price>{i}.50</price></product>\n"
        ));
        if i % 6 == 4 {
            xml.push_str(&format!("<product id=\"g{i}\"/>\n</group>\n"));
        }
    }
    xml.push_str("</catalog>\n");
    xml
}

#[test]
fn split_points_never_land_inside_markup_or_records() {
    let config = XmlConfig::new("product", ["id", "name", "price"]);
    for records in [1, 2, 5, 13, 60, 250] {
        let xml = trap_document(records);
        let counts = check(xml.as_bytes(), &config, &format!("{records} trap records"));
        assert_eq!(counts[0], 1);
        if records >= 60 {
            assert_eq!(
                counts[1..],
                [2, 3, 4, 7, 16],
                "{records}: every split found"
            );
        }
    }
}

#[test]
fn a_bad_record_in_a_later_region_is_reported_where_one_source_reports_it() {
    let config = XmlConfig::new("product", ["id", "name", "price"]);
    let xml = trap_document(200);
    // An undeclared entity in record 170 (the generator's "n170 &amp;").
    let bad = xml.replacen("n170 &amp;", "n170 &nope;", 1);
    assert_ne!(bad, xml);
    // The drain stops at the error, in a later region.
    let counts = check(bad.as_bytes(), &config, "bad record 170");
    assert_eq!(counts[1..], [2, 3, 4, 6, 14]);
    // An entity the DOCTYPE declared is refused in words that say so,
    // also in a region that never read the DOCTYPE.
    let declared = xml.replacen("n170 &amp;", "n170 &co;", 1);
    let counts = check(
        declared.as_bytes(),
        &config,
        "declared entity in record 170",
    );
    assert_eq!(counts[1..], [2, 3, 4, 6, 14]);
}

#[test]
fn a_mysqldump_root_keeps_raw_line_ends_in_every_region() {
    let rows: String = (1..=50)
        .map(|i| {
            format!(
                "<row><field name=\"id\">{i}</field><field name=\"note\">a\r\nb</field></row>\n"
            )
        })
        .collect();
    let xml = format!("<mysqldump><database name=\"d\"><table_data name=\"t\">\n{rows}</table_data></database></mysqldump>\n");
    let config = XmlConfig::new("row", ["id", "note"]);
    let counts = check(xml.as_bytes(), &config, "mysqldump");
    assert_eq!(counts[1..], [2, 3, 4, 7, 16]);
}

#[test]
fn unsplittable_inputs_come_back_whole() {
    let config = XmlConfig::new("product", ["id", "name", "price"]);
    let dir = tempfile::tempdir().unwrap();
    let xml = trap_document(100);

    let gz = dir.path().join("t.xml.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, xml.as_bytes()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    assert_eq!(
        XmlSource::open_regions(&gz, config.clone(), 4)
            .unwrap()
            .len(),
        1
    );

    let latin1 = dir.path().join("latin1.xml");
    let declared = xml
        .replace('\u{FEFF}', "")
        .replace(
            "<?xml version=\"1.0\"?>",
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
        )
        .replace('\u{e9}', "e");
    std::fs::write(&latin1, declared).unwrap();
    assert_eq!(
        XmlSource::open_regions(&latin1, config.clone(), 4)
            .unwrap()
            .len(),
        1
    );

    // A pipe can be read only once, from the start.
    let fifo = dir.path().join("fifo.xml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let (fifo, xml) = (fifo.clone(), xml.clone());
        std::thread::spawn(move || std::fs::write(fifo, xml).unwrap())
    };
    let sources = XmlSource::open_regions(&fifo, config.clone(), 4).unwrap();
    assert_eq!(sources.len(), 1);
    let piped = drain(sources.into_iter().next().unwrap());
    writer.join().unwrap();
    let plain = dir.path().join("plain.xml");
    std::fs::write(&plain, &xml).unwrap();
    assert_same(
        &piped,
        &drain(XmlSource::open(&plain, config.clone()).unwrap()),
        "fifo",
    );
    assert_eq!(
        piped.rows.len(),
        100 + (1..=100).filter(|i| i % 6 == 4).count()
    );

    // Malformed markup before every split point: the plan gives up there
    // and the one source reports the fault as usual.
    let early = xml.replacen("</name>", "</nome>", 1);
    let counts = check(early.as_bytes(), &config, "malformed early");
    assert_eq!(counts, [1; 6]);
}

#[test]
fn a_fault_the_plan_passes_over_is_reported_where_one_source_finds_it() {
    // The plan passes over a record's content up to its first end tag of
    // the record's name, so it ends the third record at the `</product>`
    // inside the attribute value and may split at the record after it;
    // the region before then meets its end inside that value. One source
    // reads on to the closing quote and refuses the `<` in the value, and
    // so must every split (found by libFuzzer: the regions reported the
    // input ending inside the value).
    let config = XmlConfig::new("product", ["id", "name", "price"]);
    let mut xml = String::from("<catalog>\n");
    for i in 1..=2 {
        xml.push_str(&format!(
            "<product id=\"{i}\"><name>n{i}</name></product>\n"
        ));
    }
    let padding = "x".repeat(100);
    xml.push_str(&format!(
        "<product id=\"3\"><name a='x<b {padding}\n</product>\n<product id=\"4\">'>\n"
    ));
    for i in 5..=8 {
        xml.push_str(&format!(
            "<product id=\"{i}\"><name>n{i}</name></product>\n"
        ));
    }
    xml.push_str("</catalog>\n");
    check(xml.as_bytes(), &config, "a `<` in an attribute value");
    let whole = crate::common::parse(&xml, config);
    assert_eq!(whole.rows.len(), 2);
    assert!(
        whole.error.as_ref().is_some_and(|e| e
            .to_string()
            .contains("`<` is not allowed in an attribute value")),
        "{:?}",
        whole.error.as_ref().map(ToString::to_string)
    );
}
