//! How often the sinks of one import had to recover: counted by the sinks
//! as it happens, read for the import's report.

use std::sync::atomic::{AtomicU64, Ordering};

/// How often the shards of one import had to recover, over all shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recoveries {
    /// Connections opened again after one was lost.
    pub reconnects: u64,
    /// Reads or writes that timed out (a stalled server or network).
    pub timeouts: u64,
    /// Batches the server rolled back for a conflict with another
    /// transaction (a deadlock, a serialization failure, a Galera
    /// certification conflict); each is replayed.
    pub conflicts: u64,
}

/// The counts behind [`Recoveries`], shared by the sinks of one import
/// (behind an `Arc`) and added to from their threads.
#[derive(Debug, Default)]
pub struct RecoveryCounters {
    reconnects: AtomicU64,
    timeouts: AtomicU64,
    conflicts: AtomicU64,
}

impl RecoveryCounters {
    /// Counts a reconnect.
    pub fn reconnected(&self) {
        // Relaxed: a counter read for the report after the shards finished.
        self.reconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a timeout.
    pub fn timed_out(&self) {
        // Relaxed: as above.
        self.timeouts.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a conflict.
    pub fn conflicted(&self) {
        // Relaxed: as above.
        self.conflicts.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn read(&self) -> Recoveries {
        // Relaxed: a reading for reports, taken after the shards finished
        // (joining their threads orders it after their counts).
        Recoveries {
            reconnects: self.reconnects.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            conflicts: self.conflicts.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_by_kind() {
        let counters = RecoveryCounters::default();
        counters.reconnected();
        counters.reconnected();
        counters.timed_out();
        counters.conflicted();
        assert_eq!(
            counters.read(),
            Recoveries {
                reconnects: 2,
                timeouts: 1,
                conflicts: 1
            }
        );
    }
}
