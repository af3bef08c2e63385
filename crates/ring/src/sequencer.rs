//! Claiming slots: the single- and multi-producer sequencers.
//!
//! A claim of `n` slots ending at `last` may proceed once the slowest
//! last-stage processor has passed `last - capacity` (the *wrap point*):
//! every slot in the claim has then been fully consumed in its previous lap.
//! Both sequencers cache that minimum and reread the processors' sequences
//! only when the cache says the ring looks full.

use std::time::Instant;

use crate::ring_buffer::RingBuffer;
use crate::sequence::INITIAL_SEQUENCE;

/// Why a claim failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClaimError {
    /// A non-blocking claim found fewer free slots than it asked for.
    #[error("insufficient capacity in the ring")]
    InsufficientCapacity,
    /// The ring halted (a handler failed, or `halt` was called); nothing
    /// more will be consumed.
    #[error("the ring has halted")]
    Halted,
}

/// The single producer's claim state; lives in the producer, not shared.
#[derive(Debug)]
pub(crate) struct SingleSequencer {
    /// Highest sequence claimed so far.
    claimed: i64,
    /// Last gating minimum seen; valid as a lower bound forever.
    gate: i64,
}

impl SingleSequencer {
    pub(crate) fn new() -> Self {
        SingleSequencer {
            claimed: INITIAL_SEQUENCE,
            gate: INITIAL_SEQUENCE,
        }
    }

    /// The highest sequence claimed so far.
    #[inline(always)]
    pub(crate) fn claimed(&self) -> i64 {
        self.claimed
    }

    /// Claims `n` slots; returns the last claimed sequence.
    #[inline(always)]
    pub(crate) fn claim<E>(
        &mut self,
        ring: &RingBuffer<E>,
        n: i64,
        block: bool,
    ) -> Result<i64, ClaimError> {
        if ring.is_halted() {
            return Err(ClaimError::Halted);
        }
        let last = self.claimed + n;
        let wrap_point = last - ring.capacity() as i64;
        if wrap_point > self.gate {
            self.gate = wait_for_gate(ring, wrap_point, block)?;
        }
        self.claimed = last;
        Ok(last)
    }

    /// Before filling a batch of `n` slots ending at `last`: prefetches for
    /// writing the `n` slots that a batch [`PREFETCH_BYTES`] further on
    /// will fill, if the cached gate says every processor has released them
    /// (so no reader loses a line it still needs). Measured on batches of
    /// 256 `u64` events: 1.12–1.14 against 1.02–1.03 G events/s, +9–12%
    /// (docs/benchmarks.md).
    #[inline(always)]
    pub(crate) fn prefetch_ahead<E>(&self, ring: &RingBuffer<E>, last: i64, n: i64) {
        let ahead = (PREFETCH_BYTES / std::mem::size_of::<E>().max(1)) as i64;
        let end = last + n.max(ahead);
        if end - ring.capacity() as i64 <= self.gate {
            ring.prefetch_for_write(end - n + 1, end);
        }
    }
}

/// How far ahead of a batch publication the producer prefetches: far enough
/// for the lines to arrive before it gets there (on batches of 256 `u64`s,
/// 4 KiB did as well as 2 KiB, 8 KiB less).
const PREFETCH_BYTES: usize = 2048;

/// Claims `n` slots for one of several producers; returns the last one.
#[inline(always)]
pub(crate) fn claim_multi<E>(ring: &RingBuffer<E>, n: i64, block: bool) -> Result<i64, ClaimError> {
    if ring.is_halted() {
        return Err(ClaimError::Halted);
    }
    if block {
        // Claim first, then wait for room: claims never fail, so a plain
        // fetch_add beats a CAS loop under contention.
        let last = ring.cursor.fetch_add(n) + n;
        let wrap_point = last - ring.capacity() as i64;
        if wrap_point > ring.gate_cache.get() {
            let gate = wait_for_gate(ring, wrap_point, true)?;
            ring.gate_cache.set(gate);
        }
        return Ok(last);
    }
    loop {
        let current = ring.cursor.get();
        let last = current + n;
        let wrap_point = last - ring.capacity() as i64;
        if wrap_point > ring.gate_cache.get() {
            let gate = ring.min_gating();
            ring.gate_cache.set(gate);
            if wrap_point > gate {
                return Err(ClaimError::InsufficientCapacity);
            }
        }
        if ring.cursor.compare_exchange(current, last) {
            return Ok(last);
        }
    }
}

/// Waits until every last-stage processor has passed `wrap_point`; returns
/// the gating minimum it saw. Out of line: the claim fast path only
/// compares against its cached gate.
#[cold]
#[inline(never)]
fn wait_for_gate<E>(ring: &RingBuffer<E>, wrap_point: i64, block: bool) -> Result<i64, ClaimError> {
    let gate = ring.min_gating();
    if wrap_point <= gate {
        // Only the cached gate was stale: no wait.
        return Ok(gate);
    }
    if ring.is_halted() {
        return Err(ClaimError::Halted);
    }
    if !block {
        return Err(ClaimError::InsufficientCapacity);
    }
    // A real wait for room: timed for the ring's metrics (two clock reads
    // per wait, never on the publish fast path).
    let started = Instant::now();
    let mut idle = ring.waiter.idle();
    let result = loop {
        // A producer has no timeout to report: it just keeps waiting.
        let _ = idle.pause(|| wrap_point <= ring.min_gating() || ring.is_halted());
        let gate = ring.min_gating();
        if wrap_point <= gate {
            break Ok(gate);
        }
        if ring.is_halted() {
            break Err(ClaimError::Halted);
        }
    };
    ring.producer_stats().record_wait(started.elapsed());
    result
}
