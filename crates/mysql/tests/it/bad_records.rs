//! Bad records: named in the fatal error, or diverted to the reject file
//! within the shared `max_bad` budget; never silently altered.

use ringpipe_mysql::{prepare, Mode, MysqlError, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

/// 20 records of which 6 (qty) and 14 (price) hold bad values.
fn with_bad_values() -> Vec<Record> {
    let mut data = records(1, 20);
    data[5][3] = Some("not a number".into());
    data[13][4] = Some("99999999999999".into());
    data
}

#[test]
fn fatal_error_names_the_bad_record_on_every_path() {
    for path in EVERY_PATH {
        let table = format!("rp_mysql_bad_fatal_{path:?}").to_lowercase();
        let _table = fresh_table(&table);
        let target = prepare(&config(&table).write_path(path)).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let err = drive(&mut sink, &with_bad_values(), 20).unwrap_err();
        assert!(
            matches!(err, MysqlError::BadRecord { .. }),
            "{path:?}: {err}"
        );
        assert!(
            err.to_string().starts_with("record 6 (line 7, column 3)"),
            "{path:?}: {err}"
        );
        assert_eq!(count(&table), 0, "{path:?}: nothing committed");
    }
}

#[test]
fn bad_records_go_to_the_reject_file_and_the_rest_commits() {
    for path in EVERY_PATH {
        let table = format!("rp_mysql_bad_reject_{path:?}").to_lowercase();
        let _table = fresh_table(&table);
        let dir = tempfile::tempdir().unwrap();
        let rejects = dir.path().join("rejects.tsv");
        let target = prepare(
            &config(&table)
                .write_path(path)
                .max_bad(2)
                .reject_file(&rejects),
        )
        .unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let data = with_bad_values();
        drive(&mut sink, &data, 8).unwrap();
        sink.close().unwrap();
        let good: Vec<Record> = data
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 5 && *i != 13)
            .map(|(_, r)| r.clone())
            .collect();
        assert_eq!(read_back(&table), good, "{path:?}");
        assert_eq!(sink.stats().rejected, 2);
        let text = std::fs::read_to_string(&rejects).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{path:?}: {text}");
        assert!(lines[0].starts_with("6\t7:3\t"), "{path:?}: {}", lines[0]);
        assert!(
            lines[0].contains("\t6\tname 6"),
            "{path:?}: values as TSV: {}",
            lines[0]
        );
        assert!(lines[1].starts_with("14\t15:3\t"), "{path:?}: {}", lines[1]);
    }
}

#[test]
fn budget_is_shared_across_shards() {
    let table = "rp_mysql_bad_budget";
    let _table = fresh_table(table);
    let target = prepare(&config(table).write_path(WritePath::Insert).max_bad(1)).unwrap();
    let mut a = target.connect_sink(0).unwrap();
    let mut b = target.connect_sink(1).unwrap();
    let mut first = records(1, 5);
    first[2][3] = Some("x".into());
    let mut second = records(6, 5);
    second[1][3] = Some("y".into());
    drive(&mut a, &first, 5).unwrap();
    let err = drive(&mut b, &second, 5).unwrap_err();
    assert!(
        matches!(err, MysqlError::TooManyBadRecords { max_bad: 1, .. }),
        "{err}"
    );
    assert_eq!(count(table), 4, "only shard a's good rows");
}

#[test]
fn ignore_mode_skips_duplicates_but_not_bad_values() {
    for path in EVERY_PATH {
        let table = format!("rp_mysql_bad_ignore_{path:?}").to_lowercase();
        let _table = fresh_table(&table);
        let config = config(&table).write_path(path).mode(Mode::Ignore);
        let target = prepare(&config).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let mut data = records(1, 6);
        data.push(data[0].clone());
        drive(&mut sink, &data, 7).unwrap();
        assert_eq!(count(&table), 6, "{path:?}");
        let mut bad = records(10, 3);
        bad[1][3] = Some("12abc".into());
        let err = drive(&mut sink, &bad, 3).unwrap_err();
        assert!(err.to_string().starts_with("record 2 "), "{path:?}: {err}");
        assert_eq!(count(&table), 6, "{path:?}: no bad value slipped in as 0");
    }
}

#[test]
fn duplicate_inside_one_batch_is_found() {
    for path in EVERY_PATH {
        let table = format!("rp_mysql_bad_dup_{path:?}").to_lowercase();
        let _table = fresh_table(&table);
        let target = prepare(&config(&table).write_path(path)).unwrap();
        let mut sink = target.connect_sink(0).unwrap();
        let mut data = records(1, 10);
        data[7] = data[2].clone();
        let err = drive(&mut sink, &data, 10).unwrap_err();
        assert_eq!(err.code(), Some(1062), "{path:?}: {err}");
        assert!(err.to_string().starts_with("record 8 "), "{path:?}: {err}");
    }
}
