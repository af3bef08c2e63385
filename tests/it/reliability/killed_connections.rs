//! `KILL CONNECTION` of the sink connections during an import: every
//! killed batch is rolled back and replayed, the table ends exact.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use ringpipe_xml::gen::Catalogue;

use super::{assert_same_rows, import, json, reference, SEED, SHARDS};
use crate::common::{conn, fresh_table, stderr};

/// Records of the kill tests: enough for a few seconds of debug-build import.
const KILL_ROWS: u64 = 40_000;
/// Kills wanted, and the fewest that make a run count.
const KILLS: usize = 10;
const MIN_KILLS: usize = 5;

/// Kills (once each) connections running a write statement on `table`
/// until `wanted` were killed or `stop` is set; returns their ids.
fn kill_writers(table: &str, stop: &AtomicBool, wanted: usize) -> Vec<u64> {
    let mut c = conn();
    let on_table = format!("%`{table}`%");
    let mut killed: Vec<u64> = Vec::new();
    while killed.len() < wanted && !stop.load(Ordering::Relaxed) {
        let running: Vec<u64> = c
            .exec(
                "SELECT ID FROM information_schema.PROCESSLIST \
                 WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Killed' AND INFO LIKE ? \
                 AND (INFO LIKE 'INSERT%' OR INFO LIKE 'LOAD DATA%')",
                (&on_table,),
            )
            .unwrap();
        for id in running {
            if killed.len() < wanted
                && !killed.contains(&id)
                && c.query_drop(format!("KILL CONNECTION {id}")).is_ok()
            {
                killed.push(id);
            }
        }
        thread::sleep(Duration::from_millis(10));
    }
    killed
}

fn survives_killed_connections(table: &'static str, path: &[&str]) {
    let reference = reference(KILL_ROWS, SEED);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("products.xml");
    Catalogue::new(KILL_ROWS)
        .seed(SEED)
        .write_file(&file)
        .unwrap();
    let _table = fresh_table(table);
    let stop = Arc::new(AtomicBool::new(false));
    let killer = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || kill_writers(table, &stop, KILLS))
    };
    let started = Instant::now();
    let output = import(&file, table, path);
    stop.store(true, Ordering::Relaxed);
    let killed = killer.join().unwrap();
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{}", stderr(&output));
    let report = json(&output);
    eprintln!(
        "{table}: {} kills, {} rewinds, {elapsed:?}",
        killed.len(),
        report["rewinds"]
    );
    assert!(
        killed.len() >= MIN_KILLS,
        "only {} kills before the import ended: make it longer",
        killed.len()
    );
    assert_eq!(report["rows_read"], KILL_ROWS);
    assert_eq!(report["rows_written"], KILL_ROWS);
    let rewinds = report["rewinds"].as_u64().unwrap();
    // Each kill fails the shard's next statement, except on a connection
    // that has no next batch.
    assert!(
        rewinds > 0 && rewinds as usize + SHARDS as usize >= killed.len(),
        "{rewinds} rewinds for {} kills",
        killed.len()
    );
    assert_same_rows(table, &reference);
}

#[test]
fn killed_connections_are_replayed_default_path() {
    survives_killed_connections("rel_kill_default", &[]);
}

#[test]
fn killed_connections_are_replayed_load_data() {
    survives_killed_connections("rel_kill_load_data", &["--write-path", "load-data"]);
}

/// As above in `--mode upsert` (replaying a batch rewrites the same values;
/// each key once, so two shards in any order).
#[test]
fn killed_connections_are_replayed_upsert_default_path() {
    survives_killed_connections("rel_kill_upsert", &["--mode", "upsert", "--any-order"]);
}

/// LOAD DATA in `--mode ignore` (upserts fall back to INSERT).
#[test]
fn killed_connections_are_replayed_ignore_load_data() {
    survives_killed_connections(
        "rel_kill_ignore_load",
        &[
            "--mode",
            "ignore",
            "--any-order",
            "--write-path",
            "load-data",
        ],
    );
}
