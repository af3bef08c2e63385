//! Ignore mode keeps the first record of a key, upsert and replace the
//! last, even when the writer of the earlier record is held up: into
//! MariaDB and PostgreSQL alike, from the command line. Several shards
//! would let the records of one key land in either order, so those modes
//! take one shard unless `--any-order` says any order will do.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use mysql::prelude::Queryable;

use crate::common::{conn, import_into, key_value_table, pg, stderr, Server};

/// Key 1 twice, in records 2 and 3; key 100 in record 1. With turns of two
/// records, records 1–2 and 3–4 would go to two shards.
const CSV: &str = "id,v\n100,x\n1,a\n1,b\n2,c\n";

/// How long another session holds key 100 uncommitted.
const HOLD: Duration = Duration::from_millis(1500);

/// `id=v,…` in key order.
fn rows(server: Server, table: &str) -> String {
    let sql = format!("SELECT id, v FROM {table} ORDER BY id");
    let rows: Vec<(i32, String)> = match server {
        Server::Mariadb => conn().query(sql).unwrap(),
        Server::Postgres => pg()
            .query(&sql, &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect(),
    };
    let rows: Vec<String> = rows.iter().map(|(id, v)| format!("{id}={v}")).collect();
    rows.join(",")
}

/// Inserts key 100 in another session and rolls it back after [`HOLD`];
/// returns once the insert holds the key, so that the writer of record 1
/// waits for it.
fn hold_key_100(server: Server, table: &'static str) -> thread::JoinHandle<()> {
    let (held, wait) = mpsc::channel();
    let holder = thread::spawn(move || {
        let insert = format!("INSERT INTO {table} VALUES (100, 'held')");
        match server {
            Server::Mariadb => {
                let mut c = conn();
                c.query_drop("BEGIN").unwrap();
                c.query_drop(insert).unwrap();
                held.send(()).unwrap();
                thread::sleep(HOLD);
                c.query_drop("ROLLBACK").unwrap();
            }
            Server::Postgres => {
                let mut c = pg();
                c.batch_execute(&format!("BEGIN; {insert}")).unwrap();
                held.send(()).unwrap();
                thread::sleep(HOLD);
                c.batch_execute("ROLLBACK").unwrap();
            }
        }
    });
    wait.recv().unwrap();
    holder
}

/// Imports [`CSV`] in `mode` while key 100 is held; returns the rows.
fn import_held(server: Server, name: &'static str, mode: &str) -> String {
    let _table = key_value_table(server, name);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.csv");
    std::fs::write(&file, CSV).unwrap();
    let holder = hold_key_100(server, name);
    let turns = ["--batch-rows", "2", "--shard-block", "2", "--regions", "1"];
    let args = [&["--mode", mode][..], &turns].concat();
    let output = import_into(&file, &server.url(), name, &args);
    holder.join().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    rows(server, name)
}

/// The first record of key 1 stays in ignore mode, the last lands in
/// upsert and replace modes.
fn keeps_the_input_order(server: Server, tables: [&'static str; 3]) {
    let [ignore, upsert, replace] = tables;
    assert_eq!(import_held(server, ignore, "ignore"), "1=a,2=c,100=x");
    assert_eq!(import_held(server, upsert, "upsert"), "1=b,2=c,100=x");
    assert_eq!(import_held(server, replace, "replace"), "1=b,2=c,100=x");
}

/// Two shards, or a part of a cut input, are refused without
/// `--any-order`, before anything is written; with it they run.
fn several_writers_need_any_order(server: Server, name: &'static str) {
    let _table = key_value_table(server, name);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.csv");
    std::fs::write(&file, CSV).unwrap();
    let url = server.url();
    for writers in [&["--shards", "2"][..], &["--part", "0/2"]] {
        let args = [&["--mode", "upsert"], writers].concat();
        let refused = import_into(&file, &url, name, &args);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        let message = stderr(&refused);
        assert!(message.contains("--any-order"), "{message}");
        assert_eq!(rows(server, name), "");
    }
    let args = ["--mode", "upsert", "--shards", "2", "--any-order"];
    let ran = import_into(&file, &url, name, &args);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let rows = rows(server, name);
    assert!(rows.ends_with(",2=c,100=x"), "{rows}");
}

#[test]
fn mariadb_keeps_the_first_or_last_record_of_a_key() {
    keeps_the_input_order(
        Server::Mariadb,
        [
            "rp_order_ignore_my",
            "rp_order_upsert_my",
            "rp_order_replace_my",
        ],
    );
}

#[test]
fn postgres_keeps_the_first_or_last_record_of_a_key() {
    keeps_the_input_order(
        Server::Postgres,
        [
            "rp_order_ignore_pg",
            "rp_order_upsert_pg",
            "rp_order_replace_pg",
        ],
    );
}

#[test]
fn mariadb_takes_several_writers_only_in_any_order() {
    several_writers_need_any_order(Server::Mariadb, "rp_order_writers_my");
}

#[test]
fn postgres_takes_several_writers_only_in_any_order() {
    several_writers_need_any_order(Server::Postgres, "rp_order_writers_pg");
}
