//! The padded sequence counter that every party in the ring publishes.

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicI64, Ordering};

/// The value of a sequence before anything was claimed or processed.
pub const INITIAL_SEQUENCE: i64 = -1;

/// A monotonically increasing position in the ring, alone on its cache line.
///
/// Producers publish the cursor through one, each event processor publishes
/// how far it has processed through another. Each is written by one thread
/// and read by others; padding keeps two hot sequences from sharing a cache
/// line (false sharing costs a cache-line round trip per write).
#[derive(Debug)]
pub struct Sequence {
    value: CachePadded<AtomicI64>,
}

impl Sequence {
    /// A sequence holding `value`.
    pub fn new(value: i64) -> Self {
        Sequence {
            value: CachePadded::new(AtomicI64::new(value)),
        }
    }

    /// The current value.
    ///
    /// Acquire: a reader that sees value `v` also sees every slot write the
    /// writer made before its Release `set(v)`, which is what makes slot
    /// contents safe to read (or, for gating sequences, to overwrite).
    #[inline]
    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Acquire)
    }

    /// Publishes `value`.
    ///
    /// Release: pairs with the Acquire in [`Sequence::get`]; everything this
    /// thread did to the slots up to `value` happens-before a reader's use.
    #[inline]
    pub(crate) fn set(&self, value: i64) {
        self.value.store(value, Ordering::Release);
    }

    /// Adds `n` and returns the previous value (the multi-producer claim).
    ///
    /// Relaxed: the claim counter hands out unique ranges, which atomicity
    /// alone guarantees; no slot data is published through it (publication
    /// goes through the per-slot availability flags).
    #[inline]
    pub(crate) fn fetch_add(&self, n: i64) -> i64 {
        self.value.fetch_add(n, Ordering::Relaxed)
    }

    /// Replaces `current` with `new` if it still holds `current`.
    ///
    /// Relaxed for the same reason as [`Sequence::fetch_add`].
    #[inline]
    pub(crate) fn compare_exchange(&self, current: i64, new: i64) -> bool {
        self.value
            .compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
}

/// The smallest of `sequences`, or `default` when there are none.
#[inline]
pub(crate) fn minimum(sequences: &[Arc<Sequence>], default: i64) -> i64 {
    sequences.iter().map(|s| s.get()).min().unwrap_or(default)
}
