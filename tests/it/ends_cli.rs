//! The second source and sink from the command line: a CSV file into
//! PostgreSQL and a JSON Lines file into MariaDB, each landing exactly as
//! the same catalogue imported from XML.

use std::path::Path;

use crate::common::{
    catalogue_files, checksum, count, fresh_pg_table, fresh_table, pg_hash, pg_url, ringpipe,
    stderr, url,
};

const ROWS: u64 = 3_000;

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
    let [xml, csv, _] = catalogue_files(dir.path(), ROWS);
    let (from_csv, from_xml) = (
        fresh_pg_table("ends_cli_pg_csv"),
        fresh_pg_table("ends_cli_pg_xml"),
    );
    let shards = ["--shards", "2", "--batch-rows", "500"];
    let csv_args = [&shards[..], &["--null-string", "\\N"]].concat();
    import(&csv, &pg_url(), &from_csv, &csv_args);
    import(
        &xml,
        &pg_url(),
        &from_xml,
        &[&shards[..], &["--row", "product"]].concat(),
    );
    let hash = pg_hash(&from_csv);
    assert_eq!(hash.0, ROWS as i64);
    assert_eq!(hash, pg_hash(&from_xml));
}

#[test]
fn cli_jsonl_into_mariadb_lands_as_the_xml_does() {
    let dir = tempfile::tempdir().unwrap();
    let [xml, _, jsonl] = catalogue_files(dir.path(), ROWS);
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
    let refused = |flag: &str, value: &str, why: &str| {
        let args = [
            "import",
            "x.csv",
            "--url",
            &pg_url(),
            "--table",
            "t",
            flag,
            value,
        ];
        let output = ringpipe(&args);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(why), "{}", stderr(&output));
    };
    refused("--write-path", "bulk", "copy-binary or copy-text");
    // A delimiter that quotes fields is refused before anything is read.
    refused("--delimiter", "\"", "--delimiter: the delimiter cannot be");
}
