//! CSV from a real producer, PostgreSQL: the server's own functions and
//! views (their definitions as the server prints them, over many lines,
//! with quotes and commas; their comments; NULLs) exported by `COPY … TO
//! STDOUT (FORMAT csv, HEADER)` must read back through `CsvSource` as
//! exactly the values the server returns for the same query, in one region
//! and in several (whose split points must not fall inside a quoted
//! newline); its `bytea` values, written as `\\x` hex, must land as the
//! same bytes in both servers with `--decode`.

use std::io::Read;

use mysql::prelude::Queryable;
use ringpipe_pipeline::{Row, Source};
use ringpipe_text::{CsvSource, TextConfig};

use crate::common::{conn, import_into, pg, pg_hash, stderr, MysqlTable, PgTable, Server};

/// The columns read, as text; PostgreSQL's CSV writes NULL as an unquoted
/// empty field and the empty string as `""`.
const QUERY: &str = "SELECT oid::text AS oid, proname::text AS name, \
      pg_get_functiondef(oid) AS definition, obj_description(oid, 'pg_proc') AS comment, \
      proargnames::text AS args, probin AS bin \
    FROM pg_proc WHERE prokind IN ('f', 'p') \
    UNION ALL SELECT oid::text, relname::text, pg_get_viewdef(oid), \
      obj_description(oid, 'pg_class'), NULL, '' \
    FROM pg_class WHERE relkind = 'v' ORDER BY 1";
const COLUMNS: [&str; 6] = ["oid", "name", "definition", "comment", "args", "bin"];

type Rows = Vec<Vec<Option<String>>>;

fn read(path: &std::path::Path, regions: usize) -> Rows {
    let config = TextConfig::new(COLUMNS).null_string("");
    let mut rows = Vec::new();
    let mut row = Row::with_columns(COLUMNS.len());
    for mut source in CsvSource::open_regions(path, config, regions).unwrap() {
        while source.next_row(&mut row).unwrap() {
            rows.push(
                (0..COLUMNS.len())
                    .map(|i| row.text(i).map(str::to_owned))
                    .collect(),
            );
        }
    }
    rows
}

#[test]
fn postgresql_csv_of_its_own_catalogue_reads_back_exactly() {
    let mut client = pg();
    let expected: Rows = client
        .query(QUERY, &[])
        .unwrap()
        .iter()
        .map(|r| (0..COLUMNS.len()).map(|i| r.get(i)).collect())
        .collect();
    let bodies = |rows: &Rows, what: &dyn Fn(&str) -> bool| {
        rows.iter()
            .filter(|r| r[2].as_deref().is_some_and(what))
            .count()
    };
    // The export holds what CSV quoting and NULL are for: line ends, quotes
    // and commas in values, NULLs and empty strings.
    assert!(
        expected.len() > 1_000,
        "{} functions and views",
        expected.len()
    );
    assert!(bodies(&expected, &|s| s.contains('\n')) > 1_000);
    assert!(bodies(&expected, &|s| s.contains('"')) > 100);
    assert!(bodies(&expected, &|s| s.contains(',')) > 1_000);
    assert!(expected.iter().any(|r| r[3].is_none()));
    assert!(expected.iter().any(|r| r[5].as_deref() == Some("")));

    let dir = tempfile::tempdir().unwrap();
    let (path, _) = export(&dir, "pg_proc.csv", &format!("({QUERY})"));

    for regions in [1, 2, 5] {
        let rows = read(&path, regions);
        assert_eq!(rows.len(), expected.len(), "{regions} region(s)");
        for (got, want) in rows.iter().zip(&expected) {
            assert_eq!(got, want, "{regions} region(s)");
        }
    }
}

/// Bytes of every kind (NUL, 0xff, text), as PostgreSQL's CSV writes
/// `bytea`: `\\x` and hex digits.
const BYTES: &str = "SELECT oid::int AS id, \
      '\\x00ff0a22'::bytea || convert_to(proname, 'UTF8') AS data FROM pg_proc";

