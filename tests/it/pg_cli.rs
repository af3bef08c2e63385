//! PostgreSQL from the command line: `--part i/n` with one part killed
//! (`kill -9`) and restarted, `ringpipe status` on a postgres:// URL, and
//! bad records diverted to `--reject-file`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{catalogue, fresh_pg_table, pg, pg_hash, pg_url, ringpipe, stderr, stdout};

const ROWS: u64 = 30_000;
const PARTS: u32 = 3;

/// Records part `part` of `table` committed.
fn part_records(table: &str, part: i32) -> i64 {
    let sql = "SELECT coalesce(sum(records), 0)::bigint FROM ringpipe_checkpoint \
               WHERE target_table = $1 AND part = $2";
    pg().query_one(sql, &[&table, &part]).unwrap().get(0)
}

fn part_command(file: &Path, table: &str, part: u32) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringpipe"));
    command
        .env_remove("RINGPIPE_MYSQL_URL")
        .env_remove("RINGPIPE_URL")
        .arg("import")
        .arg(file)
        .args(["--url", &pg_url(), "--table", table, "--row", "product"])
        .args(["--shards", "2", "--batch-rows", "200", "--resume"])
        .args(["--part", &format!("{part}/{PARTS}")]);
    command
}

fn spawn(file: &Path, table: &str, part: u32) -> Child {
    part_command(file, table, part)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn pg_cli_three_parts_one_killed_end_exact_and_stay_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), ROWS);
    let (table, clean) = ("pgsink_parts", "pgsink_parts_clean");
    let _tables = [table, clean].map(fresh_pg_table);
    let whole = ringpipe(&[
        "import",
        file.to_str().unwrap(),
        "--url",
        &pg_url(),
        "--table",
        clean,
        "--row",
        "product",
    ]);
    assert!(whole.status.success(), "{}", stderr(&whole));

    let mut children: Vec<Child> = (0..PARTS).map(|p| spawn(&file, table, p)).collect();
    // Part 1 is killed (SIGKILL: no rollback, no goodbye) once it committed
    // something, then started again with the same command.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut killed_mid_part = false;
    while Instant::now() < deadline {
        if children[1].try_wait().unwrap().is_some() {
            break;
        }
        if part_records(table, 1) >= 1_000 {
            children[1].kill().unwrap();
            children[1].wait().unwrap();
            killed_mid_part = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(killed_mid_part, "the kill did not land mid-part");
    assert!(part_records(table, 1) < (ROWS / 3) as i64 + 1);
    children[1] = spawn(&file, table, 1);
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(pg_hash(table).0, ROWS as i64);
    assert_eq!(pg_hash(table), pg_hash(clean));

    // A scheduler's retry of everything: exit 0, nothing changes.
    for part in 0..PARTS {
        let again = part_command(&file, table, part).output().unwrap();
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(
            stdout(&again).contains("already complete"),
            "{}",
            stdout(&again)
        );
    }
    assert_eq!(pg_hash(table), pg_hash(clean));

    // The URL from RINGPIPE_URL, as for an import.
    let status = Command::new(env!("CARGO_BIN_EXE_ringpipe"))
        .env_remove("RINGPIPE_MYSQL_URL")
        .env("RINGPIPE_URL", pg_url())
        .args(["status", "--table", table, "--json"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", stderr(&status));
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let parts = status["parts"].as_array().unwrap();
    assert_eq!(parts.len(), PARTS as usize, "{status}");
    assert!(parts.iter().all(|p| p["complete"] == true), "{status}");
    let records: u64 = parts.iter().map(|p| p["records"].as_u64().unwrap()).sum();
    assert_eq!(records, ROWS, "{status}");
}

#[test]
fn pg_cli_bad_records_go_to_the_reject_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.csv");
    let mut text = String::from("id,sku,name,price\n");
    for i in 1..=50 {
        match i {
            20 => text.push_str("20,sku-20,twenty,abc\n"), // 22P02 numeric
            30 => text.push_str("30,sku-taken,thirty,1.00\n"), // 23505: a row already there
            _ => text.push_str(&format!("{i},sku-{i},n{i},{i}.50\n")),
        }
    }
    std::fs::write(&csv, text).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let table = "pgsink_cli_rejects";
    let _table = fresh_pg_table(table);
    pg().batch_execute(
        "INSERT INTO pgsink_cli_rejects (id, sku, name) VALUES (1000, 'sku-taken', 'x')",
    )
    .unwrap();
    let out = ringpipe(&[
        "import",
        csv.to_str().unwrap(),
        "--url",
        &pg_url(),
        "--table",
        table,
        "--columns",
        "id,sku,name,price",
        "--batch-rows",
        "16",
        "--max-bad",
        "2",
        "--reject-file",
        rejects.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["rows_rejected"], 2, "{report}");
    assert_eq!(report["rows_written"], 48, "{report}");
    assert_eq!(
        (&report["shards"], &report["regions"]),
        (&2.into(), &1.into()),
        "into PostgreSQL, one region feeds both shards by default: {report}"
    );
    // The server's commit counters are MySQL's: none are made up here.
    assert!(report["server_commits"].is_null(), "{report}");
    let lines = std::fs::read_to_string(&rejects).unwrap();
    let mut records: Vec<&str> = lines
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    records.sort();
    assert_eq!(records, ["20", "30"], "{lines}");
    assert!(
        lines.contains("22P02") && lines.contains("23505"),
        "{lines}"
    );
    assert_eq!(pg_hash(table).0, 49);
}

#[test]
fn pg_cli_bad_records_stay_exact_across_a_kill_9_and_resume() {
    const N: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.csv");
    let bad = |i: u64| i % 997 == 0;
    let mut text = String::from("id,sku,name,price\n");
    for i in 1..=N {
        let price = if bad(i) {
            "abc".to_owned()
        } else {
            format!("{i}.25")
        };
        text.push_str(&format!("{i},sku-{i},n{i},{price}\n"));
    }
    std::fs::write(&csv, text).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let table = "pgsink_cli_rejects_kill";
    let _table = fresh_pg_table(table);
    let command = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ringpipe"));
        command
            .env_remove("RINGPIPE_MYSQL_URL")
            .env_remove("RINGPIPE_URL")
            .arg("import")
            .arg(&csv)
            .args(["--url", &pg_url(), "--table", table])
            .args(["--columns", "id,sku,name,price", "--shards", "2"])
            .args(["--batch-rows", "100", "--max-bad", "100", "--resume"])
            .arg("--reject-file")
            .arg(&rejects);
        command
    };
    let mut child = command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let committed = || {
        let sql = "SELECT coalesce(sum(records), 0)::bigint FROM ringpipe_checkpoint \
                   WHERE target_table = $1";
        pg().query_one(sql, &[&table]).unwrap().get::<_, i64>(0)
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline && committed() < 4_000 && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the import ended before the kill"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(committed() < N as i64);
    let out = command().output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let good = (1..=N).filter(|&i| !bad(i)).count() as i64;
    let (count, _) = pg_hash(table);
    assert_eq!(count, good);
    let lines = std::fs::read_to_string(&rejects).unwrap();
    let mut records: Vec<u64> = lines
        .lines()
        .map(|l| l.split('\t').next().unwrap().parse().unwrap())
        .collect();
    records.sort();
    let expected: Vec<u64> = (1..=N).filter(|&i| bad(i)).collect();
    assert_eq!(records, expected, "each bad record once");
}
