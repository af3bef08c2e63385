//! Helpers shared by the root package's integration tests: the test
//! server's URL, running the `ringpipe` binary, and reading tables back.
//! Every module of the `it` test binary uses them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mysql::prelude::Queryable;
use ringpipe_text::{write_csv, write_jsonl};
use ringpipe_xml::gen::{PRODUCT_COLUMNS, PRODUCT_TABLE_DDL_POSTGRES};

pub use ringpipe_testdb::{mysql_conn as conn, mysql_url as url, pg_client as pg, pg_url};
pub use ringpipe_testdb::{MysqlTable, PgTable};

/// User, host, port and database of the test URL, for the command-line tools.
pub fn url_parts() -> (String, String, String, String) {
    let url = url();
    let rest = url.trim_start_matches("mysql://");
    let (user, rest) = rest.split_once('@').expect("mysql://user@host/db");
    let (hostport, db) = rest.split_once('/').expect("a database in the URL");
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "3306"));
    let user = user.split(':').next().unwrap_or(user);
    let db = db.split('?').next().unwrap_or(db);
    (user.into(), host.into(), port.into(), db.into())
}

/// A URL no server answers: enough for a dry run, which connects nowhere.
pub const NOWHERE: &str = "mysql://nobody@127.0.0.1:1/none";

