//! Lock contention and a deadlock (library level): the sink sessions' lock
//! wait timeout and a deadlock with the sink as victim are waited out by
//! rewinds (the deadlock counted as a conflict), the table ends exact.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, Mode, SinkConfig};
use ringpipe_pipeline::Import;
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

use super::{assert_same_rows, import, reference};
use crate::common::{self, conn, fresh_table, stderr, url, MysqlTable};

#[test]
fn lock_contention_is_waited_out_by_rewinds() {
    const ROWS: u64 = 4_000;
    const HOLD: Duration = Duration::from_secs(3);
    let table = "rel_lock_upsert";
    let dir = tempfile::tempdir().unwrap();
    let seed1 = dir.path().join("seed1.xml");
    let seed2 = dir.path().join("seed2.xml");
    Catalogue::new(ROWS).seed(1).write_file(&seed1).unwrap();
    Catalogue::new(ROWS).seed(2).write_file(&seed2).unwrap();
    let reference = reference(ROWS, 2);
    let _table = fresh_table(table);
    let output = import(&seed1, table, &[]);
    assert!(output.status.success(), "{}", stderr(&output));

    // Rows 1..=300 (the first batches of both shards) locked for HOLD.
    let mut blocker = conn();
    blocker.query_drop("START TRANSACTION").unwrap();
    let locked: Vec<u64> = blocker
        .query(format!(
            "SELECT id FROM `{table}` WHERE id BETWEEN 1 AND 300 FOR UPDATE"
        ))
        .unwrap();
    assert_eq!(locked.len(), 300);
    let release = thread::spawn(move || {
        thread::sleep(HOLD);
        blocker.query_drop("ROLLBACK").unwrap();
    });

    let config = SinkConfig::new(url(), table, &PRODUCT_COLUMNS)
        .mode(Mode::Upsert)
        .init_command("SET SESSION innodb_lock_wait_timeout = 1");
    let target = prepare(&config).unwrap();
    let source = XmlSource::open(&seed2, Catalogue::new(ROWS).config()).unwrap();
    let summary = Import::new(|shard| target.connect_sink(shard))
        .shards(2)
        .batch_rows(200)
        .shard_block(1)
        .run(vec![source])
        .unwrap();
    release.join().unwrap();
    eprintln!("lock contention: {summary:?}");
    assert!(
        summary.rewinds > 0,
        "no lock wait timeout was met: {summary:?}"
    );
    assert!(summary.elapsed >= Duration::from_secs(2), "{summary:?}");
    // Lock wait timeouts are not conflicts: nothing was rolled back for one.
    assert_eq!(target.recoveries().conflicts, 0, "{summary:?}");
    assert_eq!(summary.rows_written, ROWS);
    assert_same_rows(table, &reference);
}

#[test]
fn deadlock_victim_batch_is_rolled_back_and_replayed() {
    const ROWS: u64 = 4_000;
    let (table, side) = ("rel_deadlock", "rel_deadlock_side");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed3.xml");
    Catalogue::new(ROWS).seed(3).write_file(&file).unwrap();
    let reference = reference(ROWS, 3);
    let _table = fresh_table(table);

    // The blocker holds id 1500, inside the sink's first batch, and weighs
    // more than the sink's transaction (20,000 undo records against at most
    // 2,000), so InnoDB will pick the sink as the deadlock victim.
    let mut blocker = conn();
    blocker
        .query_drop(format!("DROP TABLE IF EXISTS `{side}`"))
        .unwrap();
    blocker
        .query_drop(format!(
            "CREATE TABLE `{side}` (id INT PRIMARY KEY) ENGINE=InnoDB"
        ))
        .unwrap();
    let _side = MysqlTable::new(side);
    blocker.query_drop("START TRANSACTION").unwrap();
    blocker
        .query_drop(format!(
            "INSERT INTO `{side}` SELECT seq FROM seq_1_to_20000"
        ))
        .unwrap();
    let insert = |id: u64| {
        format!("INSERT INTO `{table}` (id, sku, name) VALUES ({id}, 'blocker-{id}', 'blocker')")
    };
    blocker.query_drop(insert(1500)).unwrap();

    let target = prepare(&SinkConfig::new(url(), table, &PRODUCT_COLUMNS)).unwrap();
    let counted = target.clone();
    let source = XmlSource::open(&file, Catalogue::new(ROWS).config()).unwrap();
    let import = thread::spawn(move || {
        Import::new(|shard| target.connect_sink(shard))
            .shards(1)
            .batch_rows(2_000)
            .run(vec![source])
    });

    // The sink waits for 1500 with the ids before it written in its current
    // transaction: as many as its undo log entries. (INNODB_TRX does not
    // always list a transaction waiting inside a bulk execute; the engine
    // status does.)
    let mut watcher = conn();
    let started = Instant::now();
    let database = common::url_parts().3;
    let sink_written = loop {
        let status: Option<(String, String, String)> =
            watcher.query_first("SHOW ENGINE INNODB STATUS").unwrap();
        let status = status.map(|(_, _, text)| text).unwrap_or_default();
        // Only the live transactions: the status also keeps the latest
        // deadlock it detected, possibly from an earlier run of this test.
        let live = status
            .split_once("LIST OF TRANSACTIONS FOR EACH SESSION:")
            .map_or("", |(_, rest)| {
                rest.split("\n--------\n").next().unwrap_or("")
            });
        // Other tests run beside this one: find this table's waiting
        // transaction among them.
        let ours = format!("table `{database}`.`{table}` trx id");
        let waiting = live
            .split("---TRANSACTION ")
            .find(|trx| trx.contains(&ours) && trx.contains("FOR THIS LOCK TO BE GRANTED"));
        if let Some(trx) = waiting {
            let line = trx.lines().find(|l| l.starts_with("LOCK WAIT")).unwrap();
            break line
                .rsplit_once("undo log entries ")
                .map_or(0, |(_, n)| n.trim().parse::<u64>().unwrap());
        }
        if started.elapsed() > Duration::from_secs(30) || import.is_finished() {
            drop(blocker); // lets the import finish
            panic!("the sink never waited for id 1500: {:?}", import.join());
        }
        thread::sleep(Duration::from_millis(20));
    };
    // Closing the cycle: id 1499 is the sink's, uncommitted. (A transaction
    // never begins at 1500: the source publishes in blocks of 256 records,
    // so the sink's batches begin after a multiple of 256 or at 2,001.)
    assert!(sink_written > 0, "the sink's transaction began at id 1500");
    blocker
        .query_drop(insert(1499))
        .expect("InnoDB chose the sink's transaction as the deadlock victim");
    thread::sleep(Duration::from_millis(300));
    blocker.query_drop("ROLLBACK").unwrap();
    blocker.query_drop(format!("DROP TABLE `{side}`")).unwrap();

    let summary = import.join().unwrap().unwrap();
    eprintln!("deadlock: {summary:?}");
    assert!(
        summary.rewinds >= 1,
        "the deadlock caused no rewind: {summary:?}"
    );
    let recoveries = counted.recoveries();
    assert_eq!(recoveries.conflicts, 1, "one deadlock: {recoveries:?}");
    assert_eq!(recoveries.reconnects, 0, "{recoveries:?}");
    assert_eq!(summary.rows_written, ROWS);
    assert_same_rows(table, &reference);
}
