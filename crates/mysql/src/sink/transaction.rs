//! The batch's transaction: opened with a savepoint that must still exist
//! just before `COMMIT`.
//!
//! A server can end a transaction without its error reaching the client.
//! Whatever the session sends next then runs in a new transaction (the
//! session has `autocommit=0`), and a plain `COMMIT` would commit that one:
//! the batch's later statements and its checkpoint, without its earlier
//! rows. A savepoint lives and dies with the transaction that set it, so
//! `RELEASE SAVEPOINT` succeeding right before `COMMIT` proves that the
//! transaction about to commit is the one that holds the whole batch.
//! Failing, it sends the batch back to be replayed
//! ([`MysqlError::TransactionLost`]).

use super::MysqlSink;
use crate::error::codes;
use crate::MysqlError;

/// The statements that open a batch's transaction, in order.
pub(super) const START: [&str; 2] = ["START TRANSACTION", "SAVEPOINT ringpipe_batch"];

/// The statement that fails unless the open transaction set the savepoint.
const CONFIRM: &str = "RELEASE SAVEPOINT ringpipe_batch";

impl MysqlSink {
    /// Opens the batch's transaction.
    pub(super) fn start_transaction(&mut self) -> Result<(), MysqlError> {
        for sql in START {
            self.query(sql, "begin")?;
        }
        Ok(())
    }

    /// Fails with [`MysqlError::TransactionLost`] unless the open
    /// transaction is the one [`start_transaction`](Self::start_transaction)
    /// (or the bulk path, sending [`START`] ahead) opened; the last statement
    /// before `COMMIT`.
    pub(super) fn confirm_transaction(&mut self) -> Result<(), MysqlError> {
        match self.query(CONFIRM, "confirming the batch's transaction") {
            Err(e) if e.code() == Some(codes::SAVEPOINT_DOES_NOT_EXIST) => {
                let lost = MysqlError::TransactionLost {
                    last: self.last_record,
                };
                log::warn!("shard {}: {lost}", self.shard);
                self.note_failure(Err(lost))
            }
            other => other,
        }
    }
}
