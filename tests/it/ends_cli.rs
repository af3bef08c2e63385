//! The second source and sink from the command line: a CSV file into
//! PostgreSQL and a JSON Lines file into MariaDB, each landing exactly as
//! the same catalogue imported from XML; JSON booleans into both servers'
//! boolean columns; and the text inputs' defaults as dry runs (no
//! server): a `.tsv` file's tab, an empty CSV file, stdin's format.

use std::path::Path;

use mysql::prelude::Queryable;

use crate::common::{
    catalogue_files, checksum, conn, count, fresh_pg_table, fresh_table, gzip, import_into, pg,
    pg_hash, pg_url, ringpipe, ringpipe_fed, stderr, stdout, url, MysqlTable, PgTable, NOWHERE,
};

const ROWS: u64 = 3_000;

fn import(file: &Path, url: &str, table: &str, extra: &[&str]) {
    let output = import_into(file, url, table, extra);
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
fn json_booleans_land_in_the_boolean_columns_of_both_servers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flags.jsonl");
    let lines =
        "{\"id\": 1, \"flag\": true}\n{\"id\": 2, \"flag\": false}\n{\"id\": 3, \"flag\": null}\n";
    std::fs::write(&file, lines).unwrap();
    let table = "ends_cli_booleans";
    let ddl = format!("CREATE TABLE {table} (id int PRIMARY KEY, flag boolean)");
    let _mariadb = MysqlTable::fresh(table);
    conn().query_drop(&ddl).unwrap();
    let _postgres = PgTable::fresh(table);
    pg().batch_execute(&ddl).unwrap();
    import(&file, &url(), table, &[]);
    import(&file, &pg_url(), table, &[]);
    let select = format!("SELECT CAST(flag AS CHAR) FROM {table} ORDER BY id");
    let stored: Vec<Option<String>> = conn().query(select).unwrap();
    assert_eq!(stored, [Some("1".into()), Some("0".into()), None]);
    let select = format!("SELECT flag FROM {table} ORDER BY id");
    let stored: Vec<Option<bool>> = pg()
        .query(&select, &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(stored, [Some(true), Some(false), None]);
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
    refused(
        "--bulk-client",
        "driver",
        "--bulk-client is for a mysql:// URL",
    );
    // A delimiter that quotes fields is refused before anything is read.
    refused("--delimiter", "\"", "--delimiter: the delimiter cannot be");
}

/// A dry run of `file` into the columns `id,name`, then `extra`.
fn dry_run(file: &Path, extra: &[&str]) -> std::process::Output {
    let file = file.to_str().unwrap();
    let url = "mysql://nobody@127.0.0.1:1/none";
    let mut args = vec!["import", file, "--url", url, "--table", "t"];
    args.extend(["--columns", "id,name", "--dry-run", "--json"]);
    args.extend(extra);
    ringpipe(&args)
}

#[test]
fn a_tsv_file_is_tab_separated_unless_a_delimiter_is_given() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.tsv", "t.tsv.gz"] {
        let path = dir.path().join(name);
        let text = b"id\tname\n1\ta,b\n";
        match name.ends_with(".gz") {
            true => std::fs::write(&path, gzip(text)).unwrap(),
            false => std::fs::write(&path, text).unwrap(),
        }
        let output = dry_run(&path, &["--preview", "1"]);
        assert_eq!(
            preview(&output, name),
            serde_json::json!([{"id": "1", "name": "a,b"}]),
            "{name}"
        );
        // An explicit delimiter wins: the header is then one field.
        let output = dry_run(&path, &["--delimiter", ","]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("[\"id\\tname\"]"),
            "{}",
            stderr(&output)
        );
    }
}

/// A dry run of `input` given on stdin, into the columns `id,name`, then
/// `extra`.
fn dry_run_stdin(input: &[u8], extra: &[&str]) -> std::process::Output {
    let url = "mysql://nobody@127.0.0.1:1/none";
    let mut args = vec!["import", "-", "--url", url, "--table", "t"];
    args.extend(["--columns", "id,name", "--dry-run", "--json"]);
    args.extend(extra);
    ringpipe_fed(&args, input)
}

