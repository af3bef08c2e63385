//! [`MysqlSink`]: one connection, one transaction per ring batch.
//!
//! `write` copies each row into the batch and encodes it for the write path
//! (INSERT text or TSV) as it arrives; `commit` opens the transaction, runs
//! the batch's statements and the checkpoint, checks that the transaction
//! is still the one it opened ([`transaction`]) and sends `COMMIT`. This
//! core holds the connection, the batch, the transaction and the
//! checkpoint; each write path's own state and statements live in their
//! own module ([`path`]). Transactions are managed with plain statements
//! rather than the driver's `Transaction`, whose drop swallows a failed
//! rollback. A lost connection is dropped at once: the server has
//! rolled back, `rollback` then succeeds, and the replay's first `write`
//! reconnects and re-reads the session settings.

mod ahead;
mod binary;
mod exec;
mod insert;
mod load_data;
mod path;
mod progress;
mod recover;
mod transaction;

use std::sync::Arc;

use ringpipe_pipeline::{Checkpoint, ImportIdentity, Row, Sink};

use self::path::Path;
use crate::batch::Batch;
use crate::config::{BulkClient, WritePath};
use crate::connect::{self, Session};
use crate::encode::boolean::{AsBooleans, BooleanColumn};
use crate::encode::insert::InsertEncoder;
use crate::encode::Values;
use crate::link::Link;
use crate::reject::{values_line, Rejected};
use crate::shared::Shared;
use crate::stats::SinkStats;
use crate::MysqlError;

/// Per-value bytes assumed on top of the text when sizing binary packets.
const VALUE_OVERHEAD: usize = 12;

/// A per-shard MySQL/MariaDB writer; see the module docs and [`Sink`].
#[derive(Debug)]
pub struct MysqlSink {
    /// What all shards share.
    target: Arc<Shared>,
    /// The import whose checkpoints this sink commits, once it committed
    /// with one.
    identity: Option<ImportIdentity>,
    /// The first record of this shard's region, stored with its checkpoints.
    region_start: u64,
    /// The digest of the rows this shard committed, this batch's included.
    rows_crc: Option<u32>,
    /// This sink's shard number, for logs.
    shard: usize,
    /// The live connection, `None` after it was lost.
    session: Option<Session>,
    /// The write path and its own state (LOAD DATA may fall back to
    /// INSERT at run time).
    path: Path,
    /// Rows of the open batch.
    batch: Batch,
    /// Records of the open batch refused before sending (a value the
    /// server would alter), set aside as bad records.
    refused: Vec<Rejected>,
    /// The number of the open batch's last record (the checkpoint's).
    last_record: u64,
    /// INSERT text of the open batch: the INSERT path's statements, and
    /// every path's recovery.
    text: InsertEncoder,
    /// Effective statement size bound of the current session.
    max_bytes: usize,
    /// Client-side counters.
    stats: SinkStats,
    /// The connection died during `COMMIT`: the last batch may or may not
    /// have committed; the checkpoint decides before it is sent again.
    commit_unknown: bool,
    /// The bad records of the batch whose `COMMIT` was cut off, reserved
    /// in the budget until the checkpoint settles whether it committed.
    unsettled: Vec<Rejected>,
    /// Bad records the last successful commit diverted.
    last_diverted: u64,
    /// Which columns take the words `true` and `false` (see
    /// [`Shared::booleans`]), this sink's own copy: [`Sink::write`] lends
    /// it to the rows while it borrows the sink mutably.
    booleans: Option<Box<[Option<BooleanColumn>]>>,
}

impl MysqlSink {
    /// Opens a sink on its own connection.
    pub(crate) fn connect(target: Arc<Shared>, shard: usize) -> Result<Self, MysqlError> {
        let mut sink = MysqlSink {
            identity: None,
            region_start: 0,
            rows_crc: None,
            path: Path::new(target.path, &target.shape),
            batch: Batch::new(target.columns.len()),
            refused: Vec::new(),
            last_record: 0,
            text: InsertEncoder::new(target.shape.clone(), usize::MAX, target.max_rows),
            max_bytes: 0,
            stats: SinkStats::default(),
            commit_unknown: false,
            unsettled: Vec::new(),
            last_diverted: 0,
            session: None,
            booleans: target.booleans.clone(),
            target,
            shard,
        };
        sink.ensure_session()?;
        Ok(sink)
    }

    /// `CONNECTION_ID()` of the live connection, `None` while disconnected.
    pub fn connection_id(&self) -> Option<u64> {
        self.session.as_ref().map(|s| s.connection_id)
    }

    /// The client of the live connection, `None` while disconnected: the
    /// wire client on the bulk path where it can serve the connection, the
    /// `mysql` crate otherwise.
    pub fn client(&self) -> Option<BulkClient> {
        self.session.as_ref().map(|s| match s.conn {
            Link::Wire(_) => BulkClient::Wire,
            Link::Driver(_) => BulkClient::Driver,
        })
    }

