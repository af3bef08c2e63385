//! One batch's transaction: `BEGIN`, the COPYs and the mode's merge (or,
//! when a record fails, the search for the bad ones), the checkpoint, the
//! bad records to the reject file, `COMMIT`.

use std::ops::Range;

use postgres::types::ToSql;
use ringpipe_pipeline::{Checkpoint, Part};

use super::PgSink;
use crate::reject::Rejected;
use crate::{PgError, RowFormat};

/// How a batch's transaction ended.
enum Sent {
    /// Committed, or found committed.
    Done,
    /// Its `COMMIT` failed for a record's values (a deferred constraint);
    /// nothing committed.
    FailedAtCommit(PgError),
}

impl PgSink {
    /// Runs one statement (or several, `;`-separated, without parameters).
    pub(super) fn run(&mut self, sql: &str, what: &str) -> Result<(), PgError> {
        self.conn.batch_execute(sql, what)
    }

    /// Sends the batch and its checkpoint in one transaction. The
    /// checkpoint goes first: it waits for a transaction of this shard
    /// still under way, and changes nothing when the batch is already
    /// stored (its `COMMIT` went unanswered but landed).
    ///
    /// A record that breaks a deferred constraint fails only the `COMMIT`,
    /// which names no record: the batch then runs again with every
    /// constraint checked at once, so that the search finds the record.
    pub(super) fn send(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        match self.send_once(checkpoint, false)? {
            Sent::Done => Ok(()),
            Sent::FailedAtCommit(error) => {
                log::info!(
                    "shard {}: a deferred constraint failed at COMMIT ({error}); the batch \
                     runs again with constraints checked at once",
                    self.shard
                );
                match self.send_once(checkpoint, true)? {
                    Sent::Done => Ok(()),
                    Sent::FailedAtCommit(error) => Err(error),
                }
            }
        }
    }

    /// [`send`](Self::send), once; with `immediate`, every constraint is
    /// checked at its statement.
    fn send_once(&mut self, checkpoint: &Checkpoint<'_>, immediate: bool) -> Result<Sent, PgError> {
        let records = self.batch.records();
        if !self.begin(checkpoint, records, immediate)? {
            return Ok(Sent::Done);
        }
        let mut rejected = std::mem::take(&mut self.batch.refused);
        let refused = rejected.len();
        let all = 0..self.batch.len();
        if !all.is_empty() {
            if let Err(error) = self.write_rows(all.clone(), false) {
                if !error.is_row_error() {
                    return Err(error);
                }
                self.run("ROLLBACK", "restarting the transaction")?;
                if !self.begin(checkpoint, records, immediate)? {
                    return Ok(Sent::Done);
                }
                self.bisect(all, Some(error), &mut rejected)?;
            }
        }
        let count = rejected.len() as u64;
        if count > 0 && !self.rejects.budget.reserve(count) {
            return Err(self.over_budget(&rejected[0], None));
        }
        match self.finish(checkpoint, &rejected) {
            Ok(()) => {
                self.settle(&rejected);
                Ok(Sent::Done)
            }
            // The server answered: nothing committed, and the error is a
            // record's (a deferred constraint).
            Err(error) if !self.uncertain && error.is_row_error() && !immediate => {
                self.rejects.budget.release(count);
                rejected.truncate(refused);
                self.batch.refused = rejected;
                Ok(Sent::FailedAtCommit(error))
            }
            Err(error) => {
                match self.uncertain {
                    // Kept, with their budget, until the checkpoint tells
                    // whether the batch committed.
                    true => self.unsettled = rejected,
                    false => self.rejects.budget.release(count),
                }
                Err(error)
            }
        }
    }

    /// [`begin_with`](Self::begin_with), then, with `immediate`, every
    /// deferrable constraint checked at its statement.
    fn begin(
        &mut self,
        checkpoint: &Checkpoint<'_>,
        records: u64,
        immediate: bool,
    ) -> Result<bool, PgError> {
        let begun = self.begin_with(checkpoint, records)?;
        if begun && immediate {
            self.run(
                "SET CONSTRAINTS ALL IMMEDIATE",
                "checking constraints at once",
            )?;
        }
        Ok(begun)
    }

