//! The `LOAD DATA LOCAL INFILE` path: the batch as TSV, streamed to the
//! server as the "file" the statement reads.

use super::path::Path;
use super::MysqlSink;
use crate::config::Mode;
use crate::warnings;
use crate::MysqlError;

impl MysqlSink {
    /// Streams the batch's TSV through `LOAD DATA LOCAL INFILE`, then makes
    /// sure no row was skipped or silently altered.
    pub(super) fn exec_load_data(&mut self) -> Result<(), MysqlError> {
        let expected = self.batch.len() as u64;
        let allow_duplicates = self.allow_duplicates();
        let mode = self.target.mode;
        self.ensure_session()?;
        let Path::LoadData(load) = &mut self.path else {
            return Err(MysqlError::Config("not on the LOAD DATA path".into()));
        };
        load.swap();
        let conn = &mut self.session.as_mut().expect("connected above").conn;
        let result = conn.query_drop(&self.target.load_sql, "LOAD DATA LOCAL INFILE");
        let affected = conn.affected_rows();
        load.swap();
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
}
