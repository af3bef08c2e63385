//! Write-path benchmark: every `WritePath` on the same catalogue rows, with
//! 1 and 2 connections, interleaved in one run.
//!
//! ```text
//! RINGPIPE_BENCH_ROWS=1000000 cargo bench -p ringpipe-mysql --bench write_paths
//! ```
//!
//! Env: `RINGPIPE_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/test`),
//! `RINGPIPE_BENCH_ROWS` (default 100000), `RINGPIPE_BENCH_BATCH` (5000),
//! `RINGPIPE_BENCH_ROUNDS` (1). Each run recreates the table, drives the
//! sinks directly through `write`/`flush`, checks the row count and that
//! every path leaves the same `CHECKSUM TABLE`.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, PreparedTarget, ServerStats, SinkConfig, WritePath};
use ringpipe_ring::pipeline::{RecordPosition, Row, Sink};

/// The benchmark table.
const TABLE: &str = "rp_bench_write_paths";

/// Catalogue columns, in row order.
const COLUMNS: &[&str] = &[
    "id",
    "sku",
    "name",
    "description",
    "price",
    "quantity",
    "category",
    "currency",
    "updated",
];

/// Paths in measuring order.
const PATHS: [WritePath; 4] = [
    WritePath::Insert,
    WritePath::Prepared,
    WritePath::LoadData,
    WritePath::Bulk,
];

fn main() {
    let url = std::env::var("RINGPIPE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned());
    let rows = env_num("RINGPIPE_BENCH_ROWS", 100_000);
    let batch = env_num("RINGPIPE_BENCH_BATCH", 5_000) as usize;
    let rounds = env_num("RINGPIPE_BENCH_ROUNDS", 1);
    println!("write_paths: {rows} rows, batches of {batch}, {rounds} round(s)");
    let mut results: Vec<(WritePath, usize, f64)> = Vec::new();
    let mut checksum = None;
    for _ in 0..rounds {
        for connections in [1, 2] {
            for path in PATHS {
                let r = run(&url, path, connections, rows, batch);
                let name = format!("{path:?}");
                println!(
                    "{name:>9} x{connections}: {:>9.0} rows/s  {:>6.2} s  rows/commit {:>6.0}  rows/statement {:>6.0}  statements {}",
                    rows as f64 / r.elapsed.as_secs_f64(),
                    r.elapsed.as_secs_f64(),
                    r.server.rows_per_commit(),
                    r.server.rows_per_statement(),
                    r.server.write_statements(),
                );
                assert_eq!(
                    *checksum.get_or_insert(r.checksum),
                    r.checksum,
                    "{path:?}: table differs"
                );
                results.push((path, connections, rows as f64 / r.elapsed.as_secs_f64()));
            }
        }
    }
    summarize(&results);
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

/// Loads `rows` rows with `connections` sinks on `path`.
fn run(url: &str, path: WritePath, connections: usize, rows: u64, batch: usize) -> RunResult {
    recreate_table(url);
    let config = SinkConfig::new(url, TABLE, COLUMNS).write_path(path);
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
    let mut row = Row::with_columns(COLUMNS.len());
    let batches = rows.div_ceil(batch as u64);
    for b in (shard as u64..batches).step_by(connections) {
        let first = b * batch as u64;
        for id in first..(first + batch as u64).min(rows) {
            generate(&mut row, id + 1);
            sink.write(&row).expect("write");
        }
        sink.flush().expect("flush");
    }
    sink.close().expect("close");
}

/// Drops and recreates the catalogue table with its secondary indexes.
fn recreate_table(url: &str) {
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
    conn.query_drop(format!("DROP TABLE IF EXISTS {TABLE}"))
        .unwrap();
    conn.query_drop(format!(
        "CREATE TABLE {TABLE} (id BIGINT NOT NULL PRIMARY KEY, sku VARCHAR(32) NOT NULL, \
         name VARCHAR(255) NOT NULL, description TEXT, price DECIMAL(12,2) NOT NULL, \
         quantity INT NOT NULL, category VARCHAR(64), currency CHAR(3) NOT NULL, \
         updated DATETIME, KEY (sku), KEY (category)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    ))
    .unwrap();
}

/// Words for names and descriptions (some multi-byte).
const WORDS: &[&str] = &[
    "café",
    "steel",
    "Ölfilter",
    "sapphire",
    "naïve",
    "日本製",
    "wireless",
    "ergonomic",
    "crème",
    "Größe",
    "quantum",
    "bamboo",
    "κόσμος",
    "deluxe",
    "mini",
    "über",
    "pro",
];

/// Categories.
const CATEGORIES: &[&str] = &[
    "tools", "garden", "kitchen", "office", "toys", "outdoor", "audio",
];

/// Fills `row` with catalogue record `id`, deterministically.
fn generate(row: &mut Row, id: u64) {
    row.clear();
    let mut rng = SplitMix(id);
    let mut word = || WORDS[(rng.next() % WORDS.len() as u64) as usize];
    row.set(0, &id.to_string());
    row.set(
        1,
        &format!("SKU-{:08X}", id.wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF),
    );
    let name = row.value_mut(2);
    for _ in 0..4 {
        name.push_str(word());
        name.push(' ');
    }
    name.push_str(&id.to_string());
    let description = row.value_mut(3);
    for _ in 0..24 {
        description.push_str(word());
        description.push(' ');
    }
    let mut rng = SplitMix(id ^ 0xABCD);
    row.set(
        4,
        &format!("{}.{:02}", rng.next() % 10_000, rng.next() % 100),
    );
    row.set(5, &(rng.next() % 5_000).to_string());
    if id % 11 != 0 {
        row.set(
            6,
            CATEGORIES[(rng.next() % CATEGORIES.len() as u64) as usize],
        );
    }
    row.set(7, ["EUR", "USD", "GBP"][(id % 3) as usize]);
    row.set(
        8,
        &format!(
            "2024-{:02}-{:02} {:02}:{:02}:00",
            1 + id % 12,
            1 + id % 28,
            id % 24,
            id % 60
        ),
    );
    row.set_position(RecordPosition {
        record: id,
        ..RecordPosition::default()
    });
}

/// SplitMix64: a tiny deterministic generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Prints each configuration's best rate and its ratio to 1-connection INSERT.
fn summarize(results: &[(WritePath, usize, f64)]) {
    let best = |path: WritePath, conns: usize| {
        results
            .iter()
            .filter(|r| r.0 == path && r.1 == conns)
            .map(|r| r.2)
            .fold(0.0, f64::max)
    };
    let base = best(WritePath::Insert, 1);
    println!("\nsummary (best of rounds; ratio to Insert x1):");
    for conns in [1, 2] {
        for path in PATHS {
            let rate = best(path, conns);
            let name = format!("{path:?}");
            println!(
                "{name:>9} x{conns}: {rate:>9.0} rows/s  {:.2}x",
                rate / base
            );
        }
    }
}

/// A numeric env var, or `default`.
fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
