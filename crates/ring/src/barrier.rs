//! Where a processor waits: for the producers, or for its upstream stage.

use std::sync::Arc;

use crate::gather::Gathering;
use crate::ring_buffer::RingBuffer;
use crate::sequence::{minimum, Sequence};

/// Why a wait ended without events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitError {
    /// The ring halted.
    Halted,
    /// The wait strategy's timeout elapsed.
    TimedOut,
}

/// What a poller finds when it looks without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readiness {
    /// Everything up to this sequence may be read.
    Ready(i64),
    /// Nothing is published yet.
    Idle,
    /// Published, but an upstream stage has not finished it.
    Gating,
}

/// Hot polls between two looks at the halt flag: a halt is noticed within
/// ~100 ns, and the flag's load stays out of most polls.
const HALT_CHECK_POLLS: u32 = 64;

/// Tracks what a processor may read: sequences published by the producers
/// and, for a later stage, already processed by every upstream processor.
pub(crate) struct SequenceBarrier<E> {
    ring: Arc<RingBuffer<E>>,
    /// The previous stage's sequences; empty for the first stage.
    upstream: Box<[Arc<Sequence>]>,
    /// First stage of a marked ring: how many slots' markers one look reads
    /// at most (the processor's largest batch; it takes no more at once).
    scan: i64,
    /// Whether gathering paid off for the batches before.
    gathering: Gathering,
}

impl<E> SequenceBarrier<E> {
    /// A barrier for a processor taking at most `max_batch` events at once.
    pub(crate) fn new(
        ring: Arc<RingBuffer<E>>,
        upstream: Vec<Arc<Sequence>>,
        max_batch: usize,
    ) -> Self {
        let scan = max_batch.clamp(1, ring.capacity()) as i64;
        SequenceBarrier {
            ring,
            upstream: upstream.into_boxed_slice(),
            scan,
            gathering: Gathering::default(),
        }
    }

    /// Waits until `sequence` may be read; returns the highest sequence that
    /// may be read now (at least `sequence`), so the caller can take
    /// everything up to it as one batch.
    #[inline]
    pub(crate) fn wait_for(&self, sequence: i64) -> Result<i64, WaitError> {
        // Check the halt before the fast path: `halt` abandons whatever is
        // left in the ring, so a processor that is behind must stop at its
        // next wait, not drain the rest first (found by the lifecycle test
        // `halt_abandons_what_is_left_in_the_ring`).
        if self.ring.is_halted() {
            return Err(WaitError::Halted);
        }
        if let Some(available) = self.available(sequence) {
            // Events were already waiting: the producer is ahead, so let a
            // short batch grow (see `WaitStrategy` on gathering).
            if self.ring.waiter.gathers() {
                return Ok(self.gathering.take(sequence, available, || {
                    self.available(sequence).unwrap_or(available)
                }));
            }
            return Ok(available);
        }
        // Nothing yet: whatever arrives is handed over at once. A busy-spin
        // processor polls in a tight loop first (see `Waiter::hot_polls`;
        // the loom models run two such polls before the loop below).
        let hot = self.ring.waiter.hot_polls();
        for poll in 1..=hot {
            if let Some(available) = self.available(sequence) {
                return Ok(available);
            }
            if poll % HALT_CHECK_POLLS == 0 && self.ring.is_halted() {
                return Err(WaitError::Halted);
            }
        }
        let mut idle = self.ring.waiter.idle().after_polls(hot);
        loop {
            if self.ring.is_halted() {
                return Err(WaitError::Halted);
            }
            idle.pause(|| self.ring.is_halted() || self.available(sequence).is_some())
                .map_err(|_| WaitError::TimedOut)?;
            if let Some(available) = self.available(sequence) {
                return Ok(available);
            }
        }
    }

    /// Whether `sequence` may be read now, without waiting.
    #[inline]
    pub(crate) fn readiness(&self, sequence: i64) -> Readiness {
        if let Some(available) = self.available(sequence) {
            return Readiness::Ready(available);
        }
        // Acquire (in `cursor`), though only the answer's kind depends on
        // it: nothing is read on the strength of it.
        if !self.upstream.is_empty() && self.ring.cursor() >= sequence {
            Readiness::Gating
        } else {
            Readiness::Idle
        }
    }

    /// The highest readable sequence if `sequence` is readable.
    #[inline]
    fn available(&self, sequence: i64) -> Option<i64> {
        if self.upstream.is_empty() && self.ring.publishes_in_slots() {
            // The slot's own marker, not the cursor: polling it brings the
            // event's cache line over with it (see `RingBuffer`). The
            // Acquire loads in `is_published` pair with the producers'
            // Release stores in `publish`.
            if !self.ring.is_published(sequence) {
                return None;
            }
            // Whatever else is published already goes in the same batch;
            // stop before the first gap. (Reading the cursor for this would
            // cost the hand-off the very line transfer the markers save.)
            let limit = sequence + self.scan - 1;
            Some(self.ring.highest_published(sequence + 1, limit))
        } else if self.upstream.is_empty() {
            // Acquire (in `get`): pairs with the producer's Release publish.
            let cursor = self.ring.cursor.get();
            if cursor < sequence {
                return None;
            }
            // Multi-producer: the cursor counts claims, some of which may not
            // be published yet; stop before the first gap.
            let published = self.ring.highest_published(sequence, cursor);
            (published >= sequence).then_some(published)
        } else {
            // Upstream processors only ever pass published sequences, and
            // their Release `set` (paired with this Acquire `get`) carries
            // both the producer's writes and their own.
            let processed = minimum(&self.upstream, i64::MAX);
            (processed >= sequence).then_some(processed)
        }
    }
}
