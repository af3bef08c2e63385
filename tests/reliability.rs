//! Reliability of the importer against the real MariaDB: malformed and
//! hostile input, values the columns cannot hold, sink connections killed
//! mid-import, lock contention, a deadlock with the sink as victim, and
//! records too large for one statement.
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

#[allow(dead_code)] // each test binary uses a subset of the helpers
mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::{checksum, conn, count, fresh_table, ringpipe, stderr, stdout, url};
use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, Mode, SinkConfig, WritePath};
use ringpipe_pipeline::{Import, ImportError};
use ringpipe_xml::gen::{write_catalogue, Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

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
/// sharding are covered by tests/resume.rs and the pipeline tests.
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
/// the same flags as the tests' imports; made once per run.
fn reference(rows: u64, seed: u64) -> String {
    static MADE: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let table = format!("rel_ref_{rows}_s{seed}");
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    if !made.contains(&table) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clean.xml");
        Catalogue::new(rows).seed(seed).write_file(&file).unwrap();
        fresh_table(&table);
        let output = import(&file, &table, &[]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(json(&output)["rows_written"], rows);
        assert_eq!(count(&table), rows);
        made.push(table.clone());
    }
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
fn expected_rows(reference: &str, table: &str, filter: &str) -> String {
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
    expect
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

// ---------------------------------------------------------------------------
// 1. Bad input through the binary: exit 3, exact position, prefix committed

/// Good records before every input fault.
const GOOD: u64 = 5_000;

/// What a malformed-input case expects.
struct Fault<'a> {
    table: &'a str,
    doctype: Option<&'a str>,
    /// Bytes after the 5,000 good records.
    tail: &'a [u8],
    /// Offset in `tail` the error must point at.
    at: usize,
    /// Text the message must contain besides the position.
    says: &'a str,
}

/// Writes 5,000 good records then the fault, imports it, and checks exit
/// code 3, the message (file:line:column: record 5001 and `says`) and that
/// the table equals a clean import of the 5,000 good records.
fn bad_input(fault: Fault) -> Output {
    bad_input_with(fault, |path, table| import(path, table, &[]))
}

/// [`bad_input`], importing with `run`.
fn bad_input_with(fault: Fault, run: impl Fn(&Path, &str) -> Output) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let parts = Parts::new(GOOD, SEED);
    let header = with_doctype(&parts.header, fault.doctype);
    let input = Input::write(
        dir.path().join("bad.xml"),
        &header,
        &parts.records,
        fault.tail,
    );
    let reference = reference(GOOD, SEED);
    fresh_table(fault.table);
    let started = Instant::now();
    let output = run(&input.path, fault.table);
    let elapsed = started.elapsed();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(EXIT_INPUT), "{message}");
    let tail_start = input.bytes.len() - fault.tail.len();
    let (line, column) = input.line_col(tail_start + fault.at);
    let position = format!("{}:{line}:{column}: record {}", input.name(), GOOD + 1);
    assert!(
        message.contains(&position),
        "want {position:?} in: {message}"
    );
    assert!(
        message.contains(fault.says),
        "want {:?} in: {message}",
        fault.says
    );
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert_eq!(committed_before(&message), GOOD, "{message}");
    assert_same_rows(fault.table, &reference);
    eprintln!(
        "{}: {GOOD} rows kept, checksum equal, {elapsed:.2?}: {message}",
        fault.table
    );
    output
}

#[test]
fn bad_input_truncated_mid_record() {
    let tail = b"  <product id=\"5001\" currency=\"EUR\">\n    <sku>SKU-0000";
    bad_input(Fault {
        table: "rel_bad_truncated",
        doctype: None,
        tail,
        at: tail.len(),
        says: "end of input",
    });
}

