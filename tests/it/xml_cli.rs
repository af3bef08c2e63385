//! The XML mapping flags as a user meets them: records that match nothing,
//! repeated fields, dry runs that stop. Dry runs need no server; the one
//! import that does owns its table (`xml_cli_*`).

use std::path::{Path, PathBuf};

use crate::common::{conn, ringpipe, stderr, stdout, url, MysqlTable};
use mysql::prelude::Queryable;

fn write(dir: &Path, xml: &str) -> PathBuf {
    let file = dir.join("input.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

/// A dry run of `file` with `columns`, then `extra`.
fn dry_run(file: &Path, columns: &str, extra: &[&str]) -> std::process::Output {
    let file = file.to_str().unwrap();
    let mut args = vec![
        "import",
        file,
        "--url",
        "mysql://nobody@127.0.0.1:1/none",
        "--table",
        "t",
        "--columns",
        columns,
        "--dry-run",
    ];
    args.extend(extra);
    ringpipe(&args)
}

#[test]
fn a_file_whose_records_match_nothing_exits_3_and_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "<catalogue>\n<product><id>1</id></product>\n<product><id>2</id></product>\n</catalogue>\n",
    );
    let output = dry_run(&file, "id", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "no <row> element; the file's records look like <product> (at depth 2); use --row product"
        ),
        "{}",
        stderr(&output)
    );
    let empty = write(dir.path(), "<mysqldump><database name='d'/></mysqldump>");
    let output = dry_run(&empty, "id", &["--allow-empty", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["rows_read"], 0);
    assert_eq!(report["unfilled_columns"], serde_json::json!(["id"]));
}

#[test]
fn a_strict_dry_run_that_stops_reports_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "<r><row><id>1</id></row><row><id>2</id><x>?</x></row></r>",
    );
    let output = dry_run(&file, "id", &["--strict"]);
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(message.contains("unknown field `x`"), "{message}");
    assert!(
        message.contains("(dry run: 1 records read before it)"),
        "{message}"
    );
    assert!(!message.contains("rows committed"), "{message}");
    let ok = write(dir.path(), "<r><row><id>1</id></row></r>");
    let output = dry_run(&ok, "id,name", &[]);
    assert!(
        stdout(&output).contains("(nothing written)"),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains("never filled    name"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn repeated_fields_are_refused_unless_a_policy_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "<r>\n<row><id>1</id><c>a</c><c xml:lang='de'>b</c></row>\n</r>\n",
    );
    let output = dry_run(&file, "id,c", &[]);
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output)
            .contains("input.xml:2:24: record 1: field `c` gives column `c` a second value"),
        "{}",
        stderr(&output)
    );
    for bad in [&["--repeated", "sometimes"][..], &["--repeated", "c=twice"]] {
        let output = dry_run(&file, "id,c", bad);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{bad:?}: {}",
            stderr(&output)
        );
    }
    let output = dry_run(&file, "id,c", &["--repeated", "nope=first"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    let table = "xml_cli_repeated";
    let mut db = conn();
    let _table = MysqlTable::fresh(table);
    db.query_drop(format!(
        "CREATE TABLE `{table}` (id INT PRIMARY KEY, c TEXT)"
    ))
    .unwrap();
    let run = ringpipe(&[
        "import",
        file.to_str().unwrap(),
        "--url",
        &url(),
        "--table",
        table,
        "--repeated",
        "join",
        "--join-with",
        "; ",
    ]);
    let got: Option<String> = db
        .query_first(format!("SELECT c FROM `{table}` WHERE id = 1"))
        .unwrap();
    db.query_drop(format!("DROP TABLE `{table}`")).unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(got.as_deref(), Some("a; b"));
}

#[test]
fn openstreetmap_tags_map_with_field_paths() {
    let dir = tempfile::tempdir().unwrap();
    let mut xml = String::from("<?xml version='1.0' encoding='UTF-8'?>\n<osm version='0.6'>\n");
    let mut want = Vec::new();
    for i in 1..=300u32 {
        let name = format!("Ort {i} – Straße &amp; Platz");
        xml.push_str(&format!(
            "  <node id='{i}' lat='52.{i:04}' lon='13.{i:04}'>\n    <tag k='place' v='village'/>\n"
        ));
        if i % 7 != 0 {
            xml.push_str(&format!("    <tag k='name' v='{name}'/>\n"));
        }
        xml.push_str(&format!("    <tag k='name:de' v='de {i}'/>\n  </node>\n"));
        let name = (i % 7 != 0).then(|| format!("Ort {i} – Straße & Platz"));
        want.push((i, format!("52.{i:04}"), name));
    }
    xml.push_str("</osm>\n");
    let file = write(dir.path(), &xml);

    let clash = dry_run(
        &file,
        "id,name",
        &["--row", "node", "--map", "v=name", "--field", "name=tag/@v"],
    );
    assert_eq!(clash.status.code(), Some(2), "{}", stderr(&clash));
    let bad = dry_run(
        &file,
        "id,name",
        &["--row", "node", "--field", "name=tag[1]/@v"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("predicates are"), "{}", stderr(&bad));

    let table = "xml_cli_osm";
    let mut db = conn();
    let _table = MysqlTable::fresh(table);
    db.query_drop(format!(
        "CREATE TABLE `{table}` (id INT PRIMARY KEY, lat VARCHAR(20), name VARCHAR(100)) \
         CHARACTER SET utf8mb4"
    ))
    .unwrap();
    let run = ringpipe(&[
        "import",
        file.to_str().unwrap(),
        "--url",
        &url(),
        "--table",
        table,
        "--row",
        "node",
        "--field",
        "name=tag[@k='name']/@v",
    ]);
    let got: Vec<(u32, String, Option<String>)> = db
        .query(format!("SELECT id, lat, name FROM `{table}` ORDER BY id"))
        .unwrap();
    db.query_drop(format!("DROP TABLE `{table}`")).unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(got, want);
}
