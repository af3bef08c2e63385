//! Files, gzip, readers, encodings and progress.

use std::io::Write;

use ringpipe_pipeline::Source;
use ringpipe_xml::gen::Catalogue;
use ringpipe_xml::{XmlConfig, XmlError, XmlSource};

use crate::common::{drain, failure, parse, rows, values};

#[test]
fn plain_and_gzip_files_give_the_same_rows_and_report_progress() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::new(500).seed(11);
    let plain = dir.path().join("products.xml");
    let gz = dir.path().join("products.xml.gz");
    catalogue.write_file(&plain).unwrap();
    catalogue.write_file(&gz).unwrap();
    let mut results = Vec::new();
    for path in [&plain, &gz] {
        let size = std::fs::metadata(path).unwrap().len();
        let mut source = XmlSource::open(path, catalogue.config()).unwrap();
        let mut row = ringpipe_pipeline::Row::with_columns(9);
        let mut got = Vec::new();
        while source.next_row(&mut row).unwrap() {
            got.push(row.text(1).unwrap().to_owned());
        }
        let progress = source.progress();
        assert_eq!(
            (progress.bytes_read, progress.bytes_total, progress.records),
            (size, Some(size), 500)
        );
        results.push(got);
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0][499], catalogue.product(500).sku);
}

#[test]
fn gzip_from_a_reader_is_detected_by_its_magic_number() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"<r><p a='1'/></r>").unwrap();
    let bytes = gz.finish().unwrap();
    assert_eq!(
        rows(bytes, XmlConfig::new("p", ["a"])),
        vec![values(&[Some("1")])]
    );
}

#[test]
fn corrupt_gzip_is_an_io_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.xml.gz");
    std::fs::write(&path, b"\x1F\x8B\x08\x00garbage").unwrap();
    let error = match XmlSource::open(&path, XmlConfig::new("p", ["a"])) {
        Err(error) => error,
        Ok(source) => drain(source).error.expect("corrupt gzip must fail"),
    };
    assert!(matches!(error, XmlError::Io { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with(&path.display().to_string()),
        "{error}"
    );
}

#[test]
fn missing_file() {
    let error = XmlSource::open("/nonexistent/products.xml", XmlConfig::new("p", ["a"]))
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/products.xml: I/O error: "),
        "{error}"
    );
}

#[test]
fn utf8_bom_is_skipped_but_counted_in_offsets() {
    let drained = parse("\u{FEFF}<r>\n <p a='1'/></r>", XmlConfig::new("p", ["a"]));
    assert_eq!(drained.rows, vec![values(&[Some("1")])]);
    let position = drained.positions[0];
    assert_eq!(
        (position.line, position.column, position.byte_offset),
        (2, 2, 3 + 5)
    );
}

#[test]
fn latin1_is_transcoded() {
    let xml = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<r><p a='caf\xE9'><b>\xC0 la carte \x80</b></p></r>";
    let source =
        XmlSource::from_reader("t.xml", &xml[..], XmlConfig::new("p", ["a", "b"])).unwrap();
    assert_eq!(source.encoding(), "ISO-8859-1");
    let drained = drain(source);
    assert_eq!(
        drained.rows,
        vec![values(&[Some("café"), Some("À la carte \u{80}")])]
    );
}

#[test]
fn windows_1252_is_transcoded() {
    let xml = b"<?xml version='1.0' encoding='windows-1252'?><r><p a='\x80 5'/></r>";
    assert_eq!(
        rows(xml, XmlConfig::new("p", ["a"])),
        vec![values(&[Some("€ 5")])]
    );
}

#[test]
fn utf16_gives_the_same_rows_as_utf8() {
    let catalogue = Catalogue::new(200).seed(4).extras(true);
    let mut utf8 = Vec::new();
    ringpipe_xml::gen::write_catalogue(&catalogue, &mut utf8).unwrap();
    let text = String::from_utf8(utf8.clone())
        .unwrap()
        .replace("encoding=\"UTF-8\"", "encoding=\"UTF-16\"");
    for big_endian in [false, true] {
        let mut utf16 = if big_endian {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for unit in text.encode_utf16() {
            utf16.extend(if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            });
        }
        assert_eq!(
            rows(&utf16, catalogue.config()),
            rows(&utf8, catalogue.config())
        );
    }
}

#[test]
fn bad_bytes_in_a_declared_encoding() {
    let mut xml: Vec<u8> = "<r><p a='1'/><p a='"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    xml.extend([0x00, 0xDC]); // a lone low surrogate
    xml.extend("'/></r>".encode_utf16().flat_map(u16::to_le_bytes));
    let mut with_bom = vec![0xFF, 0xFE];
    with_bom.extend(xml);
    let (message, rows) = failure(with_bom, XmlConfig::new("p", ["a"]));
    assert_eq!(
        message,
        "t.xml:1:14: after record 1: bytes at input offset 40 are not valid UTF-16LE"
    );
    assert_eq!(rows, vec![values(&[Some("1")])]);
}

#[test]
fn unsupported_encoding_is_refused_up_front() {
    let (message, _) = failure(
        b"<?xml version='1.0' encoding='klingon'?><r/>",
        XmlConfig::new("p", ["a"]),
    );
    assert_eq!(message, "t.xml: unsupported encoding \"klingon\"");
}

#[test]
fn default_utf8_with_latin1_bytes_says_how_to_fix_it() {
    let (message, _) = failure(b"<r><p a='caf\xE9'/></r>", XmlConfig::new("p", ["a"]));
    assert_eq!(
        message,
        "t.xml:1:13: invalid UTF-8 at byte offset 12 (declare the encoding in `<?xml … encoding=\"…\"?>` if the input is not UTF-8)"
    );
}
