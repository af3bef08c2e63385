//! Exactly-once progress: each shard's commit also records how far it got.
//!
//! Every batch a shard commits ends with one upsert into
//! [`CHECKPOINT_TABLE`] *inside the same transaction*, naming the last
//! source record of the batch. Rows and progress therefore commit together
//! or not at all, and the import
//! ([`Import`](ringpipe_pipeline::Import)) resumes after exactly the
//! records each shard committed.
//!
//! The same row settles a commit whose outcome is unknown (the connection
//! died during `COMMIT`): after reconnecting, the shard reads its
//! checkpoint; if it already covers the batch, the batch did commit and is
//! not sent again.
//!
//! A finished import (part) marks its rows complete instead of deleting
//! them, so that a retried `--resume` knows it has nothing to do; a fresh
//! import of the whole input deletes every row of its table, a fresh part
//! import only the rows of its part of the same input. The table's shape
//! is [`checkpoint_table`](crate::checkpoint_table)'s.

use mysql::prelude::Queryable;
use mysql::{Opts, Value};
use ringpipe_pipeline::{ImportIdentity, Part, StoredCheckpoint};

use crate::checkpoint_table::ensure_table;
use crate::connect::{open, Session};
use crate::escape::push_literal;
use crate::link::{Link, TextQueries};
use crate::{MysqlError, SinkConfig};

/// The table holding every import's progress, created on demand in the
/// target database.
pub const CHECKPOINT_TABLE: &str = "ringpipe_checkpoint";

/// What one commit of a shard records: the shard, its region's first
/// record, the last record of the batch, how many records it held, and
/// the digest of every row the shard committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) shard: usize,
    pub(crate) region_start: u64,
    pub(crate) last_record: u64,
    pub(crate) records: u64,
    pub(crate) rows_crc: Option<u32>,
}

/// The statement recording `progress` of `identity` into `table`.
pub(crate) fn record_sql(
    table: &str,
    progress: Progress,
    identity: &ImportIdentity,
    no_backslash_escapes: bool,
) -> String {
    let mut sql = String::from(
        "INSERT INTO `ringpipe_checkpoint` (target_table, input, part, parts, shard, shards, \
         region_start, last_record, records, rows_crc, mapping) VALUES (",
    );
    push_literal(&mut sql, table, no_backslash_escapes);
    sql.push_str(", ");
    push_literal(&mut sql, &identity.input, no_backslash_escapes);
    let Part { index, count } = identity.part;
    let Progress {
        shard,
        region_start,
        last_record,
        records,
        rows_crc,
    } = progress;
    let rows_crc = rows_crc.map_or_else(|| "NULL".to_owned(), |crc| crc.to_string());
    sql.push_str(&format!(
        ", {index}, {count}, {shard}, {}, {region_start}, {last_record}, {records}, {rows_crc}, ",
        identity.shards
    ));
    push_literal(&mut sql, &identity.mapping, no_backslash_escapes);
    sql.push_str(
        ") ON DUPLICATE KEY UPDATE last_record = VALUES(last_record), \
         records = records + VALUES(records), parts = VALUES(parts), \
         shards = VALUES(shards), region_start = VALUES(region_start), \
         rows_crc = VALUES(rows_crc), mapping = VALUES(mapping)",
    );
    sql
}

/// The statement adding `count` bad records, set aside by the batch whose
/// checkpoint the open transaction recorded, to the shard's checkpoint.
pub(crate) fn diverted_sql(
    table: &str,
    (identity, shard): (&ImportIdentity, usize),
    count: u64,
    no_backslash_escapes: bool,
) -> String {
    let mut sql = format!("UPDATE `ringpipe_checkpoint` SET diverted = diverted + {count}");
    push_row_of(&mut sql, table, (identity, shard), no_backslash_escapes);
    sql
}

/// Appends the `WHERE` clause that picks the checkpoint row of `shard` of
/// `identity`'s part in `table`.
fn push_row_of(
    sql: &mut String,
    table: &str,
    (identity, shard): (&ImportIdentity, usize),
    no_backslash_escapes: bool,
) {
    sql.push_str(" WHERE target_table = ");
    push_literal(sql, table, no_backslash_escapes);
    sql.push_str(" AND input = ");
    push_literal(sql, &identity.input, no_backslash_escapes);
    sql.push_str(&format!(
        " AND part = {} AND shard = {shard}",
        identity.part.index
    ));
}

