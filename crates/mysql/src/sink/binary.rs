//! The binary-protocol paths through the driver: prepared multi-row
//! statements, and MariaDB's bulk command where the wire client cannot
//! serve the connection.

use std::ops::Range;

use super::path::Path;
use super::{MysqlSink, VALUE_OVERHEAD};
use crate::prepared::chunks;
use crate::warnings;
use crate::MysqlError;

impl MysqlSink {
    /// Sends `rows` as prepared multi-row statements or bulk executes
    /// through the driver.
    pub(super) fn exec_binary(&mut self, rows: Range<usize>) -> Result<(), MysqlError> {
        let allow_duplicates = self.allow_duplicates();
        for chunk in self.binary_chunks(rows) {
            self.ensure_session()?;
            let conn = &mut self.session.as_mut().expect("connected above").conn;
            let driver = conn.driver()?;
            match &mut self.path {
                Path::Bulk(bulk) => bulk.prepared.execute_bulk(driver, &self.batch, chunk)?,
                Path::Prepared(prepared) => prepared.execute(driver, &self.batch, chunk)?,
                Path::Insert | Path::LoadData(_) => {
                    return Err(MysqlError::Config("not on a binary path".into()))
                }
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
        let (full, round_tail) = match &self.path {
            Path::Prepared(prepared) => (prepared.full_chunk(self.target.max_rows), true),
            _ => (self.target.max_rows, false),
        };
        let shape = &self.target.shape;
        let budget = self
            .max_bytes
            .saturating_sub(shape.head.len() + shape.tail.len() + width * VALUE_OVERHEAD);
        chunks(&self.batch, rows, full, budget, width, round_tail)
    }
}
