//! The checkpoint table: a table of the shape before parts is migrated in
//! place (rows kept, primary key kept), ends identical to a new one, and
//! parts keep their checkpoints apart. Runs in databases of its own, since
//! the table's name is fixed.

use mysql::prelude::Queryable;
use ringpipe_mysql::{checkpoint_rows, MysqlTarget, ShardCheckpoint, SinkConfig};
use ringpipe_pipeline::{ImportIdentity, Part, Target};

use crate::common::{conn, url};

/// The checkpoint table as it was before parts.
const OLD_SHAPE: &str = "CREATE TABLE `ringpipe_checkpoint` (
  target_table VARCHAR(64) NOT NULL,
  shard INT NOT NULL,
  shards INT NOT NULL,
  last_record BIGINT NOT NULL,
  input VARCHAR(1024) NOT NULL,
  mapping TEXT NOT NULL,
  updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (target_table, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

/// The checkpoint table with parts, before region starts were kept.
const PARTS_SHAPE: &str = "CREATE TABLE `ringpipe_checkpoint` (
  target_table VARCHAR(64) NOT NULL,
  input VARCHAR(255) NOT NULL,
  part INT NOT NULL DEFAULT 0,
  parts INT NOT NULL DEFAULT 1,
  shard INT NOT NULL,
  shards INT NOT NULL,
  last_record BIGINT NOT NULL,
  records BIGINT NOT NULL DEFAULT 0,
  complete BOOLEAN NOT NULL DEFAULT FALSE,
  mapping TEXT NOT NULL,
  updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (target_table, input, part, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

/// A database of its own, dropped when the guard is.
struct Database(String);

impl Database {
    fn fresh(name: &str) -> Database {
        let mut c = conn();
        c.query_drop(format!("DROP DATABASE IF EXISTS `{name}`"))
            .unwrap();
        c.query_drop(format!("CREATE DATABASE `{name}`")).unwrap();
        Database(name.to_owned())
    }

    /// The test server's URL with this database.
    fn url(&self) -> String {
        let base = url();
        let (server, _) = base.rsplit_once('/').unwrap();
        format!("{server}/{}", self.0)
    }

    /// The checkpoint table's columns and key, as the server describes them.
    fn shape(&self) -> Vec<(String, String, String, Option<String>)> {
        conn()
            .exec(
                "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY, COLUMN_DEFAULT \
                 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? \
                 AND TABLE_NAME = 'ringpipe_checkpoint' ORDER BY ORDINAL_POSITION",
                (&self.0,),
            )
            .unwrap()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = conn().query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.0));
    }
}

fn identity(part: Part, input: &str) -> ImportIdentity {
    ImportIdentity {
        input: input.into(),
        shards: 2,
        mapping: "m".into(),
        part,
    }
}

/// A checkpoint table created as `shape` and filled by `rows`, in database
/// `name`, read through the sink (which migrates it): checked to end with
/// the shape of a new table, and returned with what it read.
fn migrated(name: &str, shape: &str, rows: &str) -> (Database, Vec<ShardCheckpoint>) {
    let old = Database::fresh(&format!("{name}_old"));
    let new = Database::fresh(&format!("{name}_new"));
    let mut c = conn();
    c.query_drop(format!("USE `{}`", old.0)).unwrap();
    c.query_drop(shape).unwrap();
    c.query_drop(rows).unwrap();
    let read = checkpoint_rows(&old.url(), "t").unwrap();
    checkpoint_rows(&new.url(), "t").unwrap();
    assert_eq!(old.shape(), new.shape(), "migrated and new tables differ");
    (old, read)
}

#[test]
fn a_checkpoint_table_of_the_old_shape_is_migrated_in_place() {
    let (old, migrated) = migrated(
        "ringpipe_parts_migrate",
        OLD_SHAPE,
        "INSERT INTO ringpipe_checkpoint (target_table, shard, shards, last_record, input, mapping) \
         VALUES ('t', 0, 2, 600, '10 bytes, crc32 1/2', 'm'), ('t', 1, 2, 300, '10 bytes, crc32 1/2', 'm')",
    );
    let key: Vec<String> = old
        .shape()
        .into_iter()
        .filter(|c| c.2 == "PRI")
        .map(|c| c.0)
        .collect();
    assert_eq!(key, ["target_table", "input", "part", "shard"]);
    let lasts: Vec<(usize, u64, Part, bool)> = migrated
        .iter()
        .map(|r| {
            let c = &r.checkpoint;
            (c.shard, c.last_record, c.identity.part, c.complete)
        })
        .collect();
    assert_eq!(
        lasts,
        [(0, 600, Part::WHOLE, false), (1, 300, Part::WHOLE, false)]
    );
    // A second look (another importer starting) finds it migrated.
    assert_eq!(checkpoint_rows(&old.url(), "t").unwrap(), migrated);
}

#[test]
fn a_checkpoint_table_without_region_starts_gains_them_as_not_known() {
    let (db, migrated) = migrated(
        "ringpipe_region_start",
        PARTS_SHAPE,
        "INSERT INTO ringpipe_checkpoint (target_table, input, shard, shards, last_record, mapping) \
         VALUES ('t', 'in', 1, 2, 77, 'm')",
    );
    let c = &migrated[0].checkpoint;
    assert_eq!((c.shard, c.last_record, c.region_start), (1, 77, 0));
    assert_eq!(c.rows_crc, None, "not known before digests were kept");
    assert_eq!(c.diverted, 0, "not known before bad records were counted");
    // A digest no CRC-32 has is refused, not read as "not known".
    let mut c = conn();
    c.query_drop(format!("USE `{}`", db.0)).unwrap();
    c.query_drop("UPDATE ringpipe_checkpoint SET rows_crc = 8589934592")
        .unwrap();
    let error = checkpoint_rows(&db.url(), "t").unwrap_err();
    assert!(error.to_string().contains("no digest has"), "{error}");
    // So is a negative record number, which read as 0 would mean "nothing
    // committed" (and which the driver's typed read panics on).
    c.query_drop("UPDATE ringpipe_checkpoint SET rows_crc = NULL, last_record = -5")
        .unwrap();
    let error = checkpoint_rows(&db.url(), "t").unwrap_err();
    assert!(error.to_string().contains("out of range"), "{error}");
}

#[test]
fn parts_are_cleared_and_completed_apart() {
    let db = Database::fresh("ringpipe_parts_apart");
    let target = MysqlTarget::new(SinkConfig::new(db.url(), "t", &["id"]));
    let (p0, p1) = (Part::new(0, 2).unwrap(), Part::new(1, 2).unwrap());
    target.mark_complete(&identity(p0, "a")).unwrap();
    target.mark_complete(&identity(p1, "a")).unwrap();
    target.mark_complete(&identity(p1, "b")).unwrap();
    target.clear_part(&identity(p1, "a")).unwrap();
    let left: Vec<(String, u32, usize, bool)> = target
        .checkpoints()
        .unwrap()
        .into_iter()
        .map(|c| (c.identity.input, c.identity.part.index, c.shard, c.complete))
        .collect();
    let expected = [
        ("a".to_owned(), 0, 0, true),
        ("a".to_owned(), 0, 1, true),
        ("b".to_owned(), 1, 0, true),
        ("b".to_owned(), 1, 1, true),
    ];
    assert_eq!(left, expected);
    target.clear_checkpoints().unwrap();
    assert!(target.checkpoints().unwrap().is_empty());
}
