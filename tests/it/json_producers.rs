//! JSON Lines from a real producer, PostgreSQL: `row_to_json` of the
//! server's own functions (`pg_proc`, with three boolean columns) must
//! land in MariaDB's `BOOLEAN`, `BIT(1)` and `TINYINT(1) UNSIGNED`
//! columns as the 1s and 0s of the booleans PostgreSQL returns for the
//! same query, and in PostgreSQL's own `boolean` columns as those
//! booleans.

use mysql::prelude::Queryable;

use crate::common::{conn, import_into, pg, pg_url, stderr, url, MysqlTable, PgTable};

/// The rows exported, each as the JSON object `row_to_json` makes of it.
const QUERY: &str = "SELECT oid::bigint AS oid, proname::text AS name, \
      proisstrict AS strict, proretset AS returns_set, proleakproof AS leakproof \
    FROM pg_proc ORDER BY oid";

/// One function: its oid and name, and its three booleans as 1 and 0.
type Function = (i64, String, u8, u8, u8);

/// What PostgreSQL returns for `sql`, a query of [`QUERY`]'s columns.
fn read_pg(sql: &str) -> Vec<Function> {
    pg().query(sql, &[])
        .unwrap()
        .iter()
        .map(|row| {
            let flag = |i| u8::from(row.get::<_, bool>(i));
            (row.get(0), row.get(1), flag(2), flag(3), flag(4))
        })
        .collect()
}

#[test]
fn postgres_json_booleans_land_in_both_servers_as_postgres_returns_them() {
    let lines: Vec<String> = pg()
        .query(
            &format!("SELECT row_to_json(t)::text FROM ({QUERY}) t"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("functions.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let expected = read_pg(QUERY);
    assert!(expected.len() > 1_000, "{}", expected.len());
    for column in [2, 3, 4] {
        let flags: Vec<u8> = expected
            .iter()
            .map(|row| [row.2, row.3, row.4][column - 2])
            .collect();
        assert!(flags.contains(&0) && flags.contains(&1), "column {column}");
    }

    let table = "json_producers_functions";
    let _mariadb = MysqlTable::fresh(table);
    conn()
        .query_drop(format!(
            "CREATE TABLE {table} (oid BIGINT PRIMARY KEY, name VARCHAR(64), strict BOOLEAN, \
             returns_set BIT(1), leakproof TINYINT(1) UNSIGNED)"
        ))
        .unwrap();
    let output = import_into(&file, &url(), table, &["--shards", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stored: Vec<Function> = conn()
        .query(format!(
            "SELECT oid, name, strict, returns_set + 0, leakproof FROM {table} ORDER BY oid"
        ))
        .unwrap();
    assert_eq!(stored, expected);

    let _postgres = PgTable::fresh(table);
    pg().batch_execute(&format!(
        "CREATE TABLE {table} (oid bigint PRIMARY KEY, name text, strict boolean, \
         returns_set boolean, leakproof boolean)"
    ))
    .unwrap();
    let output = import_into(&file, &pg_url(), table, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stored = read_pg(&format!(
        "SELECT oid, name, strict, returns_set, leakproof FROM {table} ORDER BY oid"
    ));
    assert_eq!(stored, expected);
}
