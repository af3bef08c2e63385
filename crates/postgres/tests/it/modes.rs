//! The five modes against rows already in the table.

use ringpipe_pipeline::{Import, ImportError, Retryable};
use ringpipe_postgres::{Mode, PgConfig, PgTarget};

use crate::common::{url, Rows, Table};

const DDL: &str =
    "CREATE TABLE {t} (id int PRIMARY KEY, name text NOT NULL, extra text DEFAULT 'd')";

/// Imports `(id, name)` rows in `mode` into a table holding (1,a,x), (2,b,x).
fn run(name: &str, mode: Mode, rows: &[&[Option<&str>]]) -> Vec<Vec<Option<String>>> {
    let mut table = Table::new(name, DDL);
    table.exec("INSERT INTO {t} VALUES (1, 'a', 'x'), (2, 'b', 'x')");
    let config = PgConfig::new(url(), name, &["id", "name"]).mode(mode);
    Import::new(PgTarget::new(config))
        .checkpoints(name, "modes")
        .run(vec![Rows::text(&["id", "name"], rows)])
        .unwrap();
    assert_eq!(table.checkpoints(), 0, "a finished import leaves none open");
    table.rows("id::text, name, extra", "id")
}

fn expect(rows: &[(&str, &str, &str)]) -> Vec<Vec<Option<String>>> {
    rows.iter()
        .map(|(a, b, c)| {
            vec![
                Some(a.to_string()),
                Some(b.to_string()),
                Some(c.to_string()),
            ]
        })
        .collect()
}

const NEW: &[&[Option<&str>]] = &[
    &[Some("2"), Some("B")],
    &[Some("3"), Some("c")],
    &[Some("3"), Some("C")],
];

#[test]
fn pg_mode_ignore_keeps_the_first() {
    let got = run("pg_mode_ignore", Mode::Ignore, NEW);
    assert_eq!(
        got,
        expect(&[("1", "a", "x"), ("2", "b", "x"), ("3", "c", "d")])
    );
}

#[test]
fn pg_mode_upsert_updates_the_listed_columns() {
    let got = run("pg_mode_upsert", Mode::Upsert, NEW);
    assert_eq!(
        got,
        expect(&[("1", "a", "x"), ("2", "B", "x"), ("3", "C", "d")])
    );
}

#[test]
fn pg_mode_replace_resets_the_rest() {
    let got = run("pg_mode_replace", Mode::Replace, NEW);
    assert_eq!(
        got,
        expect(&[("1", "a", "x"), ("2", "B", "d"), ("3", "C", "d")])
    );
}

#[test]
fn pg_mode_truncate_empties_first() {
    let rows: &[&[Option<&str>]] = &[&[Some("2"), Some("B")], &[Some("3"), Some("c")]];
    let got = run("pg_mode_truncate", Mode::Truncate, rows);
    assert_eq!(got, expect(&[("2", "B", "d"), ("3", "c", "d")]));
}

#[test]
fn pg_mode_insert_fails_on_a_duplicate_and_keeps_nothing_of_its_batch() {
    let name = "pg_mode_insert";
    let mut table = Table::new(name, DDL);
    table.exec("INSERT INTO {t} VALUES (1, 'a', 'x'), (2, 'b', 'x')");
    let config = PgConfig::new(url(), name, &["id", "name"]);
    let failure = Import::new(PgTarget::new(config))
        .run(vec![Rows::text(&["id", "name"], NEW)])
        .unwrap_err();
    let ImportError::Sink { error, .. } = &failure.error else {
        panic!("{failure}");
    };
    assert_eq!(error.sqlstate(), Some("23505"), "{error}");
    assert!(!error.is_retryable());
    assert!(error.to_string().contains("duplicate key"), "{error}");
    assert_eq!(table.hash().0, 2);
}

#[test]
fn pg_mode_upsert_needs_a_key() {
    let name = "pg_mode_nokey";
    let _table = Table::new(name, "CREATE TABLE {t} (id int, name text)");
    let config = PgConfig::new(url(), name, &["id", "name"]).mode(Mode::Upsert);
    let failure = Import::new(PgTarget::new(config))
        .run(vec![Rows::text(&["id", "name"], NEW)])
        .unwrap_err();
    assert!(failure.to_string().contains("primary key"), "{failure}");
}

#[test]
fn pg_doctor_names_the_bulk_load_settings() {
    let report = ringpipe_postgres::doctor(&url()).unwrap().to_string();
    for setting in [
        "synchronous_commit",
        "wal_level",
        "max_wal_size",
        "maintenance_work_mem",
        "unlogged",
    ] {
        assert!(report.contains(setting), "{report}");
    }
}
