//! A user of MariaDB's `ed25519` plugin logs in on both clients: the wire
//! client answers the authentication switch itself, the driver through its
//! `client_ed25519` feature (without it, `mysql_common` panicked). The
//! plugin is installed on the test server if it is not yet.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, BulkClient, SinkConfig, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

const USER: &str = "rp_wire_ed25519";
const PASSWORD: &str = "ed-pw-5521";

/// Drops the user and the tables at the end, also on failure.
struct Cleanup(Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let mut c = conn();
        for host in ["%", "localhost"] {
            let _ = c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'{host}'"));
        }
        for table in &self.0 {
            let _ = c.query_drop(format!("DROP TABLE IF EXISTS `{table}`"));
        }
    }
}

/// Installs the `ed25519` plugin if needed and creates the user.
fn ed25519_user() {
    let mut c = conn();
    let status: Option<String> = c
        .query_first(
            "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ed25519'",
        )
        .unwrap();
    if status.is_none() {
        c.query_drop("INSTALL SONAME 'auth_ed25519'").unwrap();
    }
    for host in ["%", "localhost"] {
        c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'{host}'"))
            .unwrap();
        c.query_drop(format!(
            "CREATE USER '{USER}'@'{host}' IDENTIFIED VIA ed25519 USING PASSWORD('{PASSWORD}')"
        ))
        .unwrap();
        c.query_drop(format!("GRANT ALL ON test.* TO '{USER}'@'{host}'"))
            .unwrap();
    }
}

#[test]
fn an_ed25519_user_imports_on_the_wire_client_and_the_driver() {
    let paths = [
        (WritePath::Bulk, BulkClient::Wire),
        (WritePath::Insert, BulkClient::Driver),
    ];
    let tables: Vec<String> = paths
        .iter()
        .map(|(path, _)| format!("rp_wire_ed25519_{path:?}").to_lowercase())
        .collect();
    let _cleanup = Cleanup(tables.clone());
    ed25519_user();
    let server = url().split('@').nth(1).unwrap().to_owned();
    let url = format!("mysql://{USER}:{PASSWORD}@{server}");
    for ((path, client), table) in paths.into_iter().zip(&tables) {
        let _table = fresh_table(table);
        let config = SinkConfig::new(url.clone(), table, COLUMNS).write_path(path);
        let target = prepare(&config).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        assert_eq!(sink.client(), Some(client), "{path:?}");
        let data = records(1, 50);
        drive(&mut sink, &data, 20).unwrap();
        sink.close().unwrap();
        assert_eq!(read_back(table), data, "{path:?}");
    }
}
