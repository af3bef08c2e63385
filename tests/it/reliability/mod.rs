//! Reliability of the importer against the real MariaDB: malformed and
//! hostile input, values the columns cannot hold, sink connections killed
//! mid-import, lock contention, a deadlock with the sink as victim, and
//! records too large for one statement. One module per topic; this one
//! holds what they share: the inputs, the reference tables and the exact
//! checks.
//!
//! Every test owns its tables (`rel_*`) and ends in an exact check: row
//! count and `CHECKSUM TABLE` equal to a clean import of the same records
//! (the `rel_ref_*` tables, each made once per run by [`reference`]), or
//! the exact set of rows the failure allows. `docs/reliability.md` says what
//! each test shows and records its latest result.
//!
//! Record numbers are ids: the generated catalogue's record `r` has id `r`,
//! and a bad record put at position `r` replaces product `r`. With two
//! shards, record `r` is ring sequence `r - 1` and belongs to shard
//! `(r - 1) % 2`.

mod bad_input;
mod bad_values;
mod big_record;
mod killed_connections;
mod locks;
mod rejects;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex, Weak};

use mysql::prelude::Queryable;
use ringpipe_xml::gen::{write_catalogue, Catalogue};

use crate::common::{
    self, checksum, conn, count, fresh_table, ringpipe, stderr, stdout, MysqlTable,
};

/// Exit code for unreadable or malformed input.
const EXIT_INPUT: i32 = 3;
/// Exit code for a database error (including a bad record beyond --max-bad).
const EXIT_DATABASE: i32 = 4;
/// Shards of every import here (`--shards 2 --batch-rows 500` for the
/// binary: a 5,000-record prefix spans several batches).
const SHARDS: u64 = 2;
/// Records per shard turn: plain sequence modulo (`--shard-block 1`) over
/// one region of the input (`--regions 1`), so that the exact-ownership
/// checks below read simply. The default (a region per shard) and block
/// sharding are covered by tests/it/resume.rs and the pipeline tests.
const SHARD_BLOCK: u64 = 1;

/// The shard that owns record `record`.
fn owner(record: u64) -> u64 {
    (record - 1) / SHARD_BLOCK % SHARDS
}
/// Seed of `ringpipe gen`'s default catalogue.
const SEED: u64 = 1;

// ---------------------------------------------------------------------------
// Inputs

/// A generated catalogue cut into header, records and footer.
struct Parts {
    header: String,
    /// Record `r` at index `r - 1`, indentation and trailing newline included.
    records: Vec<String>,
    footer: String,
}

impl Parts {
    fn new(rows: u64, seed: u64) -> Self {
        let mut xml = Vec::new();
        write_catalogue(&Catalogue::new(rows).seed(seed), &mut xml).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        let end = xml.rfind("</catalogue>").unwrap();
        let mut starts: Vec<usize> = xml.match_indices("  <product ").map(|(i, _)| i).collect();
        assert_eq!(starts.len() as u64, rows, "one start tag per record");
        let header = xml[..starts[0]].to_owned();
        starts.push(end);
        let records = starts
            .windows(2)
            .map(|w| xml[w[0]..w[1]].to_owned())
            .collect();
        Parts {
            header,
            records,
            footer: xml[end..].to_owned(),
        }
    }
}

/// An input file and where its records start.
struct Input {
    path: PathBuf,
    bytes: Vec<u8>,
    /// Byte offset of record `r` at index `r - 1`.
    starts: Vec<usize>,
}

impl Input {
    /// Builds the file from `header`, `records` and `tail`, and writes it.
    fn write(path: PathBuf, header: &str, records: &[String], tail: &[u8]) -> Self {
        let mut bytes = header.as_bytes().to_vec();
        let mut starts = Vec::with_capacity(records.len());
        for record in records {
            starts.push(bytes.len());
            bytes.extend_from_slice(record.as_bytes());
        }
        bytes.extend_from_slice(tail);
        std::fs::write(&path, &bytes).unwrap();
        Input {
            path,
            bytes,
            starts,
        }
    }

    fn name(&self) -> &str {
        self.path.to_str().unwrap()
    }

