//! The bulk path's own wire client: when it serves a connection, how it
//! logs in, which socket it takes, and batches whose statements were sent
//! ahead of a failure.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, BulkClient, Mode, MysqlError, WritePath};
use ringpipe_pipeline::{Row, Sink};

use crate::common::*;

/// `url()` with `query` appended to its parameters.
fn url_with(query: &str) -> String {
    let base = url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{query}")
}

/// The host column of `connection`'s processlist row: `localhost` on a
/// Unix socket, `address:port` on TCP.
fn host_of(connection: u64) -> String {
    conn()
        .exec_first::<String, _, _>(
            "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = ?",
            (connection,),
        )
        .unwrap()
        .unwrap()
}

#[test]
fn the_bulk_path_runs_on_the_wire_client_and_other_paths_on_the_driver() {
    let table = "rp_mysql_wire_clients";
    let _table = fresh_table(table);
    let cases = [
        (WritePath::Bulk, BulkClient::Wire, BulkClient::Wire),
        (WritePath::Bulk, BulkClient::Driver, BulkClient::Driver),
        (WritePath::Prepared, BulkClient::Wire, BulkClient::Driver),
        (WritePath::Insert, BulkClient::Wire, BulkClient::Driver),
    ];
    for (path, asked, expected) in cases {
        let config = config(table).write_path(path).bulk_client(asked);
        let sink = prepare(&config).unwrap().connect_sink(0).unwrap();
        assert_eq!(sink.client(), Some(expected), "{path:?} asking {asked:?}");
    }
}

#[test]
fn compression_is_left_to_the_driver() {
    let table = "rp_mysql_wire_compress";
    let _table = fresh_table(table);
    let config = ringpipe_mysql::SinkConfig::new(url_with("compress=true"), table, COLUMNS);
    let mut sink = prepare(&config).unwrap().connect_sink(0).unwrap();
    assert_eq!(sink.client(), Some(BulkClient::Driver));
    drive(&mut sink, &records(1, 30), 10).unwrap();
    assert_eq!(read_back(table), records(1, 30));
}

#[test]
fn a_loopback_host_moves_to_the_servers_socket_unless_told_not_to() {
    let table = "rp_mysql_wire_socket";
    let _table = fresh_table(table);
    let mut hosts = Vec::new();
    for query in ["prefer_socket=true", "prefer_socket=false"] {
        let config = ringpipe_mysql::SinkConfig::new(url_with(query), table, COLUMNS);
        let sink = prepare(&config).unwrap().connect_sink(0).unwrap();
        assert_eq!(sink.client(), Some(BulkClient::Wire));
        hosts.push(host_of(sink.connection_id().unwrap()));
    }
    let has_socket: Option<String> = conn().query_first("SELECT @@socket").unwrap();
    if has_socket.is_some_and(|s| !s.is_empty()) && url().contains("127.0.0.1") {
        assert_eq!(hosts[0], "localhost", "prefer_socket: the Unix socket");
    }
    assert!(
        hosts[1].starts_with("127.0.0.1:") || !url().contains("127.0.0.1"),
        "{hosts:?}"
    );
}

