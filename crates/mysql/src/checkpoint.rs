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

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use ringpipe_pipeline::{ImportIdentity, StoredCheckpoint};

use crate::connect::open;
use crate::escape::push_literal;
use crate::link::{Link, TextQueries};
use crate::MysqlError;

/// The table holding every import's progress, created on demand in the
/// target database.
pub const CHECKPOINT_TABLE: &str = "ringpipe_checkpoint";

const CREATE: &str = "CREATE TABLE IF NOT EXISTS `ringpipe_checkpoint` (
  target_table VARCHAR(64) NOT NULL,
  shard INT NOT NULL,
  shards INT NOT NULL,
  last_record BIGINT NOT NULL,
  input VARCHAR(1024) NOT NULL,
  mapping TEXT NOT NULL,
  updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (target_table, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

/// Creates the checkpoint table if needed.
pub(crate) fn ensure_table(conn: &mut Conn) -> Result<(), MysqlError> {
    conn.query_drop(CREATE)
        .map_err(|e| MysqlError::driver(e, "creating the checkpoint table"))
}

/// The statement recording that `shard` committed through `last_record`.
pub(crate) fn record_sql(
    table: &str,
    shard: usize,
    last_record: u64,
    identity: &ImportIdentity,
    no_backslash_escapes: bool,
) -> String {
    let mut sql = String::from(
        "INSERT INTO `ringpipe_checkpoint` (target_table, shard, shards, last_record, input, mapping) VALUES (",
    );
    push_literal(&mut sql, table, no_backslash_escapes);
    sql.push_str(&format!(", {shard}, {}, {last_record}, ", identity.shards));
    push_literal(&mut sql, &identity.input, no_backslash_escapes);
    sql.push_str(", ");
    push_literal(&mut sql, &identity.mapping, no_backslash_escapes);
    sql.push_str(
        ") ON DUPLICATE KEY UPDATE last_record = VALUES(last_record), shards = VALUES(shards), \
         input = VALUES(input), mapping = VALUES(mapping)",
    );
    sql
}

/// The last record `shard` committed, if it has a checkpoint.
pub(crate) fn committed_through(
    conn: &mut Link,
    table: &str,
    shard: usize,
    no_backslash_escapes: bool,
) -> Result<Option<u64>, MysqlError> {
    let mut sql =
        String::from("SELECT last_record FROM `ringpipe_checkpoint` WHERE target_table = ");
    push_literal(&mut sql, table, no_backslash_escapes);
    sql.push_str(&format!(" AND shard = {shard}"));
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

/// Every checkpoint stored for `table`.
pub(crate) fn stored(opts: &Opts, table: &str) -> Result<Vec<StoredCheckpoint>, MysqlError> {
    let mut session = open(opts)?;
    let conn = session.conn.driver()?;
    ensure_table(conn)?;
    let rows: Vec<(u32, u32, u64, String, String)> = conn
        .exec(
            "SELECT shard, shards, last_record, input, mapping FROM `ringpipe_checkpoint` \
             WHERE target_table = ? ORDER BY shard",
            (table,),
        )
        .map_err(|e| MysqlError::driver(e, "reading the checkpoints"))?;
    let stored = rows
        .into_iter()
        .map(
            |(shard, shards, last_record, input, mapping)| StoredCheckpoint {
                identity: ImportIdentity {
                    input,
                    shards,
                    mapping,
                },
                shard: shard as usize,
                last_record,
            },
        )
        .collect();
    Ok(stored)
}

/// Forgets every checkpoint of `table`.
pub(crate) fn clear(opts: &Opts, table: &str) -> Result<(), MysqlError> {
    let mut session = open(opts)?;
    let conn = session.conn.driver()?;
    ensure_table(conn)?;
    conn.exec_drop(
        "DELETE FROM `ringpipe_checkpoint` WHERE target_table = ?",
        (table,),
    )
    .map_err(|e| MysqlError::driver(e, "clearing the checkpoints"))
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
        };
        let sql = record_sql("t", 1, 99, &identity, true);
        assert!(sql.contains("'a''b'"), "{sql}");
        assert!(sql.contains(", 1, 2, 99, "), "{sql}");
    }
}
