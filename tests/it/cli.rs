//! The `ringpipe` binary as a user runs it, against the real MariaDB
//! (`RINGPIPE_TEST_MYSQL_URL`, default the local test server). Each test
//! owns its table.

use crate::common::{
    catalogue, checksum, count, fresh_table, import, query_one, ringpipe, stderr, stdout, url,
};
use ringpipe_xml::gen::PRODUCT_COLUMNS;

#[test]
fn import_reports_json_and_stores_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 3_000);
    let _table = fresh_table("cli_import_json");
    let output = import(
        &file,
        "cli_import_json",
        &["--shards", "3", "--batch-rows", "200", "--json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["rows_read"], 3_000);
    assert_eq!(report["rows_written"], 3_000);
    assert_eq!(report["shards"], 3);
    assert_eq!(report["regions"], 3, "a region per shard by default");
    assert!(report["server_commits"].as_u64() >= Some(15), "{report}");
    assert_eq!(count("cli_import_json"), 3_000);
}

#[test]
fn a_named_pipe_is_read_once_whole_and_cannot_be_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 3_000);
    let fifo = dir.path().join("products.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let feed = |fifo: std::path::PathBuf| {
        let bytes = std::fs::read(&file).unwrap();
        std::thread::spawn(move || {
            // The reader may give up early (the refused resume below).
            let _ = std::fs::write(fifo, bytes);
        })
    };

    let _table = fresh_table("cli_fifo");
    let writer = feed(fifo.clone());
    let output = import(&fifo, "cli_fifo", &["--shards", "2", "--json"]);
    writer.join().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["regions"], 1, "a pipe is read as one region");
    assert_eq!(count("cli_fifo"), 3_000, "every record, read once");
    let _table = fresh_table("cli_fifo_file");
    assert!(import(&file, "cli_fifo_file", &[]).status.success());
    assert_eq!(checksum("cli_fifo"), checksum("cli_fifo_file"));

    let writer = feed(fifo.clone());
    let resume = import(&fifo, "cli_fifo", &["--resume"]);
    // The import refused before opening the pipe: a read-write open (which
    // never blocks on Linux) lets the writer's open return, and closing it
    // ends the writer's write.
    drop(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo),
    );
    writer.join().unwrap();
    assert_eq!(resume.status.code(), Some(2), "{}", stderr(&resume));
    assert!(
        stderr(&resume).contains("not stdin or a pipe"),
        "{}",
        stderr(&resume)
    );
}

#[test]
fn both_bulk_clients_leave_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 3_000);
    let mut sums = Vec::new();
    for client in ["wire", "driver"] {
        let table = format!("cli_bulk_client_{client}");
        let _table = fresh_table(&table);
        let output = import(
            &file,
            &table,
            &["--bulk-client", client, "--batch-rows", "700"],
        );
        assert!(output.status.success(), "{client}: {}", stderr(&output));
        assert_eq!(count(&table), 3_000, "{client}");
        sums.push(checksum(&table));
    }
    assert_eq!(sums[0], sums[1]);
    let output = import(
        &file,
        "cli_bulk_client_wire",
        &["--bulk-client", "libmysql"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn rerunning_an_upsert_leaves_the_table_identical() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 1_000);
    let _table = fresh_table("cli_upsert_twice");
    let upsert = || import(&file, "cli_upsert_twice", &["--mode", "upsert"]);
    assert!(upsert().status.success());
    let before = checksum("cli_upsert_twice");
    assert!(upsert().status.success());
    assert_eq!(checksum("cli_upsert_twice"), before);
    assert_eq!(count("cli_upsert_twice"), 1_000);
}

#[test]
fn malformed_xml_names_file_position_and_record_and_keeps_earlier_rows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.xml");
    std::fs::write(
        &file,
        "<catalogue>\n<product id=\"1\"><sku>A</sku><name>a</name></product>\n\
         <product id=\"2\"><sku>B</sku><name>b</price></product>\n</catalogue>\n",
    )
    .unwrap();
    let _table = fresh_table("cli_malformed");
    let output = import(&file, "cli_malformed", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("broken.xml:3:"), "{message}");
    assert!(message.contains("record 2"), "{message}");
    assert!(message.contains("expected </name>"), "{message}");
    assert_eq!(
        count("cli_malformed"),
        1,
        "the record before the error is committed"
    );
}

#[test]
fn a_missing_table_is_one_clear_line_with_exit_code_4() {
    let output = ringpipe(&[
        "import",
        "/dev/null",
        "--url",
        &url(),
        "--table",
        "cli_no_such_table",
        "--row",
        "product",
    ]);
    assert_eq!(output.status.code(), Some(4));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("cli_no_such_table"), "{message}");
}

