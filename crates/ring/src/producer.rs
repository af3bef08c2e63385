//! Producer handles: claim slots, fill them in place, publish.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::ring_buffer::{RingBuffer, SlotRuns};
use crate::sequencer::{claim_multi, ClaimError, SingleSequencer};

/// The only producer of a single-producer ring.
///
/// It is `Send` but neither `Clone` nor `Sync`: the single-producer
/// sequencer keeps its claim state unshared, which is what lets it claim
/// without any atomic read-modify-write.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::{EventHandler, HandlerError, RingBuilder};
///
/// struct Print;
/// impl EventHandler<u64> for Print {
///     fn on_event(&mut self, event: &u64, _seq: i64, _end: bool) -> Result<(), HandlerError> {
///         assert!(*event < 10);
///         Ok(())
///     }
/// }
///
/// let (mut producer, ring) = RingBuilder::new(8, || 0u64).handle_events_with(Print).start()?;
/// producer.publish(|slot| *slot = 7)?;
/// let mut claim = producer.next_n(2)?;
/// *claim.get_mut(0) = 8;
/// *claim.get_mut(1) = 9;
/// claim.publish();
/// ring.shutdown()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Producer<E> {
    ring: Arc<RingBuffer<E>>,
    sequencer: SingleSequencer,
    _not_sync: PhantomData<Cell<()>>,
}

/// One of any number of producers of a multi-producer ring; clone it to add
/// producers. Claims use an atomic add on the shared cursor.
pub struct MultiProducer<E> {
    ring: Arc<RingBuffer<E>>,
}

impl<E> Clone for MultiProducer<E> {
    fn clone(&self) -> Self {
        MultiProducer {
            ring: Arc::clone(&self.ring),
        }
    }
}

impl<E> Producer<E> {
    pub(crate) fn new(ring: Arc<RingBuffer<E>>) -> Self {
        Producer {
            ring,
            sequencer: SingleSequencer::new(),
            _not_sync: PhantomData,
        }
    }