#[test]
fn a_password_user_logs_in_and_a_wrong_password_is_refused_clearly() {
    let table = "rp_mysql_wire_password";
    let _table = fresh_table(table);
    let mut admin = conn();
    let user = "rp_wire_pw";
    admin
        .query_drop(format!(
            "DROP USER IF EXISTS '{user}'@'%', '{user}'@'localhost'"
        ))
        .unwrap();
    for host in ["%", "localhost"] {
        admin
            .query_drop(format!(
                "CREATE USER '{user}'@'{host}' IDENTIFIED VIA mysql_native_password USING PASSWORD('s3cr:et')"
            ))
            .unwrap();
        admin
            .query_drop(format!("GRANT ALL ON *.* TO '{user}'@'{host}'"))
            .unwrap();
    }
    let with_user = |password: &str| {
        let base = url();
        let rest = base.split_once('@').map_or(base.as_str(), |(_, r)| r);
        format!("mysql://{user}:{password}@{rest}")
    };
    let config = ringpipe_mysql::SinkConfig::new(with_user("s3cr%3Aet"), table, COLUMNS);
    let mut sink = prepare(&config).unwrap().connect_sink(0).unwrap();
    assert_eq!(sink.client(), Some(BulkClient::Wire));
    drive(&mut sink, &records(1, 25), 10).unwrap();
    assert_eq!(count(table), 25);
    drop(sink);

    // The sink logs in on its own: with the password changed after
    // prepare(), the wire client's login is refused, clearly and for good.
    let target = prepare(&config).unwrap();
    for host in ["%", "localhost"] {
        admin
            .query_drop(format!(
                "SET PASSWORD FOR '{user}'@'{host}' = PASSWORD('other')"
            ))
            .unwrap();
    }
    let err = target.connect_sink(0).unwrap_err();
    assert_eq!(err.code(), Some(1045), "{err}");
    assert!(!ringpipe_pipeline::Retryable::is_retryable(&err), "{err}");
    assert!(!err.to_string().contains("s3cr"), "{err}");
    admin
        .query_drop(format!("DROP USER '{user}'@'%', '{user}'@'localhost'"))
        .unwrap();
}

