//! Exactly-once progress: each shard's commit also records how far it got.
//!
//! Every batch a shard commits ends with one upsert into
//! [`CHECKPOINT_TABLE`] *inside the same transaction*, naming the last
//! source record of the batch. Rows and progress therefore commit together
//! or not at all. Because sequence-modulo sharding hands shard `i` exactly
//! the records `r` with `(r - 1) % shards == i`, in order, each shard's
//! committed records are a prefix of its own: a resumed import skips record
//! `r` when `r <= last_record[(r - 1) % shards]`, and nothing is lost or
//! written twice.
//!
//! The same row settles a commit whose outcome is unknown (the connection
//! died during `COMMIT`): after reconnecting, the shard reads its
//! checkpoint; if it already covers the batch, the batch did commit and is
//! not sent again.

use mysql::prelude::Queryable;
use mysql::Conn;

use crate::connect::open;
use crate::escape::push_literal;
use crate::link::{Link, TextQueries};
use crate::{MysqlError, SinkConfig};

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

/// What identifies an import, so that a resume with other input, shard
/// count or mapping is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportIdentity {
    /// The input: path, size and a hash of its first bytes.
    pub input: String,
    /// Number of shards (it decides which records each shard owns).
    pub shards: u32,
    /// Row element, columns, renames and mode, as one string.
    pub mapping: String,
}

/// Where each shard of an interrupted import stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePoint {
    /// Per shard: the last record it committed (0: none).
    pub last_record: Vec<u64>,
}

impl ResumePoint {
    /// Records already committed, over all shards, when shard `s` of `n`
    /// owns the records `r` with `((r - 1) / block) % n == s`.
    pub fn committed(&self, block: u64) -> u64 {
        let shards = self.last_record.len() as u64;
        let owner = |record: u64| ((record - 1) / block.max(1)) % shards;
        // Each shard's committed records are a prefix of its own: count the
        // records up to its last one that it owns.
        (0..shards)
            .map(|shard| {
                let last = self.last_record[shard as usize];
                (1..=last).filter(|&r| owner(r) == shard).count() as u64
            })
            .sum()
    }
}

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

/// Where an interrupted import of `config`'s table stopped, or `None` when
/// there is nothing to resume.
///
/// # Errors
///
/// [`MysqlError::Resume`] when the recorded import differs from `identity`
/// (other input, shard count or mapping); connection failures.
pub fn resume_point(
    config: &SinkConfig,
    identity: &ImportIdentity,
) -> Result<Option<ResumePoint>, MysqlError> {
    let mut session = open(&config.opts()?)?;
    let conn = session.conn.driver()?;
    ensure_table(conn)?;
    let rows: Vec<(u32, u32, u64, String, String)> = conn
        .exec(
            "SELECT shard, shards, last_record, input, mapping FROM `ringpipe_checkpoint` \
             WHERE target_table = ? ORDER BY shard",
            (config.table.as_str(),),
        )
        .map_err(|e| MysqlError::driver(e, "reading the checkpoint"))?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut last_record = vec![0; identity.shards as usize];
    for (shard, shards, last, input, mapping) in rows {
        let differs = |what: &str, was: &str, now: &str| {
            MysqlError::Resume(format!(
                "the interrupted import of {} had {what} {was}, this one has {now}; \
                 rerun without --resume to start over",
                config.table
            ))
        };
        if shards != identity.shards {
            return Err(differs(
                "shard count",
                &shards.to_string(),
                &identity.shards.to_string(),
            ));
        }
        if input != identity.input {
            return Err(differs("input", &input, &identity.input));
        }
        if mapping != identity.mapping {
            return Err(differs("mapping", &mapping, &identity.mapping));
        }
        last_record[shard as usize] = last;
    }
    Ok(Some(ResumePoint { last_record }))
}

/// Forgets the checkpoint of `config`'s table: a finished import clears
/// it, and a fresh (non-resumed) import starts from none.
///
/// # Errors
///
/// Connection failures.
pub fn clear_checkpoint(config: &SinkConfig) -> Result<(), MysqlError> {
    let mut session = open(&config.opts()?)?;
    let conn = session.conn.driver()?;
    ensure_table(conn)?;
    conn.exec_drop(
        "DELETE FROM `ringpipe_checkpoint` WHERE target_table = ?",
        (config.table.as_str(),),
    )
    .map_err(|e| MysqlError::driver(e, "clearing the checkpoint"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_counts_each_shards_prefix() {
        // 3 shards: shard 0 owns 1,4,7,..; shard 1 owns 2,5,..; shard 2 owns 3,6,..
        let point = ResumePoint {
            last_record: vec![7, 2, 0],
        };
        assert_eq!(point.committed(1), 3 + 1);
        // Blocks of 2 over 2 shards: shard 0 owns 1,2,5,6; shard 1 owns 3,4,7,8.
        let point = ResumePoint {
            last_record: vec![5, 4],
        };
        assert_eq!(point.committed(2), 3 + 2);
    }

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
