//! A `COMMIT` that landed but whose reply was lost: a proxy between sink
//! and server forwards the k-th `COMMIT`, swallows the server's answer and
//! drops both connections. The sink must learn from the checkpoint that
//! the batch (with its bad records set aside) committed, and not send it
//! again; without checkpoints it must say it cannot know.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ringpipe_pipeline::{Import, ImportError};
use ringpipe_postgres::{PgConfig, PgError, PgTarget};

use crate::common::{self, Rows, Table};

/// The simple-query message `COMMIT` as the driver sends it.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";

/// The start of a sink's `COPY` statement, as it is prepared.
const COPY: &[u8] = b"COPY ";

/// A proxy to the test server that cuts the `cut`-th `COMMIT` of a batch
/// (1-based, over all its connections; a batch's connection is one that
/// sent a `COPY`, so the target's own transactions do not count) after
/// the server received it. Returns the URL through it.
fn proxy(cut: usize) -> String {
    let seen = Arc::new(AtomicUsize::new(0));
    common::proxy(move |client, server| relay(client, server, cut, Arc::clone(&seen)))
}

/// Forwards both ways; after forwarding the cut COMMIT, drops what the
/// server answers and closes both ends.
fn relay(client: TcpStream, server: TcpStream, cut: usize, seen: Arc<AtomicUsize>) {
    let swallow = Arc::new(AtomicBool::new(false));
    let (mut from_server, mut to_client) =
        (server.try_clone().unwrap(), client.try_clone().unwrap());
    let quiet = Arc::clone(&swallow);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n @ 1..) = from_server.read(&mut buf) {
            // Set before the COMMIT is forwarded: its answer never passes.
            // SeqCst: this load follows the store only through the server's
            // answer on the socket, which no memory ordering names; the
            // strongest ordering, and the system calls between them (full
            // barriers), make the store visible here first.
            if quiet.load(Ordering::SeqCst) || to_client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let (mut from_client, mut to_server) = (client, server);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        let mut sink = false;
        while let Ok(n @ 1..) = from_client.read(&mut buf) {
            sink |= buf[..n].windows(COPY.len()).any(|w| w == COPY);
            let commit = sink && buf[..n].windows(COMMIT.len()).any(|w| w == COMMIT);
            // Relaxed: the count is shared by every connection's relay
            // thread, and read-modify-writes of one atomic are totally
            // ordered whatever the ordering; the store is as above.
            let now = commit && seen.fetch_add(1, Ordering::Relaxed) + 1 == cut;
            if now {
                swallow.store(true, Ordering::SeqCst);
            }
            if to_server.write_all(&buf[..n]).is_err() {
                break;
            }
            if now {
                // The server commits; its answer is swallowed.
                std::thread::sleep(Duration::from_millis(300));
                let _ = from_client.shutdown(Shutdown::Both);
                let _ = to_server.shutdown(Shutdown::Both);
                break;
            }
        }
    });
}

const DDL: &str = "CREATE TABLE {t} (id int PRIMARY KEY, n int NOT NULL)";

/// Rows 1..=30, record 15's `n` NULL (a bad record in the second batch).
fn rows() -> Rows {
    numbered(|i| (i != 15).then(|| i.to_string()))
}

#[test]
fn pg_lost_commit_with_bad_records_is_settled_by_the_checkpoint() {
    let name = "pgsink_lost_commit";
    let mut table = Table::new(name, DDL);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(proxy(2), name, &["id", "n"])
        .max_bad(3)
        .reject_file(&file);
    let target = PgTarget::new(config);
    let summary = Import::new(target.clone())
        .batch_rows(10)
        .checkpoints("lost commit 30", "id,n")
        .run(vec![rows()])
        .unwrap();
    assert!(summary.rewinds >= 1, "the COMMIT was not cut: {summary:?}");
    // Sent again, every row of the batch would have been a duplicate key.
    assert_eq!(target.rejected(), 1);
    assert_eq!(summary.rows_written, 29, "{summary:?}");
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    assert!(
        lines.starts_with("15\t15:0\t") && lines.contains("23502"),
        "{lines}"
    );
    assert_eq!(table.hash().0, 29);
}