#[test]
fn bad_input_in_the_last_of_two_regions_keeps_every_record_before_it() {
    // The default split: a region per shard. The fault sits in the second
    // region; the first runs to its end, so exactly the records before the
    // fault are committed, as with one parser.
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>n</price>\n  </product>\n</catalogue>\n";
    bad_input_with(
        Fault {
            table: "rel_bad_regions",
            doctype: None,
            tail,
            at: find(tail, b"</price>"),
            says: "expected </name>, found </price>",
        },
        |path, table| {
            let flags = ["--shards", "2", "--batch-rows", "500", "--json"];
            common::import(path, table, &flags)
        },
    );
}

#[test]
fn bad_input_mismatched_tags() {
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>n</price>\n  </product>\n</catalogue>\n";
    bad_input(Fault {
        table: "rel_bad_mismatched",
        doctype: None,
        tail,
        at: find(tail, b"</price>"),
        says: "expected </name>, found </price>",
    });
}

#[test]
fn bad_input_invalid_utf8_in_a_value() {
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>ab\xFF\xFEcd</name>\n  </product>\n</catalogue>\n";
    bad_input(Fault {
        table: "rel_bad_utf8",
        doctype: None,
        tail,
        at: find(tail, b"\xFF"),
        says: "UTF-8",
    });
}

#[test]
fn bad_input_undefined_entity() {
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>a &foo; b</name>\n  </product>\n</catalogue>\n";
    bad_input(Fault {
        table: "rel_bad_entity",
        doctype: None,
        tail,
        at: find(tail, b"&foo;"),
        says: "&foo;",
    });
}

#[test]
fn bad_input_external_entity_is_refused_not_fetched() {
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>n</name>\n    <description>&x;</description>\n  </product>\n</catalogue>\n";
    bad_input(Fault {
        table: "rel_bad_xxe",
        doctype: Some("<!DOCTYPE catalogue [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"),
        tail,
        at: find(tail, b"&x;"),
        says: "refused",
    });
    let leaked = conn()
        .query_first::<u64, _>(
            "SELECT COUNT(*) FROM `rel_bad_xxe` WHERE description LIKE '%root:%'",
        )
        .unwrap();
    assert_eq!(leaked, Some(0), "/etc/passwd must never be read");
}

