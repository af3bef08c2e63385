//! `--part i/n` through the binary: four processes import one file into one
//! table, one of them `kill -9`ed twice, every one restarted with the same
//! command until it exits 0; the table equals a one-process import, and
//! running all four again changes nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::common::{checksum, count, fresh_table, query_one, url};

const PARTS: u32 = 4;
const ROWS: u64 = 40_000;

/// Records part `part` of `table`'s import has committed.
fn part_records(table: &str, part: u32) -> u64 {
    query_one(&format!(
        "SELECT CAST(COALESCE(SUM(records), 0) AS UNSIGNED) FROM ringpipe_checkpoint \
         WHERE target_table = '{table}' AND part = {part}"
    ))
}

fn ringpipe(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringpipe"));
    command.args(args).env_remove("RINGPIPE_MYSQL_URL");
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn catalogue(dir: &Path) -> PathBuf {
    let file = dir.join("products.xml");
    let out = ringpipe(&["gen", "--rows", &ROWS.to_string(), "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    file
}

/// The one command every part runs, first time and every retry alike.
fn part_command(file: &Path, table: &str, part: u32) -> Command {
    let part = format!("{part}/{PARTS}");
    let url = url();
    let mut command = ringpipe(&["import"]);
    command.arg(file).args([
        "--url",
        &url,
        "--table",
        table,
        "--row",
        "product",
        "--shards",
        "2",
        "--batch-rows",
        "200",
        "--resume",
        "--part",
        &part,
    ]);
    command
}

fn spawn(file: &Path, table: &str, part: u32) -> Child {
    part_command(file, table, part)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Kills `child` with SIGKILL once its part committed `records`; whether
/// the kill landed before the part ended.
fn kill_at(child: &mut Child, table: &str, part: u32, records: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline && part_records(table, part) < records {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL: no rollback, no goodbye
    child.wait().unwrap();
    true
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

#[test]
fn four_parts_one_killed_twice_all_restarted_end_exact_and_stay_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path());
    let _tables = ["parts_kill", "parts_kill_clean"].map(fresh_table);
    let clean = ringpipe(&["import"])
        .arg(&file)
        .args([
            "--url",
            &url(),
            "--table",
            "parts_kill_clean",
            "--row",
            "product",
        ])
        .output()
        .unwrap();
    assert!(clean.status.success(), "{}", text(&clean.stderr));

    let table = "parts_kill";
    let mut children: Vec<Child> = (0..PARTS).map(|p| spawn(&file, table, p)).collect();
    // Part 1 dies twice; each time the same command starts it again.
    let mut kills = 0;
    for at in [1_000, 4_000] {
        kills += u32::from(kill_at(&mut children[1], table, 1, at));
        children[1] = spawn(&file, table, 1);
    }
    assert!(
        kills == 2,
        "{kills} of 2 kills landed mid-part: the test proved little"
    );
    for child in children {
        finish(child);
    }
    assert_eq!(count(table), ROWS);
    assert_eq!(checksum(table), checksum("parts_kill_clean"));

    // A scheduler's retry of everything: exit 0, nothing changes.
    for part in 0..PARTS {
        let again = part_command(&file, table, part).output().unwrap();
        assert!(again.status.success(), "{}", text(&again.stderr));
        assert!(
            text(&again.stdout).contains("already complete"),
            "{}",
            text(&again.stdout)
        );
    }
    assert_eq!(count(table), ROWS);
    assert_eq!(checksum(table), checksum("parts_kill_clean"));

    let status = ringpipe(&["status", "--url", &url(), "--table", table, "--json"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", text(&status.stderr));
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let parts = status["parts"].as_array().unwrap();
    assert_eq!(parts.len(), PARTS as usize, "{status}");
    assert!(parts.iter().all(|p| p["complete"] == true), "{status}");
    let records: u64 = parts.iter().map(|p| p["records"].as_u64().unwrap()).sum();
    assert_eq!(records, ROWS, "{status}");
}

#[test]
fn a_part_may_not_truncate_and_a_part_needs_a_valid_index() {
    let url = url();
    for (part, mode) in [("1/4", "truncate"), ("4/4", "insert"), ("x", "insert")] {
        let out = ringpipe(&["import", "/dev/null", "--url", &url, "--table", "t"])
            .args(["--part", part, "--mode", mode])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{part} {mode}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_part_that_would_leave_records_to_no_part_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path());
    let table = "parts_gap";
    let _table = fresh_table(table);
    let run = |part: u32| part_command(&file, table, part).output().unwrap();
    let out = run(2);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Part 2's checkpoints as a version that cut the file one record
    // later would have left them: part 1, which ends where this binary
    // cuts, would leave that record to no part.
    let moved = |by: i64| {
        let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url()).unwrap()).unwrap();
        conn.exec_drop(
            "UPDATE ringpipe_checkpoint SET region_start = region_start + ? \
             WHERE target_table = ? AND part = 2 AND region_start > 0",
            (by, table),
        )
        .unwrap();
    };
    moved(1);
    let out = run(1);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("would belong to no region"),
        "{}",
        text(&out.stderr)
    );
    // The part's own records are committed up to its end, none twice.
    assert!(part_records(table, 1) <= ROWS / u64::from(PARTS) + 1);
    moved(-1);
    for part in [0, 1, 3] {
        let out = run(part);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(count(table), ROWS);
}
