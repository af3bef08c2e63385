//! [`PgSink`]: one shard's connection, one transaction per batch.

mod batch;
mod interval_fields;
mod recover;
mod send;

use std::sync::Arc;

use postgres::Statement;
use ringpipe_pipeline::{Checkpoint, RecoveryCounters, Row, Sink};

use self::batch::Batch;
use crate::conn::Conn;
use crate::plan::Plan;
use crate::reject::{values_line, RejectLog, Rejected};
use crate::{CopyEncoder, PgConfig, PgError, RowFormat};

/// One shard's writer: rows are encoded as COPY data as they arrive, and
/// `commit` sends the batch in one transaction with its checkpoint.
///
/// The batch is sent at `commit`, not streamed from `write`: the driver's
/// COPY writer borrows the connection, so it cannot outlive one call, and
/// holding the batch lets a replay after a lost connection first ask the
/// checkpoint whether the lost `COMMIT` had landed, and lets a batch with
/// bad records be searched for them (bisection under savepoints).
pub struct PgSink {
    conn: Conn,
    /// The batch's statements, prepared once per connection.
    statements: Statements,
    config: Arc<PgConfig>,
    plan: Arc<Plan>,
    rejects: Arc<RejectLog>,
    /// The import's count of reconnects and conflicts.
    recoveries: Arc<RecoveryCounters>,
    shard: usize,
    encoder: CopyEncoder,
    batch: Batch,
    /// A `COMMIT` lost its connection: the batch may have landed.
    uncertain: bool,
    /// The bad records of that batch, reserved in the budget until the
    /// checkpoint settles whether it committed.
    unsettled: Vec<Rejected>,
    /// Bad records the last successful commit set aside.
    last_diverted: u64,
    /// The connection is gone (closed, or it failed a `ROLLBACK`), and
    /// that was told: the next batch opens a new one.
    stale: bool,
}

impl PgSink {
    /// Connects the sink of `shard`.
    pub(crate) fn open(
        config: Arc<PgConfig>,
        plan: Arc<Plan>,
        rejects: Arc<RejectLog>,
        recoveries: Arc<RecoveryCounters>,
        shard: usize,
    ) -> Result<Self, PgError> {
        let (conn, statements) = session(&config, &plan)?;
        let encoder = plan.encoder();
        let batch = Batch::new(rejects.budget.max_bad() > 0);
        Ok(PgSink {
            conn,
            statements,
            config,
            plan,
            rejects,
            recoveries,
            shard,
            encoder,
            batch,
            uncertain: false,
            unsettled: Vec::new(),
            last_diverted: 0,
            stale: false,
        })
    }

    /// Tells that the connection is gone, once, and has the next batch
    /// open a new one (also when the server turned read-only: a new
    /// session may reach the primary).
    fn lost(&mut self, why: &str) {
        log::warn!("shard {}: connecting again: {why}", self.shard);
        self.stale = true;
    }

    /// Whether binary COPY is in use (a row holding a value not canonical
    /// for its binary encoder still goes in a text-format COPY).
    pub fn is_binary(&self) -> bool {
        self.plan.binary
    }

    /// Commits the batch unless the checkpoint shows that its lost
    /// `COMMIT` had landed.
    fn commit_batch(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        if !self.stale && self.conn.is_closed() {
            self.lost("the server closed it");
        }
        if self.stale {
            (self.conn, self.statements) = session(&self.config, &self.plan)?;
            self.stale = false;
            self.recoveries.reconnected();
            log::info!("shard {}: reconnected", self.shard);
        }
        if self.uncertain && checkpoint.import.is_none() {
            // Without checkpoints nothing can tell, and sending the batch
            // again could store it twice: fail instead.
            return Err(PgError::CommitUnknown {
                last: checkpoint.last_record,
            });
        }
        self.check_interval_fields()?;
        self.send(checkpoint)
    }

    /// Settles a batch whose `COMMIT` went unanswered, once its checkpoint
    /// told whether it `landed`; an error before that leaves it uncertain
    /// for the next replay.
    pub(super) fn settle_uncertain(&mut self, landed: bool, last_record: u64) {
        self.uncertain = false;
        let unsettled = std::mem::take(&mut self.unsettled);
        if landed {
            log::info!(
                "shard {}: the batch through record {last_record} had committed",
                self.shard
            );
            self.settle(&unsettled);
        } else {
            self.rejects.budget.release(unsettled.len() as u64);
        }
    }

    /// Counts a committed batch's bad records.
    fn settle(&mut self, rejected: &[Rejected]) {
        self.last_diverted = rejected.len() as u64;
        if !rejected.is_empty() {
            log::info!(
                "shard {}: set aside {} bad record(s)",
                self.shard,
                rejected.len()
            );
        }
    }

