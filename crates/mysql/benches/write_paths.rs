//! Write-path benchmark: every `WritePath` on the same catalogue rows, with
//! 1 and 2 connections; the bulk path both on the sink's own wire client
//! (the default) and through the `mysql` crate. The configurations run in
//! rounds, round `k` starting with configuration `k` (so that a slow minute
//! of a shared machine does not always hit the same one); the summary gives
//! each one's median rate and the median of its per-round ratios to
//! 1-connection INSERT.
//!
//! ```text
//! RINGPIPE_BENCH_ROWS=1000000 cargo bench -p ringpipe-mysql --bench write_paths
//! ```
//!
//! Env: `RINGPIPE_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/test`),
//! `RINGPIPE_BENCH_ROWS` (default 100000), `RINGPIPE_BENCH_BATCH` (5000),
//! `RINGPIPE_BENCH_ROUNDS` (3). Each run recreates the table, drives the
//! sinks directly through `write`/`flush`, checks the row count and that
//! every path leaves the same `CHECKSUM TABLE`.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, BulkClient, PreparedTarget, ServerStats, SinkConfig, WritePath};
use ringpipe_pipeline::{Checkpoint, RecordPosition, Row, Sink};
use ringpipe_xml::gen::{product_table_ddl, Catalogue, PRODUCT_COLUMNS};

/// The benchmark table.
const TABLE: &str = "rp_bench_write_paths";

/// Contenders in measuring order: name, path, bulk client.
const CONTENDERS: [(&str, WritePath, BulkClient); 5] = [
    ("Insert", WritePath::Insert, BulkClient::Driver),
    ("Prepared", WritePath::Prepared, BulkClient::Driver),
    ("LoadData", WritePath::LoadData, BulkClient::Driver),
    ("Bulk", WritePath::Bulk, BulkClient::Wire),
    ("Bulk/crate", WritePath::Bulk, BulkClient::Driver),
];