/// `import FILE --url URL --table TABLE --row product`, then `extra`: the
/// arguments of an import of a generated catalogue.
pub fn import_args(file: &Path, table: &str, extra: &[&str]) -> Vec<String> {
    let file = file.to_str().expect("a UTF-8 path");
    let fixed = [
        "import",
        file,
        "--url",
        &url(),
        "--table",
        table,
        "--row",
        "product",
    ];
    fixed.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// Runs `ringpipe` with [`import_args`] and waits for it.
pub fn import(file: &Path, table: &str, extra: &[&str]) -> Output {
    let args = import_args(file, table, extra);
    ringpipe(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `ringpipe import FILE --url URL --table TABLE`, then `extra`, run and
/// waited for: an import from any source into any server.
pub fn import_into(file: &Path, url: &str, table: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "import",
        file.to_str().unwrap(),
        "--url",
        url,
        "--table",
        table,
    ];
    args.extend_from_slice(extra);
    ringpipe(&args)
}

/// The `ringpipe` binary with `args`, without the URL the test's own
/// environment may hold.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringpipe"));
    command
        .args(args)
        .env_remove("RINGPIPE_MYSQL_URL")
        .env_remove("RINGPIPE_URL");
    command
}

/// Runs the `ringpipe` binary with `args` and waits for it.
pub fn ringpipe(args: &[&str]) -> Output {
    command(args).output().expect("ringpipe runs")
}

/// Runs the `ringpipe` binary with `args`, `input` on its stdin, and waits
/// for it.
pub fn ringpipe_fed(args: &[&str], input: &[u8]) -> Output {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ringpipe runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `text` gzip-compressed.
pub fn gzip(text: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).unwrap();
    gz.finish().unwrap()
}

/// The process's standard output, lossily decoded.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The process's standard error, lossily decoded.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh (empty) catalogue table named `table`, dropped with the guard.
pub fn fresh_table(table: &str) -> MysqlTable {
    let guard = MysqlTable::fresh(table);
    ringpipe_mysql::execute(&url(), &ringpipe_xml::gen::product_table_ddl(table)).unwrap();
    guard
}

/// Rows in `table`.
pub fn count(table: &str) -> u64 {
    query_one(&format!("SELECT COUNT(*) FROM `{table}`"))
}

/// `CHECKSUM TABLE` of `table`.
pub fn checksum(table: &str) -> u64 {
    let row: Option<(String, u64)> = conn()
        .query_first(format!("CHECKSUM TABLE `{table}`"))
        .unwrap();
    row.unwrap().1
}

/// The single number `sql` returns.
pub fn query_one(sql: &str) -> u64 {
    conn().query_first(sql).unwrap().unwrap()
}

/// A catalogue of `rows` products written by `ringpipe gen` into `dir`.
pub fn catalogue(dir: &Path, rows: u64) -> PathBuf {
    let file = dir.join(format!("products-{rows}.xml"));
    let output = ringpipe(&[
        "gen",
        "--rows",
        &rows.to_string(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    file
}

/// A fresh, empty PostgreSQL catalogue table `name`, dropped (with its
/// checkpoints) with the guard.
pub fn fresh_pg_table(name: &str) -> PgTable {
    let table = PgTable::fresh(name);
    let quoted = ringpipe_postgres::quote_table(name).unwrap();
    pg().batch_execute(&PRODUCT_TABLE_DDL_POSTGRES.replace("{table}", &quoted))
        .unwrap();
    table
}

/// Row count and a content hash of PostgreSQL table `table`, computed by
/// the server.
pub fn pg_hash(table: &str) -> (i64, String) {
    let sql = format!(
        "SELECT count(*), coalesce(md5(string_agg(t::text, '|' ORDER BY id)), '') FROM {table} t"
    );
    let row = pg().query_one(&sql, &[]).unwrap();
    (row.get(0), row.get(1))
}

/// Rows in PostgreSQL table `table`.
pub fn pg_count(table: &str) -> u64 {
    let row = pg()
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap();
    row.get::<_, i64>(0) as u64
}

/// A catalogue of `rows` products as XML, CSV (`\N` for NULL) and JSON
/// Lines in `dir`.
pub fn catalogue_files(dir: &Path, rows: u64) -> [PathBuf; 3] {
    let catalogue = ringpipe_xml::gen::Catalogue::new(rows);
    let values = || catalogue.products().map(|p| p.values().to_vec());
    let [xml, csv, jsonl] = ["c.xml", "c.csv", "c.jsonl"].map(|name| dir.join(name));
    catalogue.write_file(&xml).unwrap();
    let out = BufWriter::new(File::create(&csv).unwrap());
    write_csv(out, &PRODUCT_COLUMNS, values(), "\\N").unwrap();
    let out = BufWriter::new(File::create(&jsonl).unwrap());
    write_jsonl(out, &PRODUCT_COLUMNS, values()).unwrap();
    [xml, csv, jsonl]
}

/// The server an import goes to, and how to read a table of it back.
#[derive(Clone, Copy)]
pub enum Server {
    /// The test MariaDB.
    Mariadb,
    /// The test PostgreSQL.
    Postgres,
}

impl Server {
    /// Its URL.
    pub fn url(self) -> String {
        match self {
            Server::Mariadb => url(),
            Server::Postgres => pg_url(),
        }
    }

    /// Rows in `table`.
    pub fn count(self, table: &str) -> u64 {
        match self {
            Server::Mariadb => count(table),
            Server::Postgres => pg_count(table),
        }
    }

    /// Row count and content, as the server computes them.
    pub fn content(self, table: &str) -> String {
        match self {
            Server::Mariadb => format!("{} rows, checksum {}", count(table), checksum(table)),
            Server::Postgres => format!("{:?}", pg_hash(table)),
        }
    }

    /// A fresh catalogue table, dropped with the guard.
    pub fn table(self, name: &'static str) -> Box<dyn std::any::Any> {
        match self {
            Server::Mariadb => Box::new(fresh_table(name)),
            Server::Postgres => Box::new(fresh_pg_table(name)),
        }
    }
}

/// A fresh `name (id int primary key, v varchar(10))` on `server`,
/// dropped with the guard.
pub fn key_value_table(server: Server, name: &'static str) -> Box<dyn std::any::Any> {
    let ddl = format!("CREATE TABLE {name} (id int PRIMARY KEY, v varchar(10))");
    match server {
        Server::Mariadb => {
            let guard = MysqlTable::fresh(name);
            conn().query_drop(ddl).unwrap();
            Box::new(guard)
        }
        Server::Postgres => {
            let guard = PgTable::fresh(name);
            pg().batch_execute(&ddl).unwrap();
            Box::new(guard)
        }
    }
}

/// `table` for as long as the test runs.
pub fn leak(table: &str) -> &'static str {
    Box::leak(table.to_owned().into_boxed_str())
}
