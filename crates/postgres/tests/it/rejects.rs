//! Bad records: each batch that holds some is bisected, its good rows
//! commit with the checkpoint, its bad ones go to the reject file with
//! the server's message; beyond the budget the import stops, naming the
//! record; a kill in the middle of the search changes nothing.

use std::path::Path;

use ringpipe_pipeline::{Import, ImportError};
use ringpipe_postgres::{Mode, PgConfig, PgError, PgTarget};

use crate::common::{url, Rows, Table};
use crate::resume::Faulty;

/// `(record, reason)` of each line of a reject file, in file order.
fn rejects(path: &Path) -> Vec<(u64, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields[0].parse().unwrap(), fields[2].to_owned())
        })
        .collect()
}

/// Rows `1..=n` as `(id, n, s)`, with `bad` records (1-based) replaced.
fn rows(n: u64, bad: &[(u64, [Option<&str>; 3])]) -> Rows {
    let owned: Vec<Vec<Option<String>>> = (1..=n)
        .map(|i| match bad.iter().find(|(at, _)| *at == i) {
            Some((_, values)) => values.iter().map(|v| v.map(str::to_owned)).collect(),
            None => vec![Some(i.to_string()), Some(i.to_string()), Some("ok".into())],
        })
        .collect();
    let refs: Vec<Vec<Option<&str>>> = owned
        .iter()
        .map(|r| r.iter().map(|v| v.as_deref()).collect())
        .collect();
    let slices: Vec<&[Option<&str>]> = refs.iter().map(Vec::as_slice).collect();
    Rows::text(&["id", "n", "s"], &slices)
}

const BAD: [(u64, [Option<&str>; 3]); 4] = [
    (7, [Some("7"), Some("x"), Some("ok")]),         // 22P02
    (20, [Some("1000"), Some("20"), Some("ok")]),    // 23505 (a row already there)
    (33, [Some("33"), None, Some("ok")]),            // 23502
    (50, [Some("50"), Some("50"), Some("toolong")]), // refused before the server
];

#[test]
fn pg_rejects_server_errors_are_bisected_out_with_the_servers_message() {
    let name = "pgsink_rejects_text";
    // Binary COPY; record 7's `x` is no canonical numeric, so it travels in
    // a text-format COPY of its own and the server refuses it itself.
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, n numeric NOT NULL, s varchar(4))";
    let mut table = Table::new(name, ddl);
    table.exec("INSERT INTO {t} VALUES (1000, 0, 'old')");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "n", "s"])
        .max_bad(4)
        .reject_file(&file);
    let target = PgTarget::new(config);
    let summary = Import::new(target.clone())
        .shards(2)
        .batch_rows(16)
        .checkpoints("rejects 100", "id,n,s")
        .run(vec![rows(100, &BAD)])
        .unwrap();
    assert_eq!(target.binary(), Some(true));
    assert_eq!(target.rejected(), 4);
    assert_eq!(summary.rows_written, 96, "{summary:?}");
    let mut got = rejects(&file);
    got.sort();
    let records: Vec<u64> = got.iter().map(|(r, _)| *r).collect();
    assert_eq!(records, [7, 20, 33, 50]);
    for ((_, reason), code) in got.iter().zip([
        "22P02",
        "23505",
        "23502",
        "longer than the column's 4 characters",
    ]) {
        assert!(reason.contains(code), "{reason}");
    }
    let ids: Vec<Option<String>> = table
        .rows("id::text AS t", "id")
        .into_iter()
        .map(|mut r| r.remove(0))
        .collect();
    let expected: Vec<Option<String>> = (1..=1000)
        .filter(|i| *i <= 100 && ![7, 20, 33, 50].contains(i) || *i == 1000)
        .map(|i| Some(i.to_string()))
        .collect();
    assert_eq!(ids, expected);
}

#[test]
fn pg_rejects_in_a_staged_mode_and_from_the_encoder() {
    let name = "pgsink_rejects_upsert";
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, n int NOT NULL, s text)";
    let mut table = Table::new(name, ddl);
    table.exec("INSERT INTO {t} VALUES (1, 0, 'old')");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "n", "s"])
        .mode(Mode::Upsert)
        .max_bad(5)
        .reject_file(&file);
    let target = PgTarget::new(config);
    let bad = [
        (2, [Some("2"), None, Some("null n")]), // 23502 at the merge
        (4, [Some("4294967296"), Some("4"), Some("bad id")]), // refused by the binary encoder
        (6, [Some("1"), Some("6"), Some("new\t1")]), // an upsert of row 1: good
        (8, [Some("x8"), Some("8"), Some("bad id")]), // sent as text, refused by the server
    ];
    Import::new(target.clone())
        .batch_rows(8)
        .run(vec![rows(10, &bad)])
        .unwrap();
    assert_eq!(target.binary(), Some(true));
    let got = rejects(&file);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got.iter().any(|(r, why)| *r == 2 && why.contains("23502")),
        "{got:?}"
    );
    assert!(
        got.iter().any(|(r, why)| *r == 4 && why.contains("\"id\"")),
        "{got:?}"
    );
    assert!(
        got.iter().any(|(r, why)| *r == 8 && why.contains("22P02")),
        "{got:?}"
    );
    let line = std::fs::read_to_string(&file).unwrap();
    assert!(line.contains("\t4294967296\t4\tbad id\n"), "{line}");
    assert!(line.contains("\tx8\t8\tbad id\n"), "{line}");
    let ids = table.rows("id::text AS t, s", "id");
    assert_eq!(ids.len(), 6, "{ids:?}");
    assert_eq!(ids[0], vec![Some("1".into()), Some("new\t1".into())]);
}

