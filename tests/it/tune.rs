//! `ringpipe tune` against the real MariaDB and PostgreSQL: a small grid on
//! a sample, the table, the chart and the recommendation; the scratch
//! table gone afterwards, also when a cell fails.

use ringpipe_testdb::{pg_client, pg_url};

use crate::common::{
    catalogue, catalogue_files, count, fresh_pg_table, fresh_table, pg_count, query_one, ringpipe,
    stderr, stdout, url, MysqlTable,
};

/// Scratch tables of `ringpipe tune` left in the test database.
fn scratch_tables() -> u64 {
    query_one(
        "SELECT COUNT(*) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'ringpipe\\_tune\\_%'",
    )
}

fn tune(file: &std::path::Path, table: &str, chart: &std::path::Path) -> std::process::Output {
    tune_into(&url(), file, table, chart, &["--write-path", "bulk,insert"])
}

/// A small grid: 1,000 records, 2 rounds, batches of 100 and 500, 1 and 2
/// shards, and `more`.
fn tune_into(
    url: &str,
    file: &std::path::Path,
    table: &str,
    chart: &std::path::Path,
    more: &[&str],
) -> std::process::Output {
    let xml = file.extension().is_some_and(|e| e == "xml");
    let row: &[&str] = if xml { &["--row", "product"] } else { &[] };
    let file = file.to_str().unwrap();
    let chart = chart.to_str().unwrap();
    let args = [
        "tune",
        file,
        "--url",
        url,
        "--table",
        table,
        "--sample",
        "1000",
        "--rounds",
        "2",
        "--batch-rows",
        "100,500",
        "--shards",
        "1,2",
        "--chart",
        chart,
    ];
    ringpipe(&[&args[..], row, more].concat())
}

// One test, not two: both check that no scratch table is left, which a
// concurrent tune in the same database would confuse.
#[test]
fn tune_measures_the_grid_on_a_sample_and_leaves_no_scratch_table() {
    let _bad = MysqlTable::new("tune_bad");
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 3_000);
    let _table = fresh_table("tune_source");
    let chart = dir.path().join("tune.svg");

    let output = tune(&file, "tune_source", &chart);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("1000 rows per import, 2 rounds"), "{text}");
    let cells = text
        .lines()
        .filter(|l| l.starts_with("| bulk") || l.starts_with("| insert"));
    assert_eq!(
        cells.count(),
        8,
        "2 paths × 2 shard counts × 2 sizes:\n{text}"
    );
    assert!(text.contains("recommended: --write-path "), "{text}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert_eq!(
        svg.matches("<polyline").count(),
        4,
        "a line per path × shards"
    );
    assert_eq!(count("tune_source"), 0, "the table itself is never written");
    assert_eq!(scratch_tables(), 0, "the scratch table is dropped");

    // Every cell fails: a NOT NULL column the records never fill.
    let _table = fresh_table("tune_bad");
    ringpipe_mysql::execute(&url(), "ALTER TABLE tune_bad ADD COLUMN extra INT NOT NULL").unwrap();
    let output = tune(&file, "tune_bad", &chart);
    assert!(!output.status.success(), "{}", stdout(&output));
    assert_eq!(scratch_tables(), 0, "dropped after a failure too");
}

#[test]
fn tune_into_postgres_measures_both_copy_formats_of_each_input_format_and_leaves_no_scratch_table()
{
    let dir = tempfile::tempdir().unwrap();
    let file = catalogue(dir.path(), 3_000);
    let _table = fresh_pg_table("tune_pg_source");
    let chart = dir.path().join("tune.svg");

    let output = tune_into(&pg_url(), &file, "tune_pg_source", &chart, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let cells = text
        .lines()
        .filter(|l| l.starts_with("| copy-binary") || l.starts_with("| copy-text"));
    assert_eq!(
        cells.count(),
        8,
        "2 formats × 2 shard counts × 2 sizes:\n{text}"
    );
    assert!(text.contains("recommended: --write-path copy-"), "{text}");
    assert_eq!(
        pg_count("tune_pg_source"),
        0,
        "the table itself is never written"
    );
    let sql = "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'ringpipe\\_tune\\_%'";
    let left: i64 = pg_client().query_one(sql, &[]).unwrap().get(0);
    assert_eq!(left, 0, "the scratch table is dropped");

    // A CSV and a JSON Lines sample of the same catalogue (in this test:
    // a concurrent tune's scratch table would fail the check above).
    let [_, csv, jsonl] = catalogue_files(dir.path(), 3_000);
    for (file, more) in [
        (&csv, &["--null-string", "\\N"][..]),
        (&jsonl, &["--write-path", "copy-text"][..]),
    ] {
        let output = tune_into(&pg_url(), file, "tune_pg_source", &chart, more);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(text.contains("1000 rows per import, 2 rounds"), "{text}");
        assert!(text.contains("recommended: --write-path copy-"), "{text}");
    }
    assert_eq!(pg_count("tune_pg_source"), 0);
    let left: i64 = pg_client().query_one(sql, &[]).unwrap().get(0);
    assert_eq!(left, 0, "the scratch table is dropped");
}
