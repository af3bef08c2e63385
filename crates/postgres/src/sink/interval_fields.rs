//! The server's check of a batch's intervals with a field list
//! ([`crate::interval_fields`]), before the batch is sent: a value whose
//! interval (or any interval inside it) the field list would alter takes
//! its record out of the batch, as a bad record (or fails the import when
//! none are allowed).

use super::PgSink;
use crate::interval_fields::{altered, IntervalFields};
use crate::PgError;

impl PgSink {
    /// Checks the held interval values of the batch.
    ///
    /// # Errors
    ///
    /// As [`PgSink::may_set_aside`] for an altered value, and any error of
    /// the server but a value's own.
    pub(super) fn check_interval_fields(&mut self) -> Result<(), PgError> {
        if self.batch.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.batch.held);
        let values: Vec<(&str, IntervalFields)> =
            held.iter().map(|h| (h.value.as_str(), h.fields)).collect();
        let (mut rows, mut out) = (Vec::new(), Vec::new());
        for found in altered(&mut self.conn, &values)? {
            let held = &held[found.index];
            // Values are held in row order: one reason per row is enough.
            if rows.last() == Some(&held.row) {
                continue;
            }
            let why = match &held.within {
                Some(within) => format!("in {within:?}: {}", found.why),
                None => found.why,
            };
            let error = PgError::BadValue {
                record: self.batch.position(held.row).record,
                column: self.config.columns[held.column].clone(),
                why,
            };
            let rejected = self.batch.rejected(held.row, error.to_string());
            self.may_set_aside(&rejected, error, out.len())?;
            rows.push(held.row);
            out.push(rejected);
        }
        if !out.is_empty() {
            log::debug!(
                "shard {}: {} record(s) hold an interval their column would alter",
                self.shard,
                out.len()
            );
            self.batch.remove(&rows);
            self.batch.refused.extend(out);
        }
        Ok(())
    }
}