#[test]
fn pg_rejects_beyond_the_budget_stop_naming_the_record() {
    let name = "pgsink_rejects_budget";
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, n numeric NOT NULL, s text)";
    let mut table = Table::new(name, ddl);
    // None allowed: the first bad record ends the import, its batch with it.
    let config = PgConfig::new(url(), name, &["id", "n", "s"]);
    let failure = Import::new(PgTarget::new(config))
        .batch_rows(10)
        .run(vec![rows(30, &BAD)])
        .unwrap_err();
    let ImportError::Sink { error, .. } = &failure.error else {
        panic!("{failure}");
    };
    assert!(
        matches!(error, PgError::BadRecord { position, .. } if position.record == 7),
        "{error}"
    );
    assert_eq!(error.sqlstate(), Some("22P02"));
    assert_eq!(table.hash().0, 0);
    // One allowed, two in the second batch.
    let dir = tempfile::tempdir().unwrap();
    let config = PgConfig::new(url(), name, &["id", "n", "s"])
        .max_bad(1)
        .reject_file(dir.path().join("bad.tsv"));
    let two = [BAD[0], (8, [Some("8"), None, None])];
    let failure = Import::new(PgTarget::new(config))
        .batch_rows(5)
        .run(vec![rows(30, &two)])
        .unwrap_err();
    let ImportError::Sink { error, .. } = &failure.error else {
        panic!("{failure}");
    };
    assert!(
        matches!(error, PgError::TooManyBadRecords { max_bad: 1, position, .. } if position.record == 8),
        "{error}"
    );
    assert_eq!(table.hash().0, 5, "the first batch committed");
}

#[test]
fn pg_rejects_stay_exact_across_a_kill_in_the_search_and_a_resume() {
    let name = "pgsink_rejects_kill";
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, n numeric NOT NULL, s varchar(4));
        DROP SEQUENCE IF EXISTS {t}_once; CREATE SEQUENCE {t}_once;
        CREATE OR REPLACE FUNCTION {t}_kill() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.id = 45 AND nextval('{t}_once') = 1 THEN
            PERFORM pg_terminate_backend(pg_backend_pid());
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER {t}_kill BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_kill();";
    let mut table = Table::new(name, ddl);
    table.exec("INSERT INTO {t} VALUES (1000, 0, 'old')");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "n", "s"])
        .max_bad(10)
        .reject_file(&file);
    fn import<T: ringpipe_pipeline::Target>(target: T) -> Import<T> {
        Import::new(target)
            .batch_rows(25)
            .checkpoints("rejects kill 100", "id,n,s")
    }
    // Record 33 is bad, 45 kills its connection while the batch 26..=50
    // is searched (and that batch's commit is replayed: commit call 2);
    // commit call 4 (records 76..=100) then fails for good.
    let faulty = Faulty::fail_at(PgTarget::new(config.clone()), (0, 4));
    let failure = import(faulty).run(vec![rows(100, &BAD)]).unwrap_err();
    assert!(failure.to_string().contains("injected"), "{failure}");
    assert_eq!(
        table.hash().0,
        72,
        "three batches, four bad records, row 1000"
    );
    let summary = import(PgTarget::new(config))
        .resume(true)
        .run(vec![rows(100, &BAD)])
        .unwrap();
    assert_eq!(summary.rows_written, 25);
    let mut records: Vec<u64> = rejects(&file).into_iter().map(|(r, _)| r).collect();
    records.sort();
    assert_eq!(records, [7, 20, 33, 50], "each once");
    let ids = table.rows("id::text AS t", "id");
    let expected: Vec<Vec<Option<String>>> = (1..=100)
        .filter(|i| ![7, 20, 33, 50].contains(i))
        .chain([1000])
        .map(|i| vec![Some(i.to_string())])
        .collect();
    assert_eq!(ids, expected);
    table.exec("DROP TABLE {t}; DROP FUNCTION {t}_kill(); DROP SEQUENCE {t}_once");
}

#[test]
fn pg_rejects_a_deferred_constraint_broken_at_commit_names_the_record() {
    // `n` is unique, checked at COMMIT: record 13 repeats record 4's `n`.
    let name = "pgsink_rejects_deferred";
    let ddl = "CREATE TABLE {t} (id int PRIMARY KEY, n int, s text, \
               CONSTRAINT {t}_n UNIQUE (n) DEFERRABLE INITIALLY DEFERRED)";
    let mut table = Table::new(name, ddl);
    let bad = [(13, [Some("13"), Some("4"), Some("again")])];
    let config = PgConfig::new(url(), name, &["id", "n", "s"]);
    let failure = Import::new(PgTarget::new(config))
        .batch_rows(10)
        .run(vec![rows(30, &bad)])
        .unwrap_err();
    let ImportError::Sink { error, .. } = &failure.error else {
        panic!("{failure}");
    };
    assert!(
        matches!(error, PgError::BadRecord { position, .. } if position.record == 13),
        "{error}"
    );
    assert_eq!(table.hash().0, 10, "the first batch committed");
    table.exec("TRUNCATE {t}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "n", "s"])
        .max_bad(1)
        .reject_file(&file);
    let summary = Import::new(PgTarget::new(config))
        .batch_rows(10)
        .run(vec![rows(30, &bad)])
        .unwrap();
    assert_eq!(summary.rows_written, 29, "{summary:?}");
    assert_eq!(table.hash().0, 29);
    let lines = rejects(&file);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].0, 13);
    assert!(lines[0].1.contains("23505"), "{lines:?}");
}
