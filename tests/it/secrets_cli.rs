//! The `ringpipe` binary never prints the password, at any log level,
//! whichever way it was given: `user:pass@`, `?password=`, `MYSQL_PWD`,
//! `--password-file`, `RINGPIPE_MYSQL_URL`. Each run is an import that
//! fails on the server (a value too long for its column) after connecting
//! on two shards, with `RUST_LOG=trace`.

use std::process::{Command, Output};

use crate::common::{catalogue, conn, fresh_table, url_parts};
use mysql::prelude::Queryable;

const SECRET: &str = "Rp-cli-S3cret-4417";
const USER: &str = "rp_wire_cli_secret";
const TABLE: &str = "rp_wire_cli_secret";

/// One run: its arguments and environment variables.
type Run<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);

/// Drops the user and the table at the end, also on failure.
struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        let mut c = conn();
        for host in ["%", "localhost"] {
            let _ = c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'{host}'"));
        }
        let _ = c.query_drop(format!("DROP TABLE IF EXISTS `{TABLE}`"));
    }
}

fn user_with_password(db: &str) {
    let mut c = conn();
    for host in ["%", "localhost"] {
        c.query_drop(format!("DROP USER IF EXISTS '{USER}'@'{host}'"))
            .unwrap();
        c.query_drop(format!(
            "CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{SECRET}'"
        ))
        .unwrap();
        c.query_drop(format!("GRANT ALL ON `{db}`.* TO '{USER}'@'{host}'"))
            .unwrap();
    }
}

/// `ringpipe import` of `file` with `args` and `env`, trace logging on.
fn import(file: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringpipe"));
    command
        .args(["import", file, "--table", TABLE, "--row", "product"])
        .args(["--shards", "2"])
        .args(args)
        .env_remove("RINGPIPE_MYSQL_URL")
        .env_remove("MYSQL_PWD")
        .env("RUST_LOG", "trace");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

#[test]
fn a_failing_import_never_prints_the_password() {
    let _cleanup = Cleanup;
    let (_, host, port, db) = url_parts();
    user_with_password(&db);
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 2_000);
    let file = file.to_str().unwrap();
    let password_file = dir.path().join("pw");
    std::fs::write(&password_file, format!("{SECRET}\n")).unwrap();
    let password_file = password_file.to_str().unwrap();

    let with_password = format!("mysql://{USER}:{SECRET}@{host}:{port}/{db}");
    let in_query = format!("mysql://{USER}@{host}:{port}/{db}?password={SECRET}");
    let plain = format!("mysql://{USER}@{host}:{port}/{db}");
    let runs: [Run<'_>; 5] = [
        (&["--url", &with_password], &[]),
        (&["--url", &in_query], &[]),
        (&["--url", &plain], &[("MYSQL_PWD", SECRET)]),
        (&["--url", &plain, "--password-file", password_file], &[]),
        (&[], &[("RINGPIPE_MYSQL_URL", &with_password)]),
    ];
    for (i, (args, env)) in runs.iter().enumerate() {
        let _table = fresh_table(TABLE);
        conn()
            .query_drop(format!("ALTER TABLE `{TABLE}` MODIFY name VARCHAR(3)"))
            .unwrap();
        let output = import(file, args, env);
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(4), "run {i}: {printed}");
        assert!(
            printed.contains("1406"),
            "run {i}: the server's error: {printed}"
        );
        assert!(
            printed.contains(" DEBUG "),
            "run {i}: debug logging was on: {printed}"
        );
        assert!(
            !printed.contains(SECRET),
            "run {i}: the password was printed: {printed}"
        );
    }
}
