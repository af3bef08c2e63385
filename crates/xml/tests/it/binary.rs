//! Typed binary fields: `xsi:type="xs:hexBinary"` / `xs:base64Binary` and
//! `XmlConfig::decode`, and the hint for a dump made without `--hex-blob`.

use ringpipe_pipeline::{Row, Source, Value};
use ringpipe_xml::{Decode, XmlConfig, XmlSource};

use crate::common::parse;

/// Each row's values: text as is, bytes as `0x…`, NULL as `NULL`.
fn read(xml: &[u8], config: XmlConfig) -> Vec<Vec<String>> {
    let mut source =
        XmlSource::from_reader("t.xml", std::io::Cursor::new(xml.to_vec()), config).unwrap();
    let mut row = Row::with_columns(source.columns().len());
    let mut out = Vec::new();
    while source.next_row(&mut row).unwrap() {
        let show = |v: Option<Value<'_>>| match v {
            None => "NULL".to_owned(),
            Some(Value::Text(t)) => t.to_owned(),
            Some(Value::Bytes(b)) => format!(
                "0x{}",
                b.iter().map(|x| format!("{x:02X}")).collect::<String>()
            ),
        };
        out.push((0..row.len()).map(|i| show(row.get(i))).collect());
    }
    out
}

const DUMP: &str = r#"<?xml version="1.0"?>
<mysqldump xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<database name="test">
	<table_data name="t">
	<row>
		<field name="id">1</field>
		<field name="b" xsi:type="xs:hexBinary">5C30</field>
		<field name="v" xsi:type="xs:hexBinary"></field>
		<field name="n" xsi:nil="true" />
	</row>
	<row>
		<field name="id">2</field>
		<field name="b" xsi:type="xs:base64Binary">AP8=</field>
		<field name="v" xsi:type="xs:hexBinary">00</field>
		<field name="n" xsi:type="xs:hexBinary" xsi:nil="true" />
	</row>
	</table_data>
</database>
</mysqldump>
"#;

#[test]
fn typed_fields_become_bytes() {
    assert_eq!(
        read(
            DUMP.as_bytes(),
            XmlConfig::new("row", ["id", "b", "v", "n"])
        ),
        [
            ["1", "0x5C30", "0x", "NULL"],
            ["2", "0x00FF", "0x00", "NULL"]
        ]
    );
}

#[test]
fn decode_turns_plain_text_into_bytes() {
    let xml = b"<t><row><id>1</id><data>3q2+7w==</data><h k='0a0B'/></row></t>";
    let config = XmlConfig::new("row", ["id", "data", "k"])
        .decode("data", Decode::Base64)
        .field("k", "h/@k")
        .decode("k", Decode::Hex);
    assert_eq!(read(xml, config), [["1", "0xDEADBEEF", "0x0A0B"]]);
    let text = XmlConfig::new("row", ["data"])
        .field("data", "data")
        .decode("data", Decode::Base64);
    assert_eq!(read(xml, text), [["0xDEADBEEF"]]);
}

#[test]
fn a_bad_digit_names_record_field_and_position() {
    let bad = DUMP.replacen("AP8=", "AP*=", 1);
    let error = parse(bad, XmlConfig::new("row", ["id", "b", "v", "n"]))
        .error
        .unwrap();
    assert_eq!(
        error.to_string(),
        "t.xml:13:50: record 2: field `b`: bad value: column `b`: '*' is not a base64 digit \
         (at byte 2 of the value)"
    );
    let odd = DUMP.replacen("5C30", "5C3", 1);
    let error = parse(odd, XmlConfig::new("row", ["id", "b"]))
        .error
        .unwrap()
        .to_string();
    assert!(
        error.contains("record 1: field `b`: bad value: column `b`: odd number of hex digits"),
        "{error}"
    );
}

#[test]
fn raw_bytes_in_a_dump_suggest_hex_blob() {
    let raw = DUMP.replacen(
        "<field name=\"id\">2</field>",
        "<field name=\"id\">2\u{0}</field>",
        1,
    );
    let raw = raw.as_bytes().to_vec();
    let error = parse(&raw, XmlConfig::new("row", ["id"]))
        .error
        .unwrap()
        .to_string();
    assert!(error.contains("U+0000 is not allowed in XML"), "{error}");
    assert!(error.contains("need `--hex-blob` when dumping"), "{error}");
    let mut latin = DUMP.as_bytes().to_vec();
    let at = DUMP.find("5C30").unwrap();
    latin.splice(at..at + 4, [b'\\', 0xFF]);
    let error = parse(&latin, XmlConfig::new("row", ["id"]))
        .error
        .unwrap()
        .to_string();
    assert_eq!(
        error,
        format!(
            "t.xml:7:44: record 1: invalid UTF-8 at byte offset {}; this is a mysqldump/mariadb-dump \
             --xml file: binary columns need `--hex-blob` when dumping (the importer then decodes them)",
            at + 1
        )
    );
}
