//! ringpipe-postgres: the PostgreSQL end of a ringpipe import.
//!
//! [`PgTarget`] is a table as a [`Target`](ringpipe_pipeline::Target):
//! one [`PgSink`] (connection) per shard, each batch one transaction that
//! writes the rows with `COPY … FROM STDIN` and upserts the shard's row in
//! [`CHECKPOINT_TABLE`], so an import with
//! [`resume`](ringpipe_pipeline::Import::resume) continues exactly after
//! the records that committed.
//!
//! # Why `tokio-postgres`, called blocking
//!
//! Each shard owns one thread and one connection for the whole import, and
//! a batch is one round of statements in order, so a sink gains no
//! concurrency from an async client. It runs `tokio-postgres` (the
//! well-kept wire client) blocking on a small runtime of its own per
//! connection, as the synchronous `postgres` crate does, but with a time
//! limit around every call, which that crate cannot put: a server that
//! stops answering becomes a lost connection and a replay
//! ([`PgConfig::net_timeout`]). The target's own connections (the table's
//! columns, the checkpoints) run the same way; [`connect`] and
//! [`doctor`] hand out or use the `postgres` crate's client.
//!
//! # How a batch is written
//!
//! `write` encodes each row into the batch's COPY data; `commit` runs
//! `BEGIN`, the COPY, the mode's merge, the checkpoint upsert and
//! `COMMIT`. The COPY and checkpoint statements are prepared once per
//! connection, so a batch in insert mode takes five round trips to the
//! server whatever its size. The COPY is binary when every imported
//! column's type has an encoder here (text, varchar, char, json, jsonb,
//! bytea, integers, floats, bool, numeric, timestamp, date: the server
//! then parses nothing), text format otherwise (timestamptz, arrays,
//! domains, enums, ...), or as [`CopyFormat`] says. In binary COPY, a row
//! holding a numeric, timestamp or date value not in its canonical
//! spelling (`1e5`, `NaN`, `infinity`, a zone, ...) is encoded in text
//! format instead, so that the server's own parser reads (or refuses) it
//! just as in a text COPY: the batch is then sent as one COPY per run of
//! rows of one format, in order, before the merge (when every value is
//! canonical, the common case, a batch is one COPY).
//!
//! [`Mode::Insert`] and [`Mode::Truncate`] copy into the table;
//! [`Mode::Ignore`], [`Mode::Upsert`] and [`Mode::Replace`] copy into a
//! temporary staging table (`ON COMMIT DELETE ROWS`, one per connection,
//! with an arrival-order column that keeps the order across the COPYs of
//! a batch) and move the rows with `INSERT … SELECT … ON CONFLICT`
//! (replace: `DELETE … USING` the staged keys, then `INSERT`).
//!
//! A value the server would store altered without a word (rounded to a
//! numeric's or money's scale, a time's precision or the nearest float,
//! cut to a varchar's length or a name's 63 bytes, a zone, a date or a
//! time of day dropped, a two-digit year given a century, `now` or `today`
//! read as the time of the import, a float underflowing to 0, a jsonb or
//! hstore key given twice; in a domain's base type, in each element of an
//! array, each bound of a range and each field of a composite type too)
//! is refused with its record and column ([`Check`]), as is text with
//! a NUL, which PostgreSQL cannot store. An interval in a column with a
//! field list (`interval YEAR TO MONTH`, `interval HOUR`, ...), which the
//! server cuts to those fields, is read by the server itself, with and
//! without the list, in one query per batch before the batch is sent; a
//! value the two readings disagree on is refused the same way.
//!
//! # Errors and retries
//!
//! [`PgError`] says whether a replay can succeed: serialization failures
//! (40001), deadlocks (40P01), shutdowns (57P0x), lock and idle-session
//! timeouts (55P03, 57P05), too many connections (53300), connection
//! errors (08xxx), a closed connection and a read-only session (25006: a
//! standby, as a primary becomes after a failover) are; the import then
//! replays the batch and the sink reconnects (after 25006 too, so that a
//! URL with several hosts and `target_session_attrs=read-write` finds the
//! new primary). When the
//! connection died during `COMMIT`, the replay first reads the shard's
//! checkpoint: if the batch had landed it is not sent again (an import
//! that keeps no checkpoints cannot tell, and fails with
//! [`PgError::CommitUnknown`]).
//!
//! A record's own error (a value the encoder or the server refuses, a
//! duplicate key in insert mode, a NOT NULL or CHECK violation) makes the
//! batch be searched for its bad records (bisection under savepoints):
//! with [`PgConfig::max_bad`] > 0 the good rows commit with the checkpoint
//! and the bad ones go to the [`reject_file`](PgConfig::reject_file) with
//! the server's message; with 0, or beyond the budget, the import ends
//! naming the record. Other errors end the import; the batches committed
//! before stay committed.
//!
//! Identifiers are validated and double-quoted; values only ever travel
//! as COPY data or statement parameters.

mod check;
mod checkpoint;
mod checkpoint_table;
mod config;
mod conn;
mod connect;
mod doctor;
mod encode;
mod error;
mod ident;
mod interval_fields;
mod json;
mod plan;
mod reject;
mod schema;
mod sink;
mod target;

pub use check::Check;
pub use checkpoint::{checkpoint_rows, ShardCheckpoint, CHECKPOINT_TABLE};
pub use config::{
    driver_config, is_postgres_url, CopyFormat, Mode, PgConfig, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_NET_TIMEOUT,
};
pub use connect::{connect, execute};
pub use doctor::doctor;
pub use encode::{CopyEncoder, Encoder, RowFormat};
pub use error::{retryable_sqlstate, PgError};
pub use ident::{quote, quote_table};
pub use interval_fields::IntervalFields;
pub use ringpipe_pipeline::{DoctorReport, Finding, Severity};
pub use schema::table_columns;
pub use sink::PgSink;
pub use target::PgTarget;