/// The last record `shard` of `identity`'s part committed, if it has a
/// checkpoint.
///
/// A locking read: it waits for a transaction still writing the row (a
/// batch whose `COMMIT` went unanswered may still be committing, on a
/// connection the server has not yet seen close) and reads what it left,
/// where a plain read would answer from before it. The caller ends the
/// transaction the lock belongs to.
pub(crate) fn committed_through(
    conn: &mut Link,
    table: &str,
    (identity, shard): (&ImportIdentity, usize),
    no_backslash_escapes: bool,
) -> Result<Option<u64>, MysqlError> {
    let mut sql = String::from("SELECT last_record FROM `ringpipe_checkpoint`");
    push_row_of(&mut sql, table, (identity, shard), no_backslash_escapes);
    sql.push_str(" FOR UPDATE");
    let context = "reading the checkpoint";
    let rows = conn.query_rows(&sql, context)?;
    let Some(value) = rows
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next())
    else {
        return Ok(None);
    };
    value
        .and_then(|text| text.parse().ok())
        .map(Some)
        .ok_or_else(|| MysqlError::Config(format!("{context}: not a record number")))
}

/// One row of the checkpoint table: a shard of a part of an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardCheckpoint {
    /// The checkpoint as the import reads it back.
    pub checkpoint: StoredCheckpoint,
    /// Records the shard committed (stored or set aside as rejects).
    pub records: u64,
}

/// Every checkpoint stored for `table` in the database of `url`, by input,
/// part and shard (what `ringpipe status` shows).
///
/// # Errors
///
/// When the server cannot be reached or the table read.
pub fn checkpoint_rows(url: &str, table: &str) -> Result<Vec<ShardCheckpoint>, MysqlError> {
    let opts = SinkConfig::new(url, table, &[]).opts()?;
    rows_of(&opts, table, Read::Plain)
}

/// How [`rows_of`] reads the checkpoint table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// What is committed now (for display).
    Plain,
    /// A locking read (`LOCK IN SHARE MODE`), for a resume: it waits for
    /// any transaction still holding a checkpoint row, or inserting one (a
    /// batch whose import was killed may still be committing on a
    /// connection the server has not yet seen close), and reads what that
    /// transaction left, where a plain read would answer from before it
    /// and the resume would later meet that batch's checkpoint as another
    /// import's. A batch writes its checkpoint before its `COMMIT` is sent.
    Locking,
}

/// A connection on which the checkpoint table exists in its current shape.
fn checkpoint_session(opts: &Opts) -> Result<Session, MysqlError> {
    let mut session = open(opts)?;
    ensure_table(session.conn.driver()?)?;
    Ok(session)
}

fn rows_of(opts: &Opts, table: &str, read: Read) -> Result<Vec<ShardCheckpoint>, MysqlError> {
    let mut session = checkpoint_session(opts)?;
    let conn = session.conn.driver()?;
    type Columns = (
        String,
        u32,
        u32,
        u32,
        u32,
        u64,
        u64,
        u64,
        u64,
        Option<u64>,
        bool,
        String,
    );
    // Read as plain rows and converted here: the driver's typed read
    // panics on a value out of its type (a negative count, hand-edited).
    let lock = match read {
        Read::Plain => "",
        Read::Locking => " LOCK IN SHARE MODE",
    };
    let rows: Vec<mysql::Row> = conn
        .exec(
            format!(
                "SELECT input, part, parts, shard, shards, region_start, last_record, records, \
                 diverted, rows_crc, complete, mapping FROM `ringpipe_checkpoint` \
                 WHERE target_table = ? ORDER BY input, part, shard{lock}"
            ),
            (table,),
        )
        .map_err(|e| MysqlError::driver(e, "reading the checkpoints"))?;
    let row = |(
        input,
        index,
        count,
        shard,
        shards,
        region_start,
        last_record,
        records,
        diverted,
        rows_crc,
        complete,
        mapping,
    ): Columns|
     -> Result<ShardCheckpoint, MysqlError> {
        // A value no digest has (hand-edited) is refused: read as "not
        // known" it would turn the resume's check off.
        let rows_crc = match rows_crc.map(u32::try_from) {
            None => None,
            Some(Ok(crc)) => Some(crc),
            Some(Err(_)) => {
                return Err(MysqlError::Config(format!(
                    "the checkpoint of shard {shard} of {input:?} holds a rows_crc \
                     no digest has ({})",
                    rows_crc.unwrap_or_default()
                )))
            }
        };
        Ok(ShardCheckpoint {
            checkpoint: StoredCheckpoint {
                identity: ImportIdentity {
                    input,
                    shards,
                    mapping,
                    part: Part { index, count },
                },
                shard: shard as usize,
                last_record,
                region_start,
                rows_crc,
                complete,
                diverted,
            },
            records,
        })
    };
    rows.into_iter()
        .map(|stored| {
            let columns = mysql::from_row_opt::<Columns>(stored).map_err(|e| {
                MysqlError::Config(format!(
                    "a checkpoint row of {table:?} holds a value out of range: {e}"
                ))
            })?;
            row(columns)
        })
        .collect()
}

