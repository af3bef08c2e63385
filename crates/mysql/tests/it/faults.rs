//! Every write path through the fault-injecting proxy: a stalled server, a
//! connection cut mid-packet, a truncated packet, slow replies, a flipped
//! byte. Each run must end exact (the table holds every row, byte for
//! byte) or with a clear error and whole batches only, within its own
//! deadline, without a panic.

use std::sync::mpsc;
use std::time::Duration;

use ringpipe_mysql::{prepare, MysqlError, MysqlTarget, SinkStats, WritePath};
use ringpipe_pipeline::{Checkpoint, ImportIdentity, Retryable, Row, Sink, Target};

use crate::common::*;
use crate::proxy::{Fault, Proxy};

/// Rows per batch, and batches per run.
const BATCH: usize = 200;
const BATCHES: usize = 3;

/// The network timeout the sinks get: short, so that a stall shows fast.
const NET_TIMEOUT: Duration = Duration::from_millis(1500);

/// How a run ended.
struct Outcome {
    /// `Ok`, or the error that stopped the run.
    result: Result<(), MysqlError>,
    /// The sink's counters.
    stats: SinkStats,
    /// Whether the armed fault hit a reply.
    fired: bool,
}

/// Where a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    /// The first reply after the second batch's rows were written.
    Flush,
    /// The reply to the second batch's `COMMIT`: the outcome is unknown to
    /// the client, so the run records checkpoints, which decide.
    Commit,
    /// As `Commit`, in an import that keeps no checkpoints (a pipe).
    CommitUnchecked,
}

/// Writes `BATCHES` batches through a proxy on `path`, arming `fault` for
/// the second batch, replaying retryable failures.
fn run(table: &str, path: WritePath, fault: Fault, when: When) -> Outcome {
    let proxy = Proxy::start(upstream());
    let config = ringpipe_mysql::SinkConfig::new(proxy.url(&url()), table, COLUMNS)
        .write_path(path)
        .connect_timeout(Duration::from_secs(5))
        .net_timeout(NET_TIMEOUT);
    // At the COMMIT the outcome is unknown to the client: the run records
    // checkpoints, which decide.
    let identity = ImportIdentity {
        input: table.to_owned(),
        shards: 1,
        mapping: "faults".to_owned(),
        part: ringpipe_pipeline::Part::WHOLE,
    };
    let import = (when == When::Commit).then_some(&identity);
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let data = records(1, (BATCH * BATCHES) as u64);
    let mut row = Row::with_columns(COLUMNS.len());
    let result = (|| {
        for (b, chunk) in data.chunks(BATCH).enumerate() {
            for attempt in 1.. {
                for (i, record) in chunk.iter().enumerate() {
                    fill(&mut row, record, (b * BATCH + i + 1) as u64);
                    sink.write(&row)?;
                }
                match (b, attempt, when) {
                    (1, 1, When::Flush) => proxy.arm(fault),
                    (1, 1, When::Commit | When::CommitUnchecked) => proxy.arm_at_commit(fault),
                    _ => {}
                }
                let last_record = ((b + 1) * BATCH) as u64;
                let checkpoint = Checkpoint {
                    import,
                    shard: 0,
                    last_record,
                    region_start: 1,
                    rows_crc: None,
                };
                match sink.commit(&checkpoint) {
                    Ok(()) => break,
                    Err(e) if e.is_retryable() && attempt < 4 => {
                        eprintln!("{path:?} {fault:?}: replaying after {e:?}");
                        sink.rollback()?;
                    }
                    Err(e) => {
                        let _ = sink.rollback();
                        return Err(e);
                    }
                }
            }
        }
        sink.close()
    })();
    if when == When::Commit {
        let direct = ringpipe_mysql::SinkConfig::new(url(), table, COLUMNS);
        MysqlTarget::new(direct).clear_checkpoints().unwrap();
    }
    Outcome {
        result,
        stats: sink.stats(),
        fired: proxy.fired(),
    }
}

/// `host:port` of the test server.
fn upstream() -> String {
    let url = url();
    let host = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:3306")
    }
}

/// Runs `fault` on `path` under a deadline, then checks the table: every
/// row exactly, or (after a clear error) whole batches only.
fn survives(path: WritePath, fault: Fault, name: &str) -> Outcome {
    survives_at(path, fault, When::Flush, name)
}

