//! The second source and sink from the command line: a CSV file into
//! PostgreSQL and a JSON Lines file into MariaDB, each landing exactly as
//! the same catalogue imported from XML.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::common::{checksum, count, fresh_table, ringpipe, stderr, url};
use ringpipe_text::{write_csv, write_jsonl};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};

const ROWS: u64 = 3_000;

/// The test PostgreSQL (`RINGPIPE_TEST_PG_URL`, default the local one).
fn pg_url() -> String {
    std::env::var("RINGPIPE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn pg() -> postgres::Client {
    postgres::Client::connect(&pg_url(), postgres::NoTls).expect("PostgreSQL")
}

/// A PostgreSQL catalogue table, dropped (with its checkpoints) on drop.
struct PgTable(&'static str);

impl PgTable {
    fn new(name: &'static str) -> PgTable {
        let ddl = format!(
            "DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (
               id bigint PRIMARY KEY, sku varchar(32) NOT NULL UNIQUE,
               name varchar(255) NOT NULL, description text, price numeric(12,2),
               quantity int, category varchar(64), currency char(3), updated timestamp)"
        );
        pg().batch_execute(&ddl).unwrap();
        PgTable(name)
    }

    /// Row count and a content hash computed by the server.
    fn hash(&self) -> (i64, String) {
        let sql = format!(
            "SELECT count(*), md5(string_agg(t::text, '|' ORDER BY id)) FROM {} t",
            self.0
        );
        let row = pg().query_one(&sql, &[]).unwrap();
        (row.get(0), row.get(1))
    }
}

impl Drop for PgTable {
    fn drop(&mut self) {
        let _ = pg().batch_execute(&format!(
            "DROP TABLE IF EXISTS {0}; DELETE FROM ringpipe_checkpoint WHERE target_table = '{0}'",
            self.0
        ));
    }
}

/// The catalogue as XML, CSV (`\N` for NULL) and JSON Lines in `dir`.
fn files(dir: &Path) -> [PathBuf; 3] {
    let catalogue = Catalogue::new(ROWS);
    let rows = || catalogue.products().map(|p| p.values().to_vec());
    let [xml, csv, jsonl] = ["c.xml", "c.csv", "c.jsonl"].map(|name| dir.join(name));
    catalogue.write_file(&xml).unwrap();
    let out = BufWriter::new(File::create(&csv).unwrap());
    write_csv(out, &PRODUCT_COLUMNS, rows(), "\\N").unwrap();
    let out = BufWriter::new(File::create(&jsonl).unwrap());
    write_jsonl(out, &PRODUCT_COLUMNS, rows()).unwrap();
    [xml, csv, jsonl]
}

fn import(file: &Path, url: &str, table: &str, extra: &[&str]) {
    let mut args = vec![
        "import",
        file.to_str().unwrap(),
        "--url",
        url,
        "--table",
        table,
    ];
    args.extend_from_slice(extra);
    let output = ringpipe(&args);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn cli_csv_into_postgres_lands_as_the_xml_does() {
    let dir = tempfile::tempdir().unwrap();
    let [xml, csv, _] = files(dir.path());
    let (from_csv, from_xml) = (
        PgTable::new("ends_cli_pg_csv"),
        PgTable::new("ends_cli_pg_xml"),
    );
    let shards = ["--shards", "2", "--batch-rows", "500"];
    let csv_args = [&shards[..], &["--null-string", "\\N"]].concat();
    import(&csv, &pg_url(), from_csv.0, &csv_args);
    import(
        &xml,
        &pg_url(),
        from_xml.0,
        &[&shards[..], &["--row", "product"]].concat(),
    );
    let hash = from_csv.hash();
    assert_eq!(hash.0, ROWS as i64);
    assert_eq!(hash, from_xml.hash());
}

#[test]
fn cli_jsonl_into_mariadb_lands_as_the_xml_does() {
    let dir = tempfile::tempdir().unwrap();
    let [xml, _, jsonl] = files(dir.path());
    let _jsonl = fresh_table("ends_cli_my_jsonl");
    let _xml = fresh_table("ends_cli_my_xml");
    // The format by flag, not by extension.
    let renamed = dir.path().join("c.data");
    std::fs::rename(&jsonl, &renamed).unwrap();
    import(
        &renamed,
        &url(),
        "ends_cli_my_jsonl",
        &["--format", "jsonl"],
    );
    import(&xml, &url(), "ends_cli_my_xml", &["--row", "product"]);
    assert_eq!(count("ends_cli_my_jsonl"), ROWS);
    assert_eq!(checksum("ends_cli_my_jsonl"), checksum("ends_cli_my_xml"));
}

#[test]
fn cli_flags_of_the_other_sink_are_usage_errors() {
    let output = ringpipe(&[
        "import",
        "x.csv",
        "--url",
        &pg_url(),
        "--table",
        "t",
        "--write-path",
        "bulk",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("copy-binary or copy-text"),
        "{}",
        stderr(&output)
    );
}
