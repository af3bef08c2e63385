//! numeric, timestamp and date in binary COPY land exactly as in text COPY:
//! the same stored values, the same refusals, row order and the merge kept
//! when a batch mixes binary and text rows.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use postgres::Client;
use ringpipe_pipeline::{Import, Row};
use ringpipe_postgres::{CopyEncoder, CopyFormat, Encoder, Mode, PgConfig, PgTarget, RowFormat};

use crate::common::{client, url, Cell, Rows, Table};

const COLUMNS: [&str; 8] = ["id", "n", "n12", "n5", "ts", "ts0", "ts3", "d"];
const DDL: &str = "CREATE TABLE {t} (id int PRIMARY KEY, n numeric, n12 numeric(12,2), \
                   n5 numeric(5,0), ts timestamp, ts0 timestamp(0), ts3 timestamp(3), d date)";

/// Numeric spellings, canonical or not, valid or not.
fn numerics() -> Vec<String> {
    let mut values: Vec<String> = [
        "0",
        "-0",
        "0.000",
        "-0.000",
        "007.50",
        "-1.005",
        "1.00",
        "2.500",
        "+3.25",
        "12345",
        "-99999",
        "123456",
        "99999999999.995",
        "99999999999.99",
        "9999999999.99",
        "-9999999999.99",
        "0.00001234",
        "-123456789.123456789",
        "10000",
        "100000000.0001",
        "1e5",
        "1E-2",
        " 12",
        "12 ",
        "1.",
        ".5",
        "-.5",
        "NaN",
        "nan",
        "Infinity",
        "-Infinity",
        "1_000",
        "abc",
        "",
        "--1",
    ]
    .iter()
    .map(|v| v.to_string())
    .collect();
    values.push("7".repeat(1000));
    values.push(format!("-{}.{}", "1".repeat(500), "2".repeat(500)));
    values.push(format!("0.{}1", "0".repeat(998)));
    values.push("9".repeat(131_072));
    values.push("9".repeat(131_073));
    values.push(format!("1.{}", "5".repeat(16_383)));
    values.push(format!("1.{}", "5".repeat(16_384)));
    values
}

/// Timestamp spellings.
const TIMESTAMPS: &[&str] = &[
    "2000-01-01 00:00:00",
    "1999-12-31 23:59:59.999999",
    "1999-12-31 23:59:59.5",
    "0001-01-01 00:00:00",
    "0099-06-01 12:00:00",
    "9999-12-31 23:59:59.5",
    "9999-12-31 23:59:59.999999",
    "2024-02-29 12:00:00",
    "2023-02-29 12:00:00",
    "1900-02-29 12:00:00",
    "2000-02-29 12:00:00.000",
    "2023-06-01 10:00:00.123",
    "2023-06-01 10:00:00.1",
    "2023-06-01 24:00:00",
    "2023-06-01 23:59:60",
    "2023-06-01T10:00:00",
    "2023-06-01 10:00:00+02",
    "2023-06-01 10:00:00 UTC",
    "2023-06-01 10:00:00.1234567",
    "2023-06-01 10:00:00.1234560",
    "2023-06-01 10:00",
    "2023-06-01",
    "2023-06-01 10:00:00 BC",
    "0000-01-01 00:00:00",
    "10000-01-01 00:00:00",
    " 2023-06-01 10:00:00",
    "infinity",
    "-infinity",
    "epoch",
    "garbage",
];

/// Date spellings.
const DATES: &[&str] = &[
    "2000-01-01",
    "2000-02-29",
    "1900-02-29",
    "2023-02-29",
    "0001-01-01",
    "0099-12-31",
    "9999-12-31",
    "10000-01-01",
    "0000-01-01",
    "2023-06-01 00:00:00",
    "2023-6-1",
    " 2023-06-01",
    "20230601",
    "2023-06-01 BC",
    "infinity",
    "-infinity",
    "epoch",
    "garbage",
];

