//! Finding the bad records of a failed batch.
//!
//! When a batch fails with an error one record can cause (bad value,
//! duplicate key, ...), the transaction is rolled back and restarted, and
//! the batch is bisected: each range runs as INSERT text under a savepoint;
//! a range that fails is rolled back to the savepoint and split. Good
//! ranges stay in the transaction, so the search ends with every good row
//! inserted and each bad row isolated with its own error, at a cost of
//! about `2 · bad · log2(batch)` statements. The search stops as soon as
//! the bad records exceed the budget left.

use std::ops::Range;

use super::MysqlSink;
use crate::encode::Values;
use crate::reject::{values_line, Rejected};
use crate::MysqlError;

impl MysqlSink {
    /// Rolls back, restarts the transaction and inserts every good row of
    /// the batch; returns the bad ones.
    ///
    /// # Errors
    ///
    /// [`MysqlError::BadRecord`] / [`MysqlError::TooManyBadRecords`] when
    /// the bad records exceed `max_bad`; retryable errors met on the way.
    pub(super) fn recover(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        self.roll_back("rollback before searching the batch")?;
        self.start_transaction()?;
        let mut bad = Vec::new();
        self.bisect(0..self.batch.len(), &mut bad)?;
        Ok(bad)
    }

    /// Inserts the good rows of `rows`, collecting the bad ones.
    fn bisect(&mut self, rows: Range<usize>, bad: &mut Vec<Rejected>) -> Result<(), MysqlError> {
        self.query("SAVEPOINT ringpipe_search", "savepoint")?;
        let result = self.exec_text(rows.clone());
        let error = match self.note_failure(result) {
            Ok(()) => return Ok(()),
            Err(e) if e.is_row_error() => e,
            Err(e) => return Err(e),
        };
        self.query(
            "ROLLBACK TO SAVEPOINT ringpipe_search",
            "rollback to savepoint",
        )?;
        if rows.len() > 1 {
            let middle = rows.start + rows.len() / 2;
            self.bisect(rows.start..middle, bad)?;
            return self.bisect(middle..rows.end, bad);
        }
        let row = self.batch.row(rows.start);
        bad.push(Rejected {
            position: row.position(),
            error,
            values: values_line(&row),
        });
        if self.target.rejects.budget.fits(bad.len() as u64) {
            return Ok(());
        }
        Err(self.over_budget(&bad[bad.len() - 1]))
    }

    /// The fatal error for a bad record beyond the budget.
    pub(super) fn over_budget(&self, rejected: &Rejected) -> MysqlError {
        let source = Box::new(copy_error(&rejected.error));
        let max_bad = self.target.rejects.budget.max_bad();
        if max_bad == 0 {
            MysqlError::BadRecord {
                position: rejected.position,
                source,
            }
        } else {
            MysqlError::TooManyBadRecords {
                max_bad,
                earlier: self.target.rejects.budget.carried(),
                position: rejected.position,
                source,
            }
        }
    }
}

/// A copy of a row error (row errors hold only plain data).
fn copy_error(error: &MysqlError) -> MysqlError {
    match error {
        MysqlError::Server {
            code,
            state,
            message,
            context,
        } => MysqlError::Server {
            code: *code,
            state: state.clone(),
            message: message.clone(),
            context,
        },
        MysqlError::Warning {
            level,
            code,
            message,
        } => MysqlError::Warning {
            level: level.clone(),
            code: *code,
            message: message.clone(),
        },
        MysqlError::BadValue { column, why } => MysqlError::BadValue {
            column: column.clone(),
            why: why.clone(),
        },
        other => MysqlError::Config(other.to_string()),
    }
}
