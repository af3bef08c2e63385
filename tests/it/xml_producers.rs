//! XML written by real tools, imported back and compared exactly:
//! `mariadb-dump --xml` of a table of every type, and PostgreSQL's
//! `table_to_xml` (its booleans, `true` and `false`, into MariaDB's
//! `BOOLEAN` and `BIT(1)`). The tools are installed on the test machine (the
//! MariaDB and PostgreSQL clients come with the servers the suite needs);
//! a missing tool fails the test, never skips it. Tables are `xml_prod_*`.

use std::path::Path;
use std::process::Command;

use crate::common::{
    checksum, conn, pg_url, ringpipe, stderr, url, url_parts, MysqlTable, PgTable,
};
use mysql::prelude::Queryable;

const ALL_TYPES: &str = "(
    id INT PRIMARY KEY,
    ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT, bu BIGINT UNSIGNED,
    de DECIMAL(30,10), fl FLOAT, db DOUBLE,
    d DATE, dt DATETIME(6), ts TIMESTAMP(3) NULL, t TIME(3), y YEAR,
    c CHAR(10), vc VARCHAR(100), tx TEXT,
    bn BINARY(4), vb VARBINARY(300), bl BLOB,
    bt BIT(12), e ENUM('a', 'b c'), st SET('x', 'y', 'z'), j JSON
) CHARACTER SET utf8mb4";

