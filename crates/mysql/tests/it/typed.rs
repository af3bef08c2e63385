//! Integer, `DATETIME` and `DATE` values land exactly as a text INSERT
//! lands them, whether the bulk path sends them typed (a packet whose
//! values are all canonical) or as text (a packet holding one that is
//! not), and the same values are refused.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

/// Typed columns of the test table, after `id`.
const COLUMNS: &[(&str, &str)] = &[
    ("ti", "TINYINT"),
    ("tu", "TINYINT UNSIGNED"),
    ("i", "INT"),
    ("b", "BIGINT"),
    ("bu", "BIGINT UNSIGNED"),
    ("dt", "DATETIME"),
    ("dt3", "DATETIME(3)"),
    ("dt6", "DATETIME(6)"),
    ("d", "DATE"),
];

const INTEGERS: &[&str] = &[
    "0",
    "-0",
    "5",
    "007",
    "+1",
    "127",
    "128",
    "-128",
    "-129",
    "255",
    "256",
    "-1",
    "1e3",
    " 5",
    "5 ",
    "1.5",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "abc",
    "",
];

const TEMPORALS: &[&str] = &[
    "2021-08-24 11:14:03",
    "2021-08-24 11:14:03.5",
    "2021-08-24 11:14:03.123",
    "2021-08-24 11:14:03.1234",
    "2021-08-24 11:14:03.123456",
    "2021-08-24 11:14:03.1234567",
    "2024-02-29 00:00:00",
    "2023-02-29 00:00:00",
    "1900-02-29 00:00:00",
    "0000-00-00 00:00:00",
    "1000-01-01 00:00:00",
    "0999-12-31 23:59:59",
    "9999-12-31 23:59:59",
    "2021-08-24T11:14:03",
    "2021-08-24 24:00:00",
    "2021-08-24 11:14:60",
    "2021-08-24 11:60:00",
    "2021-08-24",
    "2024-02-29",
    "2023-02-29",
    "2021-8-24 1:2:3",
    "20210824111403",
    "2021-08-24 11:14:03 ",
    "garbage",
    "",
];

/// One record per (column, value): `id` and that one value, the rest NULL.
fn cases() -> Vec<Record> {
    let mut records = Vec::new();
    for (column, (_, sql_type)) in COLUMNS.iter().enumerate() {
        let values = match sql_type.contains("INT") {
            true => INTEGERS,
            false => TEMPORALS,
        };
        for value in values {
            let mut record = vec![None; COLUMNS.len() + 1];
            record[0] = Some((records.len() + 1).to_string());
            record[column + 1] = Some((*value).to_owned());
            records.push(record);
        }
    }
    records
}

/// Loads every case into a fresh `table` on `path`, `batch` records per
/// transaction, bad ones set aside; the stored rows (as text) and the
/// number of records refused.
fn load(table: &str, path: WritePath, batch: usize) -> (Vec<Vec<Option<String>>>, u64) {
    let mut c = conn();
    c.query_drop(format!("DROP TABLE IF EXISTS `{table}`"))
        .unwrap();
    create_with(table, COLUMNS.iter().copied());
    let mut names = vec!["id"];
    names.extend(COLUMNS.iter().map(|(name, _)| *name));
    let dir = tempfile::tempdir().unwrap();
    let config = ringpipe_mysql::SinkConfig::new(url(), table, &names)
        .write_path(path)
        .max_bad(10_000)
        .reject_file(dir.path().join("rejects.tsv"));
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    drive(&mut sink, &cases(), batch).unwrap();
    sink.close().unwrap();
    let select: Vec<String> = names
        .iter()
        .map(|name| format!("CAST(`{name}` AS CHAR)"))
        .collect();
    let rows: Vec<mysql::Row> = c
        .query(format!(
            "SELECT {} FROM `{table}` ORDER BY id",
            select.join(", ")
        ))
        .unwrap();
    let rows = rows
        .into_iter()
        .map(|row| (0..names.len()).map(|i| row.get(i).unwrap()).collect())
        .collect();
    (rows, sink.stats().rejected)
}

#[test]
fn typed_and_text_values_land_as_a_text_insert_lands_them() {
    let base = "rp_mysql_typed";
    let tables: Vec<MysqlTable> = ["insert", "bulk_1", "bulk_all"]
        .iter()
        .map(|suffix| MysqlTable::new(&format!("{base}_{suffix}")))
        .collect();
    let all = cases().len();
    let (expected, refused) = load(&tables[0], WritePath::Insert, 1);
    assert!(refused > 0, "some cases are out of range or invalid");
    assert!(
        expected.len() > all / 3,
        "many cases land: {}",
        expected.len()
    );
    // One record per packet: every canonical value goes typed.
    let one = load(&tables[1], WritePath::Bulk, 1);
    assert_eq!(one, (expected.clone(), refused), "one record per batch");
    // All in one batch: the bad records' bisection sends some packets
    // typed, others (holding a non-canonical value) as text.
    let many = load(&tables[2], WritePath::Bulk, all);
    assert_eq!(many, (expected, refused), "one batch");
}