#[test]
fn init_commands_run_on_every_sink_connection() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 2_000);
    let table = "cli_init_command";
    let _table = fresh_table(table);
    let add_seq = format!("ALTER TABLE `{table}` ADD seq BIGINT NOT NULL AUTO_INCREMENT UNIQUE");
    ringpipe_mysql::execute(&url(), &add_seq).unwrap();
    let columns = PRODUCT_COLUMNS.join(",");
    let output = import(
        &file,
        table,
        &[
            "--columns",
            &columns,
            "--shards",
            "2",
            "--batch-rows",
            "300",
            "--init-command",
            "SET SESSION auto_increment_increment = 7",
            "--init-command",
            "SET SESSION auto_increment_offset = 3",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(count(table), 2_000);
    // Both connections numbered their rows as their sessions were told to
    // (the server's defaults would give 1, 2, 3, ...).
    let off_pattern = format!("SELECT COUNT(*) FROM `{table}` WHERE seq % 7 <> 3");
    assert_eq!(query_one(&off_pattern), 0);
}

#[test]
fn a_failing_init_command_is_one_clear_line_with_exit_code_4() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 10);
    let _table = fresh_table("cli_init_command_bad");
    let output = import(
        &file,
        "cli_init_command_bad",
        &["--init-command", "SET SESSION no_such_setting = 1"],
    );
    assert_eq!(output.status.code(), Some(4));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("no_such_setting"), "{message}");
    assert_eq!(count("cli_init_command_bad"), 0);
}

#[test]
fn bad_arguments_exit_with_code_2() {
    let url = url();
    let import_with = |extra: &[&str]| {
        let base = [
            "import",
            "x.xml",
            "--url",
            &url,
            "--table",
            "t",
            "--columns",
            "id",
        ];
        ringpipe(&[&base[..], extra].concat())
    };
    let output = import_with(&["--shards", "0"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--shards"));
    for regions in ["0", "3"] {
        let output = import_with(&["--shards", "2", "--regions", regions]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("--regions must divide --shards (2), not"),
            "{}",
            stderr(&output)
        );
    }
    let output = ringpipe(&["import", "x.xml", "--table", "t"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "missing --url must be a usage error"
    );
}

#[test]
fn an_unreadable_file_and_an_unreachable_server_are_reported() {
    let output = ringpipe(&[
        "import",
        "/no/such/file.xml",
        "--url",
        &url(),
        "--table",
        "t",
        "--columns",
        "id",
        "--dry-run",
    ]);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("/no/such/file.xml"));
    let output = ringpipe(&[
        "import",
        "x.xml",
        "--url",
        "mysql://root:s3cret@127.0.0.1:1/test",
        "--table",
        "t",
    ]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("s3cret"),
        "the password was printed"
    );
}

#[test]
fn dry_run_parses_everything_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 500);
    let output = ringpipe(&[
        "import",
        file.to_str().unwrap(),
        "--url",
        "mysql://nobody@127.0.0.1:1/none",
        "--table",
        "t",
        "--row",
        "product",
        "--columns",
        "id,sku,name",
        "--dry-run",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["rows_read"], 500);
    assert_eq!(report["dry_run"], true);
}

#[test]
fn bad_records_go_to_the_reject_file_within_max_bad() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prices.xml");
    let mut xml = String::from("<catalogue>\n");
    for id in 1..=50 {
        let price = if id % 10 == 0 {
            "not-a-price".to_owned()
        } else {
            format!("{id}.50")
        };
        xml.push_str(&format!(
            "<product id=\"{id}\"><sku>S{id}</sku><name>n{id}</name><price>{price}</price></product>\n"
        ));
    }
    xml.push_str("</catalogue>\n");
    std::fs::write(&file, xml).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let _table = fresh_table("cli_rejects");
    let output = import(
        &file,
        "cli_rejects",
        &[
            "--max-bad",
            "5",
            "--reject-file",
            rejects.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["rows_rejected"], 5);
    assert_eq!(count("cli_rejects"), 45);
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    let mut records: Vec<&str> = rejected
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    records.sort_by_key(|r| r.parse::<u64>().unwrap());
    assert_eq!(records, ["10", "20", "30", "40", "50"]);
}

#[test]
fn gen_writes_a_deterministic_catalogue_and_its_ddl() {
    let dir = tempfile::tempdir().unwrap();
    let a = catalogue(dir.path(), 100);
    let b = dir.path().join("again.xml");
    assert!(
        ringpipe(&["gen", "--rows", "100", "--out", b.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let ddl = ringpipe(&["gen", "--ddl", "my_products"]);
    assert!(stdout(&ddl).starts_with("CREATE TABLE IF NOT EXISTS `my_products`"));
    let ddl = ringpipe(&["gen", "--ddl", "shop.my\"products", "--dialect", "postgres"]);
    assert!(
        stdout(&ddl)
            .starts_with("CREATE TABLE IF NOT EXISTS \"shop\".\"my\"\"products\" (\n  id bigint"),
        "{}",
        stdout(&ddl)
    );
    for bad in [
        &["gen", "--ddl", "", "--dialect", "postgres"][..],
        &["gen", "--rows", "1", "--out", "-", "--dialect", "postgres"],
    ] {
        assert!(!ringpipe(bad).status.success(), "{bad:?}");
    }
    // `--dialect` alone asks for the table it would describe.
    let alone = ringpipe(&["gen", "--dialect", "postgres"]);
    assert!(!alone.status.success());
    let usage = String::from_utf8_lossy(&alone.stderr);
    assert!(usage.contains("--ddl <TABLE>"), "{usage}");
}