/// [`survives`], with the fault hitting `when`.
fn survives_at(path: WritePath, fault: Fault, when: When, name: &str) -> Outcome {
    let table = format!("rp_wire_fault_{name}_{path:?}").to_lowercase();
    let _table = fresh_table(&table);
    let (tx, rx) = mpsc::channel();
    let t = table.clone();
    std::thread::spawn(move || {
        let _ = tx.send(run(&t, path, fault, when));
    });
    let outcome = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{path:?} {fault:?}: no end within 60 s (hang or panic)"));
    assert!(outcome.fired, "{path:?} {fault:?}: the fault never hit");
    eprintln!(
        "{path:?} {fault:?}: ended {:?}, {:?}",
        outcome.result, outcome.stats
    );
    let data = records(1, (BATCH * BATCHES) as u64);
    let stored = read_back(&table);
    match &outcome.result {
        Ok(()) => {
            assert_eq!(stored.len(), data.len(), "{path:?} {fault:?}");
            assert!(stored == data, "{path:?} {fault:?}: rows differ");
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            assert_eq!(stored.len() % BATCH, 0, "{path:?} {fault:?}: {e}");
            assert!(stored == data[..stored.len()], "{path:?} {fault:?}: {e}");
        }
    }
    outcome
}

/// A stall past the network timeout: a timeout, a reconnect, a replay.
fn stall(path: WritePath) {
    let outcome = survives(path, Fault::Stall(Duration::from_secs(4)), "stall");
    outcome.result.unwrap();
    assert!(outcome.stats.timeouts >= 1, "{path:?}: {:?}", outcome.stats);
    assert!(
        outcome.stats.reconnects >= 1,
        "{path:?}: {:?}",
        outcome.stats
    );
}

/// A connection cut mid-packet: a lost connection, a reconnect, a replay.
fn cut(path: WritePath) {
    let outcome = survives(path, Fault::Cut, "cut");
    outcome.result.unwrap();
    assert!(
        outcome.stats.reconnects >= 1,
        "{path:?}: {:?}",
        outcome.stats
    );
}

#[test]
fn stall_insert() {
    stall(WritePath::Insert);
}

#[test]
fn stall_prepared() {
    stall(WritePath::Prepared);
}

#[test]
fn stall_load_data() {
    stall(WritePath::LoadData);
}

#[test]
fn stall_bulk() {
    stall(WritePath::Bulk);
}

#[test]
fn cut_insert() {
    cut(WritePath::Insert);
}

#[test]
fn cut_prepared() {
    cut(WritePath::Prepared);
}

#[test]
fn cut_load_data() {
    cut(WritePath::LoadData);
}

#[test]
fn cut_bulk() {
    cut(WritePath::Bulk);
}

#[test]
fn truncated_packet_on_every_path() {
    for path in EVERY_PATH {
        survives(path, Fault::Truncate, "truncate");
    }
}

#[test]
fn flipped_byte_on_every_path() {
    for path in EVERY_PATH {
        survives(path, Fault::Flip, "flip");
    }
}

#[test]
fn slow_replies_on_every_path_are_exact() {
    for path in EVERY_PATH {
        let outcome = survives(path, Fault::DelayEach(Duration::from_millis(20)), "slow");
        outcome.result.unwrap();
        assert_eq!(outcome.stats.timeouts, 0, "{path:?}");
    }
}

/// Every path, with the reply to a `COMMIT` lost to `fault`: the
/// checkpoint tells whether the batch committed, so the run is exact.
fn commit_reply_lost(fault: Fault, name: &str) {
    for path in EVERY_PATH {
        let outcome = survives_at(path, fault, When::Commit, name);
        outcome.result.unwrap();
        assert!(
            outcome.stats.reconnects >= 1,
            "{path:?}: {:?}",
            outcome.stats
        );
    }
}

#[test]
fn cut_commit_reply_on_every_path_is_exact() {
    commit_reply_lost(Fault::Cut, "cutcommit");
}

#[test]
fn stalled_commit_reply_on_every_path_is_exact() {
    commit_reply_lost(Fault::Stall(Duration::from_secs(4)), "stallcommit");
}

#[test]
fn a_commit_still_under_way_when_the_sink_reconnects_is_not_sent_again() {
    // The sink reconnects at once; its old transaction commits a second
    // later, while the sink asks the checkpoint whether it did.
    commit_reply_lost(Fault::LateCommit(Duration::from_secs(1)), "latecommit");
}

#[test]
fn a_lost_commit_reply_without_checkpoints_is_an_error_not_a_second_send() {
    for path in [WritePath::Insert, WritePath::Bulk] {
        let outcome = survives_at(path, Fault::Cut, When::CommitUnchecked, "uncheckedcommit");
        let error = outcome
            .result
            .expect_err("a batch whose commit is unknown was sent again");
        assert!(
            matches!(error, MysqlError::CommitUnknown { first: 201, .. }),
            "{path:?}: {error}"
        );
    }
}

#[test]
fn a_transaction_the_server_ended_without_a_word_is_replayed_on_every_path() {
    for path in EVERY_PATH {
        let outcome = survives_at(path, Fault::SilentRollback, When::Commit, "silentrollback");
        outcome.result.unwrap();
        assert_eq!(outcome.stats.conflicts, 1, "{path:?}: {:?}", outcome.stats);
        assert_eq!(outcome.stats.rollbacks, 1, "{path:?}: {:?}", outcome.stats);
    }
}