/// One row per value and column it is meant for (the others NULL), then a
/// row of canonical values in every column and a row of NULLs.
fn hostile_rows() -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    let mut add = |column: usize, value: &str| {
        let mut row = vec![Cell::Null; COLUMNS.len()];
        row[0] = Cell::Text((rows.len() + 1).to_string());
        row[column] = Cell::Text(value.to_owned());
        rows.push(row);
    };
    for value in numerics() {
        for column in 1..=3 {
            add(column, &value);
        }
    }
    for value in TIMESTAMPS {
        for column in 4..=6 {
            add(column, value);
        }
    }
    for value in DATES {
        add(7, value);
    }
    let full = [
        "12.5",
        "1234.50",
        "42",
        "2024-02-29 12:34:56.789012",
        "2024-02-29 12:34:56",
        "2024-02-29 12:34:56.789",
        "2024-02-29",
    ];
    let mut row = vec![Cell::Text((rows.len() + 1).to_string())];
    row.extend(full.iter().map(|v| Cell::Text(v.to_string())));
    rows.push(row);
    let mut nulls = vec![Cell::Null; COLUMNS.len()];
    nulls[0] = Cell::Text((rows.len() + 1).to_string());
    rows.push(nulls);
    rows
}

/// `(record, reason)` of each line of a reject file, the reason without
/// the column the server names last (with the value in a text COPY,
/// without it in a binary one).
fn rejects(path: &Path) -> BTreeMap<u64, String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let reason = fields[2].split(" (column ").next().unwrap();
            (fields[0].parse().unwrap(), reason.to_owned())
        })
        .collect()
}

/// Imports the hostile rows into `name` in `format`; returns the rows as
/// text and the refusals.
fn load(
    name: &str,
    format: CopyFormat,
    dir: &Path,
) -> (Table, Vec<Vec<Option<String>>>, BTreeMap<u64, String>) {
    load_rows(name, (DDL, &COLUMNS), hostile_rows(), format, dir)
}

/// Imports `rows` into `name`, a table made by `ddl` (`{t}` its name)
/// with `columns`, in `format`; returns the rows as text and the refusals.
fn load_rows(
    name: &str,
    (ddl, columns): (&str, &[&str]),
    rows: Vec<Vec<Cell>>,
    format: CopyFormat,
    dir: &Path,
) -> (Table, Vec<Vec<Option<String>>>, BTreeMap<u64, String>) {
    let mut table = Table::new(name, ddl);
    let file = dir.join(format!("{name}.tsv"));
    let config = PgConfig::new(url(), name, columns)
        .format(format)
        .max_bad(10_000)
        .reject_file(&file);
    let target = PgTarget::new(config);
    Import::new(target.clone())
        .batch_rows(16)
        .run(vec![Rows::new(columns, rows)])
        .unwrap();
    assert_eq!(target.binary(), Some(format != CopyFormat::Text), "{name}");
    let rows = table.rows(&format!("\"{name}\"::text"), "id");
    (table, rows, rejects(&file))
}

/// Spellings of integers, floats and booleans: those the server's input
/// functions read (ASCII white space around them included), and those it
/// refuses or reads otherwise than Rust (non-ASCII white space, a
/// hexadecimal float, numbers out of range).
const SCALARS: [(&str, &[&str]); 3] = [
    (
        "i",
        &[
            "5",
            " -7\t",
            "+8",
            "\u{a0}5",
            "7\u{3000}",
            "0x1F",
            "1_000",
            "2147483648",
            "",
            "1.0",
        ],
    ),
    (
        "f",
        &[
            "1.5",
            " 2.5 ",
            "\u{a0}2.5",
            "0x1p3",
            "inf",
            "-Infinity",
            "NaN",
            "1e400",
            "1e-400",
            "1e-310",
            ".5",
            "1.",
            "1e",
        ],
    ),
    (
        "b",
        &[
            "true",
            " on ",
            "t",
            "of",
            "o",
            "\u{a0}true",
            "yes\u{85}",
            "maybe",
            "1",
            "",
        ],
    ),
];

