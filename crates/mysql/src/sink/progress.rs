//! The checkpoint in the batch's transaction, and what it settles after a
//! `COMMIT` whose outcome was lost with the connection.

use super::MysqlSink;
use crate::checkpoint;
use crate::MysqlError;

impl MysqlSink {
    /// The statement recording this batch's checkpoint, if enabled.
    pub(super) fn progress_sql(&mut self) -> Result<Option<String>, MysqlError> {
        if self.identity.is_none() {
            return Ok(None);
        }
        let no_backslash_escapes = self.ensure_session()?.no_backslash_escapes;
        let Some(identity) = &self.identity else {
            return Ok(None);
        };
        let progress = checkpoint::Progress {
            shard: self.shard,
            region_start: self.region_start,
            last_record: self.last_record,
            records: (self.batch.len() + self.refused.len()) as u64,
            rows_crc: self.rows_crc,
        };
        Ok(Some(checkpoint::record_sql(
            &self.target.table_name,
            progress,
            identity,
            no_backslash_escapes,
        )))
    }

    /// Adds this batch's checkpoint to the open transaction, if enabled.
    pub(super) fn record_progress(&mut self) -> Result<(), MysqlError> {
        match self.progress_sql()? {
            Some(sql) => self.query(&sql, "recording the checkpoint"),
            None => Ok(()),
        }
    }

    /// Adds the `count` bad records the open batch sets aside to its
    /// checkpoint, if enabled, so that a resume charges them to the budget.
    pub(super) fn record_diverted(&mut self, count: u64) -> Result<(), MysqlError> {
        let Some(identity) = self.identity.clone() else {
            return Ok(());
        };
        let no_backslash_escapes = self.ensure_session()?.no_backslash_escapes;
        let sql = checkpoint::diverted_sql(
            &self.target.table_name,
            (&identity, self.shard),
            count,
            no_backslash_escapes,
        );
        self.query(&sql, "recording the bad records in the checkpoint")
    }

    /// After a `COMMIT` whose outcome was lost with the connection: whether
    /// the checkpoint shows that the open batch did commit.
    ///
    /// # Errors
    ///
    /// [`MysqlError::CommitUnknown`] without checkpoints: there is no way
    /// to know, and sending the batch again could store it twice.
    pub(super) fn already_committed(&mut self) -> Result<bool, MysqlError> {
        self.commit_unknown = false;
        let Some(identity) = self.identity.clone() else {
            return Err(MysqlError::CommitUnknown {
                first: self.batch.first_record(),
                last: self.last_record,
            });
        };
        let (table, shard, last) = (self.target.table_name.clone(), self.shard, self.last_record);
        let session = self.ensure_session()?;
        let no_backslash_escapes = session.no_backslash_escapes;
        let result = checkpoint::committed_through(
            &mut session.conn,
            &table,
            (&identity, shard),
            no_backslash_escapes,
        );
        let done = self.note_failure(result)?;
        // The read locked the checkpoint row: let go of it.
        self.roll_back("ending the checkpoint read")?;
        Ok(done.is_some_and(|done| done >= last))
    }
}