    /// `Ok` when `rejected`, a record refused before sending for `error`,
    /// may be set aside beside the batch's refused records and `pending`
    /// more; else the error that ends the import (the record's own, with
    /// its position, when no bad records are allowed).
    fn may_set_aside(
        &self,
        rejected: &Rejected,
        error: PgError,
        pending: usize,
    ) -> Result<(), PgError> {
        let refused = (self.batch.refused.len() + pending) as u64;
        let held = self.unsettled.len() as u64;
        match self.rejects.budget.fits_another(refused, held) {
            true => Ok(()),
            false => Err(self.over_budget(rejected, Some(error))),
        }
    }

    /// The error for a bad record beyond the budget: the record's own
    /// error when none are allowed.
    fn over_budget(&self, rejected: &Rejected, error: Option<PgError>) -> PgError {
        match (self.rejects.budget.max_bad(), error) {
            (0, Some(source)) => PgError::BadRecord {
                position: rejected.position,
                source: Box::new(source),
            },
            (max_bad, _) => PgError::TooManyBadRecords {
                max_bad,
                earlier: self.rejects.budget.carried(),
                position: rejected.position,
                reason: rejected.reason.clone(),
            },
        }
    }
}

/// The statements every batch runs, prepared on the connection that runs
/// them: a batch then binds them without a round trip to parse each again.
struct Statements {
    copy_binary: Option<Statement>,
    copy_text: Statement,
    record: Statement,
}

impl Statements {
    fn new(conn: &mut Conn, plan: &Plan) -> Result<Statements, PgError> {
        let mut prepare = |sql: &str| conn.prepare(sql, "preparing the batch's statements");
        Ok(Statements {
            copy_binary: plan.copy_binary.as_deref().map(&mut prepare).transpose()?,
            copy_text: prepare(&plan.copy_text)?,
            record: prepare(&plan.record)?,
        })
    }

    /// The COPY of rows in `format` (`None` for binary rows when binary
    /// COPY is not in use, which the encoder never makes).
    fn copy(&self, format: RowFormat) -> Option<&Statement> {
        match format {
            RowFormat::Binary => self.copy_binary.as_ref(),
            RowFormat::Text => Some(&self.copy_text),
        }
    }
}

/// A connection with the init commands run, the staging table made and
/// the batch's statements prepared.
fn session(config: &PgConfig, plan: &Plan) -> Result<(Conn, Statements), PgError> {
    let mut conn = Conn::open(config)?;
    if let Some(sql) = &plan.create_stage {
        conn.batch_execute(sql, "creating the staging table")?;
    }
    let statements = Statements::new(&mut conn, plan)?;
    Ok((conn, statements))
}

impl Sink for PgSink {
    type Error = PgError;

    fn begin(&mut self) -> Result<(), PgError> {
        self.batch.clear();
        Ok(())
    }

    fn write(&mut self, row: &Row) -> Result<(), PgError> {
        match self.batch.push(row, &self.encoder) {
            Ok(()) if !self.plan.field_lists.is_empty() => {
                self.batch.hold(row, &self.plan.field_lists);
                Ok(())
            }
            Err(error @ PgError::BadValue { .. }) => {
                let rejected = Rejected {
                    position: row.position(),
                    reason: error.to_string(),
                    values: values_line(row),
                };
                self.may_set_aside(&rejected, error, 0)?;
                self.batch.refused.push(rejected);
                Ok(())
            }
            other => other,
        }
    }

    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        self.last_diverted = 0;
        let result = self.commit_batch(checkpoint);
        if let Err(e) = &result {
            if e.is_conflict() {
                log::info!("shard {}: transaction rolled back: {e}", self.shard);
                self.recoveries.conflicted();
            }
            if e.is_timeout() {
                self.recoveries.timed_out();
            }
            if let Some(why) = e.connect_failure() {
                // A replay's attempt to connect again: the loss was told.
                log::debug!("shard {}: cannot reconnect yet: {why}", self.shard);
            } else if (e.lost_connection() || e.read_only()) && !self.stale {
                self.lost(&e.to_string());
            }
        }
        if result.is_err() && !self.conn.is_closed() {
            // A connection whose ROLLBACK failed is not used again; the
            // batch's own error is the one to report.
            match self.conn.batch_execute("ROLLBACK", "rolling back") {
                Err(e) if !self.stale => self.lost(&e.to_string()),
                Err(e) => log::debug!("shard {}: rollback failed: {e}", self.shard),
                Ok(()) => {}
            }
        }
        result
    }

    fn last_commit_diverted(&self) -> u64 {
        self.last_diverted
    }

    fn rollback(&mut self) -> Result<(), PgError> {
        // `commit` rolled back its own transaction; the replay rewrites the batch.
        self.batch.clear();
        Ok(())
    }
}
