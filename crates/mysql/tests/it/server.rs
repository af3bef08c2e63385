//! Doctor, statistics, and password hygiene.

use mysql::prelude::Queryable;
use ringpipe_mysql::{doctor, prepare, ServerStats, Severity, SinkConfig, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

#[test]
fn doctor_reads_the_bulk_load_settings() {
    let report = doctor(&url()).unwrap();
    let local = report
        .findings
        .iter()
        .find(|f| f.setting == "local_infile")
        .unwrap();
    assert_eq!(
        local.severity,
        Severity::Ok,
        "the test server has local_infile=ON"
    );
    for setting in [
        "max_allowed_packet",
        "innodb_flush_log_at_trx_commit",
        "innodb_buffer_pool_size",
    ] {
        assert!(
            report.findings.iter().any(|f| f.setting == setting),
            "{setting}"
        );
    }
    // The value the server reports, whichever server the tests run on
    // (the system one, or a private instance with its own settings).
    let packet: u64 = conn()
        .query_first("SELECT @@max_allowed_packet")
        .unwrap()
        .unwrap();
    assert!(
        report
            .to_string()
            .contains(&format!("max_allowed_packet = {packet}")),
        "{report}"
    );
}

#[test]
fn server_stats_see_commits_and_rows() {
    let table = "rp_mysql_stats";
    let _table = fresh_table(table);
    let target = prepare(&config(table).write_path(WritePath::Insert)).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let before = ServerStats::read(&url()).unwrap();
    drive(&mut sink, &records(1, 100), 50).unwrap();
    let delta = ServerStats::read(&url()).unwrap().delta(&before);
    // Other tests run in parallel: only lower bounds hold.
    assert!(delta.get("Com_commit") >= 2, "{delta}");
    assert!(delta.rows_written() >= 100, "{delta}");
    assert!(delta.rows_per_commit() > 0.0, "{delta}");
    assert_eq!(sink.stats().commits, 2);
    assert_eq!(sink.stats().rows, 100);
}

#[test]
fn password_never_appears_in_config_or_errors() {
    let secret = "s3cr3t-Pa55";
    let cases = [
        format!("mysql://root:{secret}@127.0.0.1:3306/test"),
        format!("mysql://root:{secret}@127.0.0.1:1/test"),
        format!("mysql://root:{secret}@127.0.0.1:3306/test?bogus_param=1"),
    ];
    for url in cases {
        let config = SinkConfig::new(url.as_str(), "t", &["id"]);
        assert!(!format!("{config:?}{config}").contains(secret));
        assert!(config.redacted_url().contains("root:***@"));
        let err = prepare(&config).unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(!text.contains(secret), "{text}");
        let err = doctor(&url).unwrap_err();
        assert!(!format!("{err} {err:?}").contains(secret));
    }
}

#[test]
fn password_file_supplies_the_password() {
    // The test user has no password; a wrong password from the file must be
    // refused, which shows it was used.
    let mut c = conn();
    let has_pw: Option<String> = c
        .query_first("SELECT authentication_string FROM mysql.user WHERE user = 'root' LIMIT 1")
        .unwrap_or(None);
    if has_pw.as_deref().is_some_and(|s| !s.is_empty()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "wrong-password\n").unwrap();
    let config = SinkConfig::new(url(), "t", &["id"]).password_file(&file);
    let err = prepare(&config).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("1045") || text.contains("denied"), "{text}");
    assert!(!text.contains("wrong-password"));
    let (config, _table) = config_ok();
    let mut sink_ok = prepare(&config).unwrap().connect_sink(0).unwrap();
    sink_ok.close().unwrap();
}

/// A valid config on a table that exists while the guard lives.
fn config_ok() -> (SinkConfig, MysqlTable) {
    let table = fresh_table("rp_mysql_pwd_ok");
    (config("rp_mysql_pwd_ok"), table)
}

/// How the server sees the sink's connection: `localhost` on the Unix
/// socket, `127.0.0.1:port` on TCP.
fn transport_of(url: String, path: WritePath) -> String {
    let table = format!("rp_wire_transport_{path:?}").to_lowercase();
    let _table = fresh_table(&table);
    let config = SinkConfig::new(url, &table, COLUMNS).write_path(path);
    let target = prepare(&config).unwrap();
    let sink = target.connect_sink(0).unwrap();
    let id = sink.connection_id().unwrap();
    let host: Option<String> = conn()
        .query_first(format!(
            "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = {id}"
        ))
        .unwrap();
    drop(sink);
    conn()
        .query_drop(format!("DROP TABLE IF EXISTS `{table}`"))
        .unwrap();
    host.unwrap()
}

#[test]
fn both_clients_move_to_the_same_servers_socket_only_for_a_loopback_host() {
    for path in [WritePath::Insert, WritePath::Bulk] {
        assert_eq!(transport_of(url(), path), "localhost", "{path:?}");
        let tcp = format!("{}?prefer_socket=false", url());
        assert!(
            transport_of(tcp, path).starts_with("127.0.0.1:"),
            "{path:?}"
        );
    }
}