#[test]
fn a_bad_record_in_a_statement_sent_ahead_is_found_and_the_rest_commits_once() {
    let table = "rp_mysql_wire_ahead_bad";
    let _table = fresh_table(table);
    conn()
        .query_drop(format!(
            "INSERT INTO `{table}` (id, name) VALUES (15, 'already here')"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = config(table)
        .max_rows_per_statement(10)
        .max_bad(1)
        .reject_file(dir.path().join("rejects.tsv"));
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    assert_eq!(sink.client(), Some(BulkClient::Wire));
    // One batch of 50 rows: five statements, the second holding the
    // duplicate id 15 while the third is already on its way.
    let data = records(1, 50);
    drive(&mut sink, &data, 50).unwrap();
    assert_eq!(target.rejected(), 1);
    let mut expected: Vec<Record> = data
        .into_iter()
        .filter(|r| r[0].as_deref() != Some("15"))
        .collect();
    let back = read_back(table);
    assert_eq!(back.len(), 50);
    expected.insert(14, back[14].clone());
    assert_eq!(back[14][1].as_deref(), Some("already here"));
    assert_eq!(back, expected);
}

#[test]
fn a_fatal_error_in_a_statement_sent_ahead_commits_nothing() {
    // Record 3 is in the first statement, which `write` sends as soon as
    // its 10 rows are in; record 13 in the second, sent from `flush`.
    for bad in [3, 13] {
        let table = format!("rp_mysql_wire_ahead_fatal_{bad}");
        let _table = fresh_table(&table);
        let target = prepare(&config(&table).max_rows_per_statement(10)).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let mut data = records(1, 40);
        data[bad - 1][3] = Some("not a number".into());
        let err = drive(&mut sink, &data, 40).unwrap_err();
        assert!(matches!(err, MysqlError::BadRecord { .. }), "{err}");
        assert!(
            err.to_string().starts_with(&format!("record {bad} ")),
            "{err}"
        );
        assert_eq!(count(&table), 0);
        // The connection is still in step: the next batch commits.
        drive(&mut sink, &records(100, 30), 30).unwrap();
        assert_eq!(read_back(&table), records(100, 30));
    }
}

/// Loads 12 rows in statements of 4 into a DATE column, the row `noted`
/// holding a time of day (the server would keep only the date and leave a
/// note that it truncated the value), with one bad record allowed: the
/// record lands in the reject file, the 11 others in the table.
fn load_with_a_note(table: &str, noted: u32) {
    let mut c = conn();
    let _table = MysqlTable::fresh(table);
    c.query_drop(format!(
        "CREATE TABLE `{table}` (id INT PRIMARY KEY, d DATE)"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let config = ringpipe_mysql::SinkConfig::new(url(), table, &["id", "d"])
        .max_bad(1)
        .reject_file(&rejects);
    let target = prepare(&config.max_rows_per_statement(4)).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let mut row = Row::with_columns(2);
    for id in 1..=12 {
        row.clear();
        row.set(0, &id.to_string());
        row.set(
            1,
            if id == noted {
                "2024-05-06 07:08:09"
            } else {
                "2024-05-06"
            },
        );
        sink.write(&row).unwrap();
    }
    commit(&mut sink).unwrap();
    let rows: Vec<(u32, String)> = c
        .query(format!(
            "SELECT id, CAST(d AS CHAR) FROM `{table}` ORDER BY id"
        ))
        .unwrap();
    assert_eq!(rows.len(), 11);
    assert!(
        rows.iter().all(|(id, d)| *id != noted && d == "2024-05-06"),
        "{rows:?}"
    );
    let refused = std::fs::read_to_string(&rejects).unwrap();
    assert!(
        refused.contains("1265") && refused.contains("07:08:09"),
        "{refused}"
    );
    assert_eq!(sink.stats().rejected, 1);
}

#[test]
fn a_truncation_note_left_by_a_statement_sent_ahead_is_found_and_refused() {
    // In the first statement, the second already sent: its warnings can no
    // longer be shown, so the batch runs again as checked INSERT text,
    // which finds the record.
    load_with_a_note("rp_mysql_wire_note_ahead", 2);
    // In the last statement, nothing behind it: read and judged at once.
    load_with_a_note("rp_mysql_wire_note_last", 11);
}

#[test]
fn ignore_mode_reads_every_duplicate_warning_and_skips_them() {
    let table = "rp_mysql_wire_ignore";
    let _table = fresh_table(table);
    let target = prepare(&config(table).mode(Mode::Ignore).max_rows_per_statement(10)).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    drive(&mut sink, &records(1, 30), 30).unwrap();
    drive(&mut sink, &records(21, 30), 30).unwrap();
    assert_eq!(read_back(table), records(1, 50));
}

#[test]
fn columns_of_other_character_sets_get_their_text_converted() {
    let table = "rp_mysql_wire_charsets";
    let mut c = conn();
    let _table = MysqlTable::fresh(table);
    c.query_drop(format!(
        "CREATE TABLE `{table}` (id INT PRIMARY KEY, l1 VARCHAR(20) CHARACTER SET latin1, \
         u4 VARCHAR(20) CHARACTER SET utf8mb4, b VARBINARY(20), d DATETIME)"
    ))
    .unwrap();
    let config = ringpipe_mysql::SinkConfig::new(url(), table, &["id", "l1", "u4", "b", "d"]);
    let mut sink = prepare(&config).unwrap().connect_sink(0).unwrap();
    assert_eq!(sink.client(), Some(BulkClient::Wire));
    let mut row = Row::with_columns(5);
    for (i, value) in ["1", "café", "café 🚀", "café", "2024-05-06 07:08:09"]
        .iter()
        .enumerate()
    {
        row.set(i, value);
    }
    sink.write(&row).unwrap();
    commit(&mut sink).unwrap();
    let stored: Option<(String, String, String, String)> = c
        .query_first(format!(
            "SELECT HEX(l1), HEX(u4), HEX(b), CAST(d AS CHAR) FROM `{table}`"
        ))
        .unwrap();
    let (l1, u4, b, d) = stored.unwrap();
    assert_eq!(l1, "636166E9", "latin1 holds é as one byte, converted");
    assert_eq!(u4, "636166C3A920F09F9A80");
    assert_eq!(b, "636166C3A9", "a binary column keeps the UTF-8 bytes");
    assert_eq!(d, "2024-05-06 07:08:09");
}