#[test]
fn pg_binary_integers_floats_and_bools_land_as_in_text_copy() {
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, i int4, f float8, b bool)";
    let columns = ["id", "i", "f", "b"];
    let rows = || {
        let mut rows = Vec::new();
        for (at, (_, values)) in SCALARS.iter().enumerate() {
            for value in *values {
                let mut row = vec![Cell::Null; columns.len()];
                row[0] = Cell::Text((rows.len() + 1).to_string());
                row[at + 1] = Cell::Text((*value).to_owned());
                rows.push(row);
            }
        }
        rows
    };
    let dir = tempfile::tempdir().unwrap();
    let loaded = [("bin", CopyFormat::Auto), ("text", CopyFormat::Text)].map(|(name, format)| {
        let name = format!("pg_binary_scalars_{name}");
        load_rows(&name, (ddl, &columns), rows(), format, dir.path())
    });
    let [(_, binary, binary_bad), (_, text, text_bad)] = &loaded;
    assert_eq!(binary, text);
    // The same records refused; the reasons may differ (a number out of
    // range is refused before a binary COPY with the sink's words).
    let refused = |bad: &BTreeMap<u64, String>| bad.keys().copied().collect::<Vec<_>>();
    assert_eq!(refused(binary_bad), refused(text_bad));
    assert!(
        binary.len() > 10 && binary_bad.len() > 10,
        "{binary:?} {binary_bad:?}"
    );
}

#[test]
fn pg_a_nul_in_text_is_refused_by_the_server_on_both_paths() {
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, t text, v varchar(8), c char(4), \
               j json, jb jsonb)";
    let columns = ["id", "t", "v", "c", "j", "jb"];
    // Records 2 to 6 hold a NUL in t, v, c, j and jb in turn (as CSV or
    // JSON Lines text may), record 8 in a binary value, record 10 beside a
    // tab (text COPY's escaping path); the rest are clean.
    let rows = || {
        let mut rows: Vec<Vec<Cell>> = (1..=12)
            .map(|id| {
                let mut row = vec![Cell::Text(id.to_string())];
                row.extend(["t", "v", "c", "\"j\"", "\"jb\""].map(|v| Cell::Text(v.into())));
                row
            })
            .collect();
        for (column, nul) in ["a\0b", "\0", "x\0", "\"\0\"", "\"a\0\""]
            .iter()
            .enumerate()
        {
            rows[column + 1][column + 1] = Cell::Text((*nul).into());
        }
        rows[7][1] = Cell::Bytes(b"a\0b".to_vec());
        rows[9][2] = Cell::Text("tab\tand\0".into());
        rows
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [("bin", CopyFormat::Auto), ("text", CopyFormat::Text)] {
        let name = format!("pg_binary_nul_{name}");
        let (_table, stored, refused) =
            load_rows(&name, (ddl, &columns), rows(), format, dir.path());
        assert_eq!(
            refused.keys().copied().collect::<Vec<_>>(),
            [2, 3, 4, 5, 6, 8, 10],
            "{name}: {refused:?}"
        );
        for reason in refused.values() {
            assert!(
                reason.contains("22021") && reason.contains("0x00"),
                "{name}: {reason}"
            );
        }
        let ids: Vec<&str> = stored
            .iter()
            .map(|row| row[0].as_deref().unwrap().split(',').next().unwrap())
            .collect();
        assert_eq!(ids, ["(1", "(7", "(9", "(11", "(12"], "{name}");
    }
}

#[test]
fn pg_binary_numeric_timestamp_and_date_land_as_in_text_copy() {
    let dir = tempfile::tempdir().unwrap();
    let (_binary_table, binary, binary_bad) =
        load("pg_binary_diff_bin", CopyFormat::Auto, dir.path());
    let (_text_table, text, text_bad) = load("pg_binary_diff_text", CopyFormat::Text, dir.path());
    assert_eq!(binary.len(), text.len());
    for (b, t) in binary.iter().zip(&text) {
        assert_eq!(b, t);
    }
    assert_eq!(binary_bad, text_bad);
    // Not vacuous: values landed and values were refused, by the server
    // (binary and text alike) and by the checks.
    let rows = hostile_rows().len();
    assert_eq!(binary.len() + binary_bad.len(), rows);
    let some = |v: &str| Some(v.to_owned());
    let landed: Vec<&Option<String>> = binary.iter().map(|r| &r[0]).collect();
    for row in [
        "(2,,0.00,,,,,)",
        "(4,0,,,,,,)",
        "(7,0.000,,,,,,)",
        "(13,7.50,,,,,,)",
        "(21,,,1,,,,)",
        "(23,,2.50,,,,,)",
    ] {
        assert!(landed.contains(&&some(row)), "{row} in {landed:?}");
    }
    let reasons: Vec<&String> = binary_bad.values().collect();
    for code in ["22003", "22P02", "22008", "22007", "would be rounded"] {
        assert!(
            reasons.iter().any(|r| r.contains(code)),
            "{code} in {reasons:?}"
        );
    }
}

