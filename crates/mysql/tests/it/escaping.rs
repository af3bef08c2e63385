//! Hostile values survive every write path byte for byte, whether or not
//! the session has `NO_BACKSLASH_ESCAPES`.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, WritePath};
use ringpipe_pipeline::Sink;

use crate::common::*;

/// Turns on `NO_BACKSLASH_ESCAPES` for a session.
const NBE: &str = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')";

/// Values that break naive escaping.
fn hostile() -> Vec<String> {
    let mut big = String::new();
    while big.len() < 1 << 20 {
        big.push_str("'\\\0\"\x1a\n\r\t😀é");
    }
    [
        "'",
        "''",
        "\\",
        "\\'",
        "trailing backslash\\",
        "'); DROP TABLE t; --",
        "\" OR 1=1 --",
        "nul\0inside",
        "ctrl-z \x1a here",
        "\\N",
        "\\Z \\0 \\n",
        "tab\tnewline\ncr\r",
        "",
        "multi-byte: 日本語 Ελληνικά עברית",
        "emoji 😀🚀👍🏽 and combining é",
        "%_ like wildcards",
        "`backticks`",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([big])
    .collect()
}

/// Records carrying each hostile value in `body` (and in `name` when short).
fn hostile_records() -> Vec<Record> {
    let mut out: Vec<Record> = hostile()
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let name = (v.chars().count() <= 255).then(|| v.clone());
            vec![Some((i + 1).to_string()), name, Some(v), None, None]
        })
        .collect();
    out.push(vec![Some("1000".into()), None, None, None, None]);
    out
}

/// Writes the hostile records with `path` and reads them back exactly.
fn round_trip(path: WritePath, no_backslash_escapes: bool) {
    let table = format!("rp_mysql_escape_{path:?}_{no_backslash_escapes}").to_lowercase();
    let _table = fresh_table(&table);
    let mut config = config(&table).write_path(path);
    if no_backslash_escapes {
        config = config.init_command(NBE);
    }
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let data = hostile_records();
    drive(&mut sink, &data, 5).unwrap();
    sink.close().unwrap();
    let back = read_back(&table);
    assert_eq!(
        back.len(),
        data.len(),
        "{path:?} nbe={no_backslash_escapes}"
    );
    for (got, want) in back.iter().zip(&data) {
        assert!(
            got == want,
            "{path:?} nbe={no_backslash_escapes}: row {:?} differs",
            want[0]
        );
    }
}

#[test]
fn no_backslash_escapes_init_command_takes_effect() {
    let opts =
        mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&url()).unwrap()).init(vec![NBE]);
    let mut c = mysql::Conn::new(opts).unwrap();
    let mode: String = c.query_first("SELECT @@SESSION.sql_mode").unwrap().unwrap();
    assert!(mode.contains("NO_BACKSLASH_ESCAPES"), "{mode}");
    assert!(c.no_backslash_escape());
}

#[test]
fn insert_path_escapes() {
    round_trip(WritePath::Insert, false);
    round_trip(WritePath::Insert, true);
}

#[test]
fn prepared_path_escapes() {
    round_trip(WritePath::Prepared, false);
    round_trip(WritePath::Prepared, true);
}

#[test]
fn load_data_path_escapes() {
    round_trip(WritePath::LoadData, false);
    round_trip(WritePath::LoadData, true);
}

#[test]
fn bulk_path_escapes() {
    round_trip(WritePath::Bulk, false);
    round_trip(WritePath::Bulk, true);
}
