//! Binary values (`Value::Bytes`: decoded hex or base64, or raw bytes)
//! arrive unchanged on every write path, whatever the session's escaping,
//! into binary columns and beside text.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, SinkConfig, WritePath};
use ringpipe_pipeline::{RecordPosition, Row, Sink};

use crate::common::*;

/// Byte strings that are not text: every byte value, invalid UTF-8, the
/// escape characters of SQL and TSV, and the empty string.
fn blobs() -> Vec<Vec<u8>> {
    vec![
        (0..=255).collect(),
        vec![0xff, 0xfe, 0x00, 0xc3],
        b"\\N\t\n\r'\"\x1a\0\\".to_vec(),
        Vec::new(),
        vec![0xe2, 0x28, 0xa1],
    ]
}

/// `id, b, vb, t` as stored.
type StoredRow = (u32, Option<Vec<u8>>, Option<Vec<u8>>, Option<String>);

fn binary_round_trip(path: WritePath, no_backslash_escapes: bool) {
    let table = format!("rp_mysql_binary_{path:?}_{no_backslash_escapes}").to_lowercase();
    let mut c = conn();
    let _table = MysqlTable::fresh(&table);
    c.query_drop(format!(
        "CREATE TABLE `{table}` (id INT PRIMARY KEY, b BLOB, vb VARBINARY(300), t TEXT) \
         DEFAULT CHARSET=utf8mb4"
    ))
    .unwrap();
    let mut config = SinkConfig::new(url(), &table, &["id", "b", "vb", "t"]).write_path(path);
    if no_backslash_escapes {
        config = config
            .init_command("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')");
    }
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let mut row = Row::with_columns(4);
    let blobs = blobs();
    for (i, blob) in blobs.iter().enumerate() {
        row.clear();
        row.set(0, &(i + 1).to_string());
        row.set_bytes(1, blob);
        row.set_bytes(2, blob);
        row.set(3, "text beside bytes: é");
        row.set_position(RecordPosition {
            record: i as u64 + 1,
            ..RecordPosition::default()
        });
        sink.write(&row).unwrap();
    }
    row.clear();
    row.set(0, "99"); // NULLs stay NULL
    sink.write(&row).unwrap();
    commit(&mut sink).unwrap();
    sink.close().unwrap();

    let back: Vec<StoredRow> = c
        .query(format!("SELECT id, b, vb, t FROM `{table}` ORDER BY id"))
        .unwrap();
    let case = format!("{path:?} nbe={no_backslash_escapes}");
    assert_eq!(back.len(), blobs.len() + 1, "{case}");
    for ((id, b, vb, t), blob) in back.iter().zip(&blobs) {
        assert_eq!(b.as_ref(), Some(blob), "{case}: row {id}, BLOB");
        assert_eq!(vb.as_ref(), Some(blob), "{case}: row {id}, VARBINARY");
        assert_eq!(t.as_deref(), Some("text beside bytes: é"), "{case}");
    }
    assert_eq!(back.last().unwrap(), &(99, None, None, None), "{case}");
}

#[test]
fn binary_values_survive_every_write_path() {
    for path in EVERY_PATH {
        binary_round_trip(path, false);
        binary_round_trip(path, true);
    }
}