/// The binary form of `value` for a column of `encoder`, if canonical.
fn binary_value(encoder: Encoder, value: &str) -> Option<Vec<u8>> {
    let copy = CopyEncoder::new(Some(vec![encoder]), vec![false], vec!["c".into()]);
    let mut row = Row::with_columns(1);
    row.set(0, value);
    let mut out = Vec::new();
    match copy.row(&row, &mut out).unwrap() {
        // Field count (2 bytes) and length (4 bytes) first.
        RowFormat::Binary => Some(out[6..].to_vec()),
        RowFormat::Text => None,
    }
}

#[test]
fn pg_binary_forms_are_the_servers_own() {
    let mut client = client();
    let cases = [
        (Encoder::Numeric, "numeric_send($1::text::numeric)"),
        (Encoder::Timestamp, "timestamp_send($1::text::timestamp)"),
        (Encoder::Date, "date_send($1::text::date)"),
    ];
    let numerics = numerics();
    let values = [
        numerics.iter().map(String::as_str).collect::<Vec<_>>(),
        TIMESTAMPS.to_vec(),
        DATES.to_vec(),
    ];
    let mut compared = 0;
    for ((encoder, send), values) in cases.iter().zip(values) {
        for value in values {
            let Some(ours) = binary_value(*encoder, value) else {
                continue;
            };
            let sql = format!("SELECT {send}");
            let theirs: Vec<u8> = match client.query_one(sql.as_str(), &[&value]) {
                Ok(row) => row.get(0),
                Err(error) => panic!("{value:?} encoded, the server refuses it: {error}"),
            };
            assert_eq!(ours, theirs, "{encoder:?} {value:?}");
            compared += 1;
        }
    }
    assert!(compared > 40, "{compared}");
}

/// Every spelling of [`SCALARS`] (and a few more) the encoders put in
/// binary is one the server reads, to the very bytes its `*send` function
/// gives; every one they refuse outright the server refuses too.
#[test]
fn pg_binary_integer_float_and_bool_forms_are_the_servers_own() {
    let mut client = client();
    let cases = [
        (Encoder::Int2, "int2send($1::text::int2)", 0),
        (Encoder::Int4, "int4send($1::text::int4)", 0),
        (Encoder::Int8, "int8send($1::text::int8)", 0),
        (Encoder::Float4, "float4send($1::text::float4)", 1),
        (Encoder::Float8, "float8send($1::text::float8)", 1),
        (Encoder::Bool, "boolsend($1::text::bool)", 2),
    ];
    let more = [
        "32767",
        "-32768",
        "32768",
        "9223372036854775807",
        "3.4e38",
        "3.5e38",
    ];
    let (mut binary, mut refused) = (0, 0);
    for (encoder, send, at) in cases {
        for value in SCALARS[at].1.iter().chain(&more) {
            let copy = CopyEncoder::new(Some(vec![encoder]), vec![false], vec!["c".into()]);
            let mut row = Row::with_columns(1);
            row.set(0, value);
            let mut out = Vec::new();
            let ours = copy.row(&row, &mut out);
            let theirs = client.query_one(&format!("SELECT {send}"), &[value]);
            match (ours, theirs) {
                (Ok(RowFormat::Binary), Ok(theirs)) => {
                    assert_eq!(
                        out[6..],
                        theirs.get::<_, Vec<u8>>(0),
                        "{encoder:?} {value:?}"
                    );
                    binary += 1;
                }
                (Ok(RowFormat::Binary), Err(error)) => {
                    panic!("{encoder:?} {value:?} encoded, the server refuses it: {error}")
                }
                (Err(ours), Ok(_)) => {
                    panic!("{encoder:?} {value:?} refused ({ours}), the server reads it")
                }
                (Err(_), Err(_)) => refused += 1,
                // Sent as text: the server reads it, whatever it makes of it.
                (Ok(RowFormat::Text), _) => {}
            }
        }
    }
    assert!(
        binary > 20 && refused > 3,
        "{binary} binary, {refused} refused"
    );
}

