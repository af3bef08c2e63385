//! Exactly-once resume through the binary: `kill -9` at several points of an
//! import, then `--resume`, must leave the table a clean import leaves.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::common::{
    catalogue, checksum, conn, count, fresh_table, import, import_args, query_one, ringpipe,
    stderr, MysqlTable,
};

/// Starts an import of `file` into `table` in the background.
fn spawn_import(file: &Path, table: &str, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ringpipe"))
        .args(import_args(file, table, &[]))
        .args(["--batch-rows", "300"])
        .args(extra)
        .env_remove("RINGPIPE_MYSQL_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ringpipe starts")
}

/// Waits until `table` has grown past `rows` (or the child ended), then
/// kills it with SIGKILL. Returns whether the kill landed mid-import.
fn kill_after(child: &mut std::process::Child, table: &str, rows: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if count(table) >= rows {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no rollback, no goodbye
    child.wait().unwrap();
    true
}

/// A catalogue of `rows` in `dir`, and its import without interruption
/// into `{table}_clean` (named, with its guard): what a resumed import
/// into `table` must equal.
fn cleanly_imported(dir: &Path, table: &str, rows: u64) -> (PathBuf, String, MysqlTable) {
    let file = catalogue(dir, rows);
    let clean_table = format!("{table}_clean");
    let guard = fresh_table(&clean_table);
    let clean = import(&file, &clean_table, &[]);
    assert!(clean.status.success(), "{}", stderr(&clean));
    (file, clean_table, guard)
}

fn checkpoint_rows(table: &str) -> u64 {
    query_one(&format!(
        "SELECT COUNT(*) FROM ringpipe_checkpoint WHERE target_table = '{table}'"
    ))
}

#[test]
fn kill_9_five_times_then_resume_equals_a_clean_import() {
    // The default: the file parsed in three regions, one per shard.
    kill_9_five_times_then_resume("res_kill", &["--shards", "3"]);
}

#[test]
fn kill_9_five_times_then_resume_one_region_in_shard_blocks() {
    kill_9_five_times_then_resume("res_kill_blocks", &["--shards", "3", "--regions", "1"]);
}

#[test]
fn kill_9_five_times_then_resume_two_regions_of_two_round_robin_shards() {
    // Each region feeds two shards record by record: the layout whose
    // resume once re-sent committed records.
    let flags = ["--shards", "4", "--regions", "2", "--shard-block", "1"];
    kill_9_five_times_then_resume("res_kill_rr", &flags);
}

/// Five `kill -9`s at growing row counts, each followed by `--resume`,
/// then a last `--resume` to the end: the table equals a clean import.
fn kill_9_five_times_then_resume(table: &str, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (file, clean_table, _clean) = cleanly_imported(dir.path(), table, 40_000);
    let _table = fresh_table(table);
    let mut kills = 0;
    for (i, at) in [2_000u64, 9_000, 15_000, 24_000, 31_000]
        .into_iter()
        .enumerate()
    {
        let resume: &[&str] = if i == 0 { &[] } else { &["--resume"] };
        let extra: Vec<&str> = flags.iter().chain(resume).copied().collect();
        let mut child = spawn_import(&file, table, &extra);
        kills += u64::from(kill_after(&mut child, table, at));
        // Progress and rows always agree: the checkpoint commits with them.
        let recorded = query_one(&format!(
            "SELECT COALESCE(SUM(last_record), 0) FROM ringpipe_checkpoint WHERE target_table = '{table}'"
        ));
        assert!(recorded > 0 || count(table) == 0);
    }
    assert!(
        kills >= 3,
        "only {kills} of 5 kills landed mid-import: the test proved little"
    );

    let finish_flags = ["--batch-rows", "300", "--resume", "--json"];
    let extra: Vec<&str> = flags.iter().chain(&finish_flags).copied().collect();
    let finish = import(&file, table, &extra);
    assert!(finish.status.success(), "{}", stderr(&finish));
    let report: serde_json::Value = serde_json::from_slice(&finish.stdout).unwrap();
    // The last killed run may have finished before its kill landed.
    let done = report["already_complete"] == true;
    assert!(
        done || report["rows_skipped"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert_eq!(count(table), 40_000);
    assert_eq!(checksum(table), checksum(&clean_table));
    let unfinished = query_one(&format!(
        "SELECT COUNT(*) FROM ringpipe_checkpoint WHERE target_table = '{table}' AND NOT complete"
    ));
    assert!(checkpoint_rows(table) > 0, "a finished import is marked");
    assert_eq!(unfinished, 0, "a finished import is marked complete");
}

#[test]
fn resume_waits_for_a_transaction_holding_a_checkpoint() {
    // A batch of a killed import may still be committing on its old
    // connection, holding its shard's checkpoint row. The resume must read
    // the checkpoints after that transaction ends: read from before it, it
    // would start shard 0 behind the batch and later meet its checkpoint
    // as another import's. Here another session holds the row (READ
    // COMMITTED: its locking read keeps only the row it matches).
    let table = "res_waits";
    import_waits_for(
        table,
        &[
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "START TRANSACTION",
            &format!(
                "SELECT 1 FROM ringpipe_checkpoint WHERE target_table = '{table}' \
                 AND shard = 0 FOR UPDATE"
            ),
        ],
        "ROLLBACK",
        &["--resume"],
    );
}

#[test]
fn resume_waits_for_a_shards_first_checkpoint_still_committing() {
    // A shard's first batch inserts its checkpoint row. A resume must wait
    // for such a batch of a killed run as for any other: here another
    // session holds shard 1's row inserted again, uncommitted, over shard
    // 1's rows already stored. Read from before it, the resume would start
    // shard 1 from its first record and stop at its checkpoint as another
    // import's.
    let table = "res_waits_first";
    let hold = first_checkpoint_held(table);
    let hold: Vec<&str> = hold.iter().map(String::as_str).collect();
    import_waits_for(table, &hold, "COMMIT", &["--resume"]);
}

#[test]
fn a_fresh_import_waits_for_a_shards_first_checkpoint_still_committing() {
    // The same batch, met by a fresh import (truncating the table):
    // clearing the checkpoints before it commits would leave its row
    // behind, and the import would stop at it as another import's.
    let table = "fresh_waits_first";
    let hold = first_checkpoint_held(table);
    let hold: Vec<&str> = hold.iter().map(String::as_str).collect();
    import_waits_for(table, &hold, "COMMIT", &["--mode", "truncate"]);
}

/// Statements that hold shard 1's checkpoint row of `table` inserted
/// again, uncommitted, as its first batch would.
fn first_checkpoint_held(table: &str) -> [String; 4] {
    let shard_1 = format!("target_table = '{table}' AND shard = 1");
    [
        format!("CREATE TEMPORARY TABLE held AS SELECT * FROM ringpipe_checkpoint WHERE {shard_1}"),
        format!("DELETE FROM ringpipe_checkpoint WHERE {shard_1}"),
        "START TRANSACTION".to_owned(),
        "INSERT INTO ringpipe_checkpoint SELECT * FROM held".to_owned(),
    ]
}

/// Kills an import into `table`, runs `hold` in another session (the
/// transaction a batch of the killed import would still have open), and
/// starts again with `again` (`--resume`, or a fresh start): while that
/// session holds it, the import must write nothing (either shard); once
/// `release` ends it, the table must equal a clean import's.
fn import_waits_for(table: &str, hold: &[&str], release: &str, again: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (file, clean_table, _clean) = cleanly_imported(dir.path(), table, 20_000);
    let _table = fresh_table(table);
    let mut child = spawn_import(&file, table, &["--shards", "2"]);
    assert!(
        kill_after(&mut child, table, 6_000),
        "the import ended first"
    );
    let partial = count(table);
    let mut holder = conn();
    for sql in hold {
        holder.query_drop(*sql).unwrap();
    }
    let mut resume = spawn_import(&file, table, &[&["--shards", "2"], again].concat());
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(
        resume.try_wait().unwrap().is_none(),
        "the import did not wait"
    );
    assert_eq!(count(table), partial, "rows written while held");
    holder.query_drop(release).unwrap();
    assert!(resume.wait().unwrap().success());
    assert_eq!(count(table), 20_000);
    assert_eq!(checksum(table), checksum(&clean_table));
}

#[test]
fn resume_refuses_another_shard_count_region_count_or_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 20_000);
    let other = dir.path().join("other.xml");
    assert!(ringpipe(&[
        "gen",
        "--rows",
        "20000",
        "--seed",
        "7",
        "--out",
        other.to_str().unwrap()
    ])
    .status
    .success());
    let _table = fresh_table("res_refuse");
    let mut child = spawn_import(&file, "res_refuse", &["--shards", "3"]);
    assert!(
        kill_after(&mut child, "res_refuse", 1_000),
        "the import ended before the kill"
    );

    let resume = |file: &Path, shards: &str| {
        let flags = ["--resume", "--shards", shards, "--batch-rows", "300"];
        import(file, "res_refuse", &flags)
    };
    let shards = resume(&file, "2");
    assert_eq!(shards.status.code(), Some(2), "{}", stderr(&shards));
    assert!(
        stderr(&shards).contains("shard count"),
        "{}",
        stderr(&shards)
    );

    let regions = import(
        &file,
        "res_refuse",
        &[
            "--resume",
            "--shards",
            "3",
            "--regions",
            "1",
            "--batch-rows",
            "300",
        ],
    );
    assert_eq!(regions.status.code(), Some(2), "{}", stderr(&regions));
    assert!(
        stderr(&regions).contains("in 3 region(s)")
            && stderr(&regions).contains("resume it with --regions 3,"),
        "{}",
        stderr(&regions)
    );

    let input = resume(&other, "3");
    assert_eq!(input.status.code(), Some(2), "{}", stderr(&input));
    assert!(stderr(&input).contains("input"), "{}", stderr(&input));
    assert!(
        checkpoint_rows("res_refuse") > 0,
        "a refused resume must keep the checkpoint"
    );
}

#[test]
fn resume_refuses_checkpoints_that_put_a_region_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 60_000);
    let table = "res_split";
    let _table = fresh_table(table);
    let later_regions = || {
        query_one(&format!(
            "SELECT COUNT(*) FROM ringpipe_checkpoint \
             WHERE target_table = '{table}' AND region_start > 1"
        ))
    };
    let first_region_through = || {
        query_one(&format!(
            "SELECT COALESCE(MAX(last_record), 0) FROM ringpipe_checkpoint \
             WHERE target_table = '{table}' AND region_start = 1"
        ))
    };
    // Killed once the second region has committed, and the first past
    // record 5,000 (beyond the file's first MiB).
    let mut child = spawn_import(&file, table, &["--shards", "2"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while (later_regions() == 0 || first_region_through() < 5_000) && Instant::now() < deadline {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before its second region committed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(later_regions() > 0);
    // Checkpoints that put the second region's start one record later, as
    // a version that split the file elsewhere would have: refused, and
    // nothing written twice.
    let shift = |by: i64| {
        conn()
            .exec_drop(
                "UPDATE ringpipe_checkpoint SET region_start = region_start + ? \
                 WHERE target_table = ? AND region_start > 1",
                (by, table),
            )
            .unwrap();
    };
    let resume = || {
        import(
            &file,
            table,
            &["--resume", "--shards", "2", "--batch-rows", "300"],
        )
    };
    shift(1);
    refused(
        &resume(),
        "split into regions elsewhere than its checkpoints record",
    );
    shift(-1);
    // The file edited in a committed record without changing its size or
    // its ends, which is all the fingerprint reads: the resume reads the
    // record again and refuses, naming the change.
    let original = std::fs::read(&file).unwrap();
    let at = memchr::memmem::find(&original, b"SKU-000004000-").expect("record 4000");
    assert!(
        at > 1 << 20,
        "past the first MiB, which the fingerprint reads"
    );
    let mut edited = original.clone();
    edited[at] = b'T';
    std::fs::write(&file, &edited).unwrap();
    refused(&resume(), "changed since the interrupted import");
    std::fs::write(&file, &original).unwrap();
    let finished = resume();
    assert!(finished.status.success(), "{}", stderr(&finished));
    assert_eq!(count(table), 60_000);
}

/// Checks that `output` is a refusal (exit 2) whose message says `why`.
fn refused(output: &std::process::Output, why: &str) {
    assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
    assert!(stderr(output).contains(why), "{}", stderr(output));
}

#[test]
fn resume_starts_an_unrecorded_import_and_ends_at_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 10);
    let _table = fresh_table("res_nothing");
    let first = import(&file, "res_nothing", &["--resume"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(count("res_nothing"), 10);
    let again = import(&file, "res_nothing", &["--resume"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("already complete"), "{said}");
    assert_eq!(count("res_nothing"), 10);
}
