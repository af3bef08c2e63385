//! Retryable failures: the sink rolls back, reconnects when needed, and a
//! replay of the same rows leaves exactly the source rows.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, WritePath};
use ringpipe_pipeline::{Retryable, Row, Sink};

use crate::common::*;

/// Kills the sink's connection between `write` and `commit`, then replays.
fn killed_connection_is_replayed(path: WritePath) {
    let table = format!("rp_mysql_kill_{path:?}").to_lowercase();
    let _table = fresh_table(&table);
    let target = prepare(&config(&table).write_path(path)).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let data = records(1, 30);
    let mut row = Row::with_columns(COLUMNS.len());
    write_batch(&mut sink, &mut row, &data[..10], 0).unwrap();

    for (i, record) in data[10..20].iter().enumerate() {
        fill(&mut row, record, 11 + i as u64);
        sink.write(&row).unwrap();
    }
    let id = sink.connection_id().unwrap();
    conn().query_drop(format!("KILL {id}")).unwrap();
    let err = commit(&mut sink).unwrap_err();
    assert!(err.is_retryable(), "{path:?}: {err}");
    sink.rollback().unwrap();

    write_batch(&mut sink, &mut row, &data[10..20], 10).unwrap();
    assert_ne!(sink.connection_id(), Some(id), "{path:?}: a new connection");
    write_batch(&mut sink, &mut row, &data[20..], 20).unwrap();
    sink.close().unwrap();
    let stats = sink.stats();
    assert_eq!(stats.reconnects, 1, "{path:?}");
    assert_eq!(stats.rollbacks, 1, "{path:?}");
    assert_eq!(stats.commits, 3, "{path:?}");
    assert_eq!(read_back(&table), data, "{path:?}");
}

#[test]
fn kill_insert_path() {
    killed_connection_is_replayed(WritePath::Insert);
}

#[test]
fn kill_prepared_path() {
    killed_connection_is_replayed(WritePath::Prepared);
}

#[test]
fn kill_load_data_path() {
    killed_connection_is_replayed(WritePath::LoadData);
}

#[test]
fn kill_bulk_path() {
    killed_connection_is_replayed(WritePath::Bulk);
}

#[test]
fn lock_wait_timeout_is_retried_on_the_same_connection() {
    let table = "rp_mysql_lock_wait";
    let _table = fresh_table(table);
    let config = config(table)
        .write_path(WritePath::Insert)
        .init_command("SET SESSION innodb_lock_wait_timeout = 1");
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let data = records(1, 10);

    let mut blocker = conn();
    blocker.query_drop("START TRANSACTION").unwrap();
    blocker
        .query_drop(format!("INSERT INTO `{table}` (id) VALUES (5)"))
        .unwrap();
    let mut row = Row::with_columns(COLUMNS.len());
    let err = write_batch(&mut sink, &mut row, &data, 0).unwrap_err();
    assert_eq!(err.code(), Some(1205), "{err}");
    assert!(err.is_retryable());
    let id = sink.connection_id();
    sink.rollback().unwrap();
    blocker.query_drop("ROLLBACK").unwrap();

    write_batch(&mut sink, &mut row, &data, 0).unwrap();
    assert_eq!(sink.connection_id(), id, "no reconnect needed");
    assert_eq!(read_back(table), data);
}