/// `value` COPYed into column `column` in text, then in binary: the two
/// stored values as text, or the server's errors.
fn copy_both(
    client: &mut Client,
    table: &str,
    (column, encoder): (&str, Encoder),
    value: &str,
) -> [Result<String, String>; 2] {
    let bytes = binary_value(encoder, value).expect("a canonical value");
    let mut data = RowFormat::Binary.header().to_vec();
    data.extend_from_slice(&1i16.to_be_bytes());
    data.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    data.extend_from_slice(&bytes);
    data.extend_from_slice(RowFormat::Binary.trailer());
    let text = format!("{value}\n").into_bytes();
    [("text", text), ("binary", data)].map(|(format, data)| {
        client.batch_execute(&format!("TRUNCATE {table}")).unwrap();
        let sql = format!("COPY {table} ({column}) FROM STDIN (FORMAT {format})");
        let mut copy = client.copy_in(sql.as_str()).unwrap();
        copy.write_all(&data).unwrap();
        match copy.finish() {
            Ok(_) => {
                let sql = format!("SELECT {column}::text FROM {table}");
                Ok(client.query_one(sql.as_str(), &[]).unwrap().get(0))
            }
            Err(error) => Err(error.as_db_error().unwrap().message().to_owned()),
        }
    })
}

#[test]
fn pg_binary_recv_applies_the_column_typmod_as_text_input_does() {
    // The checks refuse what a typmod would round before it reaches the
    // server; sent bare, binary and text meet the same rounding and the
    // same overflow.
    let name = "pg_binary_typmod";
    let _table = Table::new(
        name,
        "CREATE TABLE {t} (n12 numeric(12,2), n5 numeric(5,0), n3 numeric(3,-1), \
         ts0 timestamp(0), ts3 timestamp(3))",
    );
    let mut client = client();
    let cases: &[(&str, Encoder, &[&str])] = &[
        (
            "n12",
            Encoder::Numeric,
            &[
                "1.005",
                "-1.005",
                "1.004999",
                "2.5",
                "0.001",
                "99999999999.995",
                "9999999999.995",
                "9999999999.994",
                "-0.005",
            ],
        ),
        (
            "n5",
            Encoder::Numeric,
            &[
                "0.5", "-0.5", "1.49", "99999.4", "99999.5", "123456", "-0.4",
            ],
        ),
        ("n3", Encoder::Numeric, &["1234", "1235", "9994", "9995"]),
        (
            "ts0",
            Encoder::Timestamp,
            &[
                "2000-01-01 00:00:00.5",
                "1999-12-31 23:59:59.5",
                "1999-12-31 23:59:59.499999",
                "0001-01-01 00:00:00.5",
                "9999-12-31 23:59:59.5",
            ],
        ),
        (
            "ts3",
            Encoder::Timestamp,
            &[
                "2000-01-01 00:00:00.0005",
                "1999-12-31 23:59:59.9995",
                "1999-12-31 23:59:59.999499",
                "2023-06-01 10:00:00.123456",
            ],
        ),
    ];
    let mut refused = 0;
    for (column, encoder, values) in cases {
        for value in *values {
            let [text, binary] = copy_both(&mut client, name, (column, *encoder), value);
            assert_eq!(binary, text, "{column} {value:?}");
            refused += usize::from(text.is_err());
        }
    }
    assert!(refused >= 3, "overflows are among the cases");
}

/// `(id, price, updated)` of a product row.
type Product<'a> = (&'a str, &'a str, &'a str);

