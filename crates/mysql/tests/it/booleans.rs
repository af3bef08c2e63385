//! The words `true` and `false`, in any case, land in a `BOOLEAN`
//! (`TINYINT(1)`) or `BIT(1)` column as 1 and 0 on every write path, as
//! JSON Lines and XML give booleans; other spellings, and the words in any
//! other integer or `BIT` column, are refused as bad records (by the
//! server, or by the sink where the server would store them altered), and
//! a text column keeps the word.

use ringpipe_mysql::WritePath;
use ringpipe_pipeline::Value;

use crate::common::*;

/// The test table's columns after `id`, with their types and how a value
/// is read back as text.
const COLUMNS: &[CaseColumn] = &[
    ("b", "BOOLEAN", "CAST(b AS CHAR)"),
    ("bu", "TINYINT(1) UNSIGNED", "CAST(bu AS CHAR)"),
    ("n", "TINYINT", "CAST(n AS CHAR)"),
    ("s", "VARCHAR(10)", "s"),
    ("bit1", "BIT(1)", "CAST(bit1 + 0 AS CHAR)"),
    ("bit8", "BIT(8)", "CAST(bit8 + 0 AS CHAR)"),
];

/// One record per case: the column, the value (`None`: NULL), and what it
/// is stored as (`Err(())`: refused by the server).
type Case = (
    &'static str,
    Option<&'static str>,
    Result<Option<&'static str>, ()>,
);

fn cases() -> Vec<Case> {
    vec![
        ("b", Some("true"), Ok(Some("1"))),
        ("b", Some("FALSE"), Ok(Some("0"))),
        ("b", Some("True"), Ok(Some("1"))),
        ("b", Some("1"), Ok(Some("1"))),
        ("b", Some("0"), Ok(Some("0"))),
        ("b", None, Ok(None)),
        ("b", Some("yes"), Err(())),
        ("b", Some("t"), Err(())),
        ("b", Some(" true"), Err(())),
        ("bu", Some("false"), Ok(Some("0"))),
        ("n", Some("true"), Err(())),
        ("s", Some("true"), Ok(Some("true"))),
        ("bit1", Some("true"), Ok(Some("1"))),
        ("bit1", Some("FALSE"), Ok(Some("0"))),
        ("bit1", Some("1"), Err(())),
        ("bit1", Some("t"), Err(())),
        ("bit8", Some("true"), Err(())),
    ]
}

/// Loads every case on `path` into a fresh table, in one batch: each
/// stored record's id and column values, and the record numbers of the
/// reject file's lines.
fn load(path: WritePath) -> (Vec<StoredCase>, Vec<u64>) {
    let table = format!("rp_mysql_booleans_{path:?}").to_lowercase();
    let values: Vec<_> = cases()
        .iter()
        .map(|(column, given, _)| (*column, given.map(Value::Text)))
        .collect();
    let (stored, rejects) = load_cases(&table, COLUMNS, path, &values);
    let rejected = rejects
        .iter()
        .map(|line| line.split('\t').next().unwrap().parse().unwrap())
        .collect();
    (stored, rejected)
}

#[test]
fn true_and_false_land_in_a_boolean_column_on_every_path() {
    let cases = cases();
    let mut expected = Vec::new();
    let mut refused = Vec::new();
    for (i, (column, _, stored)) in cases.iter().enumerate() {
        let id = i + 1;
        let Ok(value) = stored else {
            refused.push(id as u64);
            continue;
        };
        let mut row = vec![None; COLUMNS.len()];
        let at = COLUMNS
            .iter()
            .position(|(name, ..)| name == column)
            .unwrap();
        row[at] = value.map(str::to_owned);
        expected.push((id as u32, row));
    }
    for path in EVERY_PATH {
        let (stored, rejected) = load(path);
        assert_eq!(stored, expected, "{path:?}: what landed");
        assert_eq!(rejected, refused, "{path:?}: the records refused");
    }
}
