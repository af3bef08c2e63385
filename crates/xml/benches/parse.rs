//! Parse throughput and peak memory: `XmlSource` against a roxmltree DOM
//! parse of the same generated catalogue and against quick-xml's bare event
//! loop (which reads every event but extracts nothing), in the same run.
//!
//! ```text
//! RINGPIPE_BENCH_RECORDS=1000000 cargo bench -p ringpipe-xml --bench parse
//! ```
//!
//! Each parser runs in a child process (this binary, re-executed with
//! `--child MODE PATH`) so that its peak resident memory (`VmHWM`) is its
//! own. For profiling, `--generate PATH RECORDS` writes a catalogue and
//! `--child` runs one parser on it; `RINGPIPE_BENCH_LAYOUT=fields` or
//! `attributes` gives both the catalogue's other layouts (`XmlSource`
//! only).

use std::env;
use std::fs;
use std::io::BufReader;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use ringpipe_pipeline::{Row, Source};
use ringpipe_xml::gen::{Catalogue, Layout, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

/// Rounds, each running every parser once (interleaved, so that a slow
/// minute on a shared machine hits all of them); each parser's best time
/// counts (the file is in the page cache). Throughput is computed from the
/// child's CPU time, which other processes disturb far less than wall time.
const RUNS: usize = 3;

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        child(&args[2], Path::new(&args[3]));
        return;
    }
    if args.get(1).map(String::as_str) == Some("--generate") {
        let records = args[3].parse().expect("record count");
        catalogue(records)
            .write_file(&args[2])
            .expect("write catalogue");
        return;
    }
    let records: u64 = env::var("RINGPIPE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("catalogue.xml");
    let started = Instant::now();
    let bytes = catalogue(records)
        .write_file(&path)
        .expect("write catalogue");
    let generated = started.elapsed().as_secs_f64();
    let mb = bytes as f64 / 1e6;
    println!("catalogue: {records} records, {mb:.1} MB, generated in {generated:.2} s");
    println!(
        "{:<12} {:>10} {:>14} {:>12} {:>14}",
        "parser", "MB/s (CPU)", "records/s", "wall MB/s", "peak RSS MiB"
    );
    const MODES: [&str; 3] = ["quick-xml", "XmlSource", "roxmltree"];
    // Per parser: best CPU seconds, best wall seconds, largest peak KiB.
    let mut best = [(f64::MAX, f64::MAX, 0u64); MODES.len()];
    for _ in 0..RUNS {
        for (mode, best) in MODES.iter().zip(&mut best) {
            let (t, w, m) = run_child(mode, &path, records);
            *best = (best.0.min(t), best.1.min(w), best.2.max(m));
        }
    }
    let mut results = Vec::new();
    for (mode, (seconds, wall, hwm_kib)) in MODES.iter().zip(best) {
        let hwm = hwm_kib as f64 / 1024.0;
        println!(
            "{mode:<12} {:>10.1} {:>14.0} {:>12.1} {hwm:>14.1}",
            mb / seconds,
            records as f64 / seconds,
            mb / wall
        );
        results.push((seconds, hwm));
    }
    let (xml, dom) = (results[1], results[2]);
    println!(
        "XmlSource vs roxmltree: {:.2}x the speed, {:.1}x less peak memory; \
         vs bare quick-xml events: {:.2}x the speed",
        dom.0 / xml.0,
        dom.1 / xml.1,
        results[0].0 / xml.0
    );
}

/// The catalogue to parse: `RINGPIPE_BENCH_LAYOUT` picks its layout
/// (`elements`, the default; `attributes`; `fields`, the mysqldump form)
/// for `--generate` and the `XmlSource` child; the peers read `<product>`
/// elements only.
fn catalogue(records: u64) -> Catalogue {
    let layout = match env::var("RINGPIPE_BENCH_LAYOUT").as_deref() {
        Ok("attributes") => Layout::Attributes,
        Ok("fields") => Layout::Fields,
        Ok("elements") | Err(_) => Layout::Elements,
        Ok(other) => panic!("RINGPIPE_BENCH_LAYOUT={other}: elements, attributes or fields"),
    };
    Catalogue::new(records).layout(layout)
}

