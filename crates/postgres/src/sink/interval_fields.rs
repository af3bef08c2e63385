//! The server's check of a batch's interval values with a field list
//! ([`crate::interval_fields`]), before the batch is sent: a value the
//! field list would alter takes its record out of the batch, as a bad
//! record (or fails the import when none are allowed).

use super::PgSink;
use crate::interval_fields::{altered, IntervalFields};
use crate::reject::Rejected;
use crate::PgError;

impl PgSink {
    /// Checks the held interval values of the batch.
    ///
    /// # Errors
    ///
    /// [`PgError::BadRecord`] for an altered value when no bad records are
    /// allowed, [`PgError::TooManyBadRecords`] beyond the budget, any
    /// error of the server but a value's own.
    pub(super) fn check_interval_fields(&mut self) -> Result<(), PgError> {
        if self.batch.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.batch.held);
        let values: Vec<(&str, IntervalFields)> =
            held.iter().map(|h| (h.value.as_str(), h.fields)).collect();
        let mut out: Vec<(usize, String)> = Vec::new();
        for found in altered(&mut self.conn, &values)? {
            let held = &held[found.index];
            // Values are held in row order: one reason per row is enough.
            if out.last().is_some_and(|(row, _)| *row == held.row) {
                continue;
            }
            let position = self.batch.position(held.row);
            let error = PgError::BadValue {
                record: position.record,
                column: self.config.columns[held.column].clone(),
                why: found.why,
            };
            if self.rejects.budget.max_bad() == 0 {
                return Err(PgError::BadRecord {
                    position,
                    source: Box::new(error),
                });
            }
            let refused = (self.batch.refused.len() + out.len()) as u64;
            let unsettled = self.unsettled.len() as u64;
            if !self.rejects.budget.fits_another(refused, unsettled) {
                let rejected: Rejected = self.batch.rejected(held.row, error.to_string());
                return Err(self.over_budget(&rejected, Some(error)));
            }
            out.push((held.row, error.to_string()));
        }
        if !out.is_empty() {
            log::debug!(
                "shard {}: {} record(s) hold an interval their column would alter",
                self.shard,
                out.len()
            );
            let rejected = self.batch.take_out(&out);
            self.batch.refused.extend(rejected);
        }
        Ok(())
    }
}
