//! Every write path × every mode produces the same, expected table.

use ringpipe_mysql::{prepare, Mode, MysqlError, WritePath};

use crate::common::*;

/// Records `first..first+n` with names marked `tag`.
fn tagged(first: u64, n: u64, tag: &str) -> Vec<Record> {
    let mut out = records(first, n);
    for r in &mut out {
        r[1] = Some(format!("{tag} {}", r[0].as_deref().unwrap()));
    }
    out
}

/// Imports `data` into `table` with `path` and `mode` in batches of 7.
fn import(table: &str, path: WritePath, mode: Mode, data: &[Record]) -> Result<(), MysqlError> {
    let target = prepare(&config(table).write_path(path).mode(mode))?;
    let mut sink = target.connect_sink(0)?;
    drive(&mut sink, data, 7)?;
    use ringpipe_pipeline::Sink;
    sink.close()
}

/// Runs every mode on `path`, each on its own table.
fn all_modes(path: WritePath) {
    let name = format!("{path:?}").to_lowercase();
    let old = tagged(1, 20, "old");
    let new = tagged(11, 20, "new");

    let t = format!("rp_mysql_modes_{name}_insert");
    let _table = fresh_table(&t);
    import(&t, path, Mode::Insert, &old).unwrap();
    assert_eq!(read_back(&t), old, "{path:?} insert");
    let err = import(&t, path, Mode::Insert, &new).unwrap_err();
    assert_eq!(err.code(), Some(1062), "{path:?}: {err}");
    assert!(err.to_string().contains("record 1 "), "{err}");
    assert_eq!(read_back(&t), old, "{path:?}: failed batch left nothing");

    let t = format!("rp_mysql_modes_{name}_ignore");
    let _table = fresh_table(&t);
    import(&t, path, Mode::Ignore, &old).unwrap();
    import(&t, path, Mode::Ignore, &new).unwrap();
    let expected: Vec<Record> = old.iter().chain(&new[10..]).cloned().collect();
    assert_eq!(read_back(&t), expected, "{path:?} ignore");

    let merged: Vec<Record> = old[..10].iter().chain(&new).cloned().collect();
    for mode in [Mode::Upsert, Mode::Replace] {
        let t = format!("rp_mysql_modes_{name}_{mode:?}").to_lowercase();
        let _table = fresh_table(&t);
        import(&t, path, mode, &old).unwrap();
        import(&t, path, mode, &new).unwrap();
        assert_eq!(read_back(&t), merged, "{path:?} {mode:?}");
        let sum = checksum(&t);
        import(&t, path, mode, &new).unwrap();
        assert_eq!(
            checksum(&t),
            sum,
            "{path:?} {mode:?}: re-run changed the table"
        );
    }

    let t = format!("rp_mysql_modes_{name}_truncate");
    let _table = fresh_table(&t);
    import(&t, path, Mode::Insert, &tagged(100, 5, "stale")).unwrap();
    import(&t, path, Mode::Truncate, &old).unwrap();
    assert_eq!(read_back(&t), old, "{path:?} truncate");
}

#[test]
fn insert_path_all_modes() {
    all_modes(WritePath::Insert);
}

#[test]
fn prepared_path_all_modes() {
    all_modes(WritePath::Prepared);
}

#[test]
fn load_data_path_all_modes() {
    all_modes(WritePath::LoadData);
}

#[test]
fn bulk_path_all_modes() {
    all_modes(WritePath::Bulk);
}

#[test]
fn truncate_happens_once_per_import_not_per_shard() {
    let t = "rp_mysql_truncate_once";
    let _table = fresh_table(t);
    import(t, WritePath::Insert, Mode::Insert, &tagged(100, 5, "stale")).unwrap();
    let target = prepare(&config(t).mode(Mode::Truncate)).unwrap();
    let mut a = target.connect_sink(0).unwrap();
    let mut b = target.connect_sink(1).unwrap();
    drive(&mut a, &records(1, 10), 4).unwrap();
    drive(&mut b, &records(11, 10), 4).unwrap();
    assert_eq!(count(t), 20);
}
