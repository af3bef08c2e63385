//! Bad values within `--max-bad` go to the reject file; beyond it, or when
//! the reject file cannot be written, the import stops with a true count of
//! committed rows.

use std::collections::BTreeSet;
use std::path::Path;

use super::bad_values::{with_bad_records, Bad, PATHS, VALUE_ROWS};
use super::{
    assert_committed_exactly, assert_same_rows, committed_before, expected_rows, import, json,
    reference, EXIT_DATABASE, SEED,
};
use crate::common::{count, fresh_table, stderr};

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
        let _table = fresh_table(&table);
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
    let _table = fresh_table(table);
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
    let _table = fresh_table(table);
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
    let _table = fresh_table(table);
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