fn fill_all_types(table: &str) {
    let mut db = conn();
    db.query_drop(format!("DROP TABLE IF EXISTS `{table}`"))
        .unwrap();
    db.query_drop(format!("CREATE TABLE `{table}` {ALL_TYPES}"))
        .unwrap();
    db.query_drop(format!(
        "INSERT INTO `{table}` VALUES
        (1, -128, 65535, -8388608, -9223372036854775808, 18446744073709551615,
         -12345678901234567890.0123456789, 1.5, -2.2250738585072014e-308,
         '1000-01-01', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '-838:59:59.000', 2155,
         ' pad ', '  leading and trailing  ', 'café &lt; <b> ]]> \"q\" ''a'' \\r\\n CRLF 🎉',
         0x005C30FF, 0x00, 0x{}, b'101000000001', 'b c', 'x,z', '{{\"k\": [1, \"é\", null]}}'),
        (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        (3, 0, 0, 0, 0, 0, 0, 0, 0, '2000-02-29', '2000-01-01 00:00:00', NULL, '00:00:00', 2000,
         '', '', '', '', '', '', b'0', 'a', '', '[]')",
        (0..=255u8).map(|b| format!("{b:02X}")).collect::<String>()
    ))
    .unwrap();
}

fn dump(table: &str, hex_blob: bool, out: &Path) {
    let (user, host, port, db) = url_parts();
    let mut command = Command::new("mariadb-dump");
    command.args(["--xml", "-h", &host, "-P", &port, "-u", &user, &db, table]);
    if hex_blob {
        command.arg("--hex-blob");
    }
    let output = command.output().expect("mariadb-dump is installed");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::write(out, output.stdout).unwrap();
}

fn import(file: &Path, table: &str, extra: &[&str]) -> std::process::Output {
    let (file, url) = (file.to_str().unwrap(), url());
    let mut args = vec!["import", file, "--url", &url, "--table", table];
    args.extend(extra);
    ringpipe(&args)
}

#[test]
fn a_mariadb_dump_with_hex_blob_of_every_type_round_trips_exactly() {
    let _tables = ["xml_prod_types", "xml_prod_types_copy"].map(MysqlTable::new);
    fill_all_types("xml_prod_types");
    conn()
        .query_drop("CREATE TABLE xml_prod_types_copy LIKE xml_prod_types")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dump.xml");
    dump("xml_prod_types", true, &file);
    for write_path in ["insert", "load-data"] {
        conn().query_drop("TRUNCATE xml_prod_types_copy").unwrap();
        let output = import(&file, "xml_prod_types_copy", &["--write-path", write_path]);
        assert!(output.status.success(), "{write_path}: {}", stderr(&output));
        assert_eq!(
            checksum("xml_prod_types"),
            checksum("xml_prod_types_copy"),
            "{write_path}: the copy differs"
        );
    }
    let same: u64 = conn()
        .query_first(
            "SELECT COUNT(*) FROM xml_prod_types a JOIN xml_prod_types_copy b USING (id)
             WHERE a.bl <=> b.bl AND a.bn <=> b.bn AND a.vc <=> b.vc AND a.tx <=> b.tx",
        )
        .unwrap()
        .unwrap();
    assert_eq!(same, 3);
}

#[test]
fn a_mariadb_dump_without_hex_blob_is_refused_with_the_hint() {
    let _tables = ["xml_prod_raw", "xml_prod_raw_copy"].map(MysqlTable::new);
    fill_all_types("xml_prod_raw");
    conn()
        .query_drop("CREATE TABLE xml_prod_raw_copy LIKE xml_prod_raw")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dump.xml");
    dump("xml_prod_raw", false, &file);
    let output = import(&file, "xml_prod_raw_copy", &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("binary columns need `--hex-blob` when dumping"),
        "{message}"
    );
    assert!(message.contains("record 1"), "{message}");
}

/// Runs `sql` with `psql` against the test PostgreSQL (trust auth, db `test`).
fn psql(sql: &str) -> String {
    // psql takes the URL as its database name.
    let url = pg_url();
    let output = Command::new("psql")
        .args(["-d", &url, "-X", "-A", "-t", "-q"])
        .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("psql is installed");
    assert!(
        output.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn postgres_table_to_xml_with_nulls_either_way_imports_exactly() {
    let _tables = ["xml_prod_pg", "xml_prod_pg_expect"].map(MysqlTable::new);
    let _source = PgTable::fresh("xml_prod_pg");
    psql(
        "CREATE TABLE xml_prod_pg (id int PRIMARY KEY, name text, data bytea, note varchar(50),
           flag boolean, done boolean);
         INSERT INTO xml_prod_pg VALUES
           (1, 'Zürich – 東京 🎉 <&>', '\\x00ff5c300d0a', NULL, true, false),
           (2, NULL, NULL, '', NULL, NULL),
           (3, '  spaced  ', '\\x', 'x', false, true);",
    );
    let mut db = conn();
    db.query_drop("DROP TABLE IF EXISTS xml_prod_pg").unwrap();
    db.query_drop(
        "CREATE TABLE xml_prod_pg (id INT PRIMARY KEY, name TEXT, data BLOB, note VARCHAR(50), \
         flag BOOLEAN, done BIT(1)) CHARACTER SET utf8mb4",
    )
    .unwrap();
    db.query_drop("CREATE TABLE xml_prod_pg_expect LIKE xml_prod_pg")
        .unwrap();
    db.query_drop(
        "INSERT INTO xml_prod_pg_expect VALUES
         (1, 'Zürich – 東京 🎉 <&>', 0x00FF5C300D0A, NULL, 1, b'0'), (2, NULL, NULL, '', NULL, NULL), \
         (3, '  spaced  ', '', 'x', 0, b'1')",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for nulls in ["true", "false"] {
        let xml = psql(&format!(
            "SELECT table_to_xml('xml_prod_pg', {nulls}, false, '')"
        ));
        let file = dir.path().join(format!("pg-{nulls}.xml"));
        std::fs::write(&file, xml).unwrap();
        db.query_drop("TRUNCATE xml_prod_pg").unwrap();
        let output = import(&file, "xml_prod_pg", &["--decode", "data=base64"]);
        assert!(
            output.status.success(),
            "nulls {nulls}: {}",
            stderr(&output)
        );
        assert_eq!(
            checksum("xml_prod_pg"),
            checksum("xml_prod_pg_expect"),
            "nulls {nulls}: the import differs"
        );
    }
}
