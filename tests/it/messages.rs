//! Every error a user can cause, pinned: one line in the user's terms,
//! with the fix when there is one, and the exit code. No `Debug` form, no
//! thread names, batches or sequences (those are for `RUST_LOG=debug`).

use std::path::Path;
use std::process::Output;

use crate::common::{
    catalogue, fresh_pg_table, fresh_table, import, pg_url, ringpipe, stderr, url, url_parts,
};

/// The one line the binary printed, after checking it is one line.
fn line(output: &Output) -> String {
    let text = stderr(output);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let line = text.trim_end().to_owned();
    for internal in [
        "Error {",
        "DriverError",
        "ringpipe-sink",
        "sequence",
        "shard ",
    ] {
        assert!(!line.contains(internal), "internals on screen: {line}");
    }
    line
}

/// `import FILE --url URL --table TABLE --row product` (nothing else).
fn import_to(file: &Path, url: &str, table: &str) -> Output {
    import_with(file, url, table, &[])
}

/// [`import_to`] with the flags `more`.
fn import_with(file: &Path, url: &str, table: &str, more: &[&str]) -> Output {
    let file = file.to_str().unwrap();
    let args = [
        "import", file, "--url", url, "--table", table, "--row", "product",
    ];
    ringpipe(&[&args[..], more].concat())
}

#[test]
fn each_error_a_user_can_cause_is_one_line_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 20);
    let (user, host, port, db) = url_parts();
    let server = |user: &str, db: &str| format!("mysql://{user}@{host}:{port}/{db}");

    let mysql = server(&user, &db);
    let tune = ringpipe(&["tune", "-", "--url", &mysql, "--table", "t"]);
    assert_eq!(tune.status.code(), Some(2));
    assert_eq!(
        line(&tune),
        "ringpipe: tune reads its sample once per cell: give it a file, not stdin or a pipe"
    );
    let csv = dir.path().join("sample.csv");
    std::fs::write(&csv, "id\n1\n").unwrap();
    let tune = ringpipe(&[
        "tune",
        csv.to_str().unwrap(),
        "--url",
        &mysql,
        "--table",
        "t",
        "--row",
        "product",
    ]);
    assert_eq!(tune.status.code(), Some(2));
    assert_eq!(line(&tune), "ringpipe: --row is for XML input");

    let bad_url = import_to(&file, &format!("{host}:{port}/{db}"), "t");
    assert_eq!(bad_url.status.code(), Some(2));
    assert_eq!(
        line(&bad_url),
        format!("ringpipe: --url {host}:{port}/{db}: expected mysql://user[:password]@host[:port]/database")
    );

    // A port nothing listens on (bound, then freed).
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refused_url = format!("mysql://{user}@127.0.0.1:{free}/{db}");
    let refused = import_to(&file, &refused_url, "t");
    assert_eq!(refused.status.code(), Some(4));
    assert_eq!(
        line(&refused),
        format!(
            "ringpipe: cannot connect to {refused_url}: Could not connect to address \
             `127.0.0.1:{free}': Connection refused (os error 111); is the server running? \
             try `ringpipe doctor --url {refused_url}`"
        )
    );

    let denied = import_to(&file, &server("rp_msg_nobody", &db), "t");
    assert_eq!(denied.status.code(), Some(4));
    let denied = line(&denied);
    assert!(
        denied.starts_with("ringpipe: Access denied for user 'rp_msg_nobody'@")
            && denied.ends_with(&format!(
                "at {}: check the user and the password (in the URL, MYSQL_PWD or --password-file)",
                server("rp_msg_nobody", &db)
            )),
        "{denied}"
    );

    let no_db = import_to(&file, &server(&user, "rp_msg_no_such_db"), "t");
    assert_eq!(no_db.status.code(), Some(4));
    assert_eq!(
        line(&no_db),
        format!(
            "ringpipe: Unknown database 'rp_msg_no_such_db' on {}: create it first \
             (CREATE DATABASE …) or name another in the URL",
            server(&user, "rp_msg_no_such_db")
        )
    );

    let no_table = import_to(&file, &url(), "rp_msg_no_such_table");
    assert_eq!(no_table.status.code(), Some(4));
    assert_eq!(
        line(&no_table),
        "ringpipe: table `rp_msg_no_such_table` does not exist in the connection's database: \
         create it first (for a catalogue made by `ringpipe gen`: \
         `ringpipe gen --ddl rp_msg_no_such_table` prints its CREATE TABLE)"
    );

    let f = file.to_str().unwrap();
    let wrong_row = ringpipe(&[
        "import",
        f,
        "--url",
        &url(),
        "--table",
        "t",
        "--columns",
        "id",
        "--dry-run",
    ]);
    assert_eq!(wrong_row.status.code(), Some(3));
    assert_eq!(
        line(&wrong_row),
        format!(
            "ringpipe: {f}:181:1: no <row> element; the file's records look like <product> \
             (at depth 2); use --row product"
        )
    );
}

