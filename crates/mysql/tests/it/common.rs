//! Shared helpers: URL, tables, row generation, a replaying driver.

use mysql::prelude::Queryable;
use ringpipe_mysql::{prepare, MysqlError, MysqlSink, SinkConfig, WritePath};
use ringpipe_pipeline::{Checkpoint, RecordPosition, Retryable, Row, Sink, Value};
pub use ringpipe_testdb::{mysql_conn as conn, mysql_url as url, MysqlTable};

/// The four write paths.
pub const EVERY_PATH: [WritePath; 4] = [
    WritePath::Insert,
    WritePath::Prepared,
    WritePath::LoadData,
    WritePath::Bulk,
];

/// One record as test data: `None` is NULL.
pub type Record = Vec<Option<String>>;

/// Columns of the standard test table.
pub const COLUMNS: &[&str] = &["id", "name", "body", "qty", "price"];

/// Drops and creates `table` with the standard test columns; the guard
/// drops it again.
pub fn fresh_table(table: &str) -> MysqlTable {
    let guard = MysqlTable::fresh(table);
    create_standard(&mut conn(), table);
    guard
}

/// Creates `table` with the standard test columns through `conn`.
pub fn create_standard(conn: &mut mysql::Conn, table: &str) {
    conn.query_drop(format!(
        "CREATE TABLE `{table}` (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(255), \
         body LONGTEXT, qty INT, price DECIMAL(12,2), KEY (name)) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    ))
    .unwrap();
}

/// Creates `table` with an `id INT PRIMARY KEY` and `columns` (name, SQL
/// type), in utf8mb4; the caller owns the guard that drops it.
pub fn create_with<'a>(table: &str, columns: impl IntoIterator<Item = (&'a str, &'a str)>) {
    let defs: Vec<String> = columns
        .into_iter()
        .map(|(name, sql_type)| format!("`{name}` {sql_type}"))
        .collect();
    conn()
        .query_drop(format!(
            "CREATE TABLE `{table}` (id INT PRIMARY KEY, {}) DEFAULT CHARSET=utf8mb4",
            defs.join(", ")
        ))
        .unwrap();
}

/// A config for the standard table.
pub fn config(table: &str) -> SinkConfig {
    SinkConfig::new(url(), table, COLUMNS)
}

/// `n` ordinary records with ids from `first`.
pub fn records(first: u64, n: u64) -> Vec<Record> {
    (first..first + n)
        .map(|i| {
            vec![
                Some(i.to_string()),
                Some(format!("name {i} · ünï")),
                if i % 7 == 0 {
                    None
                } else {
                    Some(format!("body {i}\twith\ttabs"))
                },
                Some((i % 1000).to_string()),
                Some(format!("{}.{:02}", i, i % 100)),
            ]
        })
        .collect()
}

/// Fills `row` from `record`; record number is `number` (1-based).
pub fn fill(row: &mut Row, record: &Record, number: u64) {
    row.clear();
    for (i, v) in record.iter().enumerate() {
        if let Some(v) = v {
            row.set(i, v);
        }
    }
    row.set_position(RecordPosition {
        record: number,
        line: number + 1,
        column: 3,
        byte_offset: 0,
    });
}

/// Writes `records` in batches, replaying a batch after a retryable error
/// (as the ring's rewind does), at most `tries` times per batch.
pub fn drive(sink: &mut MysqlSink, records: &[Record], batch: usize) -> Result<(), MysqlError> {
    let width = records.first().map_or(0, Vec::len);
    let mut row = Row::with_columns(width);
    for (b, chunk) in records.chunks(batch).enumerate() {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = write_batch(sink, &mut row, chunk, (b * batch) as u64);
            match result {
                Ok(()) => break,
                Err(e) if e.is_retryable() && attempt < 5 => sink.rollback()?,
                Err(e) => {
                    sink.rollback()?;
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Commits the sink's open batch, without a checkpoint.
pub fn commit(sink: &mut MysqlSink) -> Result<(), MysqlError> {
    let checkpoint = Checkpoint {
        import: None,
        shard: 0,
        last_record: 0,
        region_start: 1,
        rows_crc: None,
    };
    sink.commit(&checkpoint)
}

/// A column of a case table after its `id`: name, SQL type, and the SQL
/// that reads its value back as text.
pub type CaseColumn = (&'static str, &'static str, &'static str);

/// A stored case record: its id and its columns read back as text.
pub type StoredCase = (u32, Vec<Option<String>>);

/// Loads one record per case into a fresh `table` of `columns` (after an
/// `id INT PRIMARY KEY`), dropped again before returning, on `path`, all
/// in one batch, with bad records diverted to a reject file: record
/// `i + 1`, on line `i + 2`, has the id `i + 1` and `cases[i]`'s value
/// (`None`: NULL) in the column `cases[i]` names. Each stored record's
/// id and its columns read back as text, and the reject file's lines.
pub fn load_cases(
    table: &str,
    columns: &[CaseColumn],
    path: WritePath,
    cases: &[(&str, Option<Value<'_>>)],
) -> (Vec<StoredCase>, Vec<String>) {
    let _table = MysqlTable::fresh(table);
    create_with(
        table,
        columns.iter().map(|&(name, sql_type, _)| (name, sql_type)),
    );
    let mut names = vec!["id"];
    names.extend(columns.iter().map(|(name, ..)| *name));
    let dir = tempfile::tempdir().unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let config = SinkConfig::new(url(), table, &names)
        .write_path(path)
        .max_bad(1_000)
        .reject_file(&rejects);
    let target = prepare(&config).unwrap();
    let mut sink = target.connect_sink(0).unwrap();
    let mut row = Row::with_columns(names.len());
    for (i, &(column, value)) in cases.iter().enumerate() {
        let at = names.iter().position(|name| *name == column).unwrap();
        row.clear();
        row.set(0, &(i + 1).to_string());
        match value {
            Some(Value::Text(text)) => row.set(at, text),
            Some(Value::Bytes(bytes)) => row.set_bytes(at, bytes),
            None => {}
        }
        row.set_position(RecordPosition {
            record: i as u64 + 1,
            line: i as u64 + 2,
            column: 1,
            byte_offset: 0,
        });
        sink.write(&row).unwrap();
    }
    commit(&mut sink).unwrap();
    sink.close().unwrap();
    let read: Vec<&str> = columns.iter().map(|(.., read)| *read).collect();
    let rows: Vec<mysql::Row> = conn()
        .query(format!(
            "SELECT id, {} FROM `{table}` ORDER BY id",
            read.join(", ")
        ))
        .unwrap();
    let stored = rows
        .iter()
        .map(|row| {
            let values = (1..row.len()).map(|i| row.get(i).unwrap()).collect();
            (row.get(0).unwrap(), values)
        })
        .collect();
    let lines = std::fs::read_to_string(&rejects)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    (stored, lines)
}

/// Writes one batch and commits it.
pub fn write_batch(
    sink: &mut MysqlSink,
    row: &mut Row,
    chunk: &[Record],
    first: u64,
) -> Result<(), MysqlError> {
    for (i, record) in chunk.iter().enumerate() {
        fill(row, record, first + i as u64 + 1);
        sink.write(row)?;
    }
    commit(sink)
}

/// The table's rows ordered by id, every column as text (exact bytes).
pub fn read_back(table: &str) -> Vec<Record> {
    read_back_from(&mut conn(), table)
}

/// [`read_back`] through `c`.
pub fn read_back_from(c: &mut mysql::Conn, table: &str) -> Vec<Record> {
    let cols = COLUMNS
        .iter()
        .map(|col| format!("CAST(`{col}` AS BINARY)"))
        .collect::<Vec<_>>()
        .join(",");
    let rows: Vec<mysql::Row> = c
        .query(format!("SELECT {cols} FROM `{table}` ORDER BY id"))
        .unwrap();
    rows.into_iter()
        .map(|r| {
            (0..COLUMNS.len())
                .map(|i| {
                    r.get::<Option<Vec<u8>>, _>(i)
                        .unwrap()
                        .map(|b| String::from_utf8(b).unwrap())
                })
                .collect()
        })
        .collect()
}

/// `CHECKSUM TABLE` of `table`.
pub fn checksum(table: &str) -> u64 {
    let row: Option<(String, u64)> = conn()
        .query_first(format!("CHECKSUM TABLE `{table}`"))
        .unwrap();
    row.unwrap().1
}

/// Number of rows in `table`.
pub fn count(table: &str) -> u64 {
    conn()
        .query_first(format!("SELECT COUNT(*) FROM `{table}`"))
        .unwrap()
        .unwrap()
}
