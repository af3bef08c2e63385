//! Bad input through the binary: exit 3, the exact position, and the
//! records before the fault committed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::{
    assert_same_rows, committed_before, import, import_args, reference, with_doctype, Input, Parts,
    EXIT_INPUT, SEED,
};
use crate::common::{self, conn, fresh_table, ringpipe, stderr, MysqlTable};

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
fn bad_input(fault: Fault) -> MysqlTable {
    bad_input_with(fault, |path, table| import(path, table, &[]))
}

/// [`bad_input`], importing with `run`.
fn bad_input_with(fault: Fault, run: impl Fn(&Path, &str) -> Output) -> MysqlTable {
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
    let table = fresh_table(fault.table);
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
    table
}

#[test]
fn bad_input_truncated_mid_record() {
    let tail = b"  <product id=\"5001\" currency=\"EUR\">\n    <sku>SKU-0000";
    let _table = bad_input(Fault {
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
    let _table = bad_input_with(
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
    let _table = bad_input(Fault {
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
    let _table = bad_input(Fault {
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
    let _table = bad_input(Fault {
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
    let _table = bad_input(Fault {
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
    let _table = bad_input(Fault {
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
    let _table = bad_input(Fault {
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
    let _table = fresh_table(table);
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
