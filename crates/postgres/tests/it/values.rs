//! Hostile values round trip exactly, in binary and in text COPY.

use ringpipe_pipeline::{Import, ImportError, Retryable};
use ringpipe_postgres::{CopyFormat, PgConfig, PgError, PgTarget};

use crate::common::{url, Cell, Rows, Table};

const HOSTILE: &[&str] = &[
    "",
    "plain",
    "it's \"quoted\"",
    "back\\slash \\N \\x41 \\\\",
    "tab\there",
    "new\nline\r\nand cr\r",
    "caf\u{e9} \u{1F600} \u{202E}rtl",
    "'; DROP TABLE x; --",
    "\\.",
    "\u{1}\u{7f}",
];

fn roundtrip(name: &str, ddl: &str, format: CopyFormat, binary: bool) {
    let mut table = Table::new(name, ddl);
    let mut rows: Vec<Vec<Cell>> = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let bytes = Cell::Bytes(v.as_bytes().iter().rev().copied().collect());
            vec![Cell::Text(i.to_string()), Cell::Text(v.to_string()), bytes]
        })
        .collect();
    rows.push(vec![Cell::Text("100".into()), Cell::Null, Cell::Null]);
    rows.push(vec![
        Cell::Text("101".into()),
        Cell::Text("text into bytea below".into()),
        Cell::Text("\\x00".into()),
    ]);
    let config = PgConfig::new(url(), name, &["id", "t", "b"]).format(format);
    let target = PgTarget::new(config);
    Import::new(target.clone())
        .batch_rows(4)
        .run(vec![Rows::new(&["id", "t", "b"], rows)])
        .unwrap();
    assert_eq!(target.binary(), Some(binary));
    let got = table.rows("t, encode(b, 'hex')", "id");
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    for (i, value) in HOSTILE.iter().enumerate() {
        let reversed: Vec<u8> = value.as_bytes().iter().rev().copied().collect();
        assert_eq!(got[i][0].as_deref(), Some(*value), "row {i}");
        assert_eq!(got[i][1], Some(hex(&reversed)), "row {i}");
    }
    assert_eq!(got[HOSTILE.len()], vec![None, None]);
    // Text into bytea is stored as its bytes, not read as bytea's escapes.
    assert_eq!(got[HOSTILE.len() + 1][1], Some(hex(b"\\x00")));
}

#[test]
fn pg_values_roundtrip_binary() {
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, t text, b bytea)";
    roundtrip("pg_values_binary", ddl, CopyFormat::Auto, true);
}

#[test]
fn pg_values_roundtrip_text() {
    // oid has no binary encoder here: the whole COPY is text.
    let ddl = "CREATE TABLE {t} (id oid PRIMARY KEY, t varchar(100), b bytea)";
    roundtrip("pg_values_text", ddl, CopyFormat::Auto, false);
}

#[test]
fn pg_values_nul_is_refused_with_its_record() {
    let _table = Table::new("pg_values_nul", "CREATE TABLE {t} (id int, t text)");
    for format in [CopyFormat::Binary, CopyFormat::Text] {
        let config = PgConfig::new(url(), "pg_values_nul", &["id", "t"]).format(format);
        let rows = Rows::text(
            &["id", "t"],
            &[&[Some("1"), Some("ok")], &[Some("2"), Some("a\0b")]],
        );
        let failure = Import::new(PgTarget::new(config))
            .run(vec![rows])
            .unwrap_err();
        let ImportError::Sink { error, .. } = &failure.error else {
            panic!("{failure}");
        };
        // The server refuses it, in binary and text COPY alike.
        let PgError::BadRecord { position, .. } = error else {
            panic!("{error}");
        };
        assert_eq!(position.record, 2, "{error}");
        assert_eq!(error.sqlstate(), Some("22021"), "{error}");
        assert!(!error.is_retryable());
    }
}

#[test]
fn pg_values_typed_columns_in_binary() {
    let ddl = "CREATE TABLE {t} (id int8 PRIMARY KEY, s int2, f float8, r float4, ok bool, j jsonb, c char(3))";
    let mut table = Table::new("pg_values_typed", ddl);
    let columns = ["id", "s", "f", "r", "ok", "j", "c"];
    let rows = Rows::text(
        &columns,
        &[
            &[
                Some("1"),
                Some(" -5 "),
                Some("1.5e3"),
                Some("0.1"),
                Some("yes"),
                Some("{\"a\": [1, \"x\"]}"),
                Some("ab"),
            ],
            &[
                Some("9223372036854775807"),
                None,
                Some("-Infinity"),
                Some("NaN"),
                Some("f"),
                Some("null"),
                None,
            ],
        ],
    );
    let target = PgTarget::new(PgConfig::new(url(), "pg_values_typed", &columns));
    Import::new(target.clone()).run(vec![rows]).unwrap();
    assert_eq!(target.binary(), Some(true));
    let got = table.rows(
        "s::text, f::text, r::text, ok::text, j::text, c::text",
        "id",
    );
    let some = |v: &str| Some(v.to_owned());
    assert_eq!(
        got[0],
        vec![
            some("-5"),
            some("1500"),
            some("0.1"),
            some("true"),
            some("{\"a\": [1, \"x\"]}"),
            some("ab")
        ]
    );
    assert_eq!(
        got[1],
        vec![
            None,
            some("-Infinity"),
            some("NaN"),
            some("false"),
            some("null"),
            None
        ]
    );
    // A value the column's type refuses is a bad value, named.
    let rows = Rows::text(&["id", "s"], &[&[Some("3"), Some("70000")]]);
    let config = PgConfig::new(url(), "pg_values_typed", &["id", "s"]);
    let failure = Import::new(PgTarget::new(config))
        .run(vec![rows])
        .unwrap_err();
    assert!(
        failure
            .to_string()
            .contains("record 1 (line 1, column 0): column \"s\": "),
        "{failure}"
    );
}

