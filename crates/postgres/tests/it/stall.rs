//! A server that stops answering: a proxy between the import and the
//! server forwards the k-th message that holds a given statement, then
//! passes nothing more either way on that connection and keeps both
//! sockets open, as a stopped server process whose host still
//! acknowledges the bytes would. The import must give up on that
//! connection after its net timeout and finish exactly on a new one.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringpipe_pipeline::Import;
use ringpipe_postgres::{PgConfig, PgTarget};

use crate::common::{self, Rows, Table};

/// The simple-query message `COMMIT` as the driver sends it.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";
/// Part of the statement that marks an import complete.
const MARK_COMPLETE: &[u8] = b"generate_series";

const DDL: &str = "CREATE TABLE {t} (id bigint PRIMARY KEY, name text NOT NULL)";
const ROWS: u64 = 5_000;

/// A proxy to the test server whose connection that carries the
/// `freeze`-th message holding `what` (1-based, over all its connections)
/// goes silent right after forwarding it. Returns the URL through it.
fn proxy(what: &'static [u8], freeze: usize) -> String {
    let seen = Arc::new(AtomicUsize::new(0));
    common::proxy(move |client, server| relay(client, server, (what, freeze), Arc::clone(&seen)))
}

/// Forwards both ways until the frozen message has passed; then reads
/// and drops everything, holding both sockets open.
fn relay(
    client: TcpStream,
    server: TcpStream,
    (what, freeze): (&'static [u8], usize),
    seen: Arc<AtomicUsize>,
) {
    let frozen = Arc::new(AtomicBool::new(false));
    let (mut from_server, mut to_client) =
        (server.try_clone().unwrap(), client.try_clone().unwrap());
    let silent = Arc::clone(&frozen);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n @ 1..) = from_server.read(&mut buf) {
            // SeqCst: this load follows the store below only through the
            // server's answer on the socket, which no memory ordering names;
            // the strongest ordering, and the system calls between them
            // (full barriers), make the store visible here first.
            if !silent.load(Ordering::SeqCst) && to_client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let (mut from_client, mut to_server) = (client, server);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n @ 1..) = from_client.read(&mut buf) {
            // SeqCst: written by this thread only; the other thread's load
            // is the one that matters (see above).
            if frozen.load(Ordering::SeqCst) {
                continue;
            }
            let holds = buf[..n].windows(what.len()).any(|w| w == what);
            // Relaxed: the count is shared by every connection's relay
            // thread, and read-modify-writes of one atomic are totally
            // ordered whatever the ordering.
            if holds && seen.fetch_add(1, Ordering::Relaxed) + 1 == freeze {
                // Set before the message is forwarded: its answer never passes.
                frozen.store(true, Ordering::SeqCst);
            }
            if to_server.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
}

#[test]
fn pg_a_server_that_stops_answering_is_given_up_after_the_net_timeout() {
    let name = "pgsink_stall";
    let mut table = Table::new(name, DDL);
    let config =
        PgConfig::new(proxy(COMMIT, 2), name, &["id", "name"]).net_timeout(Duration::from_secs(2));
    let target = PgTarget::new(config);
    let started = Instant::now();
    let summary = Import::new(target.clone())
        .shards(2)
        .batch_rows(1_000)
        .checkpoints("stall 5000", "id,name")
        .run(vec![Rows::numbered(ROWS)])
        .unwrap();
    let recoveries = target.recoveries();
    assert!(
        recoveries.timeouts >= 1,
        "no call timed out: {recoveries:?}"
    );
    assert!(recoveries.reconnects >= 1, "{recoveries:?}");
    assert!(summary.rewinds >= 1, "{summary:?}");
    // The frozen COMMIT had landed: sent again, its rows would be
    // duplicate keys and the import would have failed.
    assert_eq!(summary.rows_written, ROWS, "{summary:?}");
    assert_eq!(table.hash().0, ROWS as i64);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn pg_the_targets_own_call_that_goes_unanswered_is_retried_on_a_new_connection() {
    let name = "pgsink_stall_mark";
    let mut table = Table::new(name, DDL);
    let config = PgConfig::new(proxy(MARK_COMPLETE, 1), name, &["id", "name"])
        .net_timeout(Duration::from_secs(2));
    let started = Instant::now();
    let summary = Import::new(PgTarget::new(config))
        .shards(2)
        .batch_rows(1_000)
        .checkpoints("stall mark 5000", "id,name")
        .run(vec![Rows::numbered(ROWS)])
        .unwrap();
    assert_eq!(summary.rows_written, ROWS, "{summary:?}");
    assert_eq!(table.hash().0, ROWS as i64);
    // Marked complete on a new connection after the frozen one's limit.
    assert_eq!(table.complete(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
