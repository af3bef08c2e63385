//! The password never shows: not in any log record (every level, the
//! `mysql` crate's included), not in `Debug` or `Display` of the config,
//! the prepared target or a sink, not in any error of a failing import,
//! whichever way it was given (`user:pass@`, `?password=`, `MYSQL_PWD`, a
//! password file). Its own test binary: it sets `MYSQL_PWD` and installs
//! the logger.

use std::sync::Mutex;

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, SinkConfig, WritePath};
use ringpipe_pipeline::{Checkpoint, RecordPosition, Retryable, Row, Sink};
use ringpipe_testdb::{mysql_conn as admin, mysql_url as url};

/// The password under test, and the user it belongs to.
const SECRET: &str = "Rp-wire-S3cret-7781";
const USER: &str = "rp_wire_secret";
const TABLE: &str = "rp_wire_secret";

/// Every log record, formatted.
static RECORDS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{} {}: {}", record.level(), record.target(), record.args());
        RECORDS.lock().unwrap().push(line);
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// `host:port/db...` of the test server's URL.
fn server_part() -> String {
    let url = url();
    url.split('@').nth(1).unwrap().to_owned()
}

/// Drops the user and table at the end, also on failure.
struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        let mut c = admin();
        let _ = c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'%'"));
        let _ = c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'localhost'"));
        let _ = c.query_drop(format!("DROP TABLE IF EXISTS `{TABLE}`"));
    }
}

fn setup() {
    let mut c = admin();
    for host in ["%", "localhost"] {
        c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'{host}'"))
            .unwrap();
        c.query_drop(format!(
            "CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{SECRET}'"
        ))
        .unwrap();
        c.query_drop(format!("GRANT ALL ON test.* TO '{USER}'@'{host}'"))
            .unwrap();
    }
}

fn fresh_table() {
    let mut c = admin();
    c.query_drop(format!("DROP TABLE IF EXISTS `{TABLE}`"))
        .unwrap();
    c.query_drop(format!(
        "CREATE TABLE `{TABLE}` (id BIGINT PRIMARY KEY, name VARCHAR(50))"
    ))
    .unwrap();
}

/// Writes the rows `ids` and commits them.
fn batch(
    sink: &mut ringpipe_mysql::MysqlSink,
    ids: std::ops::Range<u64>,
) -> Result<(), ringpipe_mysql::MysqlError> {
    let mut row = Row::with_columns(2);
    for id in ids {
        row.clear();
        row.set(0, &id.to_string());
        row.set(1, "x");
        row.set_position(RecordPosition {
            record: id,
            line: id,
            column: 1,
            byte_offset: 0,
        });
        sink.write(&row)?;
    }
    sink.commit(&Checkpoint {
        import: None,
        shard: 0,
        last_record: 0,
        region_start: 1,
        rows_crc: None,
    })
}

/// A whole failing import through `config`: a killed connection (and the
/// reconnect it logs), then a duplicate key; everything shown on the way.
fn failing_import(config: &SinkConfig, shown: &mut Vec<String>) {
    fresh_table();
    shown.push(format!("{config:?} {config}"));
    let target = prepare(config).unwrap();
    shown.push(format!("{target:?}"));
    let mut sink = target.connect_sink(0).unwrap();
    shown.push(format!("{sink:?}"));
    batch(&mut sink, 1..11).unwrap();
    let id = sink.connection_id().unwrap();
    admin().query_drop(format!("KILL {id}")).unwrap();
    let lost = batch(&mut sink, 11..21).unwrap_err();
    assert!(lost.is_retryable(), "{lost}");
    shown.push(format!("{lost} {lost:?}"));
    sink.rollback().unwrap();
    batch(&mut sink, 11..21).unwrap();
    assert_eq!(sink.stats().reconnects, 1);
    let duplicate = batch(&mut sink, 20..22).unwrap_err();
    shown.push(format!("{duplicate} {duplicate:?} {sink:?}"));
    let _ = sink.rollback();
}

#[test]
fn no_password_in_any_log_display_or_error() {
    log::set_logger(&CAPTURE).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let _cleanup = Cleanup;
    setup();
    let server = server_part();
    let sep = if server.contains('?') { '&' } else { '?' };
    let mut shown = Vec::new();

    let in_user_info = format!("mysql://{USER}:{SECRET}@{server}");
    failing_import(
        &SinkConfig::new(in_user_info, TABLE, &["id", "name"]),
        &mut shown,
    );

    let in_query = format!("mysql://{USER}@{server}{sep}password={SECRET}");
    let config = SinkConfig::new(in_query, TABLE, &["id", "name"]).write_path(WritePath::Insert);
    failing_import(&config, &mut shown);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    let plain = format!("mysql://{USER}@{server}");
    let config = SinkConfig::new(plain.clone(), TABLE, &["id", "name"])
        .write_path(WritePath::Prepared)
        .password_file(&file);
    failing_import(&config, &mut shown);

    std::env::set_var("MYSQL_PWD", SECRET);
    let config = SinkConfig::new(plain, TABLE, &["id", "name"]).write_path(WritePath::LoadData);
    failing_import(&config, &mut shown);
    // A refused login with the same password, for another user.
    let wrong = format!("mysql://nobody_{USER}:{SECRET}@{server}");
    let refused = prepare(&SinkConfig::new(wrong, TABLE, &["id"])).unwrap_err();
    shown.push(format!("{refused} {refused:?}"));
    std::env::remove_var("MYSQL_PWD");

    let records = RECORDS.lock().unwrap();
    assert!(
        records.iter().any(|r| r.contains("reconnected to")),
        "the reconnect lines are among the records"
    );
    for text in shown.iter().chain(records.iter()) {
        assert!(!text.contains(SECRET), "the password shows in: {text}");
    }
}