#[test]
fn bad_input_billion_laughs_is_refused_not_expanded() {
    let mut doctype = String::from("<!DOCTYPE catalogue [\n<!ENTITY lol0 \"lol\">\n");
    for level in 1..=9 {
        let previous = format!("&lol{};", level - 1).repeat(10);
        doctype.push_str(&format!("<!ENTITY lol{level} \"{previous}\">\n"));
    }
    doctype.push(']');
    doctype.push('>');
    let tail = b"  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>&lol9;</name>\n  </product>\n</catalogue>\n";
    let started = Instant::now();
    bad_input(Fault {
        table: "rel_bad_laughs",
        doctype: Some(&doctype),
        tail,
        at: find(tail, b"&lol9;"),
        says: "refused",
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn bad_input_ten_thousand_deep_nesting() {
    let mut tail = b"  <product id=\"5001\"><sku>S5001</sku><name>n</name>".to_vec();
    let open = tail.len();
    tail.extend_from_slice(&b"<a>".repeat(10_000));
    tail.extend_from_slice(&b"</a>".repeat(10_000));
    tail.extend_from_slice(b"</product>\n</catalogue>\n");
    // Root is depth 1, the record 2: the 255th <a> would be depth 257.
    bad_input(Fault {
        table: "rel_bad_deep",
        doctype: None,
        tail: &tail,
        at: open + 254 * 3,
        says: "element nesting depth exceeds the limit of 256",
    });
}

/// A 100 MiB text node against the default 64 MiB value limit: exit 3, a
/// clear message, and (under `/usr/bin/time`) bounded memory.
#[test]
fn bad_input_huge_text_node() {
    const TEXT: usize = 100 << 20;
    const MAX_RSS_KIB: u64 = 200 << 10;
    let table = "rel_bad_huge_text";
    let dir = tempfile::tempdir().unwrap();
    let parts = Parts::new(GOOD, SEED);
    let path = dir.path().join("huge.xml");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).unwrap());
    let mut header_and_records = parts.header.clone();
    header_and_records.extend(parts.records.iter().map(String::as_str));
    let opening =
        "  <product id=\"5001\">\n    <sku>S5001</sku>\n    <name>n</name>\n    <description>";
    out.write_all(header_and_records.as_bytes()).unwrap();
    out.write_all(opening.as_bytes()).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..TEXT / chunk.len() {
        out.write_all(&chunk).unwrap();
    }
    out.write_all(b"</description>\n  </product>\n</catalogue>\n")
        .unwrap();
    out.into_inner().unwrap().sync_all().ok();
    let line = header_and_records.matches('\n').count() + 4;

    let reference = reference(GOOD, SEED);
    fresh_table(table);
    let rss_file = dir.path().join("rss");
    let time = Path::new("/usr/bin/time");
    let args = import_args(&path, table, &[]);
    let started = Instant::now();
    let output = if time.exists() {
        Command::new(time)
            .args(["-f", "%M", "-o", rss_file.to_str().unwrap()])
            .arg(env!("CARGO_BIN_EXE_ringpipe"))
            .args(&args)
            .env_remove("RINGPIPE_MYSQL_URL")
            .output()
            .unwrap()
    } else {
        ringpipe(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let elapsed = started.elapsed();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(EXIT_INPUT), "{message}");
    let position = format!("{}:{line}:", path.display());
    assert!(
        message.contains(&position),
        "want {position:?} in: {message}"
    );
    assert!(message.contains("record 5001"), "{message}");
    assert!(
        message.contains("size in bytes of one value exceeds the limit of 67108864"),
        "{message}"
    );
    assert_eq!(committed_before(&message), GOOD, "{message}");
    assert_same_rows(table, &reference);
    if time.exists() {
        let rss: u64 = std::fs::read_to_string(&rss_file)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        eprintln!("huge text node: peak RSS {} MiB, {elapsed:?}", rss >> 10);
        assert!(rss < MAX_RSS_KIB, "peak RSS {} MiB", rss >> 10);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

// ---------------------------------------------------------------------------
// 2. Values the columns cannot hold

/// Records of the catalogue in the value tests.
const VALUE_ROWS: u64 = 3_000;
/// Every write path of `--write-path`.
const PATHS: [&str; 4] = ["insert", "prepared", "load-data", "bulk"];

/// A bad record and what the server says about it.
#[derive(Clone, Copy, Debug)]
enum Bad {
    /// `price` is `twelve`.
    Price,
    /// `updated` is `2024-13-45 25:00:00`.
    Date,
    /// `sku` has 40 characters (the column holds 32).
    LongSku,
    /// No `name` (NOT NULL).
    NoName,
    /// A copy of this earlier record: same id twice.
    CopyOf(u64),
}

impl Bad {
    /// The record's text at position `r`.
    fn record(self, r: u64, parts: &Parts) -> String {
        let plain = |field: &str| {
            format!("  <product id=\"{r}\">\n    <sku>BAD-{r}</sku>\n    {field}\n  </product>\n")
        };
        match self {
            Bad::Price => plain("<name>n</name><price>twelve</price>"),
            Bad::Date => plain("<name>n</name><updated>2024-13-45 25:00:00</updated>"),
            Bad::LongSku => format!(
                "  <product id=\"{r}\">\n    <sku>{}</sku>\n    <name>n</name>\n  </product>\n",
                "L".repeat(40)
            ),
            Bad::NoName => plain("<price>1.00</price>"),
            Bad::CopyOf(earlier) => parts.records[earlier as usize - 1].clone(),
        }
    }

    /// What the server's complaint contains.
    fn reason(self) -> &'static str {
        match self {
            Bad::Price => "Incorrect decimal value",
            Bad::Date => "Incorrect datetime value",
            Bad::LongSku => "too long",
            Bad::NoName => "'name'",
            Bad::CopyOf(_) => "Duplicate entry",
        }
    }
}

/// The 3,000-record catalogue with `bad` records put at their positions.
fn with_bad_records(dir: &Path, bad: &[(u64, Bad)]) -> Input {
    let parts = Parts::new(VALUE_ROWS, SEED);
    let mut records = parts.records.clone();
    for &(r, kind) in bad {
        records[r as usize - 1] = kind.record(r, &parts);
    }
    Input::write(
        dir.join("values.xml"),
        &parts.header,
        &records,
        parts.footer.as_bytes(),
    )
}

/// Imports the catalogue with one bad record at `at` on each of `paths`:
/// exit 4, the message names the record, its line:column and the reason,
/// and exactly the batches before the failing one are committed.
fn stops_at_bad_value(name: &str, at: u64, bad: Bad, paths: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &[(at, bad)]);
    let reference = reference(VALUE_ROWS, SEED);
    let skip = BTreeSet::from([at]);
    for path in paths {
        let table = format!("rel_val_{name}_{}", path.replace('-', "_"));
        fresh_table(&table);
        let output = import(&input.path, &table, &["--write-path", path]);
        let message = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(EXIT_DATABASE),
            "{path}: {message}"
        );
        let (line, column) = input.record_at(at);
        let record = format!("record {at} (line {line}, column {column}) failed");
        assert!(
            message.contains(&record),
            "{path}: want {record:?} in: {message}"
        );
        assert!(message.contains(bad.reason()), "{path}: {message}");
        let (stored, _) = assert_committed_exactly(&table, &reference, at, &skip);
        assert_eq!(
            committed_before(&message),
            stored.len() as u64,
            "{path}: {message}"
        );
        assert!(
            !stored.contains(&at),
            "{path}: the bad record's id is stored"
        );
        eprintln!("{table}: {} rows kept exactly: {message}", stored.len());
    }
}

#[test]
fn bad_value_non_numeric_price_stops_on_every_path() {
    stops_at_bad_value("price", 2_101, Bad::Price, &PATHS);
}

#[test]
fn bad_value_duplicate_key_from_an_earlier_batch_stops_on_every_path() {
    // Records 11 and 2,201 are both on shard 0, 1,095 shard rows apart.
    stops_at_bad_value("dup_far", 2_201, Bad::CopyOf(11), &PATHS);
}

#[test]
fn bad_value_duplicate_key_in_the_same_batch_stops_on_every_path() {
    // Records 2,199 and 2,201: neighbours on shard 0.
    stops_at_bad_value("dup_near", 2_201, Bad::CopyOf(2_199), &PATHS);
}

#[test]
fn bad_value_out_of_range_date_stops() {
    stops_at_bad_value("date", 2_102, Bad::Date, &["bulk", "load-data"]);
}

#[test]
fn bad_value_too_long_sku_stops() {
    stops_at_bad_value("sku", 2_103, Bad::LongSku, &["bulk", "load-data"]);
}

#[test]
fn bad_value_null_into_not_null_stops() {
    stops_at_bad_value("null", 2_104, Bad::NoName, &["bulk", "load-data"]);
}

/// One bad record of each kind, all on shard 0, in this order.
const ALL_BAD: [(u64, Bad); 6] = [
    (1_201, Bad::Price),
    (1_403, Bad::Date),
    (1_605, Bad::LongSku),
    (1_807, Bad::NoName),
    (2_001, Bad::CopyOf(11)),
    (2_203, Bad::CopyOf(2_201)),
];

/// The reject file's lines as (record, "line:column", reason).
fn rejects(path: &Path) -> Vec<(u64, String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<(u64, String, String)> = text
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let record = f.next().unwrap().parse().unwrap();
            (
                record,
                f.next().unwrap().to_owned(),
                f.next().unwrap().to_owned(),
            )
        })
        .collect();
    lines.sort_by_key(|l| l.0);
    lines
}

