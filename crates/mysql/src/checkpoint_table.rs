//! The shape of [`CHECKPOINT_TABLE`](crate::CHECKPOINT_TABLE), created on
//! demand, and the migrations of earlier shapes.
//!
//! One row per (target table, input, part, shard): the input (its
//! fingerprint) and the part index are in the key, so the parts of one
//! input, and imports of several inputs into one table, never overwrite
//! each other's progress. `region_start` is the first record of the
//! shard's region, which a resume checks its own split against (0: not
//! known). `complete` marks a part that finished (every shard row of it is
//! set at once); `records` counts the records the shard committed,
//! `diverted` those of them it set aside as bad, and `rows_crc` is the
//! digest of their rows (NULL: not known). The
//! table keeps a primary key through every shape (Galera replicates only
//! tables with one).

use mysql::prelude::Queryable;
use mysql::Conn;

use crate::MysqlError;

/// The current shape. `input` is at most 255 characters so that the key
/// fits InnoDB's limit; the fingerprints of files are about 40.
const CREATE: &str = "CREATE TABLE IF NOT EXISTS `ringpipe_checkpoint` (
  target_table VARCHAR(64) NOT NULL,
  input VARCHAR(255) NOT NULL,
  part INT NOT NULL DEFAULT 0,
  parts INT NOT NULL DEFAULT 1,
  shard INT NOT NULL,
  shards INT NOT NULL,
  region_start BIGINT NOT NULL DEFAULT 0,
  last_record BIGINT NOT NULL,
  records BIGINT NOT NULL DEFAULT 0,
  diverted BIGINT NOT NULL DEFAULT 0,
  rows_crc BIGINT NULL,
  complete BOOLEAN NOT NULL DEFAULT FALSE,
  mapping TEXT NOT NULL,
  updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (target_table, input, part, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

/// The shape before parts, keyed (target_table, shard), turned into the
/// current one in place: its rows become part 0 of 1, not complete. An
/// input longer than the new column is cut (it then no longer matches,
/// and a resume of it is refused as another input).
const MIGRATE: [&str; 2] = [
    "UPDATE `ringpipe_checkpoint` SET input = LEFT(input, 255) WHERE CHAR_LENGTH(input) > 255",
    "ALTER TABLE `ringpipe_checkpoint`
       MODIFY input VARCHAR(255) NOT NULL AFTER target_table,
       ADD COLUMN part INT NOT NULL DEFAULT 0 AFTER input,
       ADD COLUMN parts INT NOT NULL DEFAULT 1 AFTER part,
       ADD COLUMN records BIGINT NOT NULL DEFAULT 0 AFTER last_record,
       ADD COLUMN complete BOOLEAN NOT NULL DEFAULT FALSE AFTER records,
       DROP PRIMARY KEY,
       ADD PRIMARY KEY (target_table, input, part, shard)",
];

/// The shape with parts but without region starts: its rows get 0 (not
/// known). MySQL has no `ADD COLUMN IF NOT EXISTS`, so the column is
/// looked up first.
const ADD_REGION_START: &str = "ALTER TABLE `ringpipe_checkpoint`
       ADD COLUMN region_start BIGINT NOT NULL DEFAULT 0 AFTER shards";

/// The shape without row digests: its rows get NULL (not known).
const ADD_ROWS_CRC: &str = "ALTER TABLE `ringpipe_checkpoint`
       ADD COLUMN rows_crc BIGINT NULL AFTER records";

/// The shape without counts of bad records: its rows get 0 (not known).
const ADD_DIVERTED: &str = "ALTER TABLE `ringpipe_checkpoint`
       ADD COLUMN diverted BIGINT NOT NULL DEFAULT 0 AFTER records";

/// Creates the checkpoint table if needed, or migrates one of an earlier
/// shape.
pub(crate) fn ensure_table(conn: &mut Conn) -> Result<(), MysqlError> {
    conn.query_drop(CREATE)
        .map_err(|e| MysqlError::driver(e, "creating the checkpoint table"))?;
    if !has_column(conn, "part")? {
        migrate(conn, &MIGRATE, "part")?;
    }
    if !has_column(conn, "region_start")? {
        migrate(conn, &[ADD_REGION_START], "region_start")?;
    }
    if !has_column(conn, "rows_crc")? {
        migrate(conn, &[ADD_ROWS_CRC], "rows_crc")?;
    }
    if !has_column(conn, "diverted")? {
        migrate(conn, &[ADD_DIVERTED], "diverted")?;
    }
    Ok(())
}

/// Runs the statements of one migration, which adds `column`.
fn migrate(conn: &mut Conn, statements: &[&str], column: &str) -> Result<(), MysqlError> {
    match statements.iter().try_for_each(|sql| conn.query_drop(sql)) {
        Ok(()) => Ok(()),
        // Another importer starting at the same time migrated it first.
        Err(_) if has_column(conn, column)? => Ok(()),
        Err(e) => Err(MysqlError::driver(e, "migrating the checkpoint table")),
    }
}

/// Whether the checkpoint table has `column`.
fn has_column(conn: &mut Conn, column: &str) -> Result<bool, MysqlError> {
    let found: Option<u64> = conn
        .exec_first(
            "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = 'ringpipe_checkpoint' AND COLUMN_NAME = ?",
            (column,),
        )
        .map_err(|e| MysqlError::driver(e, "reading the checkpoint table's shape"))?;
    Ok(found.unwrap_or(0) > 0)
}