#[test]
fn pg_lost_commit_without_checkpoints_is_an_error_not_a_second_send() {
    let name = "pgsink_lost_commit_pipe";
    let mut table = Table::new(name, DDL);
    let config = PgConfig::new(proxy(1), name, &["id", "n"]);
    let failure = Import::new(PgTarget::new(config))
        .batch_rows(10)
        .run(vec![Rows::text(&["id", "n"], &[&[Some("1"), Some("1")]])])
        .unwrap_err();
    let ImportError::Sink { error, .. } = &failure.error else {
        panic!("{failure}");
    };
    assert!(
        matches!(error, PgError::CommitUnknown { last: 1 }),
        "{error}"
    );
    assert_eq!(table.hash().0, 1, "the batch did land, once");
}

/// A proxy that, at the `cut`-th `COMMIT`, closes the sink's side at once
/// and passes that `COMMIT` to the server only `hold` later: the sink
/// reconnects while its old transaction is still open and commits after.
fn late_proxy(cut: usize, hold: Duration) -> String {
    let seen = Arc::new(AtomicUsize::new(0));
    common::proxy(move |client, server| {
        let seen = Arc::clone(&seen);
        let (mut from_server, mut to_client) =
            (server.try_clone().unwrap(), client.try_clone().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = from_server.read(&mut buf) {
                if to_client.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
        let (mut from_client, mut to_server) = (client, server);
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = from_client.read(&mut buf) {
                let commit = buf[..n].windows(COMMIT.len()).any(|w| w == COMMIT);
                // Relaxed: as above, one atomic's increments are totally ordered.
                if commit && seen.fetch_add(1, Ordering::Relaxed) + 1 == cut {
                    let _ = from_client.shutdown(Shutdown::Both);
                    std::thread::sleep(hold);
                    let _ = to_server.write_all(&buf[..n]);
                    std::thread::sleep(Duration::from_millis(300));
                    let _ = to_server.shutdown(Shutdown::Both);
                    break;
                }
                if to_server.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
    })
}

/// Rows 1..=30 of `(id, n)`, `n` as given (`None`: NULL).
fn numbered(n: impl Fn(u32) -> Option<String>) -> Rows {
    let owned: Vec<[Option<String>; 2]> =
        (1..=30).map(|i: u32| [Some(i.to_string()), n(i)]).collect();
    let refs: Vec<[Option<&str>; 2]> = owned
        .iter()
        .map(|[a, b]| [a.as_deref(), b.as_deref()])
        .collect();
    let slices: Vec<&[Option<&str>]> = refs.iter().map(|r| &r[..]).collect();
    Rows::text(&["id", "n"], &slices)
}

#[test]
fn pg_a_commit_still_under_way_when_the_sink_reconnects_is_not_sent_again() {
    // No key: a batch stored twice would show as 10 rows more.
    let name = "pgsink_late_commit";
    let mut table = Table::new(name, "CREATE TABLE {t} (id int, n int)");
    let config = PgConfig::new(
        late_proxy(2, Duration::from_millis(1500)),
        name,
        &["id", "n"],
    );
    let summary = Import::new(PgTarget::new(config))
        .batch_rows(10)
        .checkpoints("late commit 30", "id,n")
        .run(vec![numbered(|i| Some(i.to_string()))])
        .unwrap();
    assert!(summary.rewinds >= 1, "the COMMIT was not cut: {summary:?}");
    assert_eq!(table.hash().0, 30);
    assert_eq!(summary.rows_written, 30, "{summary:?}");
}

#[test]
fn pg_a_replay_after_a_lost_commit_counts_each_bad_record_once() {
    // Records 12 and 14 hold a value numeric(5,2) would round: refused
    // before sending, in the batch whose COMMIT is cut.
    let name = "pgsink_lost_commit_budget";
    let mut table = Table::new(
        name,
        "CREATE TABLE {t} (id int PRIMARY KEY, n numeric(5,2))",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(proxy(2), name, &["id", "n"])
        .max_bad(2)
        .reject_file(&file);
    let target = PgTarget::new(config);
    let rows = numbered(|i| Some(if i == 12 || i == 14 { "1.234" } else { "1.5" }.into()));
    let summary = Import::new(target.clone())
        .batch_rows(10)
        .checkpoints("lost commit budget 30", "id,n")
        .run(vec![rows])
        .unwrap();
    assert!(summary.rewinds >= 1, "the COMMIT was not cut: {summary:?}");
    assert_eq!(target.rejected(), 2);
    assert_eq!(table.hash().0, 28);
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
}
