//! Statement bounds: large batches split into several statements in one
//! transaction; a record too large for any statement is named.

use ringpipe_mysql::{prepare, MysqlError, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

/// A batch far larger than the statement bound is split, not failed.
fn splits(path: WritePath) {
    let table = format!("rp_mysql_split_{path:?}").to_lowercase();
    let _table = fresh_table(&table);
    let target = prepare(&config(&table).write_path(path).max_statement_bytes(2_000)).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let data = records(1, 300);
    drive(&mut sink, &data, 300).unwrap();
    let stats = sink.stats();
    assert_eq!(stats.commits, 1, "{path:?}: one transaction");
    assert!(
        stats.statements >= 10,
        "{path:?}: only {} statements",
        stats.statements
    );
    assert_eq!(read_back(&table), data, "{path:?}");
}

#[test]
fn insert_batches_split_by_bytes() {
    splits(WritePath::Insert);
}

#[test]
fn prepared_batches_split_by_bytes() {
    splits(WritePath::Prepared);
}

#[test]
fn bulk_batches_split_by_bytes() {
    splits(WritePath::Bulk);
}

#[test]
fn row_limit_splits_statements() {
    let table = "rp_mysql_split_rows";
    let _table = fresh_table(table);
    let target = prepare(
        &config(table)
            .write_path(WritePath::Insert)
            .max_rows_per_statement(10),
    )
    .unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    drive(&mut sink, &records(1, 95), 95).unwrap();
    assert_eq!(sink.stats().statements, 10);
    assert_eq!(count(table), 95);
}

#[test]
fn record_too_large_for_a_statement_is_named() {
    let table = "rp_mysql_too_large";
    let _table = fresh_table(table);
    for path in [WritePath::Insert, WritePath::LoadData] {
        let target = prepare(&config(table).write_path(path).max_statement_bytes(1_000)).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let mut data = records(1, 3);
        data[1][2] = Some("x".repeat(5_000));
        let err = drive(&mut sink, &data, 3).unwrap_err();
        assert!(
            matches!(err, MysqlError::RowTooLarge { .. }),
            "{path:?}: {err}"
        );
        assert!(err.to_string().contains("record 2 "), "{err}");
        sink.rollback().unwrap();
    }
    assert_eq!(count(table), 0);
}