#[test]
fn bad_values_within_max_bad_go_to_the_reject_file_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &ALL_BAD);
    let reference = reference(VALUE_ROWS, SEED);
    let bad: Vec<String> = ALL_BAD.iter().map(|(r, _)| r.to_string()).collect();
    let filter = format!("id NOT IN ({})", bad.join(","));
    for path in PATHS {
        let table = format!("rel_val_maxbad_{}", path.replace('-', "_"));
        let reject_file = dir.path().join(format!("{table}.tsv"));
        fresh_table(&table);
        let output = import(
            &input.path,
            &table,
            &[
                "--write-path",
                path,
                "--max-bad",
                "6",
                "--reject-file",
                reject_file.to_str().unwrap(),
            ],
        );
        assert!(output.status.success(), "{path}: {}", stderr(&output));
        let report = json(&output);
        assert_eq!(report["rows_read"], VALUE_ROWS, "{path}");
        assert_eq!(report["rows_rejected"], 6, "{path}");
        let expect = expected_rows(&reference, &table, &filter);
        assert_same_rows(&table, &expect);
        let lines = rejects(&reject_file);
        assert_eq!(lines.len(), ALL_BAD.len(), "{path}: {lines:?}");
        for ((record, position, reason), (at, kind)) in lines.iter().zip(ALL_BAD) {
            let (line, column) = input.record_at(at);
            assert_eq!(*record, at, "{path}");
            assert_eq!(*position, format!("{line}:{column}"), "{path}");
            assert!(reason.contains(kind.reason()), "{path}: {kind:?}: {reason}");
        }
        eprintln!(
            "{table}: {} rows, checksum equal, 6 rejects as expected",
            count(&table)
        );
    }
}