    /// The client-side counters so far.
    pub fn stats(&self) -> SinkStats {
        self.stats
    }

    /// The write path in use (after any run-time fallback).
    pub fn write_path(&self) -> WritePath {
        self.path.kind()
    }

    /// Connects if there is no live connection, adopting its settings.
    fn ensure_session(&mut self) -> Result<&mut Session, MysqlError> {
        if self.session.is_none() {
            let mut session = connect::open_with(&self.target.opts, self.target.client)?;
            self.path.on_connect(&mut session.conn);
            self.max_bytes = self
                .target
                .max_bytes
                .map_or(session.max_statement_bytes, |b| {
                    b.min(session.max_statement_bytes)
                });
            self.text
                .configure(session.no_backslash_escapes, self.max_bytes);
            if self.stats.connects > 0 {
                self.stats.reconnects += 1;
                self.target.recoveries.reconnected();
                log::info!(
                    "shard {}: reconnected to {}",
                    self.shard,
                    self.target.redacted_url
                );
            }
            self.stats.connects += 1;
            self.session = Some(session);
        }
        Ok(self.session.as_mut().expect("connected above"))
    }

    /// Runs one statement; a lost connection is dropped so that the next
    /// batch reconnects.
    fn query(&mut self, sql: &str, context: &'static str) -> Result<(), MysqlError> {
        let session = self.ensure_session()?;
        let result = session.conn.query_drop(sql, context);
        self.note_failure(result)
    }

    /// Rolls the open transaction back (see [`Link::rollback`]).
    fn roll_back(&mut self, context: &'static str) -> Result<(), MysqlError> {
        let session = self.ensure_session()?;
        let result = session.conn.rollback(context);
        self.note_failure(result)
    }

    /// Drops the session when `result` says the connection is gone.
    fn note_failure<T>(&mut self, result: Result<T, MysqlError>) -> Result<T, MysqlError> {
        if let Err(e) = &result {
            if e.is_timeout() {
                self.stats.timeouts += 1;
                self.target.recoveries.timed_out();
            }
            if e.is_conflict() {
                log::info!("shard {}: transaction rolled back: {e}", self.shard);
                self.stats.conflicts += 1;
                self.target.recoveries.conflicted();
            }
            if e.is_connection_lost() {
                log::warn!("shard {}: connection lost: {e}", self.shard);
                self.session = None;
            } else if e.is_read_only() {
                log::warn!(
                    "shard {}: the server is read-only, connecting again: {e}",
                    self.shard
                );
                self.session = None;
            }
        }
        result
    }

    /// Fails if `row` cannot fit a statement on the binary or LOAD paths
    /// (every row must, since a bad batch is searched with INSERT text).
    fn check_size(&self, row: &Row) -> Result<(), MysqlError> {
        let shape = &self.target.shape;
        let bytes =
            shape.head.len() + shape.tail.len() + 2 * row.value_len() + row.len() * VALUE_OVERHEAD;
        if bytes <= self.max_bytes {
            return Ok(());
        }
        Err(MysqlError::RowTooLarge {
            position: row.position(),
            bytes,
            limit: self.max_bytes,
        })
    }

    /// Counts the committed batch, `written` rows and `rejected` records
    /// set aside (in the reject file since before its `COMMIT`).
    fn settle(&mut self, rejected: Vec<Rejected>, written: u64) {
        let count = rejected.len() as u64;
        self.stats.commits += 1;
        self.stats.rows += written;
        self.stats.rejected += count;
        self.last_diverted = count;
        self.clear_batch();
        if count > 0 {
            log::info!("shard {}: diverted {count} bad record(s)", self.shard);
        }
    }

    /// `row` as a bad record when a value of it would be stored altered
    /// (see [`crate::check`]). The values are checked as given: the words
    /// `true` and `false` pass a `BOOLEAN`'s integer check as the digits
    /// they are sent as do, and a `BIT(1)`'s check lets them through.
    fn refuse(&self, row: &Row) -> Option<Rejected> {
        let checks = &self.target.checks;
        let (column, why) =
            row.values()
                .zip(checks)
                .enumerate()
                .find_map(|(i, (value, check))| {
                    let check = check.as_ref()?;
                    check.check(value?).err().map(|why| (i, why))
                })?;
        Some(Rejected {
            position: row.position(),
            error: MysqlError::BadValue {
                column: self.target.columns[column].name().to_owned(),
                why,
            },
            values: values_line(row),
        })
    }