    /// Claims the next slot, waiting while the ring is full.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Halted`] once the ring has halted.
    // Named after the Disruptor's `next()`; a claim is not an iterator item.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Claim<'_, E>, ClaimError> {
        self.next_n(1)
    }

    /// Claims the next `n` slots, waiting while the ring is too full.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Halted`] once the ring has halted.
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero or larger than the ring's capacity.
    pub fn next_n(&mut self, n: usize) -> Result<Claim<'_, E>, ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = self.sequencer.claim(&self.ring, n, true)?;
        Ok(Claim::new(&self.ring, last - n + 1, last))
    }

    /// Claims the next slot if one is free now.
    ///
    /// # Errors
    ///
    /// [`ClaimError::InsufficientCapacity`] when the ring is full,
    /// [`ClaimError::Halted`] once it has halted.
    pub fn try_next(&mut self) -> Result<Claim<'_, E>, ClaimError> {
        self.try_next_n(1)
    }

    /// Claims the next `n` slots if that many are free now.
    ///
    /// # Errors
    ///
    /// As [`Producer::try_next`].
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero or larger than the ring's capacity.
    pub fn try_next_n(&mut self, n: usize) -> Result<Claim<'_, E>, ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = self.sequencer.claim(&self.ring, n, false)?;
        Ok(Claim::new(&self.ring, last - n + 1, last))
    }

    /// Claims one slot, fills it with `fill` and publishes it.
    ///
    /// The fast path: no [`Claim`] is built, and a panic in `fill` halts the
    /// ring as a dropped claim would.
    ///
    /// # Errors
    ///
    /// As [`Producer::next`].
    #[inline]
    pub fn publish(&mut self, fill: impl FnOnce(&mut E)) -> Result<(), ClaimError> {
        let sequence = self.sequencer.claim(&self.ring, 1, true)?;
        let ring = &*self.ring;
        // Once per cache line of slots: fetch the line 2 KiB on for writing,
        // as `publish_batch` does (see `SingleSequencer::prefetch_ahead`).
        if (sequence as u64) % slots_per_line::<E>() == 0 {
            self.sequencer.prefetch_ahead(ring, sequence, 1);
        }
        // One branch on the layout, then a constant stride and no further
        // layout checks (the slot store may alias the ring, so every check
        // after it would reload its flag).
        if ring.publishes_in_slots() {
            // SAFETY: the layout is the one just checked.
            unsafe { fill_one_in::<E, true>(ring, sequence, fill) };
            ring.publish_single::<true>(sequence, sequence);
        } else {
            // SAFETY: as above.
            unsafe { fill_one_in::<E, false>(ring, sequence, fill) };
            ring.publish_single::<false>(sequence, sequence);
        }
        Ok(())
    }

    /// Claims `n` slots, calls `fill(slot, i)` for each and publishes them
    /// together (one cursor update for the whole batch).
    ///
    /// # Errors
    ///
    /// As [`Producer::next_n`].
    #[inline]
    pub fn publish_batch(
        &mut self,
        n: usize,
        fill: impl FnMut(&mut E, usize),
    ) -> Result<(), ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = self.sequencer.claim(&self.ring, n, true)?;
        self.sequencer.prefetch_ahead(&self.ring, last, n);
        fill_claimed(&self.ring, last - n + 1, last, fill);
        self.ring.publish(last - n + 1, last);
        Ok(())
    }

    /// As [`publish`](Self::publish), passing `fill` the slot's sequence
    /// too (a request id, a reply slot); returns that sequence.
    ///
    /// # Errors
    ///
    /// As [`Producer::next`].
    #[inline]
    pub fn publish_with_seq(&mut self, fill: impl FnOnce(&mut E, i64)) -> Result<i64, ClaimError> {
        // The single producer's next claim is known before it is made.
        let sequence = self.sequencer.claimed() + 1;
        self.publish(|slot| fill(slot, sequence))?;
        Ok(sequence)
    }

    /// As [`publish_batch`](Self::publish_batch), passing `fill` each
    /// slot's sequence instead of its index; returns the last sequence.
    ///
    /// # Errors
    ///
    /// As [`Producer::next_n`].
    #[inline]
    pub fn publish_batch_with_seq(
        &mut self,
        n: usize,
        mut fill: impl FnMut(&mut E, i64),
    ) -> Result<i64, ClaimError> {
        let first = self.sequencer.claimed() + 1;
        self.publish_batch(n, |slot, i| fill(slot, first + i as i64))?;
        Ok(first + n as i64 - 1)
    }

    /// The highest sequence published so far.
    pub fn cursor(&self) -> i64 {
        self.ring.cursor()
    }

    /// Slots that could be claimed now without waiting.
    pub fn remaining_capacity(&self) -> usize {
        self.ring.remaining_capacity()
    }
}

impl<E> MultiProducer<E> {
    pub(crate) fn new(ring: Arc<RingBuffer<E>>) -> Self {
        MultiProducer { ring }
    }

