//! ringpipe-mysql: the MySQL/MariaDB end of a ringpipe import.
//!
//! ```no_run
//! use ringpipe_mysql::{prepare, Mode, SinkConfig, WritePath};
//! use ringpipe_pipeline::{Checkpoint, Row, Sink};
//!
//! let config = SinkConfig::new("mysql://root@127.0.0.1:3306/test", "product", &["id", "name"])
//!     .mode(Mode::Upsert)
//!     .write_path(WritePath::Insert)
//!     .max_bad(10)
//!     .reject_file("rejects.tsv");
//! // Once per import: schema check, truncate, reject file.
//! let target = prepare(&config)?;
//! // One sink per shard, each on its own thread in a real pipeline.
//! let mut sink = target.connect_sink(0)?;
//! let mut row = Row::with_columns(2);
//! row.set(0, "1");
//! row.set(1, "café");
//! sink.write(&row)?; // encoded now
//! // One transaction, executed and committed here (an `Import` passes
//! // its checkpoint, which commits with the rows).
//! sink.commit(&Checkpoint { import: None, shard: 0, last_record: 1 })?;
//! sink.close()?;
//! # Ok::<(), ringpipe_mysql::MysqlError>(())
//! ```
//!
//! # How a batch is written
//!
//! Each [`MysqlSink`] owns one connection. `write` encodes rows as they
//! arrive; `commit` runs the batch in one transaction (`START TRANSACTION` …
//! `COMMIT`, managed by hand so that a failed `ROLLBACK` is seen). Four
//! [`WritePath`]s produce identical tables: multi-row `INSERT` text,
//! prepared multi-row statements, `LOAD DATA LOCAL INFILE` and MariaDB's
//! bulk protocol. Statements are bounded by `max_allowed_packet`: a big
//! batch becomes several statements in the same transaction.
//!
//! # The bulk path's own client
//!
//! On MariaDB the bulk path does not go through the `mysql` crate, which
//! waits for every reply and binds each value as an owned `Value`: the
//! sink speaks the protocol itself ([`BulkClient::Wire`], the default),
//! on `mysql_common`'s packet types. Each bulk packet is built straight
//! from the batch's text, and the next statement is encoded and sent while
//! the server runs the one before: `START TRANSACTION` and the first
//! statement leave from `write`, the rest and the checkpoint from `commit`,
//! and `COMMIT` only after every reply was OK. The session runs with
//! `autocommit=0`, so a statement sent behind a failure can never commit
//! on its own. Where it cannot serve a connection (TLS, compression, an
//! authentication plugin other than `mysql_native_password`) the sink uses
//! the driver; [`MysqlSink::client`] says which one a sink got.
//!
//! # Safety of the data
//!
//! The session's `sql_mode` gains `STRICT_TRANS_TABLES`, and after every
//! statement that reports warnings the sink reads `SHOW WARNINGS`: any
//! warning other than a `Note` (or a duplicate in [`Mode::Ignore`]) is an
//! error, and `LOAD DATA` must report exactly the rows it was sent. So a bad
//! value never silently becomes 0 or NULL, even on the paths (LOCAL,
//! IGNORE) that downgrade errors to warnings.
//!
//! # Errors, retries and bad records
//!
//! [`MysqlError`] says whether a replay can succeed
//! ([`Retryable::is_retryable`](ringpipe_pipeline::Retryable)):
//! deadlocks, lock timeouts, lost connections, shutdown and read-only
//! failover are; the pipeline then calls `rollback` and replays the batch,
//! and the sink reconnects if needed. A data error (bad value, duplicate
//! key in [`Mode::Insert`]) makes the sink search the batch for the bad
//! record(s) by bisection under savepoints; up to `max_bad` of them (over
//! all shards) go to the reject file and the rest of the batch commits;
//! beyond that the error names the record (number, line, column).
//!
//! # Measured write paths
//!
//! `RINGPIPE_BENCH_ROWS=1000000 cargo bench -p ringpipe-mysql --bench
//! write_paths` (2026-12-02, 01:39 UTC): 1M catalogue rows (9 columns, 2
//! secondary indexes), batches of 5,000, MariaDB 10.11 on the same 2-vCPU
//! machine, one round (runs here vary by ±15% between minutes):
//!
//! | path                     | 1 connection   | ratio | 2 connections  | ratio |
//! |--------------------------|---------------:|------:|---------------:|------:|
//! | Insert                   |  73.6k rows/s  |  1.00 | 141.8k rows/s  |  1.93 |
//! | Prepared                 |  86.8k rows/s  |  1.18 | 137.2k rows/s  |  1.86 |
//! | LoadData                 |  99.5k rows/s  |  1.35 | 172.5k rows/s  |  2.34 |
//! | Bulk (wire client)       | 166.0k rows/s  |  2.26 | 206.5k rows/s  |  2.81 |
//! | Bulk via the mysql crate | 120.1k rows/s  |  1.63 | 173.7k rows/s  |  2.36 |
//!
//! Every run commits 5,000 rows per commit; Insert, Prepared and Bulk send
//! at most 2,000 rows per statement (1,667 on average here; Prepared
//! 625, its tail cut into powers of two), LoadData one statement per batch.
//! [`WritePath::default`] is `Bulk`: the fastest on one connection and on
//! two, and it needs neither `local_infile` (often disabled) nor the
//! warning checks LOCAL makes necessary, because a bad value fails the
//! statement outright. On MySQL it falls back to `Prepared`.

mod batch;
mod checkpoint;
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
mod reject;
mod schema;
mod shared;
mod sink;
mod statement;
mod stats;
mod target;
mod warnings;
mod wire;

pub use checkpoint::CHECKPOINT_TABLE;
pub use config::{redact_url, BulkClient, Mode, SinkConfig, WritePath};
pub use doctor::{doctor, DoctorReport, Finding, Severity};
pub use error::{codes, MysqlError};
pub use ident::Ident;
pub use prepare::{prepare, PreparedTarget};
pub use schema::{execute, key_columns, table_columns};
pub use sink::MysqlSink;
pub use stats::{ServerStats, SinkStats};
pub use target::MysqlTarget;