#[test]
fn bad_values_within_max_bad_are_not_counted_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &ALL_BAD);
    let table = "rel_val_maxbad_report";
    let reject_file = dir.path().join("rejects.tsv");
    fresh_table(table);
    let output = import(
        &input.path,
        table,
        &[
            "--max-bad",
            "6",
            "--reject-file",
            reject_file.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["rows_rejected"], 6);
    assert_eq!(count(table), VALUE_ROWS - 6);
    assert_eq!(
        report["rows_written"],
        VALUE_ROWS - 6,
        "rows_written must count the rows committed, not the rejected ones"
    );
}

#[test]
fn bad_values_beyond_max_bad_stop_after_earlier_batches() {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &ALL_BAD);
    let reference = reference(VALUE_ROWS, SEED);
    let table = "rel_val_maxbad_short";
    let reject_file = dir.path().join("rejects.tsv");
    fresh_table(table);
    let output = import(
        &input.path,
        table,
        &[
            "--max-bad",
            "3",
            "--reject-file",
            reject_file.to_str().unwrap(),
        ],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(EXIT_DATABASE), "{message}");
    // All bad records are on shard 0, in order: the fourth one stops it.
    let (fourth, kind) = ALL_BAD[3];
    let (line, column) = input.record_at(fourth);
    let record = format!("more than 3 bad records; record {fourth} (line {line}, column {column})");
    assert!(message.contains(&record), "want {record:?} in: {message}");
    assert!(message.contains(kind.reason()), "{message}");
    let skip: BTreeSet<u64> = ALL_BAD.iter().map(|(r, _)| *r).collect();
    let (_, first) = assert_committed_exactly(table, &reference, fourth, &skip);
    let diverted: Vec<u64> = rejects(&reject_file).iter().map(|l| l.0).collect();
    let before: Vec<u64> = skip.iter().copied().filter(|&r| r < first).collect();
    assert_eq!(
        diverted, before,
        "rejects are those of the committed batches"
    );
    eprintln!(
        "{table}: {} rows kept exactly, rejected {diverted:?}: {message}",
        count(table)
    );
}