#[test]
fn a_duplicate_key_names_the_record_and_the_modes_that_accept_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 20);
    let _table = fresh_table("rp_msg_duplicate");
    assert!(import(&file, "rp_msg_duplicate", &[]).status.success());
    let again = import(&file, "rp_msg_duplicate", &["--shards", "1"]);
    assert_eq!(again.status.code(), Some(4));
    let text = line(&again);
    assert!(
        text.starts_with("ringpipe: record 1 (line 4, column 3) failed: ")
            && text.contains("Duplicate entry '1' for key 'PRIMARY'")
            && text.ends_with(
                "; to accept duplicate keys use --mode ignore|upsert|replace, \
                 or set bad records aside with --max-bad N --reject-file FILE (0 rows committed)"
            ),
        "{text}"
    );
}

#[test]
fn into_postgres_each_error_a_user_can_cause_is_one_line_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 20);
    let url = pg_url();
    let (server, _db) = url.rsplit_once('/').unwrap();

    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let file_arg = file.to_str().unwrap();
    let args = [
        "tune",
        file_arg,
        "--url",
        &url,
        "--table",
        "t",
        "--write-path",
        "bulk",
    ];
    let tune = ringpipe(&args);
    assert_eq!(tune.status.code(), Some(2));
    assert_eq!(
        line(&tune),
        "ringpipe: --write-path: copy-binary or copy-text into PostgreSQL"
    );

    let refused_url = format!("postgres://nobody:secret@127.0.0.1:{free}/test");
    let refused = import_to(&file, &refused_url, "t");
    assert_eq!(refused.status.code(), Some(4));
    let shown = format!("postgres://nobody:***@127.0.0.1:{free}/test");
    assert_eq!(
        line(&refused),
        format!(
            "ringpipe: cannot connect to {shown}: error connecting to server: Connection refused \
             (os error 111); is the server running? try `ringpipe doctor --url {shown}`"
        )
    );

    let no_db_url = format!("{server}/rp_msg_no_such_db");
    let no_db = import_to(&file, &no_db_url, "t");
    assert_eq!(no_db.status.code(), Some(4));
    assert_eq!(
        line(&no_db),
        format!(
            "ringpipe: connecting to PostgreSQL: FATAL 3D000: database \"rp_msg_no_such_db\" \
             does not exist on {no_db_url}: create it first (CREATE DATABASE …) or name another \
             in the URL"
        )
    );

    let no_table = import_to(&file, &url, "rp_msg_pg_no_such_table");
    assert_eq!(no_table.status.code(), Some(4));
    assert_eq!(
        line(&no_table),
        "ringpipe: reading the columns of \"rp_msg_pg_no_such_table\": ERROR 42P01: relation \
         \"rp_msg_pg_no_such_table\" does not exist: create it first (for a catalogue made by \
         `ringpipe gen`: `ringpipe gen --ddl rp_msg_pg_no_such_table --dialect postgres` prints \
         its CREATE TABLE)"
    );

    // Sessions read-only by default, as on a standby: refused at the first
    // write, with what to do.
    let _table = fresh_pg_table("rp_msg_pg_read_only");
    let separator = if url.contains('?') { '&' } else { '?' };
    let read_only_url = format!("{url}{separator}options=-c%20default_transaction_read_only%3Don");
    let read_only = import_with(
        &file,
        &read_only_url,
        "rp_msg_pg_read_only",
        &["--retry-for", "0"],
    );
    assert_eq!(read_only.status.code(), Some(4));
    let text = line(&read_only);
    assert!(
        text.contains("ERROR 25006: cannot execute")
            && text.contains(
                ": the server takes no writes (a standby, or default_transaction_read_only): \
                 point --url at the primary"
            )
            && text.ends_with(&format!(
                "`ringpipe doctor --url {read_only_url}` names the setting"
            )),
        "{text}"
    );

    let _table = fresh_pg_table("rp_msg_pg_duplicate");
    assert!(import_to(&file, &url, "rp_msg_pg_duplicate")
        .status
        .success());
    let again = import_with(&file, &url, "rp_msg_pg_duplicate", &["--shards", "1"]);
    assert_eq!(again.status.code(), Some(4));
    let text = line(&again);
    assert!(
        text.starts_with("ringpipe: record 1 (line 4, column 3): ERROR 23505: duplicate key value")
            && text.contains("(detail: Key (id)=(1) already exists.); to accept")
            && text.ends_with(
                "; to accept duplicate keys use --mode ignore|upsert|replace, \
                 or set bad records aside with --max-bad N --reject-file FILE (0 rows committed)"
            ),
        "{text}"
    );
}
