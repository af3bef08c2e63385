//! The sink on a MariaDB Galera cluster, where another node's write can
//! abort a transaction at any moment (a brute-force abort). These tests need
//! two nodes of one cluster, named by `RINGPIPE_TEST_GALERA_URLS`
//! (whitespace-separated URLs); `scripts/test-cluster.sh` starts a cluster
//! and runs them, and they fail without one.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use ringpipe_mysql::{prepare, BulkClient, Mode, SinkConfig, WritePath};
use ringpipe_pipeline::{Row, Sink};

use crate::common::{fill, records, write_batch, Record, COLUMNS};

/// Why the tests of this module are not in the plain suite.
const NEEDS: &str = "needs a Galera cluster: scripts/test-cluster.sh runs it";

/// The first two nodes' URLs.
fn nodes() -> [String; 2] {
    let urls = std::env::var("RINGPIPE_TEST_GALERA_URLS")
        .unwrap_or_else(|_| panic!("RINGPIPE_TEST_GALERA_URLS is not set: this test {NEEDS}"));
    let urls: Vec<String> = urls.split_whitespace().map(str::to_owned).collect();
    assert!(
        urls.len() >= 2,
        "RINGPIPE_TEST_GALERA_URLS names {} node(s), not two or more",
        urls.len()
    );
    [urls[0].clone(), urls[1].clone()]
}

/// A connection whose reads wait for every write the cluster committed before.
fn conn(url: &str) -> Conn {
    let opts = mysql::OptsBuilder::from_opts(Opts::from_url(url).unwrap())
        .init(vec!["SET SESSION wsrep_sync_wait = 1"]);
    Conn::new(opts).unwrap()
}

/// The standard test table on the cluster, dropped with the guard.
struct ClusterTable {
    url: String,
    name: &'static str,
}

impl ClusterTable {
    fn fresh(url: &str, name: &'static str) -> Self {
        let table = ClusterTable {
            url: url.to_owned(),
            name,
        };
        let mut c = conn(url);
        c.query_drop(format!("DROP TABLE IF EXISTS `{name}`"))
            .unwrap();
        c.query_drop(format!(
            "CREATE TABLE `{name}` (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(255), \
             body LONGTEXT, qty INT, price DECIMAL(12,2), KEY (name)) \
             ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        ))
        .unwrap();
        table
    }

    /// Every row, ordered by id, as text.
    fn rows(&self) -> Vec<Record> {
        let rows: Vec<mysql::Row> = conn(&self.url)
            .query(format!("SELECT * FROM `{}` ORDER BY id", self.name))
            .unwrap();
        rows.into_iter()
            .map(|r| {
                (0..COLUMNS.len())
                    .map(|i| r.get::<Option<String>, _>(i).unwrap())
                    .collect()
            })
            .collect()
    }
}

impl Drop for ClusterTable {
    fn drop(&mut self) {
        if let Ok(mut c) = Conn::new(Opts::from_url(&self.url).unwrap()) {
            let _ = c.query_drop(format!("DROP TABLE IF EXISTS `{}`", self.name));
        }
    }
}

/// Waits (up to a minute) until `done` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The rows the transaction of connection `id` changed, `None` without one.
fn rows_modified(observer: &mut Conn, id: u64) -> Option<u64> {
    observer
        .exec_first(
            "SELECT trx_rows_modified FROM information_schema.innodb_trx \
             WHERE trx_mysql_thread_id = ?",
            (id,),
        )
        .unwrap()
}

/// A batch's first statement, sent ahead by `write`, holds its rows in an
/// open transaction; a write of one of them through another node aborts
/// it, and the node reports the abort on the sink's next command, here its
/// `ROLLBACK`. That is a rollback done, not a failure: the batch replays
/// and lands.
#[test]
#[ignore = "needs a Galera cluster: scripts/test-cluster.sh runs it"]
fn an_abort_reported_on_rollback_is_a_rollback() {
    let [one, two] = nodes();
    let table = ClusterTable::fresh(&one, "rp_galera_abort_on_rollback");
    let config = SinkConfig::new(&one, table.name, COLUMNS)
        .write_path(WritePath::Bulk)
        .mode(Mode::Upsert)
        .max_rows_per_statement(10);
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    assert_eq!(sink.client(), Some(BulkClient::Wire));
    let id = sink.connection_id().unwrap();
    let data = records(1, 20);
    let mut row = Row::with_columns(COLUMNS.len());
    for (i, record) in data[..10].iter().enumerate() {
        fill(&mut row, record, i as u64 + 1);
        sink.write(&row).unwrap();
    }
    let mut observer = conn(&one);
    wait_until("the sink's first statement", || {
        rows_modified(&mut observer, id) == Some(10)
    });

    conn(&two)
        .query_drop(format!(
            "INSERT INTO `{}` (id, name) VALUES (5, 'node 2')",
            table.name
        ))
        .unwrap();
    // Node 1 applies that write only after aborting the sink's transaction,
    // which holds the row.
    let name: Option<String> = observer
        .query_first(format!("SELECT name FROM `{}` WHERE id = 5", table.name))
        .unwrap();
    assert_eq!(name.as_deref(), Some("node 2"));
    sink.rollback().unwrap();

    write_batch(&mut sink, &mut row, &data[..10], 0).unwrap();
    write_batch(&mut sink, &mut row, &data[10..], 10).unwrap();
    sink.close().unwrap();
    assert_eq!(
        sink.stats().conflicts,
        0,
        "the rollback's answer is not a conflict of its own"
    );
    assert_eq!(table.rows(), data);
}
