//! The INSERT text path: multi-row statements encoded as rows arrive. The
//! same text carries every path's recovery (see [`recover`](super::recover)).

use std::ops::Range;

use super::MysqlSink;
use crate::encode::Values;
use crate::warnings;
use crate::MysqlError;

impl MysqlSink {
    /// Runs the INSERT statements the text encoder holds.
    pub(super) fn exec_encoded_inserts(&mut self) -> Result<(), MysqlError> {
        let allow_duplicates = self.allow_duplicates();
        self.ensure_session()?;
        let conn = &mut self.session.as_mut().expect("connected above").conn;
        for statement in self.text.statements() {
            conn.query_drop(statement, "executing a multi-row insert")?;
            self.stats.statements += 1;
            warnings::check(conn, allow_duplicates)?;
        }
        Ok(())
    }

    /// Encodes `rows` of the batch as INSERT text and runs it (recovery and
    /// fallback; the INSERT path's own statements were encoded in `write`).
    pub(super) fn exec_text(&mut self, rows: Range<usize>) -> Result<(), MysqlError> {
        self.text.clear();
        for index in rows {
            let row = self.batch.row(index);
            self.text
                .push(&row)
                .map_err(|too| MysqlError::RowTooLarge {
                    position: row.position(),
                    bytes: too.0,
                    limit: self.max_bytes,
                })?;
        }
        self.exec_encoded_inserts()
    }
}
