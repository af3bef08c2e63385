//! Executing the open batch on the chosen write path.

use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use super::{MysqlSink, VALUE_OVERHEAD};
use crate::config::{BulkClient, Mode, WritePath};
use crate::error::codes;
use crate::prepared::chunks;
use crate::reject::Rejected;
use crate::warnings;
use crate::MysqlError;

impl MysqlSink {
    /// Runs the batch and its checkpoint inside a new transaction, leaving
    /// it open for `COMMIT`. Returns the bad records that were left out
    /// (only when a row error sent the batch through recovery).
    pub(super) fn run_batch(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.ensure_session()?;
        if self.path == WritePath::Bulk && self.client() == Some(BulkClient::Wire) {
            return self.run_ahead();
        }
        let rejected = self.run_in_turn()?;
        self.record_progress()?;
        Ok(rejected)
    }

    /// Runs the batch's rows in a new transaction, waiting for each reply.
    fn run_in_turn(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.query("START TRANSACTION", "begin")?;
        let result = self.execute_path();
        let error = match self.note_failure(result) {
            Ok(()) => return Ok(Vec::new()),
            Err(e) => e,
        };
        if error.code() == Some(codes::NOT_ALLOWED_COMMAND) && self.path == WritePath::LoadData {
            log::warn!(
                "shard {}: the server refused LOAD DATA LOCAL ({error}); using multi-row INSERT",
                self.shard
            );
            self.path = WritePath::Insert;
            self.query("ROLLBACK", "rollback")?;
            self.query("START TRANSACTION", "begin")?;
            let all = 0..self.batch.len();
            let result = self.exec_text(all);
            return match result {
                Err(e) if e.is_row_error() => self.recover(),
                other => other.map(|()| Vec::new()),
            };
        }
        if error.is_row_error() {
            return self.recover();
        }
        Err(error)
    }

    /// Sends the whole batch on `self.path`.
    fn execute_path(&mut self) -> Result<(), MysqlError> {
        match self.path {
            WritePath::Insert => self.exec_encoded_inserts(),
            WritePath::LoadData => self.exec_load_data(),
            WritePath::Prepared | WritePath::Bulk => self.exec_binary(0..self.batch.len()),
        }
    }

    /// Whether duplicate-key warnings are expected (and harmless).
    pub(super) fn allow_duplicates(&self) -> bool {
        self.target.mode == Mode::Ignore
    }

    /// Runs the INSERT statements `write` encoded.
    fn exec_encoded_inserts(&mut self) -> Result<(), MysqlError> {
        let allow_duplicates = self.allow_duplicates();
        self.ensure_session()?;
        let conn = &mut self.session.as_mut().expect("connected above").conn;
        for statement in self.insert.statements() {
            conn.query_drop(statement, "executing a multi-row insert")?;
            self.stats.statements += 1;
            warnings::check(conn, allow_duplicates)?;
        }
        Ok(())
    }

    /// Encodes `rows` of the batch as INSERT text and runs it (recovery and
    /// fallback; the INSERT path's own statements were encoded in `write`).
    pub(super) fn exec_text(&mut self, rows: Range<usize>) -> Result<(), MysqlError> {
        self.insert.clear();
        for index in rows {
            let row = self.batch.row(index);
            self.insert
                .push(&row)
                .map_err(|too| MysqlError::RowTooLarge {
                    position: row.position(),
                    bytes: too.0,
                    limit: self.max_bytes,
                })?;
        }
        self.exec_encoded_inserts()
    }

    /// Streams the batch's TSV through `LOAD DATA LOCAL INFILE`, then makes
    /// sure no row was skipped or silently altered.
    fn exec_load_data(&mut self) -> Result<(), MysqlError> {
        let expected = self.batch.len() as u64;
        let allow_duplicates = self.allow_duplicates();
        let mode = self.target.mode;
        self.ensure_session()?;
        std::mem::swap(&mut *lock(&self.infile), &mut self.tsv);
        let conn = &mut self.session.as_mut().expect("connected above").conn;
        let result = conn.query_drop(&self.target.load_sql, "LOAD DATA LOCAL INFILE");
        let affected = conn.affected_rows();
        std::mem::swap(&mut *lock(&self.infile), &mut self.tsv);
        result?;
        self.stats.statements += 1;
        let session = self.ensure_session()?;
        warnings::check(&mut session.conn, allow_duplicates)?;
        // LOCAL makes duplicates warnings; REPLACE counts a replaced row twice.
        let skipped = match mode {
            Mode::Insert | Mode::Truncate | Mode::Upsert => affected != expected,
            Mode::Replace => affected < expected,
            Mode::Ignore => false,
        };
        if skipped {
            return Err(MysqlError::RowsSkipped { expected, affected });
        }
        Ok(())
    }

    /// Sends `rows` as prepared multi-row statements or bulk executes
    /// through the driver.
    fn exec_binary(&mut self, rows: Range<usize>) -> Result<(), MysqlError> {
        let allow_duplicates = self.allow_duplicates();
        for chunk in self.binary_chunks(rows) {
            self.ensure_session()?;
            let conn = &mut self.session.as_mut().expect("connected above").conn;
            let driver = conn.driver()?;
            match self.path {
                WritePath::Bulk => self.prepared.execute_bulk(driver, &self.batch, chunk)?,
                _ => self.prepared.execute(driver, &self.batch, chunk)?,
            }
            self.stats.statements += 1;
            warnings::check(conn, allow_duplicates)?;
        }
        Ok(())
    }

    /// `rows` cut into the binary paths' statements: at most `max_rows`
    /// (and the placeholder limit) and `max_allowed_packet`.
    pub(super) fn binary_chunks(&self, rows: Range<usize>) -> Vec<Range<usize>> {
        let width = self.target.columns.len();
        let full = match self.path {
            WritePath::Bulk => self.target.max_rows,
            _ => self.prepared.full_chunk(self.target.max_rows),
        };
        let shape = &self.target.shape;
        let budget = self
            .max_bytes
            .saturating_sub(shape.head.len() + shape.tail.len() + width * VALUE_OVERHEAD);
        let round_tail = self.path != WritePath::Bulk;
        chunks(&self.batch, rows, full, budget, width, round_tail)
    }
}

/// Locks the LOCAL INFILE buffer (a poisoned lock still holds valid bytes).
fn lock(infile: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    infile
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