/// Disk full while writing the reject file (`/dev/full`): the import must
/// stop with a clear error, and its count of committed rows must be true.
#[test]
fn reject_file_on_a_full_disk_stops_and_counts_committed_rows() {
    let dir = tempfile::tempdir().unwrap();
    let input = with_bad_records(dir.path(), &ALL_BAD[..1]);
    let table = "rel_val_disk_full";
    fresh_table(table);
    let output = import(
        &input.path,
        table,
        &["--max-bad", "5", "--reject-file", "/dev/full"],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(EXIT_DATABASE), "{message}");
    assert!(message.contains("cannot write reject file"), "{message}");
    assert_eq!(committed_before(&message), count(table), "{message}");
}

// ---------------------------------------------------------------------------
// 3. KILL CONNECTION of the sink connections during an import

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
    fresh_table(table);
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

/// As above in `--mode upsert` (replaying a batch rewrites the same values).
#[test]
fn killed_connections_are_replayed_upsert_default_path() {
    survives_killed_connections("rel_kill_upsert", &["--mode", "upsert"]);
}

/// LOAD DATA in `--mode ignore` (upserts fall back to INSERT).
#[test]
fn killed_connections_are_replayed_ignore_load_data() {
    survives_killed_connections(
        "rel_kill_ignore_load",
        &["--mode", "ignore", "--write-path", "load-data"],
    );
}

// ---------------------------------------------------------------------------
// 4. Lock contention (library level: the sink sessions' lock wait timeout)

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
    fresh_table(table);
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
    fresh_table(table);

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
    assert_eq!(summary.rows_written, ROWS);
    assert_same_rows(table, &reference);
}

// ---------------------------------------------------------------------------
// 5. A record bigger than the sink's statement limit (library level)

#[test]
fn record_larger_than_a_statement_stops_after_earlier_batches() {
    const ROWS: u64 = 3_000;
    const BIG: u64 = 2_001;
    let dir = tempfile::tempdir().unwrap();
    let parts = Parts::new(ROWS, SEED);
    let mut records = parts.records.clone();
    records[BIG as usize - 1] = format!(
        "  <product id=\"{BIG}\">\n    <sku>BIG-{BIG}</sku>\n    <name>big</name>\n    <description>{}</description>\n  </product>\n",
        "d".repeat(10 << 10)
    );
    let input = Input::write(
        dir.path().join("big.xml"),
        &parts.header,
        &records,
        parts.footer.as_bytes(),
    );
    let reference = reference(ROWS, SEED);
    let (line, column) = input.record_at(BIG);
    let skip = BTreeSet::from([BIG]);
    for path in [
        WritePath::Insert,
        WritePath::Prepared,
        WritePath::LoadData,
        WritePath::Bulk,
    ] {
        let table = format!("rel_packet_{path:?}").to_lowercase();
        fresh_table(&table);
        let config = SinkConfig::new(url(), &table, &PRODUCT_COLUMNS)
            .write_path(path)
            .max_statement_bytes(4096);
        let target = prepare(&config).unwrap();
        let source = XmlSource::open(&input.path, Catalogue::new(ROWS).config()).unwrap();
        let failure = Import::new(|shard| target.connect_sink(shard))
            .shards(SHARDS as usize)
            .batch_rows(200)
            .shard_block(SHARD_BLOCK)
            .run(vec![source])
            .unwrap_err();
        let message = failure.to_string();
        assert!(
            matches!(failure.error, ImportError::Sink { .. }),
            "{path:?}: not a sink failure: {message}"
        );
        let record = format!("record {BIG} (line {line}, column {column}) needs");
        assert!(
            message.contains(&record),
            "{path:?}: want {record:?} in: {message}"
        );
        assert!(message.contains("the limit is 4096"), "{path:?}: {message}");
        let (stored, _) = assert_committed_exactly(&table, &reference, BIG, &skip);
        eprintln!("{table}: {} rows kept exactly: {message}", stored.len());
        assert_eq!(
            failure.summary.rows_written,
            stored.len() as u64,
            "{path:?}"
        );
    }
}