    /// `BEGIN` and the checkpoint of the batch (it held `records`
    /// records). `Ok(false)` when the checkpoint already covers a batch
    /// whose `COMMIT` went unanswered: it landed, is settled, and nothing
    /// is left to send. A checkpoint that covers any other batch is an
    /// error.
    fn begin_with(&mut self, checkpoint: &Checkpoint<'_>, records: u64) -> Result<bool, PgError> {
        self.run("BEGIN", "starting a transaction")?;
        let recorded = self.record(checkpoint, records)?;
        if self.uncertain {
            self.settle_uncertain(!recorded, checkpoint.last_record);
        } else if !recorded {
            return Err(PgError::CheckpointAhead {
                shard: checkpoint.shard,
                last: checkpoint.last_record,
            });
        }
        if !recorded {
            self.run("ROLLBACK", "rolling back")?;
        }
        Ok(recorded)
    }

    /// COPYs `rows` (one COPY per run of rows of one format, in order) and
    /// merges them into the target; `alone` when other ranges follow in
    /// the same transaction (the staging table is then emptied after the
    /// merge).
    pub(super) fn write_rows(&mut self, rows: Range<usize>, alone: bool) -> Result<(), PgError> {
        for (format, run) in self.batch.runs(rows) {
            self.copy_run(format, run)?;
        }
        let plan = std::sync::Arc::clone(&self.plan);
        for sql in &plan.merge {
            self.run(sql, "merging the batch")?;
        }
        if let (true, Some(clear)) = (alone, &plan.clear_stage) {
            self.run(clear, "emptying the staging table")?;
        }
        Ok(())
    }

    /// One `COPY … FROM STDIN` of `rows`, all in `format`.
    fn copy_run(&mut self, format: RowFormat, rows: Range<usize>) -> Result<(), PgError> {
        let context = format!("COPY of {} row(s)", rows.len());
        let statement = self
            .statements
            .copy(format)
            .ok_or_else(|| PgError::Config("a binary row without binary COPY in use".to_owned()))?;
        let data = [format.header(), self.batch.data(rows), format.trailer()];
        self.conn.copy_in(statement, data, &context)?;
        Ok(())
    }

    /// Records the checkpoint (the batch held `records` records) in the
    /// open transaction: `false` when the stored one already covers the
    /// batch. Without checkpoints, `true`.
    fn record(&mut self, checkpoint: &Checkpoint<'_>, records: u64) -> Result<bool, PgError> {
        let Some(import) = checkpoint.import else {
            return Ok(true);
        };
        let Part { index, count } = import.part;
        let rows_crc = checkpoint.rows_crc.map(i64::from);
        let params: [&(dyn ToSql + Sync); 11] = [
            &self.plan.table,
            &import.input,
            &(index as i32),
            &(count as i32),
            &(checkpoint.shard as i32),
            &(import.shards as i32),
            &(checkpoint.last_record as i64),
            &(records as i64),
            &import.mapping,
            &(checkpoint.region_start as i64),
            &rows_crc,
        ];
        let changed =
            self.conn
                .execute(&self.statements.record, &params, "recording the checkpoint")?;
        Ok(changed > 0)
    }

    /// The bad records to the checkpoint's count and the reject file,
    /// `COMMIT`.
    fn finish(
        &mut self,
        checkpoint: &Checkpoint<'_>,
        rejected: &[Rejected],
    ) -> Result<(), PgError> {
        // Before the COMMIT: a kill after it cannot lose them (see `reject`),
        // and the batch does not commit without their count.
        if let (Some(import), false) = (checkpoint.import, rejected.is_empty()) {
            let params: [&(dyn ToSql + Sync); 5] = [
                &self.plan.table,
                &import.input,
                &(import.part.index as i32),
                &(checkpoint.shard as i32),
                &(rejected.len() as i64),
            ];
            let sql = &self.plan.record_diverted;
            let context = "recording the bad records in the checkpoint";
            self.conn.execute(sql.as_str(), &params, context)?;
        }
        self.rejects.write(rejected)?;
        // When a COMMIT's connection is gone (a FATAL from a terminated
        // backend, a dropped socket), the transaction may have landed before
        // it; an error the server answered on a live connection means it
        // did not.
        let committed = self.run("COMMIT", "committing");
        self.uncertain = committed.is_err() && self.conn.is_closed();
        committed
    }
}