/// Runs one measurement in a child process; returns (CPU seconds, wall
/// seconds, VmHWM KiB).
fn run_child(mode: &str, path: &Path, records: u64) -> (f64, f64, u64) {
    let exe = env::current_exe().expect("current exe");
    let output = Command::new(exe)
        .args(["--child", mode, path.to_str().expect("utf-8 temp path")])
        .output()
        .expect("run child");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = String::from_utf8(output.stdout).expect("utf-8 child output");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let parsed: Vec<f64> = fields.iter().map(|f| f.parse().expect("number")).collect();
    assert_eq!(
        parsed[0] as u64, records,
        "{mode} counted the wrong number of records"
    );
    (parsed[2], parsed[1], parsed[3] as u64)
}

/// Parses `path` with `mode`; prints `records wall_s cpu_s vmhwm_kib`.
fn child(mode: &str, path: &Path) {
    let started = Instant::now();
    let cpu_start = cpu_seconds();
    let (records, checksum) = match mode {
        "XmlSource" => with_source(path),
        "roxmltree" => with_dom(path),
        "quick-xml" => with_quick_xml(path),
        other => panic!("unknown mode {other}"),
    };
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    // The checksum keeps the work from being optimized away.
    eprintln!("{mode}: checksum {checksum}");
    println!("{records} {seconds} {cpu} {}", peak_rss_kib());
}

fn with_source(path: &Path) -> (u64, usize) {
    let config = catalogue(0).config();
    let mut source = XmlSource::open(path, config).expect("open");
    let mut row = Row::with_columns(PRODUCT_COLUMNS.len());
    let (mut records, mut checksum) = (0, 0);
    while source.next_row(&mut row).expect("parse") {
        records += 1;
        checksum += row.value_len();
    }
    (records, checksum)
}

/// The same extraction on a DOM: attributes and direct children's text.
fn with_dom(path: &Path) -> (u64, usize) {
    let text = fs::read_to_string(path).expect("read");
    let doc = roxmltree::Document::parse(&text).expect("parse");
    let (mut records, mut checksum) = (0, 0);
    for product in doc.descendants().filter(|n| n.has_tag_name("product")) {
        records += 1;
        let mut row: [Option<String>; 9] = Default::default();
        for attribute in product.attributes() {
            if let Some(i) = PRODUCT_COLUMNS.iter().position(|c| *c == attribute.name()) {
                row[i] = Some(attribute.value().to_owned());
            }
        }
        for child in product.children().filter(roxmltree::Node::is_element) {
            if let Some(i) = PRODUCT_COLUMNS
                .iter()
                .position(|c| *c == child.tag_name().name())
            {
                row[i] = Some(child.children().filter_map(|t| t.text()).collect());
            }
        }
        checksum += row.iter().flatten().map(String::len).sum::<usize>();
    }
    (records, checksum)
}

/// Bare quick-xml events, no field handling: what the most used streaming
/// parser costs before any work is done with its events.
fn with_quick_xml(path: &Path) -> (u64, usize) {
    use quick_xml::events::Event;
    let file = fs::File::open(path).expect("open");
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(1 << 16, file));
    let mut buf = Vec::new();
    let (mut records, mut checksum) = (0, 0);
    loop {
        buf.clear();
        match reader.read_event_into(&mut buf).expect("parse") {
            Event::Start(e) if e.name().as_ref() == "product" => records += 1,
            Event::Text(t) => checksum += t.len(),
            Event::Eof => break,
            _ => {}
        }
    }
    (records, checksum)
}

/// Time this process has spent on a CPU (`/proc/self/schedstat`, in ns).
fn cpu_seconds() -> f64 {
    let stat = fs::read_to_string("/proc/self/schedstat").unwrap_or_default();
    let ns: f64 = stat
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    ns / 1e9
}

fn peak_rss_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