/// The rows a successful dry run (`--json`) of `name` would write.
fn preview(output: &std::process::Output, name: &str) -> serde_json::Value {
    assert!(output.status.success(), "{name}: {}", stderr(output));
    let report: serde_json::Value = serde_json::from_str(stdout(output).trim()).unwrap();
    report["preview"].clone()
}

#[test]
fn stdin_is_read_in_the_format_its_first_bytes_make_certain_or_needs_format() {
    let xml = b"\n<rows><row><id>1</id><name>a</name></row></rows>\n".to_vec();
    let jsonl = b"{\"id\": 1, \"name\": \"a\"}\n".to_vec();
    let csv = b"id,name\n1,a\n".to_vec();
    let cases: [(&str, Vec<u8>, &[&str]); 5] = [
        ("xml", xml.clone(), &[]),
        ("xml.gz", gzip(&xml), &[]),
        ("jsonl", jsonl.clone(), &[]),
        ("jsonl.gz", gzip(&jsonl), &[]),
        ("csv with --format", csv.clone(), &["--format", "csv"]),
    ];
    for (name, input, extra) in cases {
        let output = dry_run_stdin(&input, extra);
        assert_eq!(
            preview(&output, name),
            serde_json::json!([{"id": "1", "name": "a"}]),
            "{name}"
        );
    }
    // A CSV header could start with any character: no guess.
    for input in [csv, gzip(b"id,name\n1,a\n"), Vec::new()] {
        let output = dry_run_stdin(&input, &[]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("give its format, --format xml|csv|jsonl"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_file_without_a_known_extension_is_read_in_the_format_its_first_bytes_make_certain() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], Option<&str>); 5] = [
        (
            "rows",
            b"<rows><row><id>1</id><name>a</name></row></rows>",
            None,
        ),
        ("rows.txt", b"{\"id\": 1, \"name\": \"a\"}\n", None),
        (
            "export",
            b"id,name\n1,a\n",
            Some("export starts with neither"),
        ),
        // A name that says XML is XML, whatever its bytes: the parser says where.
        (
            "bad.xml",
            b"id,name\n1,a\n",
            Some("bad.xml:1:1: text before the root element"),
        ),
        ("csv.dat", b"id,name\n1,a\n", None),
    ];
    for (name, text, refused) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let extra: &[&str] = match name {
            "csv.dat" => &["--format", "csv"],
            _ => &[],
        };
        let output = dry_run(&path, extra);
        match refused {
            None => assert_eq!(
                preview(&output, name),
                serde_json::json!([{"id": "1", "name": "a"}]),
                "{name}"
            ),
            Some(why) => {
                assert_ne!(output.status.code(), Some(0), "{name}");
                assert!(stderr(&output).contains(why), "{name}: {}", stderr(&output));
            }
        }
    }
}

#[test]
fn an_empty_csv_file_is_empty_and_accepted_with_allow_empty() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("e.csv", &b""[..]), ("bom.csv", b"\xef\xbb\xbf")] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let output = dry_run(&path, &[]);
        assert_eq!(output.status.code(), Some(3), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("the input is empty (no CSV header, no record)"),
            "{name}: {}",
            stderr(&output)
        );
        let output = dry_run(&path, &["--allow-empty"]);
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
        assert_eq!(report["rows_read"], 0, "{name}");
    }
}

