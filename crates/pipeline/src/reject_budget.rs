//! How many bad records an import may set aside, shared by its shards.

use std::sync::atomic::{AtomicU64, Ordering};

/// The bad-record budget of one import, shared by every shard of a sink.
///
/// A batch that diverts records [`reserve`](Self::reserve)s them before its
/// `COMMIT` and [`release`](Self::release)s them if the batch does not
/// commit, so the budget counts the records of committed batches (and of
/// any batch whose `COMMIT` is in flight). A resumed import first
/// [`carry`](Self::carry)s those the interrupted runs' batches committed,
/// so that the budget holds for the import, not for each run of it.
///
/// ```
/// use ringpipe_pipeline::RejectBudget;
///
/// let budget = RejectBudget::new(3);
/// assert!(budget.reserve(2));
/// assert!(!budget.fits(2));
/// assert!(!budget.reserve(2)); // nothing taken
/// budget.release(2);
/// assert_eq!(budget.used(), 0);
/// ```
#[derive(Debug)]
pub struct RejectBudget {
    max_bad: u64,
    /// Records taken, those carried over included.
    used: AtomicU64,
    /// Records carried over from earlier runs of the import.
    carried: AtomicU64,
}

impl RejectBudget {
    /// A budget of `max_bad` records.
    pub fn new(max_bad: u64) -> Self {
        RejectBudget {
            max_bad,
            used: AtomicU64::new(0),
            carried: AtomicU64::new(0),
        }
    }

    /// Charges `earlier` records, set aside by earlier runs of a resumed
    /// import in batches that committed, before this run takes any. They
    /// count against the budget (even beyond it: such a run then fails at
    /// its first bad record) but not in [`used`](Self::used).
    pub fn carry(&self, earlier: u64) {
        // Relaxed: called before any shard starts (the threads that run
        // them are started after it, which orders it before their reads).
        self.carried.fetch_add(earlier, Ordering::Relaxed);
        self.used.fetch_add(earlier, Ordering::Relaxed);
    }

    /// Records carried over from earlier runs ([`carry`](Self::carry)).
    pub fn carried(&self) -> u64 {
        // Relaxed: set before the shards start; see `carry`.
        self.carried.load(Ordering::Relaxed)
    }

    /// The configured budget.
    pub fn max_bad(&self) -> u64 {
        self.max_bad
    }

    /// Records this run has taken so far (those carried over not
    /// included).
    pub fn used(&self) -> u64 {
        // Relaxed: a reading for reports, taken after the shards finished.
        self.used.load(Ordering::Relaxed) - self.carried()
    }

    /// Whether `more` records beyond those taken would still fit.
    pub fn fits(&self, more: u64) -> bool {
        // Relaxed: an advisory read; `reserve` makes the binding decision.
        self.used.load(Ordering::Relaxed) + more <= self.max_bad
    }

    /// Whether one record more fits beside the `refused` ones a batch has
    /// set aside so far, when `held` records of an earlier attempt of the
    /// same batch (whose `COMMIT` went unanswered) are still reserved: a
    /// replay refuses those again, so they are not counted twice.
    pub fn fits_another(&self, refused: u64, held: u64) -> bool {
        self.fits((refused + 1).saturating_sub(held))
    }

    /// Takes `count` records from the budget; `false` (and nothing taken)
    /// when they do not fit.
    pub fn reserve(&self, count: u64) -> bool {
        // Relaxed: the counter guards only itself; no other memory depends on it.
        let before = self.used.fetch_add(count, Ordering::Relaxed);
        if before + count <= self.max_bad {
            return true;
        }
        self.used.fetch_sub(count, Ordering::Relaxed);
        false
    }

    /// How an over-budget error names the `earlier` records carried over
    /// ([`carried`](Self::carried)): nothing when there were none, else
    /// `" (N of them before the resume)"`.
    pub fn note_earlier(earlier: u64) -> String {
        match earlier {
            0 => String::new(),
            n => format!(" ({n} of them before the resume)"),
        }
    }

    /// Gives back `count` records reserved for a batch that did not commit.
    pub fn release(&self, count: u64) {
        // Relaxed: see `reserve`.
        self.used.fetch_sub(count, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_never_overdrawn() {
        let budget = RejectBudget::new(3);
        assert!(budget.reserve(2));
        assert!(!budget.reserve(2));
        assert!(budget.fits(1) && !budget.fits(2));
        assert!(budget.reserve(1));
        assert!(!budget.reserve(1));
        budget.release(3);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn records_of_earlier_runs_count_against_the_budget() {
        let budget = RejectBudget::new(3);
        budget.carry(2);
        assert_eq!((budget.used(), budget.carried()), (0, 2));
        assert!(budget.fits(1) && !budget.fits(2));
        assert!(budget.reserve(1));
        assert!(!budget.reserve(1));
        assert_eq!(budget.used(), 1);
        // More than the budget carried over: no record of this run fits.
        let over = RejectBudget::new(1);
        over.carry(4);
        assert!(!over.fits(1) && !over.reserve(1));
        assert_eq!(over.used(), 0);
    }

    #[test]
    fn a_replay_does_not_count_its_held_records_twice() {
        let budget = RejectBudget::new(2);
        // Two records of a batch whose COMMIT went unanswered, held.
        assert!(budget.reserve(2));
        assert!(!budget.fits(1));
        // Its replay refuses the same two again, and no third.
        assert!(budget.fits_another(0, 2) && budget.fits_another(1, 2));
        assert!(!budget.fits_another(2, 2));
    }
}
