//! ringpipe-mysql: the MySQL/MariaDB end of a ringpipe import.
//!
//! [`MysqlTarget`] is a table as an [`Import`](ringpipe_pipeline::Import)
//! writes it: one [`MysqlSink`] (connection) per shard, and the import's
//! checkpoints in [`CHECKPOINT_TABLE`], committed with the rows.
//!
//! ```no_run
//! use ringpipe_mysql::{Mode, MysqlTarget, SinkConfig, WritePath};
//! use ringpipe_pipeline::Import;
//! # fn regions() -> Vec<ringpipe_xml::XmlSource> { unimplemented!() }
//!
//! let config = SinkConfig::new("mysql://root@127.0.0.1:3306/test", "product", &["id", "name"])
//!     .mode(Mode::Upsert)
//!     .write_path(WritePath::Bulk)
//!     .max_bad(10)
//!     .reject_file("rejects.tsv");
//! let summary = Import::new(MysqlTarget::new(config))
//!     .shards(2)
//!     .checkpoints("products.xml, 1234 bytes", "row=product")
//!     .run(regions())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How a batch is written
//!
//! Each [`MysqlSink`] owns one connection. `write` encodes rows as they
//! arrive; `commit` runs the batch in one transaction (`START TRANSACTION`,
//! the batch's statements, the shard's checkpoint row, `COMMIT`, managed by
//! hand so that a failed `ROLLBACK` is seen). Rows and checkpoint therefore
//! commit together or not at all; after a connection lost during `COMMIT`,
//! the sink reads its checkpoint to learn whether the batch committed.
//! Four [`WritePath`]s produce identical tables: multi-row `INSERT` text,
//! prepared multi-row statements, `LOAD DATA LOCAL INFILE` and MariaDB's
//! bulk protocol. One core owns the connection, the batch, the transaction
//! and the checkpoint; each path's state and statements live in a module of
//! their own beside it. Statements are bounded by `max_allowed_packet`: a
//! big batch becomes several statements in the same transaction.
//!
//! # The bulk path's own client
//!
//! On MariaDB the bulk path does not go through the `mysql` crate, which
//! waits for every reply and binds each value as an owned `Value`: the
//! sink speaks the protocol itself ([`BulkClient::Wire`], the default),
//! on `mysql_common`'s packet types. Each bulk packet is built straight
//! from the batch's text (integers, `DATETIME`s and `DATE`s spelled
//! canonically go in their binary form, which spares the server its string
//! parsers), and the next statement is encoded and sent while
//! the server runs the one before: `START TRANSACTION` and the first
//! statement leave from `write`, the rest and the checkpoint from `commit`,
//! and `COMMIT` only after every reply was OK. The session runs with
//! `autocommit=0`, so a statement sent behind a failure can never commit
//! on its own. Where it cannot serve a connection (TLS, compression, an
//! authentication plugin other than `mysql_native_password` and
//! `client_ed25519`) the sink uses the driver; [`MysqlSink::client`] says
//! which one a sink got. The client checks every length, count and
//! sequence number the server sends before using it (a violation is
//! [`MysqlError::Protocol`]); `SECURITY.md` says what else it defends
//! against.
//!
//! # Safety of the data
//!
//! The session's `sql_mode` gains `STRICT_TRANS_TABLES`, and after every
//! statement that reports warnings the sink reads `SHOW WARNINGS`: any
//! warning other than a `Note` (or a duplicate in [`Mode::Ignore`]) is an
//! error, and `LOAD DATA` must report exactly the rows it was sent. So a bad
//! value never silently becomes 0 or NULL, even on the paths (LOCAL,
//! IGNORE) that downgrade errors to warnings. A value the server would
//! store altered without a warning is refused before it is sent, with its
//! column (the sink's `check` module). One spelling the server refuses is
//! taken instead: `true` and `false`, in any case, into a `BOOLEAN`
//! (`TINYINT(1)`) or `BIT(1)` column, as 1 and 0 (the `encode::boolean`
//! module).
//!
//! # Errors, retries and bad records
//!
//! [`MysqlError`] says whether a replay can succeed
//! ([`Retryable::is_retryable`](ringpipe_pipeline::Retryable)):
//! deadlocks, lock timeouts, lost connections, shutdown and read-only
//! failover are; the pipeline then calls `rollback` and replays the batch,
//! and the sink reconnects if needed (after a read-only error too, so
//! that a proxy or a moved address can take the new session to the new
//! primary). A data error (bad value, duplicate
//! key in [`Mode::Insert`]) makes the sink search the batch for the bad
//! record(s) by bisection under savepoints; up to `max_bad` of them (over
//! all shards) go to the reject file and the rest of the batch commits;
//! beyond that the error names the record (number, line, column).
//!
//! # Choosing a write path
//!
//! Insert, Prepared and Bulk send at most 2,000 rows per statement
//! ([`SinkConfig::max_rows_per_statement`]; Prepared cuts chunks to powers
//! of two, so that few statement shapes are prepared), LoadData one
//! statement per batch. [`WritePath::default`] is `Bulk`: it needs neither
//! `local_infile` (often disabled) nor the warning checks LOCAL makes
//! necessary, because a bad value fails the statement outright, and it was
//! the fastest path in the measured runs. On MySQL it falls back to
//! `Prepared`. The measured figures, with their command, date and machine,
//! are in `docs/benchmarks.md` ("MySQL write paths").

mod batch;
mod check;
mod checkpoint;
mod checkpoint_table;
mod config;
mod connect;
mod doctor;
mod encode;
mod error;
mod escape;
mod ident;
mod link;
mod prepare;
mod prepared;
mod redact;
mod reject;
mod schema;
mod shared;
mod sink;
mod statement;
mod stats;
mod target;
mod warnings;
mod wire;

pub use checkpoint::{checkpoint_rows, ShardCheckpoint, CHECKPOINT_TABLE};
pub use config::{
    BulkClient, Mode, SinkConfig, WritePath, DEFAULT_CONNECT_TIMEOUT, DEFAULT_NET_TIMEOUT,
};
pub use doctor::doctor;
pub use error::{codes, MysqlError};
pub use ident::Ident;
pub use prepare::{prepare, PreparedTarget};
pub use redact::redact_url;
pub use ringpipe_pipeline::{DoctorReport, Finding, Recoveries, Severity};
pub use schema::{execute, key_columns, table_columns};
pub use sink::MysqlSink;
pub use stats::{ServerStats, SinkStats};
pub use target::MysqlTarget;
/// The wire client against arbitrary server bytes, for the fuzz target.
#[cfg(all(unix, any(test, feature = "fuzzing")))]
#[doc(hidden)]
pub use wire::fuzz as wire_fuzz;
