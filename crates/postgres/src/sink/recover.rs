//! Finding the bad records of a batch that failed.
//!
//! When the batch's COPYs (or merge) fail with an error one record can
//! cause ([`PgError::is_row_error`]), the transaction is restarted and the
//! batch bisected: each range is copied (a COPY per run of rows of one
//! format) and merged under a savepoint; a range that fails is rolled
//! back to the savepoint and split. Good ranges
//! stay in the transaction, so the search ends with every good row written
//! and each bad row isolated with the server's own message, at a cost of
//! about `2 · bad · log2(batch)` COPYs. The search stops as soon as the
//! bad records exceed the budget left. Ranges run in input order, so
//! within a batch the first (ignore) or last (upsert, replace) of two equal
//! keys still wins, and in insert mode the second of two equal keys is
//! the bad one.

use std::ops::Range;

use super::PgSink;
use crate::reject::Rejected;
use crate::PgError;

const SAVEPOINT: &str = "SAVEPOINT ringpipe_search";
const UNDO: &str = "ROLLBACK TO SAVEPOINT ringpipe_search; RELEASE SAVEPOINT ringpipe_search";
const KEEP: &str = "RELEASE SAVEPOINT ringpipe_search";

impl PgSink {
    /// Writes the good rows of `rows` in the open transaction and adds the
    /// bad ones to `bad`; `failed` is the error `rows` is known to fail with.
    ///
    /// # Errors
    ///
    /// [`PgError::BadRecord`] / [`PgError::TooManyBadRecords`] when the bad
    /// records exceed the budget; any error that is not a record's.
    pub(super) fn bisect(
        &mut self,
        rows: Range<usize>,
        failed: Option<PgError>,
        bad: &mut Vec<Rejected>,
    ) -> Result<(), PgError> {
        let error = match failed {
            Some(error) => error,
            None => {
                self.run(SAVEPOINT, "setting a savepoint")?;
                match self.write_rows(rows.clone(), true) {
                    Ok(()) => return self.run(KEEP, "releasing a savepoint"),
                    Err(error) if error.is_row_error() => {
                        self.run(UNDO, "rolling back to a savepoint")?;
                        error
                    }
                    Err(error) => return Err(error),
                }
            }
        };
        if rows.len() > 1 {
            let middle = rows.start + rows.len() / 2;
            self.bisect(rows.start..middle, None, bad)?;
            return self.bisect(middle..rows.end, None, bad);
        }
        log::debug!(
            "shard {}: record {} refused: {error}",
            self.shard,
            self.batch.position(rows.start).record
        );
        let rejected = self.batch.rejected(rows.start, error.reason());
        if !self.rejects.budget.fits(bad.len() as u64 + 1) {
            return Err(self.over_budget(&rejected, Some(error)));
        }
        bad.push(rejected);
        Ok(())
    }
}
