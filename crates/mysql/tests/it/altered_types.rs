//! Values MariaDB would store altered without an error (a two-digit year
//! given a century, a time of day read as a date, fractional digits
//! dropped from a time spelled as a number, a number spelled as text into
//! a `BIT` stored as its characters' bytes, a digit a `FLOAT` does not
//! keep) are refused as bad records on every write path, while an exact
//! neighbour of each lands as given.

use ringpipe_mysql::WritePath;
use ringpipe_pipeline::Value;

use crate::common::*;

/// The test table's columns after `id`, with their types and how a value
/// is read back as text.
const COLUMNS: &[CaseColumn] = &[
    ("d", "DATE", "CAST(`d` AS CHAR)"),
    ("dt", "DATETIME", "CAST(`dt` AS CHAR)"),
    ("ts", "TIMESTAMP NULL", "CAST(`ts` AS CHAR)"),
    ("t", "TIME", "CAST(`t` AS CHAR)"),
    ("t1", "TIME(1)", "CAST(`t1` AS CHAR)"),
    ("bits", "BIT(16)", "HEX(`bits`)"),
    ("f", "FLOAT", "CAST(`f` AS CHAR)"),
];

/// A value for one column.
enum Given {
    /// Text, as CSV, JSON Lines and XML text give it.
    Text(&'static str),
    /// Bytes, as `--decode` gives them.
    Bytes(&'static [u8]),
}

/// One record per case: the column, the value, and what it is stored as
/// (`None`: refused, as the server would alter it).
fn cases() -> Vec<(&'static str, Given, Option<&'static str>)> {
    use Given::{Bytes, Text};
    vec![
        ("d", Text("2024-01-05"), Some("2024-01-05")),
        ("d", Text("24-01-05"), None),
        ("d", Text("99-12-31"), None),
        ("d", Text("20240105"), Some("2024-01-05")),
        ("d", Text("240105"), None),
        ("d", Text("10:00:00"), None),
        (
            "dt",
            Text("2024-01-05 10:00:00"),
            Some("2024-01-05 10:00:00"),
        ),
        ("dt", Text("24-01-05 10:00:00"), None),
        ("dt", Text("2024-01-05T10:00"), Some("2024-01-05 10:00:00")),
        ("dt", Text("24-01-05T10:00"), None),
        ("dt", Text("20240105103000"), Some("2024-01-05 10:30:00")),
        ("dt", Text("240105103000"), None),
        (
            "dt",
            Text("20240105103000.000"),
            Some("2024-01-05 10:30:00"),
        ),
        ("dt", Text("20240105103000.5"), None),
        ("dt", Text("10:00:00"), None),
        (
            "ts",
            Text("2024-01-05 10:00:00"),
            Some("2024-01-05 10:00:00"),
        ),
        ("ts", Text("24-01-05 10:00:00"), None),
        ("t", Text("10"), Some("00:00:10")),
        ("t", Text("10.5"), None),
        ("t", Text("10:00"), Some("10:00:00")),
        ("t", Text("10:00.5"), None),
        ("t", Text("103000"), Some("10:30:00")),
        ("t", Text("103000.5"), None),
        ("t", Text("-10.0"), Some("-00:00:10")),
        ("t", Text("-10.5"), None),
        ("t1", Text("10.5"), Some("00:00:10.5")),
        ("t1", Text("10.25"), None),
        ("t1", Text("10:00.5"), Some("10:00:00.5")),
        ("f", Text("1.5"), Some("1.5")),
        ("f", Text("16777217"), None),
        ("bits", Text("ab"), Some("6162")),
        ("bits", Text("1"), None),
        ("bits", Text("255"), None),
        ("bits", Text(""), None),
        ("bits", Text("true"), None),
        ("bits", Bytes(&[0x01]), Some("1")),
        ("bits", Bytes(&[0x01, 0xff]), Some("1FF")),
    ]
}

/// Loads every case on `path` into a fresh table, all in one batch; the
/// stored cases as `(id, column, text)` and the reject file's lines.
fn load(path: WritePath) -> (Vec<(u32, String, String)>, Vec<String>) {
    let table = format!("rp_mysql_altered_{path:?}").to_lowercase();
    let values: Vec<_> = cases()
        .iter()
        .map(|(column, given, _)| {
            let value = match given {
                Given::Text(text) => Value::Text(text),
                Given::Bytes(bytes) => Value::Bytes(bytes),
            };
            (*column, Some(value))
        })
        .collect();
    let (rows, lines) = load_cases(&table, COLUMNS, path, &values);
    let stored = rows
        .into_iter()
        .flat_map(|(id, values)| {
            values
                .into_iter()
                .zip(COLUMNS)
                .filter_map(move |(text, (name, ..))| {
                    text.map(|text| (id, (*name).to_owned(), text))
                })
        })
        .collect();
    (stored, lines)
}

#[test]
fn altered_values_are_refused_and_their_exact_neighbours_land() {
    let cases = cases();
    let expected: Vec<(u32, String, String)> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, (column, _, stored))| {
            stored.map(|text| (i as u32 + 1, (*column).to_owned(), text.to_owned()))
        })
        .collect();
    let refused: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].2.is_none()).collect();
    for path in EVERY_PATH {
        let (stored, rejects) = load(path);
        assert_eq!(stored, expected, "{path:?}: what landed, as given");
        assert_eq!(rejects.len(), refused.len(), "{path:?}: {rejects:#?}");
        for (line, &i) in rejects.iter().zip(&refused) {
            let (column, ..) = &cases[i];
            let head = format!("{}\t{}:1\t", i + 1, i + 2);
            assert!(line.starts_with(&head), "{path:?}: {line}");
            // Refused before the server saw it, naming the column.
            assert!(
                !line.contains("server error") && line.contains(&format!("`{column}`")),
                "{path:?}: {line}"
            );
        }
    }
}