#[test]
fn postgresql_csv_of_bytea_lands_as_the_same_bytes_with_decode() {
    let mut client = pg();
    let mut expected: Vec<(i32, String)> = client
        .query(
            &format!("SELECT id, encode(data, 'hex') FROM ({BYTES}) b"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    expected.sort();
    assert!(expected.len() > 1_000, "{} rows", expected.len());
    let dir = tempfile::tempdir().unwrap();
    let (path, csv) = export(&dir, "bytea.csv", &format!("({BYTES})"));
    assert!(csv.windows(4).any(|w| w == b"\\x00"), "bytea as \\x hex");
    let ddl = |binary: &str| format!("CREATE TABLE {{t}} (id int PRIMARY KEY, data {binary})");
    for server in [Server::Mariadb, Server::Postgres] {
        let table = "rp_csv_bytea";
        let got: Vec<(i32, String)> = match server {
            Server::Mariadb => {
                let _table = MysqlTable::fresh(table);
                conn()
                    .query_drop(ddl("varbinary(200)").replace("{t}", table))
                    .unwrap();
                land(&path, server, table);
                conn()
                    .query(format!(
                        "SELECT id, LOWER(HEX(data)) FROM {table} ORDER BY id"
                    ))
                    .unwrap()
            }
            Server::Postgres => {
                let _table = PgTable::fresh(table);
                pg().batch_execute(&ddl("bytea").replace("{t}", table))
                    .unwrap();
                land(&path, server, table);
                pg().query(
                    &format!("SELECT id, encode(data, 'hex') FROM {table} ORDER BY id"),
                    &[],
                )
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect()
            }
        };
        assert_eq!(got, expected);
    }
}

/// Imports the `bytea` CSV at `path` into `table`, decoding `data`.
fn land(path: &std::path::Path, server: Server, table: &str) {
    let args = ["--decode", "data=hex"];
    let output = import_into(path, &server.url(), table, &args);
    assert!(output.status.success(), "{}", stderr(&output));
}

/// The server's own arrays and rows: argument names (some empty), modes
/// (`"char"[]`), type lists (`oid[]`, `oidvector`), settings (`text[]`),
/// access lists (`aclitem[]`) and whole rows of `pg_namespace` and
/// `pg_database` (a composite type with an access list inside).
const TYPED: &str = "SELECT oid::int8 AS id, proname::text AS name, proargnames AS names, \
      proargmodes AS modes, proallargtypes AS types, proargtypes AS vector, \
      proconfig AS settings, proacl AS acl, NULL::pg_namespace AS namespace, \
      NULL::pg_database AS database FROM pg_proc \
    UNION ALL SELECT oid::int8 + 4294967296, relname::text, NULL, NULL, NULL, NULL, \
      reloptions, relacl, NULL, NULL FROM pg_class \
    UNION ALL SELECT oid::int8 + 8589934592, nspname::text, NULL, NULL, NULL, NULL, NULL, \
      nspacl, n, NULL FROM pg_namespace n \
    UNION ALL SELECT oid::int8 + 12884901888, datname::text, NULL, NULL, NULL, NULL, NULL, \
      datacl, NULL, d FROM pg_database d";

/// The catalogue's arrays and rows, exported as CSV by the server, land
/// in a table of the same types exactly as they are in the source table:
/// the checks of arrays (their nesting, their elements) and of rows refuse
/// none of them.
#[test]
fn postgresql_csv_of_its_own_arrays_and_rows_lands_exactly() {
    let (source, target) = ("rp_csv_typed_source", "rp_csv_typed");
    let _source = PgTable::fresh(source);
    let _target = PgTable::fresh(target);
    let mut client = pg();
    client
        .batch_execute(&format!(
            "CREATE TABLE {source} AS {TYPED}; CREATE TABLE {target} (LIKE {source})"
        ))
        .unwrap();
    let mut filled = |column: &str| -> i64 {
        let sql = format!("SELECT count({column}) FROM {source}");
        client.query_one(&sql, &[]).unwrap().get(0)
    };
    for column in ["names", "modes", "types", "acl", "namespace", "database"] {
        assert!(filled(column) > 0, "no {column} in the catalogue");
    }
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = export(&dir, "typed.csv", source);
    // NULL is an unquoted empty field in the server's CSV.
    let output = import_into(
        &path,
        &Server::Postgres.url(),
        target,
        &["--null-string", ""],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(pg_hash(target), pg_hash(source));
}

/// What the server writes of `source` (a table, or a query in
/// parentheses) with `COPY … TO STDOUT (FORMAT csv, HEADER)`, in the file
/// `name` of `dir`: its path and its bytes.
fn export(dir: &tempfile::TempDir, name: &str, source: &str) -> (std::path::PathBuf, Vec<u8>) {
    let mut csv = Vec::new();
    pg().copy_out(&format!("COPY {source} TO STDOUT (FORMAT csv, HEADER)"))
        .unwrap()
        .read_to_end(&mut csv)
        .unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, &csv).unwrap();
    (path, csv)
}