#[test]
fn cli_csv_with_cr_line_ends_names_the_line_of_a_rejected_record() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("cr.csv");
    // Classic Mac line ends; record 3, on line 5 (record 2's quoted value
    // holds a line end), has a price that is no number.
    let text = "id,sku,name,price\r1,s1,a,1.50\r2,s2,\"b\rc\",2.50\r3,s3,c,abc\r4,s4,d,4.50\r";
    std::fs::write(&csv, text).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let table = "ends_cli_pg_cr";
    let _table = fresh_pg_table(table);
    let rejects_arg = rejects.to_str().unwrap();
    let columns = ["--columns", "id,sku,name,price", "--max-bad", "1"];
    let extra = [&columns[..], &["--reject-file", rejects_arg]].concat();
    import(&csv, &pg_url(), table, &extra);
    let lines = std::fs::read_to_string(&rejects).unwrap();
    assert!(lines.starts_with("3\t5:1\t"), "{lines}");
    assert_eq!(pg_hash(table).0, 3);
}

#[test]
fn a_json_key_no_record_has_is_reported_as_never_filled() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    let dry_run = |text: &str| {
        std::fs::write(&file, text).unwrap();
        let args = [
            "import",
            file.to_str().unwrap(),
            "--url",
            "mysql://nobody@127.0.0.1:1/none",
            "--table",
            "t",
            "--columns",
            "id,name",
            "--dry-run",
        ];
        let output = ringpipe(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    // `title` names no column: `name` never gets a value.
    let report = dry_run("{\"id\":1,\"title\":\"x\"}\n{\"id\":2}\n");
    assert!(report.contains("never filled    name"), "{report}");
    // A `null` is a value given: the key was there.
    let report = dry_run("{\"id\":1,\"name\":null}\n{\"id\":2}\n");
    assert!(!report.contains("never filled"), "{report}");
}

#[test]
fn fields_no_column_takes_are_reported_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        (
            "rows.xml",
            "<r><row><id>1</id><extra>x</extra></row><row><id>2</id><extra/></row></r>",
        ),
        ("rows.csv", "id,extra\n1,x\n2,\n"),
        (
            "rows.jsonl",
            "{\"id\":1,\"extra\":\"x\"}\n{\"id\":2,\"extra\":null}\n",
        ),
    ];
    for (name, text) in inputs {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let dry_run = |more: &[&str]| {
            let args = [&["--columns", "id", "--dry-run"][..], more].concat();
            let output = import_into(&file, NOWHERE, "t", &args);
            assert!(output.status.success(), "{name}: {}", stderr(&output));
            stdout(&output)
        };
        let report = dry_run(&[]);
        assert!(
            report.contains("ignored fields  extra (2×)"),
            "{name}: {report}"
        );
        let json: serde_json::Value = serde_json::from_str(dry_run(&["--json"]).trim()).unwrap();
        let expected = serde_json::json!([{"field": "extra", "times": 2}]);
        assert_eq!(json["ignored_fields"], expected, "{name}");
    }
}

#[test]
fn flags_of_another_format_are_refused_not_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: &str, flags: &[&str]| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let args = [&["--columns", "id", "--dry-run"][..], flags].concat();
        import_into(&file, NOWHERE, "t", &args)
    };
    let csv = "id\n1\n";
    for (flags, named) in [
        (&["--map", "a=id"][..], "--row and --map"),
        (&["--field", "id=@id"], "--field"),
        (&["--repeated", "last"], "--repeated"),
    ] {
        for (name, text) in [("t.csv", csv), ("t.jsonl", "{\"id\":1}\n")] {
            let output = run(name, text, flags);
            assert_eq!(output.status.code(), Some(2), "{name} {flags:?}");
            let message = stderr(&output);
            assert!(message.contains(&format!("{named} ")), "{message}");
            assert!(message.contains("for XML input"), "{message}");
        }
    }
    for (name, text) in [
        ("t.xml", "<r><row><id>1</id></row></r>"),
        ("t.jsonl", "{\"id\":1}\n"),
    ] {
        for flags in [&["--null-string", "\\N"][..], &["--delimiter", ";"]] {
            let output = run(name, text, flags);
            assert_eq!(output.status.code(), Some(2), "{name} {flags:?}");
            assert!(
                stderr(&output).contains("are for CSV input"),
                "{}",
                stderr(&output)
            );
        }
    }
    assert!(run("t.csv", csv, &["--null-string", "\\N"])
        .status
        .success());
}