    /// Claims the next slot, waiting while the ring is full.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Halted`] once the ring has halted.
    // Named after the Disruptor's `next()`; a claim is not an iterator item.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&self) -> Result<Claim<'_, E>, ClaimError> {
        self.next_n(1)
    }

    /// Claims the next `n` slots, waiting while the ring is too full.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Halted`] once the ring has halted.
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero or larger than the ring's capacity.
    pub fn next_n(&self, n: usize) -> Result<Claim<'_, E>, ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = claim_multi(&self.ring, n, true)?;
        Ok(Claim::new(&self.ring, last - n + 1, last))
    }

    /// Claims the next slot if one is free now.
    ///
    /// # Errors
    ///
    /// [`ClaimError::InsufficientCapacity`] when the ring is full,
    /// [`ClaimError::Halted`] once it has halted.
    pub fn try_next(&self) -> Result<Claim<'_, E>, ClaimError> {
        self.try_next_n(1)
    }

    /// Claims the next `n` slots if that many are free now.
    ///
    /// # Errors
    ///
    /// As [`MultiProducer::try_next`].
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero or larger than the ring's capacity.
    pub fn try_next_n(&self, n: usize) -> Result<Claim<'_, E>, ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = claim_multi(&self.ring, n, false)?;
        Ok(Claim::new(&self.ring, last - n + 1, last))
    }

    /// Claims one slot, fills it with `fill` and publishes it (the fast
    /// path, as [`Producer::publish`]).
    ///
    /// # Errors
    ///
    /// As [`MultiProducer::next`].
    #[inline]
    pub fn publish(&self, fill: impl FnOnce(&mut E)) -> Result<(), ClaimError> {
        let sequence = claim_multi(&self.ring, 1, true)?;
        fill_one(&self.ring, sequence, fill);
        self.ring.publish(sequence, sequence);
        Ok(())
    }

    /// Claims `n` slots, calls `fill(slot, i)` for each and publishes them.
    ///
    /// # Errors
    ///
    /// As [`MultiProducer::next_n`].
    #[inline]
    pub fn publish_batch(
        &self,
        n: usize,
        fill: impl FnMut(&mut E, usize),
    ) -> Result<(), ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = claim_multi(&self.ring, n, true)?;
        fill_claimed(&self.ring, last - n + 1, last, fill);
        self.ring.publish(last - n + 1, last);
        Ok(())
    }

    /// As [`publish`](Self::publish), passing `fill` the slot's sequence
    /// too; returns that sequence.
    ///
    /// # Errors
    ///
    /// As [`MultiProducer::next`].
    #[inline]
    pub fn publish_with_seq(&self, fill: impl FnOnce(&mut E, i64)) -> Result<i64, ClaimError> {
        let sequence = claim_multi(&self.ring, 1, true)?;
        fill_one(&self.ring, sequence, |slot| fill(slot, sequence));
        self.ring.publish(sequence, sequence);
        Ok(sequence)
    }

    /// As [`publish_batch`](Self::publish_batch), passing `fill` each
    /// slot's sequence instead of its index; returns the last sequence.
    ///
    /// # Errors
    ///
    /// As [`MultiProducer::next_n`].
    #[inline]
    pub fn publish_batch_with_seq(
        &self,
        n: usize,
        mut fill: impl FnMut(&mut E, i64),
    ) -> Result<i64, ClaimError> {
        let n = checked_len(&self.ring, n);
        let last = claim_multi(&self.ring, n, true)?;
        let first = last - n + 1;
        fill_claimed(&self.ring, first, last, |slot, i| {
            fill(slot, first + i as i64)
        });
        self.ring.publish(first, last);
        Ok(last)
    }

    /// Slots that could be claimed now without waiting.
    pub fn remaining_capacity(&self) -> usize {
        self.ring.remaining_capacity()
    }
}

/// Calls `fill(slot, i)` on the claimed slots `first..=last`. If `fill`
/// panics, the ring halts with a failure instead of leaving the claim
/// unpublished (processors would wait on it forever).
#[inline(always)]
fn fill_claimed<E>(
    ring: &RingBuffer<E>,
    first: i64,
    last: i64,
    mut fill: impl FnMut(&mut E, usize),
) {
    let guard = HaltOnUnwind {
        ring,
        sequence: first,
    };
    // Plain slice loops: no masking per slot, so simple fills vectorise.
    let mut index = 0;
    match ring.slot_runs(first, last) {
        SlotRuns::Plain(runs) => {
            for run in runs {
                for cell in run {
                    // SAFETY: the caller claimed `first..=last` and has not
                    // published it (see `Claim::get_mut`); each slot is
                    // borrowed only during `fill`.
                    cell.with_mut(|slot| fill(unsafe { &mut *slot }, index));
                    index += 1;
                }
            }
        }
        SlotRuns::Marked(runs) => {
            for run in runs {
                for slot in run {
                    // SAFETY: as in the plain layout.
                    slot.event()
                        .with_mut(|event| fill(unsafe { &mut *event }, index));
                    index += 1;
                }
            }
        }
    }
    std::mem::forget(guard);
}

/// [`fill_claimed`] for one slot, taking a `FnOnce`.
#[inline(always)]
fn fill_one<E>(ring: &RingBuffer<E>, sequence: i64, fill: impl FnOnce(&mut E)) {
    match ring.publishes_in_slots() {
        // SAFETY: the ring's own layout.
        true => unsafe { fill_one_in::<E, true>(ring, sequence, fill) },
        // SAFETY: the ring's own layout.
        false => unsafe { fill_one_in::<E, false>(ring, sequence, fill) },
    }
}

