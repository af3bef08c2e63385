//! Every source into every sink from the command line, killed with
//! `kill -9` mid-import and resumed: the same catalogue as XML, CSV and
//! JSON Lines, read in two regions of two shards each, lands in MariaDB
//! and in PostgreSQL exactly as a clean import of the XML does.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{catalogue_files, count, fresh_table, gzip, leak, ringpipe, stderr, Server};

const ROWS: u64 = 30_000;

fn args<'a>(file: &'a Path, server: Server, table: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut args = vec!["import", file.to_str().unwrap(), "--table", table];
    args.extend_from_slice(extra);
    let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    args.extend(["--url".to_owned(), server.url()]);
    if file.extension().is_some_and(|e| e == "xml") {
        args.extend(["--row".to_owned(), "product".to_owned()]);
    }
    if file.extension().is_some_and(|e| e == "csv") {
        args.extend(["--null-string".to_owned(), "\\N".to_owned()]);
    }
    args
}

fn spawn(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ringpipe"))
        .args(args)
        .env_remove("RINGPIPE_MYSQL_URL")
        .env_remove("RINGPIPE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ringpipe starts")
}

/// Kills `child` with SIGKILL once `table` holds `rows` rows; whether the
/// kill landed mid-import.
fn kill_at(child: &mut Child, server: Server, table: &str, rows: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if server.count(table) >= rows {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    true
}

/// XML, CSV and JSON Lines into `server`, each killed twice and resumed.
fn killed_and_resumed_land_exactly(server: Server, prefix: &'static str) {
    let dir = tempfile::tempdir().unwrap();
    let files = catalogue_files(dir.path(), ROWS);
    let clean: &'static str = leak(&format!("{prefix}_clean"));
    let _clean = server.table(clean);
    let output = ringpipe(&refs(&args(&files[0], server, clean, &["--regions", "1"])));
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = server.content(clean);
    assert!(expected.contains(&ROWS.to_string()), "{expected}");
    let layout = ["--shards", "4", "--regions", "2", "--batch-rows", "300"];
    for file in &files {
        let format = file.extension().unwrap().to_str().unwrap();
        let table: &'static str = leak(&format!("{prefix}_{format}"));
        let _table = server.table(table);
        let mut kills = 0;
        for (i, at) in [4_000, 16_000].into_iter().enumerate() {
            let resume: &[&str] = if i == 0 { &[] } else { &["--resume"] };
            let mut child = spawn(&args(file, server, table, &[&layout[..], resume].concat()));
            kills += u64::from(kill_at(&mut child, server, table, at));
        }
        assert!(kills >= 1, "{format}: no kill landed mid-import");
        let finish = args(file, server, table, &[&layout[..], &["--resume"]].concat());
        let output = ringpipe(&refs(&finish));
        assert!(output.status.success(), "{format}: {}", stderr(&output));
        assert_eq!(server.content(table), expected, "{format}");
    }
}

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn xml_csv_and_jsonl_into_mariadb_resume_exactly_after_kill_9() {
    killed_and_resumed_land_exactly(Server::Mariadb, "ends_res_my");
}

#[test]
fn xml_csv_and_jsonl_into_postgres_resume_exactly_after_kill_9() {
    killed_and_resumed_land_exactly(Server::Postgres, "ends_res_pg");
}

#[test]
fn csv_and_jsonl_in_parts_land_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let files = catalogue_files(dir.path(), 6_000);
    let server = Server::Mariadb;
    let _clean = server.table("ends_parts_clean");
    let output = ringpipe(&refs(&args(&files[0], server, "ends_parts_clean", &[])));
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = server.content("ends_parts_clean");
    for (file, table) in files[1..]
        .iter()
        .zip(["ends_parts_csv", "ends_parts_jsonl"])
    {
        let _table = server.table(table);
        // Parts in any order, each in two regions of one shard.
        for part in ["2/3", "0/3", "1/3"] {
            let flags = ["--part", part, "--shards", "2", "--regions", "2"];
            let output = ringpipe(&refs(&args(file, server, table, &flags)));
            assert!(output.status.success(), "{part}: {}", stderr(&output));
        }
        assert_eq!(server.content(table), expected, "{}", file.display());
    }
    // A gzip file cannot be cut.
    let gz = dir.path().join("c.csv.gz");
    std::fs::write(&gz, gzip(&std::fs::read(&files[1]).unwrap())).unwrap();
    let _gz = server.table("ends_parts_gz");
    let output = ringpipe(&refs(&args(
        &gz,
        server,
        "ends_parts_gz",
        &["--part", "1/2"],
    )));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot be cut into parts"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_header_without_a_column_and_a_fault_in_a_later_region_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let _table = fresh_table("ends_fault");
    let csv = dir.path().join("f.csv");
    std::fs::write(&csv, "id,sku,name\n1,a,b\n").unwrap();
    let output = ringpipe(&refs(&args(&csv, Server::Mariadb, "ends_fault", &[])));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the header names no field for the column(s) [\"description\""),
        "{}",
        stderr(&output)
    );
    let jsonl = dir.path().join("f.jsonl");
    let mut text = String::new();
    for id in 1..=4_000 {
        let name = if id == 3_000 {
            "\"x\", \"name\": \"y\""
        } else {
            "\"x\""
        };
        text.push_str(&format!(
            "{{\"id\": {id}, \"sku\": \"s{id}\", \"name\": {name}}}\n"
        ));
    }
    std::fs::write(&jsonl, text).unwrap();
    let flags = ["--shards", "2", "--regions", "2"];
    let output = ringpipe(&refs(&args(&jsonl, Server::Mariadb, "ends_fault", &flags)));
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("f.jsonl:3000:43: record 3000: a JSON object (the key \"name\" twice)"),
        "{}",
        stderr(&output)
    );
    // Every record before the fault landed.
    assert!(count("ends_fault") >= 2_999, "{}", count("ends_fault"));
}