fn main() {
    let url = std::env::var("RINGPIPE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned());
    let rows = env_num("RINGPIPE_BENCH_ROWS", 100_000);
    let batch = env_num("RINGPIPE_BENCH_BATCH", 5_000) as usize;
    let rounds = env_num("RINGPIPE_BENCH_ROUNDS", 3).max(1) as usize;
    println!("write_paths: {rows} rows, batches of {batch}, {rounds} round(s), rotated");
    let cells: Vec<(&str, WritePath, BulkClient, usize)> = [1, 2]
        .into_iter()
        .flat_map(|conns| CONTENDERS.map(|(name, path, client)| (name, path, client, conns)))
        .collect();
    // rates[cell]: one rate per round, in round order.
    let mut rates = vec![Vec::with_capacity(rounds); cells.len()];
    let mut checksum = None;
    for round in 0..rounds {
        for k in 0..cells.len() {
            let cell = (round + k) % cells.len();
            let (name, path, client, connections) = cells[cell];
            let r = run(&url, (path, client), connections, rows, batch);
            println!(
                "round {round}: {name:>10} x{connections}: {:>9.0} rows/s  {:>6.2} s  rows/commit {:>6.0}  rows/statement {:>6.0}  statements {}",
                rows as f64 / r.elapsed.as_secs_f64(),
                r.elapsed.as_secs_f64(),
                r.server.rows_per_commit(),
                r.server.rows_per_statement(),
                r.server.write_statements(),
            );
            assert_eq!(
                *checksum.get_or_insert(r.checksum),
                r.checksum,
                "{name}: table differs"
            );
            rates[cell].push(rows as f64 / r.elapsed.as_secs_f64());
        }
    }
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    conn.query_drop(format!("DROP TABLE IF EXISTS {TABLE}"))
        .unwrap();
    summarize(&cells, &rates);
}

/// What one run measured.
struct RunResult {
    /// Wall time from the first write to the last commit.
    elapsed: Duration,
    /// Server counters over the run.
    server: ServerStats,
    /// `CHECKSUM TABLE` afterwards.
    checksum: u64,
}

/// Loads `rows` rows with `connections` sinks on `path` through `client`.
fn run(
    url: &str,
    (path, client): (WritePath, BulkClient),
    connections: usize,
    rows: u64,
    batch: usize,
) -> RunResult {
    recreate_table(url);
    let config = SinkConfig::new(url, TABLE, &PRODUCT_COLUMNS)
        .write_path(path)
        .bulk_client(client);
    let target = prepare(&config).expect("prepare");
    let before = ServerStats::read(url).expect("stats");
    let start = Instant::now();
    std::thread::scope(|scope| {
        for shard in 0..connections {
            let target = &target;
            scope.spawn(move || load_shard(target, shard, connections, rows, batch));
        }
    });
    let elapsed = start.elapsed();
    let server = ServerStats::read(url).expect("stats").delta(&before);
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
    let count: u64 = conn
        .query_first(format!("SELECT COUNT(*) FROM {TABLE}"))
        .unwrap()
        .unwrap();
    assert_eq!(count, rows, "{path:?}: row count");
    let (_, checksum): (String, u64) = conn
        .query_first(format!("CHECKSUM TABLE {TABLE}"))
        .unwrap()
        .unwrap();
    RunResult {
        elapsed,
        server,
        checksum,
    }
}

/// One shard: every `connections`-th batch, written and flushed.
fn load_shard(target: &PreparedTarget, shard: usize, connections: usize, rows: u64, batch: usize) {
    let mut sink = target.connect_sink(shard).expect("connect");
    let catalogue = Catalogue::new(rows);
    let mut row = Row::with_columns(PRODUCT_COLUMNS.len());
    let batches = rows.div_ceil(batch as u64);
    for b in (shard as u64..batches).step_by(connections) {
        let first = b * batch as u64;
        for id in first..(first + batch as u64).min(rows) {
            fill(&mut row, &catalogue, id + 1);
            sink.write(&row).expect("write");
        }
        let checkpoint = Checkpoint {
            import: None,
            shard: 0,
            last_record: 0,
            region_start: 1,
            rows_crc: None,
        };
        sink.commit(&checkpoint).expect("commit");
    }
    sink.close().expect("close");
}

/// Drops and recreates the catalogue table (`ringpipe gen --ddl`'s, with
/// its unique and secondary indexes).
fn recreate_table(url: &str) {
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
    conn.query_drop(format!("DROP TABLE IF EXISTS {TABLE}"))
        .unwrap();
    conn.query_drop(product_table_ddl(TABLE)).unwrap();
}

/// Fills `row` with the catalogue's record `id` (the generator every other
/// benchmark and test uses).
fn fill(row: &mut Row, catalogue: &Catalogue, id: u64) {
    row.clear();
    for (column, value) in catalogue.product(id).values().iter().enumerate() {
        if let Some(value) = value {
            row.set(column, value);
        }
    }
    row.set_position(RecordPosition {
        record: id,
        ..RecordPosition::default()
    });
}

/// Prints each configuration's median rate and the median of its per-round
/// ratios to 1-connection INSERT (the first cell) in the same round.
fn summarize(cells: &[(&str, WritePath, BulkClient, usize)], rates: &[Vec<f64>]) {
    let base = &rates[0];
    println!("\nsummary ({} rounds; medians):", base.len());
    for ((name, _, _, conns), mine) in cells.iter().zip(rates) {
        let ratios: Vec<f64> = mine.iter().zip(base).map(|(m, b)| m / b).collect();
        let per_round: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "{name:>10} x{conns}: {:>9.0} rows/s  {:.2}x Insert x1 (per round {})",
            median(mine),
            median(&ratios),
            per_round.join(" / ")
        );
    }
}

/// The median (the mean of the middle two for an even count).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A numeric env var, or `default`.
fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