/// Every checkpoint stored for `table`.
pub(crate) fn stored(opts: &Opts, table: &str) -> Result<Vec<StoredCheckpoint>, MysqlError> {
    let rows = rows_of(opts, table, Read::Locking)?;
    Ok(rows.into_iter().map(|row| row.checkpoint).collect())
}

/// Forgets every checkpoint of `table`.
pub(crate) fn clear(opts: &Opts, table: &str) -> Result<(), MysqlError> {
    let mut session = checkpoint_session(opts)?;
    let conn = session.conn.driver()?;
    conn.exec_drop(
        "DELETE FROM `ringpipe_checkpoint` WHERE target_table = ?",
        (table,),
    )
    .map_err(|e| MysqlError::driver(e, "clearing the checkpoints"))
}

/// Forgets the checkpoints of `identity`'s part of its input in `table`.
pub(crate) fn clear_part(
    opts: &Opts,
    table: &str,
    identity: &ImportIdentity,
) -> Result<(), MysqlError> {
    let mut session = checkpoint_session(opts)?;
    let conn = session.conn.driver()?;
    conn.exec_drop(
        "DELETE FROM `ringpipe_checkpoint` WHERE target_table = ? AND input = ? AND part = ?",
        (table, &identity.input, identity.part.index),
    )
    .map_err(|e| MysqlError::driver(e, "clearing the part's checkpoints"))
}

/// Marks every shard of `identity`'s part complete in one statement (a
/// shard that committed nothing gets a row at record 0).
pub(crate) fn mark_complete(
    opts: &Opts,
    table: &str,
    identity: &ImportIdentity,
) -> Result<(), MysqlError> {
    let mut session = checkpoint_session(opts)?;
    let conn = session.conn.driver()?;
    let mut sql = String::from(
        "INSERT INTO `ringpipe_checkpoint` (target_table, input, part, parts, shard, shards, \
         last_record, complete, mapping) VALUES ",
    );
    let mut params: Vec<Value> = Vec::new();
    for shard in 0..identity.shards.max(1) {
        if shard > 0 {
            sql.push_str(", ");
        }
        sql.push_str("(?, ?, ?, ?, ?, ?, 0, TRUE, ?)");
        params.extend([
            table.into(),
            identity.input.as_str().into(),
            identity.part.index.into(),
            identity.part.count.into(),
            shard.into(),
            identity.shards.into(),
            identity.mapping.as_str().into(),
        ]);
    }
    sql.push_str(" ON DUPLICATE KEY UPDATE complete = TRUE");
    conn.exec_drop(sql, params)
        .map_err(|e| MysqlError::driver(e, "marking the import complete"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_statement_escapes_its_strings() {
        let identity = ImportIdentity {
            input: "a'b".into(),
            shards: 2,
            mapping: "m".into(),
            part: Part::new(3, 4).unwrap(),
        };
        let progress = Progress {
            shard: 1,
            region_start: 51,
            last_record: 99,
            records: 7,
            rows_crc: Some(4_000_000_000),
        };
        let sql = record_sql("t", progress, &identity, true);
        assert!(sql.contains("'a''b'"), "{sql}");
        assert!(
            sql.contains(", 3, 4, 1, 2, 51, 99, 7, 4000000000, "),
            "{sql}"
        );
        let unknown = Progress {
            rows_crc: None,
            ..progress
        };
        let sql = record_sql("t", unknown, &identity, true);
        assert!(sql.contains(", 99, 7, NULL, "), "{sql}");
        assert_eq!(
            diverted_sql("t", (&identity, 1), 2, true),
            "UPDATE `ringpipe_checkpoint` SET diverted = diverted + 2 WHERE target_table = 't' \
             AND input = 'a''b' AND part = 3 AND shard = 1"
        );
    }
}
