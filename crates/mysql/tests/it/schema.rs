//! Schema checks, table creation and identifier quoting.

use mysql::prelude::Queryable;
use ringpipe_mysql::{key_columns, prepare, table_columns, MysqlError, SinkConfig, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

#[test]
fn missing_table_is_a_clear_error() {
    conn()
        .query_drop("DROP TABLE IF EXISTS rp_mysql_schema_missing")
        .unwrap();
    let err = prepare(&config("rp_mysql_schema_missing")).unwrap_err();
    assert!(matches!(err, MysqlError::Schema(_)), "{err}");
    assert!(
        err.to_string()
            .contains("rp_mysql_schema_missing` does not exist"),
        "{err}"
    );
}

#[test]
fn missing_column_is_named() {
    let _table = fresh_table("rp_mysql_schema_column");
    let config = SinkConfig::new(url(), "rp_mysql_schema_column", &["id", "colour"]);
    let err = prepare(&config).unwrap_err();
    assert!(err.to_string().contains("\"colour\""), "{err}");
}

#[test]
fn columns_and_keys_are_reported_in_order() {
    let _table = fresh_table("rp_mysql_schema_columns");
    assert_eq!(
        table_columns(&url(), "rp_mysql_schema_columns").unwrap(),
        COLUMNS
    );
    assert_eq!(
        key_columns(&url(), "rp_mysql_schema_columns").unwrap(),
        ["id"]
    );
}

#[test]
fn table_is_created_from_declared_types_with_hostile_names() {
    let table = "rp_mysql schema `odd` name";
    let _table = MysqlTable::fresh(table);
    let columns = ["id", "we`ird", "naïve"];
    let config = SinkConfig::new(url(), table, &columns)
        .write_path(WritePath::Insert)
        .create_table(vec![
            ("id".into(), "BIGINT NOT NULL PRIMARY KEY".into()),
            ("we`ird".into(), "VARCHAR(20)".into()),
            ("naïve".into(), "TEXT".into()),
        ]);
    let target = prepare(&config).unwrap();
    assert_eq!(table_columns(&url(), table).unwrap(), columns);
    assert_eq!(target.key_columns(), ["id"]);
    let mut sink = target.connect_sink(0).unwrap();
    let data = vec![vec![Some("1".into()), Some("a".into()), None]];
    drive(&mut sink, &data, 1).unwrap();
    sink.close().unwrap();
    let n: u64 = conn()
        .query_first("SELECT COUNT(*) FROM `rp_mysql schema ``odd`` name`")
        .unwrap()
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn invalid_identifiers_are_rejected_before_connecting() {
    let long = "x".repeat(65);
    for name in ["", "a\0b", long.as_str()] {
        let config = SinkConfig::new("mysql://nobody@127.0.0.1:1/none", name, &["id"]);
        assert!(
            matches!(prepare(&config), Err(MysqlError::Identifier { .. })),
            "{name:?}"
        );
    }
}
