//! Values a server would store altered without an error (an integer column
//! rounding `1.5`, a decimal rounding to its scale, a datetime dropping a
//! fraction, a double taking a number too small for it as 0) are refused
//! with their record and column, into MariaDB and PostgreSQL alike, from
//! the command line; the other records land exactly.

use std::path::Path;

use mysql::prelude::Queryable;

use crate::common::{conn, import_into, pg, pg_url, stderr, url, MysqlTable, PgTable};

/// Records 2–5 each hold one value their column would alter; records 3
/// and 4 make up one batch of `--batch-rows 2` on their own.
const CSV: &str = "id,i,d,t,f\n\
    1,7,1.25,2024-01-01 10:00:00,1.5\n\
    2,1.5,1.25,2024-01-01 10:00:00,1.5\n\
    3,7,1.005,2024-01-01 10:00:00,1.5\n\
    4,7,1.25,2024-01-01 10:00:00.5,1.5\n\
    5,7,1.25,2024-01-01 10:00:00,1e-400\n\
    6,-3,0.5e1,2024-01-01 10:00:00.000,2.5e-3\n";

fn import(file: &Path, url: &str, table: &str, extra: &[&str]) -> std::process::Output {
    let args = [&["--shards", "1", "--batch-rows", "2"], extra].concat();
    import_into(file, url, table, &args)
}

/// Imports [`CSV`] into `table` at `url` twice: without bad records
/// allowed (refused, naming record 2 and column `i`), then with a reject
/// file (records 1 and 6 land; 2–5 are in the reject file with reasons).
fn refuses_what_would_be_altered(url: &str, table: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.csv");
    std::fs::write(&file, CSV).unwrap();
    let refused = import(&file, url, table, &[]);
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(
        message.contains("record 2")
            && (message.contains("\"i\"")
                | message.contains("`i`")
                | message.contains("column i:")),
        "{message}"
    );
    let rejects = dir.path().join("rejects.tsv");
    let reject_file = rejects.to_str().unwrap();
    let args = ["--max-bad", "4", "--reject-file", reject_file, "--json"];
    let landed = import(&file, url, table, &args);
    assert!(landed.status.success(), "{}", stderr(&landed));
    let text = std::fs::read_to_string(&rejects).unwrap();
    for (id, column) in [(2, "i"), (3, "d"), (4, "t"), (5, "f")] {
        let line = text
            .lines()
            .find(|line| line.starts_with(&format!("{id}\t")))
            .unwrap_or_else(|| panic!("record {id} in {text}"));
        assert!(line.contains(column), "{line}");
    }
}

#[test]
fn mariadb_refuses_values_it_would_alter() {
    let table = "rp_altered_my";
    let _table = MysqlTable::fresh(table);
    conn()
        .query_drop(format!(
            "CREATE TABLE `{table}` (id INT PRIMARY KEY, i INT, d DECIMAL(5,2), \
             t DATETIME, f DOUBLE)"
        ))
        .unwrap();
    refuses_what_would_be_altered(&url(), table);
    let rows: Vec<(u32, i32, String, String, f64)> = conn()
        .query(format!(
            "SELECT id, i, CAST(d AS CHAR), CAST(t AS CHAR), f FROM `{table}` ORDER BY id"
        ))
        .unwrap();
    assert_eq!(
        rows,
        [
            (1, 7, "1.25".into(), "2024-01-01 10:00:00".into(), 1.5),
            (6, -3, "5.00".into(), "2024-01-01 10:00:00".into(), 2.5e-3),
        ]
    );
}

/// MariaDB's text columns: an `ENUM` or `SET` would take another case (or
/// a position), a `YEAR` two digits as 1999, a `CHAR` would drop trailing
/// spaces, a `BINARY(4)` would pad two bytes with zeros. Record 1 lands as
/// given; records 2–6 each hold one such value and are refused.
#[test]
fn mariadb_refuses_text_it_would_change() {
    let table = "rp_altered_text_my";
    let _table = MysqlTable::fresh(table);
    conn()
        .query_drop(format!(
            "CREATE TABLE `{table}` (id INT PRIMARY KEY, e ENUM('A','b c'), \
             s SET('x','y'), y YEAR, c CHAR(5), b BINARY(4))"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("text.csv");
    let csv = "id,e,s,y,c,b\n\
        1,b c,\"y,x\",2024, ab,abcd\n\
        2,a,x,2024,ab,abcd\n\
        3,A,X,2024,ab,abcd\n\
        4,A,x,99,ab,abcd\n\
        5,A,x,2024,ab  ,abcd\n\
        6,A,x,2024,ab,ab\n";
    std::fs::write(&file, csv).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let args = ["--max-bad", "5", "--reject-file", rejects.to_str().unwrap()];
    let landed = import(&file, &url(), table, &args);
    assert!(landed.status.success(), "{}", stderr(&landed));
    let text = std::fs::read_to_string(&rejects).unwrap();
    for (id, column) in [(2, "e"), (3, "s"), (4, "y"), (5, "c"), (6, "b")] {
        let line = text
            .lines()
            .find(|line| line.starts_with(&format!("{id}\t")))
            .unwrap_or_else(|| panic!("record {id} in {text}"));
        assert!(line.contains(&format!("`{column}`")), "{line}");
    }
    let rows: Vec<(u32, String, String, u32, String, String)> = conn()
        .query(format!(
            "SELECT id, e, s, y, c, CAST(b AS CHAR) FROM `{table}` ORDER BY id"
        ))
        .unwrap();
    let one = (
        1,
        "b c".into(),
        "x,y".into(),
        2024,
        " ab".into(),
        "abcd".into(),
    );
    assert_eq!(rows, [one]);
}

#[test]
fn postgres_refuses_values_it_would_alter() {
    let table = "rp_altered_pg";
    let _table = PgTable::fresh(table);
    pg().batch_execute(&format!(
        "CREATE TABLE {table} (id int PRIMARY KEY, i int, d numeric(5,2), \
         t timestamp(0), f float8)"
    ))
    .unwrap();
    refuses_what_would_be_altered(&pg_url(), table);
    let rows: Vec<(i32, i32, String, String, f64)> = pg()
        .query(
            &format!("SELECT id, i, d::text, t::text, f FROM {table} ORDER BY id"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    assert_eq!(
        rows,
        [
            (1, 7, "1.25".into(), "2024-01-01 10:00:00".into(), 1.5),
            (6, -3, "5.00".into(), "2024-01-01 10:00:00".into(), 2.5e-3),
        ]
    );
}