/// Events of type `E` per 64-byte cache line in the plain layout (1 for
/// events of a line or more); a power of two for power-of-two sizes.
#[inline(always)]
const fn slots_per_line<E>() -> u64 {
    let size = std::mem::size_of::<E>();
    if size == 0 || size >= 64 {
        1
    } else {
        (64 / size) as u64
    }
}

/// [`fill_one`] in a layout the caller names (a constant stride).
///
/// # Safety
///
/// `MARKED == ring.publishes_in_slots()`.
#[inline(always)]
unsafe fn fill_one_in<E, const MARKED: bool>(
    ring: &RingBuffer<E>,
    sequence: i64,
    fill: impl FnOnce(&mut E),
) {
    let guard = HaltOnUnwind { ring, sequence };
    // SAFETY: the caller named the ring's layout; the slot's use is as in
    // `fill_claimed`.
    let cell = unsafe { ring.slot_in::<MARKED>(sequence) };
    // SAFETY: as in `fill_claimed`.
    cell.with_mut(|slot| fill(unsafe { &mut *slot }));
    std::mem::forget(guard);
}

/// Halts the ring if dropped, which only happens while unwinding out of a
/// producer's fill closure.
struct HaltOnUnwind<'a, E> {
    ring: &'a RingBuffer<E>,
    sequence: i64,
}

impl<E> Drop for HaltOnUnwind<'_, E> {
    fn drop(&mut self) {
        self.ring.fail_producer(self.sequence);
    }
}

#[inline]
fn checked_len<E>(ring: &RingBuffer<E>, n: usize) -> i64 {
    assert!(
        n > 0 && n <= ring.capacity(),
        "claim of {n} slots on a ring of {}",
        ring.capacity()
    );
    n as i64
}

/// Claimed slots, writable in place until published.
///
/// Dropping a claim publishes it, so a claimed sequence can never leave a
/// gap that stalls the processors. If the claim is dropped while its thread
/// panics, the slots may be half-written: the ring then halts with a
/// failure instead of publishing them, and producers and processors stop
/// instead of hanging.
pub struct Claim<'a, E> {
    ring: &'a RingBuffer<E>,
    first: i64,
    last: i64,
}

impl<'a, E> Claim<'a, E> {
    fn new(ring: &'a RingBuffer<E>, first: i64, last: i64) -> Self {
        Claim { ring, first, last }
    }

    /// The sequence of the first claimed slot.
    pub fn first_sequence(&self) -> i64 {
        self.first
    }

    /// Number of claimed slots.
    pub fn len(&self) -> usize {
        (self.last - self.first + 1) as usize
    }

    /// Always false: a claim holds at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The `index`-th claimed slot.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn get_mut(&mut self, index: usize) -> &mut E {
        let sequence = self.sequence_of(index);
        // SAFETY: the slot is claimed by this producer alone (unique claim)
        // and not yet published, and the gating check in the sequencer
        // proved every processor is done with its previous lap; the `&mut
        // self` borrow keeps this the only reference handed out.
        self.ring
            .slot(sequence)
            .with_mut(|slot| unsafe { &mut *slot })
    }

    /// Calls `fill` on the `index`-th claimed slot.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn write(&mut self, index: usize, fill: impl FnOnce(&mut E)) {
        let sequence = self.sequence_of(index);
        // SAFETY: as in `get_mut`; the reference does not outlive `fill`.
        self.ring
            .slot(sequence)
            .with_mut(|slot| fill(unsafe { &mut *slot }));
    }

    /// Calls `fill(slot, i)` on every claimed slot, then publishes.
    pub fn fill(self, fill: impl FnMut(&mut E, usize)) {
        let claim = std::mem::ManuallyDrop::new(self);
        fill_claimed(claim.ring, claim.first, claim.last, fill);
        claim.ring.publish(claim.first, claim.last);
    }

    /// Makes the claimed slots visible to processors.
    pub fn publish(self) {}

    fn sequence_of(&self, index: usize) -> i64 {
        assert!(
            index < self.len(),
            "index {index} of a {}-slot claim",
            self.len()
        );
        self.first + index as i64
    }
}

impl<E> Drop for Claim<'_, E> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.ring.fail_producer(self.first);
        } else {
            self.ring.publish(self.first, self.last);
        }
    }
}
