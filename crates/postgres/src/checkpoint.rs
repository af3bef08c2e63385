//! Exactly-once progress: each batch's transaction also records how far
//! its shard got, in [`CHECKPOINT_TABLE`] in the target table's schema.
//!
//! The row has the same shape and key as the MySQL sink's: `(target_table,
//! shard)` and the identity (input, shards, mapping) of the import that
//! wrote it. After a commit whose outcome is unknown (the connection died
//! during `COMMIT`), the sink reads its row: if it already covers the
//! batch, the batch did commit and is not written again.

use postgres::Client;
use ringpipe_pipeline::{ImportIdentity, Part, StoredCheckpoint};

use crate::ident::{quote, split_table};
use crate::PgError;

/// The table holding every import's progress, created on demand.
pub const CHECKPOINT_TABLE: &str = "ringpipe_checkpoint";

/// The checkpoint table's quoted name, in `table`'s schema.
pub fn table_name(table: &str) -> Result<String, PgError> {
    Ok(match split_table(table) {
        (Some(schema), _) => format!("{}.{}", quote(schema)?, quote(CHECKPOINT_TABLE)?),
        (None, _) => quote(CHECKPOINT_TABLE)?,
    })
}

/// Creates the checkpoint table if needed.
pub fn ensure_table(client: &mut Client, checkpoints: &str) -> Result<(), PgError> {
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {checkpoints} (
           target_table text NOT NULL,
           shard integer NOT NULL,
           shards integer NOT NULL,
           last_record bigint NOT NULL,
           input text NOT NULL,
           mapping text NOT NULL,
           updated timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (target_table, shard))"
    );
    match client.batch_execute(&sql) {
        Ok(()) => Ok(()),
        // Two imports creating it at once: one of them wins, which is all
        // `IF NOT EXISTS` wanted (unique_violation on pg_type, duplicate_table).
        Err(e) if matches!(e.code().map(|c| c.code()), Some("23505" | "42P07")) => Ok(()),
        Err(e) => Err(PgError::server(e, "creating the checkpoint table")),
    }
}

/// The upsert recording a shard's progress: parameters target_table,
/// shard, shards, last_record, input, mapping.
pub fn record_sql(checkpoints: &str) -> String {
    format!(
        "INSERT INTO {checkpoints} (target_table, shard, shards, last_record, input, mapping) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (target_table, shard) DO UPDATE SET \
         shards = EXCLUDED.shards, last_record = EXCLUDED.last_record, \
         input = EXCLUDED.input, mapping = EXCLUDED.mapping, updated = now()"
    )
}

/// The last record `shard` committed for `table`, if it has a checkpoint.
pub fn committed_through(
    client: &mut Client,
    checkpoints: &str,
    table: &str,
    shard: usize,
) -> Result<Option<u64>, PgError> {
    let sql =
        format!("SELECT last_record FROM {checkpoints} WHERE target_table = $1 AND shard = $2");
    let row = client
        .query_opt(&sql, &[&table, &(shard as i32)])
        .map_err(|e| PgError::server(e, "reading the checkpoint"))?;
    Ok(row.map(|row| row.get::<_, i64>(0) as u64))
}

/// Every checkpoint stored for `table`.
pub fn stored(
    client: &mut Client,
    checkpoints: &str,
    table: &str,
) -> Result<Vec<StoredCheckpoint>, PgError> {
    ensure_table(client, checkpoints)?;
    let sql = format!(
        "SELECT shard, shards, last_record, input, mapping FROM {checkpoints} \
         WHERE target_table = $1 ORDER BY shard"
    );
    let rows = client
        .query(&sql, &[&table])
        .map_err(|e| PgError::server(e, "reading the checkpoints"))?;
    Ok(rows
        .into_iter()
        .map(|row| StoredCheckpoint {
            identity: ImportIdentity {
                input: row.get(3),
                shards: row.get::<_, i32>(1) as u32,
                mapping: row.get(4),
                // Keyed (target_table, shard): no parts, no completion
                // marker yet (see docs/scale-out.md for the MySQL shape).
                part: Part::WHOLE,
            },
            shard: row.get::<_, i32>(0) as usize,
            last_record: row.get::<_, i64>(2) as u64,
            complete: false,
        })
        .collect())
}

/// Forgets every checkpoint of `table`.
pub fn clear(client: &mut Client, checkpoints: &str, table: &str) -> Result<(), PgError> {
    ensure_table(client, checkpoints)?;
    let sql = format!("DELETE FROM {checkpoints} WHERE target_table = $1");
    client
        .execute(&sql, &[&table])
        .map(drop)
        .map_err(|e| PgError::server(e, "clearing the checkpoints"))
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
