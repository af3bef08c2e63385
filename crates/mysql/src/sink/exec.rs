//! Running the open batch in its transaction, on whichever path.

use super::path::Path;
use super::MysqlSink;
use crate::config::{BulkClient, Mode, WritePath};
use crate::error::codes;
use crate::reject::Rejected;
use crate::MysqlError;

impl MysqlSink {
    /// Runs the batch and its checkpoint inside a new transaction, leaving
    /// it open for `COMMIT`. Returns the bad records that were left out
    /// (only when a row error sent the batch through recovery).
    pub(super) fn run_batch(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.ensure_session()?;
        if self.path.kind() == WritePath::Bulk && self.client() == Some(BulkClient::Wire) {
            return self.run_ahead();
        }
        let rejected = self.run_in_turn()?;
        self.record_progress()?;
        Ok(rejected)
    }

    /// Opens a transaction holding only the checkpoint: for a batch whose
    /// every record was refused before sending.
    pub(super) fn run_checkpoint_only(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.start_transaction()?;
        self.record_progress()?;
        Ok(Vec::new())
    }

    /// Runs the batch's rows in a new transaction, waiting for each reply.
    fn run_in_turn(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.start_transaction()?;
        let result = self.execute_path();
        let error = match self.note_failure(result) {
            Ok(()) => return Ok(Vec::new()),
            Err(e) => e,
        };
        let load_data = self.path.kind() == WritePath::LoadData;
        if error.code() == Some(codes::NOT_ALLOWED_COMMAND) && load_data {
            log::warn!(
                "shard {}: the server refused LOAD DATA LOCAL ({error}); using multi-row INSERT",
                self.shard
            );
            self.path = Path::Insert;
            self.roll_back("rollback")?;
            self.start_transaction()?;
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

    /// Sends the whole batch on the sink's path.
    fn execute_path(&mut self) -> Result<(), MysqlError> {
        match self.path.kind() {
            WritePath::Insert => self.exec_encoded_inserts(),
            WritePath::LoadData => self.exec_load_data(),
            WritePath::Prepared | WritePath::Bulk => self.exec_binary(0..self.batch.len()),
        }
    }

    /// Whether duplicate-key warnings are expected (and harmless).
    pub(super) fn allow_duplicates(&self) -> bool {
        self.target.mode == Mode::Ignore
    }
}