#[test]
fn pg_values_the_server_would_alter_are_refused_with_record_and_column() {
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, f float8, r float4, n numeric(6,2), \
               v varchar(3), ts timestamp, d date, j jsonb)";
    let name = "pgsink_values_altered";
    let mut table = Table::new(name, ddl);
    let columns = ["id", "f", "r", "n", "v", "ts", "d", "j"];
    let good = [
        Some("1"),
        Some("1e-300"),
        Some("1e-40"),
        Some("1234.50"),
        Some("ab "),
        Some("2020-01-01 10:00:00.123456"),
        Some("2020-01-01 00:00:00"),
        Some("{\"a\": {\"b\": 1}, \"b\": 2}"),
    ];
    let mut rows: Vec<[Option<&str>; 8]> = vec![good];
    // Each later row alters one value of the good one.
    let altered: [(usize, &str); 8] = [
        (1, "1e-400"),
        (2, "1e-50"),
        (3, "1.239"),
        (4, "ab  "),
        (5, "2020-01-01 10:00:00.1234567"),
        (5, "2020-01-01 10:00:00+02"),
        (6, "2020-01-01 12:34"),
        (7, "{\"a\": {\"b\": 1, \"b\": 2}}"),
    ];
    for (i, (column, value)) in altered.iter().enumerate() {
        let mut row = good;
        row[0] = Some(["2", "3", "4", "5", "6", "7", "8", "9"][i]);
        row[*column] = Some(value);
        rows.push(row);
    }
    let slices: Vec<&[Option<&str>]> = rows.iter().map(|r| &r[..]).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &columns)
        .max_bad(10)
        .reject_file(&file);
    Import::new(PgTarget::new(config))
        .run(vec![Rows::text(&columns, &slices)])
        .unwrap();
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(lines.lines().count(), altered.len(), "{lines}");
    // Each refusal names its column: the encoder's (binary COPY refuses
    // the floats' underflow, the checks what would be altered) or the
    // server's.
    for (i, (column, _)) in altered.iter().enumerate() {
        let record = format!("{}\t{}:0\t", i + 2, i + 2);
        let line = lines.lines().find(|l| l.starts_with(&record)).unwrap();
        let ours = format!("column {:?}", columns[*column]);
        let server = format!("column {}:", columns[*column]);
        assert!(line.contains(&ours) || line.contains(&server), "{line}");
    }
    let got = table.rows(
        "f::text, r::text, n::text, v, ts::text, d::text, j::text",
        "id",
    );
    assert_eq!(got.len(), 1);
    let expect = [
        "1e-300",
        "1e-40",
        "1234.50",
        "ab ",
        "2020-01-01 10:00:00.123456",
        "2020-01-01",
        "{\"a\": {\"b\": 1}, \"b\": 2}",
    ];
    let expect: Vec<Option<String>> = expect.iter().map(|v| Some(v.to_string())).collect();
    assert_eq!(got[0], expect);
}

#[test]
fn pg_values_floats_that_underflow_are_refused_in_binary_copy() {
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, f float8, r float4)";
    let name = "pgsink_values_underflow";
    let mut table = Table::new(name, ddl);
    let columns = ["id", "f", "r"];
    let rows = Rows::text(
        &columns,
        &[
            &[Some("1"), Some("1e-300"), Some("1e-40")],
            &[Some("2"), Some("1e-400"), Some("1")],
            &[Some("3"), Some("1"), Some("-1e-50")],
            &[Some("4"), Some("0e-999"), Some("-0.0")],
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &columns)
        .max_bad(2)
        .reject_file(&file);
    let target = PgTarget::new(config);
    Import::new(target.clone()).run(vec![rows]).unwrap();
    assert_eq!(target.binary(), Some(true));
    let lines = std::fs::read_to_string(&file).unwrap();
    assert!(
        lines.contains("2\t2:0\trecord 2, column \"f\": \"1e-400\" is out of range"),
        "{lines}"
    );
    assert!(
        lines.contains("3\t3:0\trecord 3, column \"r\": \"-1e-50\" is out of range"),
        "{lines}"
    );
    let got = table.rows("id::text AS i, f::text, r::text", "id");
    let some = |v: &str| Some(v.to_owned());
    assert_eq!(
        got,
        vec![
            vec![some("1"), some("1e-300"), some("1e-40")],
            vec![some("4"), some("0"), some("-0")],
        ]
    );
}
