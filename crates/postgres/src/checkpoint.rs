//! Exactly-once progress: each batch's transaction also records how far
//! its shard got, in [`CHECKPOINT_TABLE`] in the target table's schema
//! (shape: [`checkpoint_table`](crate::checkpoint_table)).
//!
//! After a commit whose outcome is unknown (the connection died during
//! `COMMIT`), the sink reads its row: if it already covers the batch, the
//! batch did commit and is not written again. A finished import (part)
//! marks its rows complete instead of deleting them, so that a repeated
//! `--resume` knows it has nothing to do; a fresh import of the whole input
//! deletes every row of its table, a fresh part import only its part's.

use postgres::types::ToSql;
use ringpipe_pipeline::{ImportIdentity, Part, StoredCheckpoint};

use crate::checkpoint_table::ensure_table;
use crate::conn::Conn;
use crate::ident::{quote, split_table};
use crate::{PgConfig, PgError};

/// The table holding every import's progress, created on demand.
pub const CHECKPOINT_TABLE: &str = "ringpipe_checkpoint";

/// The checkpoint table's quoted name, in `table`'s schema.
pub fn table_name(table: &str) -> Result<String, PgError> {
    Ok(match split_table(table) {
        (Some(schema), _) => format!("{}.{}", quote(schema)?, quote(CHECKPOINT_TABLE)?),
        (None, _) => quote(CHECKPOINT_TABLE)?,
    })
}

/// A connection as `config` describes it on which the checkpoint table of
/// its table exists in its current shape, and that table's quoted name.
pub(crate) fn session(config: &PgConfig) -> Result<(Conn, String), PgError> {
    let mut conn = Conn::open(config)?;
    let checkpoints = table_name(&config.table)?;
    ensure_table(&mut conn, &checkpoints)?;
    Ok((conn, checkpoints))
}

/// The upsert recording a shard's progress: parameters target_table,
/// input, part, parts, shard, shards, last_record, records (of this
/// batch), mapping, region_start, rows_crc.
///
/// It changes nothing (0 rows) when the stored checkpoint already reaches
/// `last_record`. It also waits for any transaction still writing the
/// same checkpoint row (an update, or the insert of a shard's first
/// checkpoint) to end, so it tells whether a batch whose `COMMIT` went
/// unanswered landed even while that `COMMIT` is still under way, which a
/// plain read would not see.
pub fn record_sql(checkpoints: &str) -> String {
    format!(
        "INSERT INTO {checkpoints} AS c (target_table, input, part, parts, shard, shards, \
         last_record, records, mapping, region_start, rows_crc) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (target_table, input, part, shard) DO UPDATE SET \
         last_record = EXCLUDED.last_record, records = c.records + EXCLUDED.records, \
         parts = EXCLUDED.parts, shards = EXCLUDED.shards, mapping = EXCLUDED.mapping, \
         region_start = EXCLUDED.region_start, rows_crc = EXCLUDED.rows_crc, \
         updated = now() WHERE c.last_record < EXCLUDED.last_record"
    )
}

/// The update adding a batch's bad records to its shard's checkpoint, in
/// the batch's transaction after [`record_sql`]: parameters target_table,
/// input, part, shard, the count.
pub fn diverted_sql(checkpoints: &str) -> String {
    format!(
        "UPDATE {checkpoints} SET diverted = diverted + $5 \
         WHERE target_table = $1 AND input = $2 AND part = $3 AND shard = $4"
    )
}

/// One row of the checkpoint table: a shard of a part of an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardCheckpoint {
    /// The checkpoint as the import reads it back.
    pub checkpoint: StoredCheckpoint,
    /// Records the shard committed (stored or set aside as bad).
    pub records: u64,
}

/// Every checkpoint stored for `table` on the server at `url`, by input,
/// part and shard (what `ringpipe status` shows).
///
/// # Errors
///
/// When the server cannot be reached or the table read.
pub fn checkpoint_rows(url: &str, table: &str) -> Result<Vec<ShardCheckpoint>, PgError> {
    let (mut conn, checkpoints) = session(&PgConfig::new(url, table, &[]))?;
    rows(&mut conn, &checkpoints, table, Read::Plain)
}

/// How [`rows`] reads the checkpoint table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// What is committed now (for display).
    Plain,
    /// A read after every transaction still writing the checkpoint table
    /// has ended ([`after_writers`]), for a resume: a plain read would
    /// answer from before a batch of a killed import still committing, and
    /// the resume would later meet its checkpoint as another import's.
    /// Every batch's transaction writes its checkpoint row first, before
    /// its `COMMIT` can be sent.
    Locking,
}