    /// [`Sink::write`] of `row`, whose values the server is to read as
    /// `values` gives them.
    #[inline]
    fn write_values(&mut self, row: &Row, values: &impl Values) -> Result<(), MysqlError> {
        if let Some(rejected) = self.refuse(row) {
            let (refused, held) = (self.refused.len(), self.unsettled.len());
            if !self
                .target
                .rejects
                .budget
                .fits_another(refused as u64, held as u64)
            {
                return Err(self.over_budget(&rejected));
            }
            self.refused.push(rejected);
            return Ok(());
        }
        self.ensure_session()?;
        if !matches!(self.path, Path::Insert) {
            self.check_size(row)?;
        }
        match &mut self.path {
            Path::Insert => self
                .text
                .push(values)
                .map_err(|too| MysqlError::RowTooLarge {
                    position: row.position(),
                    bytes: too.0,
                    limit: self.max_bytes,
                })?,
            Path::LoadData(load) => load.push(values),
            Path::Prepared(_) | Path::Bulk(_) => {}
        }
        self.batch.push(values);
        self.send_first_chunk()
    }

    /// Forgets the open batch.
    fn clear_batch(&mut self) {
        self.path.clear();
        self.batch.clear();
        self.refused.clear();
        self.text.clear();
    }
}

impl Sink for MysqlSink {
    type Error = MysqlError;

    fn write(&mut self, row: &Row) -> Result<(), MysqlError> {
        if row.len() != self.target.columns.len() {
            return Err(MysqlError::Config(format!(
                "row has {} values, {} columns are mapped",
                row.len(),
                self.target.columns.len()
            )));
        }
        let Some(booleans) = self.booleans.take() else {
            return self.write_values(row, row);
        };
        let written = self.write_values(row, &AsBooleans::new(row, &booleans));
        self.booleans = Some(booleans);
        written
    }

    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), MysqlError> {
        self.last_diverted = 0;
        if self.identity.as_ref() != checkpoint.import {
            self.identity = checkpoint.import.cloned();
        }
        self.region_start = checkpoint.region_start;
        self.rows_crc = checkpoint.rows_crc;
        self.last_record = checkpoint.last_record;
        if self.batch.is_empty() && self.refused.is_empty() {
            return Ok(());
        }
        if self.commit_unknown {
            let unsettled = std::mem::take(&mut self.unsettled);
            if self.already_committed()? {
                log::info!(
                    "shard {}: the batch whose COMMIT was cut off had committed",
                    self.shard
                );
                // The replay refused the same records again: `unsettled`
                // holds them already.
                let refused = std::mem::take(&mut self.refused).len();
                let diverted = unsettled.len().saturating_sub(refused);
                let written = self.batch.len().saturating_sub(diverted) as u64;
                self.settle(unsettled, written);
                return Ok(());
            }
            self.target.rejects.budget.release(unsettled.len() as u64);
        }
        let mut rejected = match self.batch.is_empty() {
            // Every record refused: the checkpoint alone moves past them.
            true => self.run_checkpoint_only()?,
            false => self.run_batch()?,
        };
        let written = (self.batch.len() - rejected.len()) as u64;
        rejected.append(&mut self.refused);
        rejected.sort_by_key(|r| r.position.record);
        let count = rejected.len() as u64;
        if count > 0 && !self.target.rejects.budget.reserve(count) {
            return Err(self.over_budget(&rejected[0]));
        }
        // Before the COMMIT: a kill after it cannot lose them (see
        // `RejectFile`); the batch does not commit without them, nor
        // without their count in its checkpoint.
        let diverted = match count {
            0 => Ok(()),
            _ => self.record_diverted(count),
        };
        if let Err(e) = diverted.and_then(|()| self.target.rejects.write(&rejected)) {
            self.target.rejects.budget.release(count);
            return Err(e);
        }
        if let Err(e) = self.confirm_transaction() {
            self.target.rejects.budget.release(count);
            return Err(e);
        }
        if let Err(e) = self.query("COMMIT", "commit") {
            self.commit_unknown = e.is_connection_lost();
            match self.commit_unknown {
                // Kept (with their budget) until the checkpoint tells
                // whether the batch, and so their diversion, committed.
                true => self.unsettled = rejected,
                false => self.target.rejects.budget.release(count),
            }
            return Err(e);
        }
        self.settle(rejected, written);
        Ok(())
    }

    fn last_commit_diverted(&self) -> u64 {
        self.last_diverted
    }

    fn rollback(&mut self) -> Result<(), MysqlError> {
        self.clear_batch();
        self.stats.rollbacks += 1;
        let Some(session) = &mut self.session else {
            // The connection is gone, and with it the transaction.
            return Ok(());
        };
        let result = session.conn.rollback("rollback");
        match self.note_failure(result) {
            Err(e) if !e.is_connection_lost() => Err(e),
            _ => Ok(()),
        }
    }

    fn close(&mut self) -> Result<(), MysqlError> {
        if !self.batch.is_empty() {
            return Err(MysqlError::Config(format!(
                "close with {} uncommitted rows",
                self.batch.len()
            )));
        }
        self.session = None;
        Ok(())
    }
}