#[test]
fn pg_binary_mixed_batch_keeps_order_and_the_merge() {
    // The benchmark's table; one batch mixes binary rows and rows of
    // spellings only the server reads, two of them bad.
    let ddl = "CREATE TABLE {t} (id bigint PRIMARY KEY, sku varchar(32) NOT NULL UNIQUE, \
               name varchar(255) NOT NULL, description text, price numeric(12,2), quantity int, \
               category varchar(64), currency char(3), updated timestamp)";
    let columns = [
        "id",
        "sku",
        "name",
        "description",
        "price",
        "quantity",
        "category",
        "currency",
        "updated",
    ];
    let input: &[Product] = &[
        ("1", "1.00", "2023-06-01 10:00:00"),
        ("2", "2e0", "2023-06-01 10:00:00"),
        ("1", " 3", "2023-06-01 11:00:00"),
        ("5", "abc", "2023-06-01 10:00:00"),
        ("2", "4.00", "2023-06-01 12:00:00"),
        ("3", "5.00", "infinity"),
        ("6", "99999999999.99", "2023-06-01 10:00:00"),
        ("3", "6.50", "2023-06-01 13:00:00.5"),
        ("4", "7", "2023-06-01T14:00:00"),
        ("7", "8.25", "2023-06-01 15:00:00"),
    ];
    // With the bad rows the batch is searched (bisected) across its runs;
    // without them it is one pass of several COPYs, in row order.
    let rows = |with_bad: bool| {
        let rows = input
            .iter()
            .enumerate()
            .filter(|(_, (id, _, _))| with_bad || !["5", "6"].contains(id))
            .map(|(i, (id, price, updated))| {
                [
                    id.to_string(),
                    format!("sku-{i}"),
                    format!("name {i}"),
                    "desc".to_owned(),
                    price.to_string(),
                    i.to_string(),
                    "cat".to_owned(),
                    "EUR".to_owned(),
                    updated.to_string(),
                ]
                .map(Cell::Text)
                .to_vec()
            })
            .collect();
        Rows::new(&columns, rows)
    };
    let dir = tempfile::tempdir().unwrap();
    let expected: [(Mode, &[Product]); 2] = [
        (
            Mode::Upsert,
            &[
                ("1", "3.00", "2023-06-01 11:00:00"),
                ("2", "4.00", "2023-06-01 12:00:00"),
                ("3", "6.50", "2023-06-01 13:00:00.5"),
                ("4", "7.00", "2023-06-01 14:00:00"),
                ("7", "8.25", "2023-06-01 15:00:00"),
            ],
        ),
        (
            Mode::Ignore,
            &[
                ("1", "1.00", "2023-06-01 10:00:00"),
                ("2", "2.00", "2023-06-01 10:00:00"),
                ("3", "5.00", "infinity"),
                ("4", "7.00", "2023-06-01 14:00:00"),
                ("7", "8.25", "2023-06-01 15:00:00"),
            ],
        ),
    ];
    for (mode, expected) in expected {
        let name = format!("pg_binary_mixed_{mode:?}").to_lowercase();
        let mut table = Table::new(&name, ddl);
        let expected: Vec<Vec<Option<String>>> = expected
            .iter()
            .map(|(a, b, c)| {
                vec![
                    Some(a.to_string()),
                    Some(b.to_string()),
                    Some(c.to_string()),
                ]
            })
            .collect();
        for with_bad in [false, true] {
            table.exec("TRUNCATE {t}");
            let file = dir.path().join(format!("{name}.tsv"));
            let config = PgConfig::new(url(), &name, &columns)
                .mode(mode)
                .max_bad(2)
                .reject_file(&file);
            let target = PgTarget::new(config);
            Import::new(target.clone())
                .batch_rows(100)
                .run(vec![rows(with_bad)])
                .unwrap();
            assert_eq!(target.binary(), Some(true));
            let bad = rejects(&file);
            let records: &[u64] = if with_bad { &[4, 7] } else { &[] };
            assert_eq!(bad.keys().copied().collect::<Vec<_>>(), records, "{bad:?}");
            if with_bad {
                assert!(
                    bad[&4].contains("22P02") && bad[&7].contains("22003"),
                    "{bad:?}"
                );
            }
            let got = table.rows("id::text, price::text, updated::text", "id");
            assert_eq!(got, expected, "{mode:?}, bad rows: {with_bad}");
        }
    }
}
