//! The shape of [`CHECKPOINT_TABLE`](crate::CHECKPOINT_TABLE), created on
//! demand, and the migrations of earlier shapes.
//!
//! The same shape as the MySQL sink's: one row per (target table, input,
//! part, shard), so that the parts of one input, and imports of several
//! inputs into one table, never overwrite each other's progress;
//! `region_start` is the first record of the shard's region, which a
//! resume checks its own split against (0: not known); `complete` marks a
//! part that finished (every shard row of it at once), `records` counts
//! the records the shard committed (stored or set aside), `diverted` those
//! set aside as bad, and `rows_crc` the digest of their rows (NULL: not
//! known).

use crate::conn::Conn;
use crate::ident::quote;
use crate::PgError;

/// Creates the checkpoint table `checkpoints` (quoted) if needed, or
/// migrates one of the shape before parts.
pub(crate) fn ensure_table(conn: &mut Conn, checkpoints: &str) -> Result<(), PgError> {
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {checkpoints} (
           target_table text NOT NULL,
           input text NOT NULL,
           part integer NOT NULL DEFAULT 0,
           parts integer NOT NULL DEFAULT 1,
           shard integer NOT NULL,
           shards integer NOT NULL,
           region_start bigint NOT NULL DEFAULT 0,
           last_record bigint NOT NULL,
           records bigint NOT NULL DEFAULT 0,
           diverted bigint NOT NULL DEFAULT 0,
           rows_crc bigint,
           complete boolean NOT NULL DEFAULT false,
           mapping text NOT NULL,
           updated timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (target_table, input, part, shard))"
    );
    match conn.batch_execute(&sql, "creating the checkpoint table") {
        Ok(()) => {}
        // Two imports creating it at once: one of them wins, which is all
        // `IF NOT EXISTS` wanted (unique_violation on pg_type, duplicate_table).
        Err(e) if matches!(e.sqlstate(), Some("23505" | "42P07")) => {}
        Err(e) => return Err(e),
    }
    if !has_column(conn, checkpoints, "part")? {
        migrate(conn, checkpoints)?;
    }
    // The shapes without region starts (their rows get 0, not known),
    // without row digests (NULL, not known) or without counts of bad
    // records (0, not known). Each column is looked up
    // first because the statement locks the table even when it has
    // nothing to do; `IF NOT EXISTS` settles a race with another importer
    // migrating at the same time.
    for (column, definition) in [
        ("region_start", "bigint NOT NULL DEFAULT 0"),
        ("rows_crc", "bigint"),
        ("diverted", "bigint NOT NULL DEFAULT 0"),
    ] {
        if !has_column(conn, checkpoints, column)? {
            conn.batch_execute(
                &format!(
                    "ALTER TABLE {checkpoints} ADD COLUMN IF NOT EXISTS {column} {definition}"
                ),
                "migrating the checkpoint table",
            )?;
        }
    }
    Ok(())
}

/// Whether the table has `column`.
fn has_column(conn: &mut Conn, checkpoints: &str, column: &str) -> Result<bool, PgError> {
    let sql = "SELECT count(*) FROM pg_attribute WHERE attrelid = $1::text::regclass \
               AND attname = $2 AND NOT attisdropped";
    let found: i64 = conn
        .query_one(
            sql,
            &[&checkpoints, &column],
            "reading the checkpoint table's shape",
        )?
        .get(0);
    Ok(found > 0)
}

/// The shape keyed (target_table, shard) turned into the current one in
/// place, in one transaction that holds the table alone (a second importer
/// migrating at the same time waits, then finds it done): its rows become
/// part 0 of 1, not complete.
fn migrate(conn: &mut Conn, checkpoints: &str) -> Result<(), PgError> {
    let context = "migrating the checkpoint table";
    conn.transaction(context, |tx| {
        tx.batch_execute(
            &format!("LOCK TABLE {checkpoints} IN ACCESS EXCLUSIVE MODE"),
            context,
        )?;
        if has_column(tx, checkpoints, "part")? {
            return Ok(());
        }
        let key = tx.query_opt(
            "SELECT conname::text FROM pg_constraint WHERE conrelid = $1::text::regclass \
             AND contype = 'p'",
            &[&checkpoints],
            context,
        )?;
        let drop_key = match key {
            Some(row) => format!("DROP CONSTRAINT {},", quote(row.get(0))?),
            None => String::new(),
        };
        tx.batch_execute(
            &format!(
                "ALTER TABLE {checkpoints} \
                   ADD COLUMN part integer NOT NULL DEFAULT 0, \
                   ADD COLUMN parts integer NOT NULL DEFAULT 1, \
                   ADD COLUMN records bigint NOT NULL DEFAULT 0, \
                   ADD COLUMN complete boolean NOT NULL DEFAULT false, \
                   {drop_key} \
                   ADD PRIMARY KEY (target_table, input, part, shard)"
            ),
            context,
        )
    })
}