    /// 1-based line and column (in characters) of byte `offset`.
    fn line_col(&self, offset: usize) -> (u64, u64) {
        let before = &self.bytes[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count() as u64
            + 1;
        (line, column)
    }

    /// `line:column` of record `r`'s start tag (past its indentation), as
    /// the sink names it.
    fn record_at(&self, record: u64) -> (u64, u64) {
        let start = self.starts[record as usize - 1];
        let indent = self.bytes[start..]
            .iter()
            .take_while(|&&b| b == b' ')
            .count();
        self.line_col(start + indent)
    }
}

/// `header` with `doctype` inserted after the XML declaration.
fn with_doctype(header: &str, doctype: Option<&str>) -> String {
    match doctype {
        None => header.to_owned(),
        Some(doctype) => {
            let (declaration, rest) = header.split_at(header.find('\n').unwrap() + 1);
            format!("{declaration}{doctype}\n{rest}")
        }
    }
}

// ---------------------------------------------------------------------------
// Running and checking

/// `ringpipe import FILE --table TABLE --row product --shards 2
/// --batch-rows 500 --shard-block 1 --json`, plus `extra`.
fn import(file: &Path, table: &str, extra: &[&str]) -> Output {
    let args = import_args(file, table, extra);
    ringpipe(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The arguments of [`import`].
fn import_args(file: &Path, table: &str, extra: &[&str]) -> Vec<String> {
    let ours = [
        "--shards",
        "2",
        "--regions",
        "1",
        "--shard-block",
        "1",
        "--batch-rows",
        "500",
        "--json",
    ];
    let extra: Vec<&str> = ours.iter().chain(extra).copied().collect();
    common::import_args(file, table, &extra)
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(output).trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

/// The table a clean import of catalogue (`rows`, `seed`) produces, with
/// the same flags as the tests' imports; shared by the tests that run at
/// once, and dropped when the last of them lets it go.
fn reference(rows: u64, seed: u64) -> Arc<MysqlTable> {
    static MADE: Mutex<Vec<Weak<MysqlTable>>> = Mutex::new(Vec::new());
    let name = format!("rel_ref_{rows}_s{seed}");
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    made.retain(|table| table.strong_count() > 0);
    if let Some(table) = made
        .iter()
        .filter_map(Weak::upgrade)
        .find(|t| ***t == *name)
    {
        return table;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("clean.xml");
    Catalogue::new(rows).seed(seed).write_file(&file).unwrap();
    let table = Arc::new(fresh_table(&name));
    let output = import(&file, &name, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output)["rows_written"], rows);
    assert_eq!(count(&name), rows);
    made.push(Arc::downgrade(&table));
    table
}

/// Count and `CHECKSUM TABLE` of `table` equal those of `expected`.
fn assert_same_rows(table: &str, expected: &str) {
    assert_eq!(
        count(table),
        count(expected),
        "{table}: row count vs {expected}"
    );
    assert_eq!(
        checksum(table),
        checksum(expected),
        "{table}: CHECKSUM TABLE vs {expected}"
    );
}

/// `{table}_expect`: the rows of `reference` whose ids pass `filter`, i.e.
/// what a clean import of exactly those records holds.
fn expected_rows(reference: &str, table: &str, filter: &str) -> MysqlTable {
    let expect = format!("{table}_expect");
    let mut c = conn();
    c.query_drop(format!("DROP TABLE IF EXISTS `{expect}`"))
        .unwrap();
    c.query_drop(format!("CREATE TABLE `{expect}` LIKE `{reference}`"))
        .unwrap();
    c.query_drop(format!(
        "INSERT INTO `{expect}` SELECT * FROM `{reference}` WHERE {filter}"
    ))
    .unwrap();
    MysqlTable::new(&expect)
}

/// The ids in `table`.
fn ids(table: &str) -> BTreeSet<u64> {
    conn()
        .query(format!("SELECT id FROM `{table}`"))
        .unwrap()
        .into_iter()
        .collect()
}

/// Records of `shard` numbered below `end`, leaving out `skip`.
fn shard_records(shard: u64, end: u64, skip: &BTreeSet<u64>) -> Vec<u64> {
    (1..end)
        .filter(|&r| owner(r) == shard && !skip.contains(&r))
        .collect()
}

fn of_shard(ids: &BTreeSet<u64>, shard: u64) -> Vec<u64> {
    ids.iter().copied().filter(|&r| owner(r) == shard).collect()
}

/// The exact rows a run that failed on the bad record `bad` may leave: its
/// shard committed a prefix of its records that ends before `bad`, the
/// other shards each committed a prefix of theirs, and every stored row
/// equals the reference. `skip` are positions holding bad records (never
/// stored under their position's id). Returns the ids, and the record
/// after the last one `bad`'s shard committed (where its failed batch
/// began).
fn assert_committed_exactly(
    table: &str,
    reference: &str,
    bad: u64,
    skip: &BTreeSet<u64>,
) -> (BTreeSet<u64>, u64) {
    let stored = ids(table);
    let mut failed_batch_start = 0;
    for shard in 0..SHARDS {
        let held = of_shard(&stored, shard);
        let end = held.last().map_or(1, |last| last + 1);
        assert_eq!(
            held,
            shard_records(shard, end, skip),
            "{table}: shard {shard} must hold a prefix of its records"
        );
        if shard == owner(bad) {
            assert!(
                end <= bad,
                "{table}: shard {shard} committed past record {bad}"
            );
            failed_batch_start = end;
        }
    }
    let expect = expected_rows(
        reference,
        table,
        &format!("id IN (SELECT id FROM `{table}`)"),
    );
    assert_same_rows(table, &expect);
    (stored, failed_batch_start)
}

/// `N` of "(N rows committed)" in the binary's failure line.
fn committed_before(message: &str) -> u64 {
    let end = message
        .find(" rows committed)")
        .unwrap_or_else(|| panic!("no committed count in: {message}"));
    let start = message[..end].rfind('(').unwrap() + 1;
    message[start..end].parse().unwrap()
}