/// Every checkpoint stored for `table`.
pub(crate) fn rows(
    conn: &mut Conn,
    checkpoints: &str,
    table: &str,
    read: Read,
) -> Result<Vec<ShardCheckpoint>, PgError> {
    let sql = format!(
        "SELECT input, part, parts, shard, shards, last_record, records, complete, mapping, \
         region_start, rows_crc, diverted FROM {checkpoints} WHERE target_table = $1 \
         ORDER BY input, part, shard"
    );
    let what = "reading the checkpoints";
    let rows = match read {
        Read::Plain => conn.query(&sql, &[&table], what)?,
        Read::Locking => after_writers(conn, checkpoints, TableLock::ToRead, what, |conn| {
            conn.query(&sql, &[&table], what)
        })?,
    };
    // A number out of its column's range (hand-edited) is refused, as the
    // MySQL sink's unsigned reads refuse it: a negative `last_record` read
    // as 0 would mean "nothing committed", a digest read as "not known"
    // would turn the resume's check off.
    let bad = |row: &postgres::Row, column: &str, value: i64| {
        PgError::Config(format!(
            "the checkpoint of shard {} of {:?} holds {column} {value}, out of range",
            row.get::<_, i32>(3),
            row.get::<_, String>(0)
        ))
    };
    let number = |row: &postgres::Row, i: usize, column: &str| {
        let value: i32 = row.get(i);
        u32::try_from(value).map_err(|_| bad(row, column, value.into()))
    };
    let wide = |row: &postgres::Row, i: usize, column: &str| {
        let value: i64 = row.get(i);
        u64::try_from(value).map_err(|_| bad(row, column, value))
    };
    let digest = |row: &postgres::Row| match row.get::<_, Option<i64>>(10) {
        None => Ok(None),
        Some(crc) => u32::try_from(crc)
            .map(Some)
            .map_err(|_| bad(row, "rows_crc", crc)),
    };
    rows.iter()
        .map(|row| {
            Ok(ShardCheckpoint {
                checkpoint: StoredCheckpoint {
                    identity: ImportIdentity {
                        input: row.get(0),
                        part: Part {
                            index: number(row, 1, "part")?,
                            count: number(row, 2, "parts")?,
                        },
                        shards: number(row, 4, "shards")?,
                        mapping: row.get(8),
                    },
                    shard: number(row, 3, "shard")? as usize,
                    last_record: wide(row, 5, "last_record")?,
                    region_start: wide(row, 9, "region_start")?,
                    rows_crc: digest(row)?,
                    complete: row.get(7),
                    diverted: wide(row, 11, "diverted")?,
                },
                records: wide(row, 6, "records")?,
            })
        })
        .collect()
}

/// Forgets every checkpoint of `table`.
pub(crate) fn clear(conn: &mut Conn, checkpoints: &str, table: &str) -> Result<(), PgError> {
    let sql = format!("DELETE FROM {checkpoints} WHERE target_table = $1");
    let what = "clearing the checkpoints";
    after_writers(conn, checkpoints, TableLock::ToDelete, what, |conn| {
        conn.execute(&sql, &[&table], what).map(drop)
    })
}

/// Forgets the checkpoints of `identity`'s part of its input in `table`.
pub(crate) fn clear_part(
    conn: &mut Conn,
    checkpoints: &str,
    table: &str,
    identity: &ImportIdentity,
) -> Result<(), PgError> {
    let sql =
        format!("DELETE FROM {checkpoints} WHERE target_table = $1 AND input = $2 AND part = $3");
    let params: [&(dyn ToSql + Sync); 3] = [&table, &identity.input, &(identity.part.index as i32)];
    let what = "clearing the part's checkpoints";
    after_writers(conn, checkpoints, TableLock::ToDelete, what, |conn| {
        conn.execute(&sql, &params, what).map(drop)
    })
}

/// The lock [`after_writers`] takes on the checkpoint table: each
/// conflicts with `ROW EXCLUSIVE`, which every transaction that wrote a
/// row of the table holds until it ends.
#[derive(Debug, Clone, Copy)]
enum TableLock {
    /// `SHARE`: other readers go on.
    ToRead,
    /// `SHARE ROW EXCLUSIVE`: one deleter at a time.
    ToDelete,
}

/// Runs `work` in a transaction once every transaction still writing the
/// checkpoint table has ended, holding the table in `lock`, which also
/// keeps new writers out until `work` is done. A batch of a killed import
/// may still be committing on a connection the server has not yet seen
/// close; a row lock would not wait for its shard's first checkpoint row,
/// an insert nobody else sees until it commits.
fn after_writers<T>(
    conn: &mut Conn,
    checkpoints: &str,
    lock: TableLock,
    what: &str,
    work: impl FnOnce(&mut Conn) -> Result<T, PgError>,
) -> Result<T, PgError> {
    let mode = match lock {
        TableLock::ToRead => "SHARE",
        TableLock::ToDelete => "SHARE ROW EXCLUSIVE",
    };
    conn.transaction(what, |conn| {
        conn.batch_execute(
            &format!("LOCK TABLE {checkpoints} IN {mode} MODE"),
            "waiting for batches still committing",
        )?;
        work(conn)
    })
}

/// Marks every shard of `identity`'s part complete in one statement (a
/// shard that committed nothing gets a row at record 0).
pub(crate) fn mark_complete(
    conn: &mut Conn,
    checkpoints: &str,
    table: &str,
    identity: &ImportIdentity,
) -> Result<(), PgError> {
    let sql = format!(
        "INSERT INTO {checkpoints} (target_table, input, part, parts, shard, shards, \
         last_record, complete, mapping) \
         SELECT $1, $2, $3, $4, s, $5, 0, true, $6 FROM generate_series(0, $5 - 1) AS s \
         ON CONFLICT (target_table, input, part, shard) DO UPDATE SET complete = true"
    );
    let shards = identity.shards.max(1) as i32;
    let params: [&(dyn ToSql + Sync); 6] = [
        &table,
        &identity.input,
        &(identity.part.index as i32),
        &(identity.part.count as i32),
        &shards,
        &identity.mapping,
    ];
    conn.execute(&sql, &params, "marking the import complete")
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lives_in_the_target_schema() {
        assert_eq!(table_name("t").unwrap(), "\"ringpipe_checkpoint\"");
        assert_eq!(table_name("s.t").unwrap(), "\"s\".\"ringpipe_checkpoint\"");
    }
}
