//! What the producers of a ring count about themselves: how often and how
//! long they waited for room.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_utils::CachePadded;

/// Time the producers spent waiting for capacity, kept by the ring on a
/// cache line of its own (the ring's hot read-mostly fields stay clean).
///
/// Written only on the producers' out-of-line wait for room (never on the
/// publish fast path), with a relaxed `fetch_add`: several producers may
/// wait at once, and readers want a recent total, not an ordering.
#[derive(Debug, Default)]
pub(crate) struct ProducerStats(CachePadded<ProducerCounters>);

#[derive(Debug, Default)]
struct ProducerCounters {
    waits: AtomicU64,
    wait_nanos: AtomicU64,
}

impl ProducerStats {
    /// Waits so far, and their total time in nanoseconds.
    pub(crate) fn read(&self) -> (u64, u64) {
        // Relaxed: a recent total is all a reader wants (see the type).
        let waits = self.0.waits.load(Ordering::Relaxed);
        (waits, self.0.wait_nanos.load(Ordering::Relaxed))
    }

    /// A producer waited `waited` for room.
    pub(crate) fn record_wait(&self, waited: Duration) {
        // Relaxed: see the type.
        self.0.waits.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.0.wait_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}
