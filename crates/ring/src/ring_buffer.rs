//! The preallocated slots and the shared state every party coordinates on.

use std::sync::Arc;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::exception::Failure;
use crate::sequence::{minimum, Sequence, INITIAL_SEQUENCE};
use crate::sync::{AtomicBool, AtomicI32, Ordering, UnsafeCell};
use crate::wait::{WaitStrategy, Waiter};

/// Bytes per cache line on the CPUs the prefetch is for.
#[cfg(all(target_arch = "x86_64", not(loom)))]
const CACHE_LINE: usize = 64;

/// A fixed ring of preallocated events and the sequences that guard them.
///
/// Slots are built once by a factory and reused in place: a producer
/// overwrites a slot's contents (reusing any heap buffers it owns), it never
/// moves a new value in. Sequence `s` lives in slot `s & (capacity - 1)`.
///
/// Users do not touch a `RingBuffer` directly: producers claim and publish
/// through [`Producer`](crate::Producer) / [`MultiProducer`](crate::MultiProducer)
/// and processors read through their barriers; [`RingHandle`](crate::RingHandle)
/// reports its state.
///
/// Single-producer protocol: `cursor` is the highest *published* sequence.
/// Multi-producer protocol: `cursor` is the highest *claimed* sequence, and
/// `available[s & mask] == s >> shift` (the lap number) marks `s` published.
pub struct RingBuffer<E> {
    slots: Box<[UnsafeCell<E>]>,
    mask: i64,
    shift: u32,
    pub(crate) cursor: Sequence,
    /// Multi-producer only (empty otherwise): the lap each slot was last
    /// published in.
    available: Box<[AtomicI32]>,
    /// The last stage's sequences: a slot may be overwritten once all of
    /// them have passed it.
    gating: Box<[Arc<Sequence>]>,
    /// Multi-producer only: the last gating minimum any producer saw.
    pub(crate) gate_cache: Sequence,
    pub(crate) waiter: Waiter,
    /// Set once, by `halt`; every wait loop checks it.
    alert: CachePadded<AtomicBool>,
    failure: Mutex<Option<Failure>>,
}

// SAFETY: the ring hands `&E` to processors on several threads at once
// (parallel handlers of one stage), so `E: Sync`; it hands `&mut E` to a
// producer or an exclusive processor on another thread, so `E: Send`. Slot
// access is otherwise serialised by the sequence protocol (see `slot`).
unsafe impl<E: Send + Sync> Sync for RingBuffer<E> {}
// SAFETY: owning the ring owns the events; moving it moves `E`s.
unsafe impl<E: Send> Send for RingBuffer<E> {}

impl<E> RingBuffer<E> {
    /// Builds `capacity` slots with `factory`.
    ///
    /// `capacity` must be a power of two (the builder checks).
    pub(crate) fn new(
        capacity: usize,
        mut factory: impl FnMut() -> E,
        multi_producer: bool,
        gating: Vec<Arc<Sequence>>,
        wait: WaitStrategy,
    ) -> Self {
        debug_assert!(capacity.is_power_of_two());
        let slots = (0..capacity).map(|_| UnsafeCell::new(factory())).collect();
        let laps = if multi_producer { capacity } else { 0 };
        RingBuffer {
            slots,
            mask: capacity as i64 - 1,
            shift: capacity.trailing_zeros(),
            cursor: Sequence::new(INITIAL_SEQUENCE),
            available: (0..laps).map(|_| AtomicI32::new(-1)).collect(),
            gating: gating.into_boxed_slice(),
            gate_cache: Sequence::new(INITIAL_SEQUENCE),
            waiter: Waiter::new(wait),
            alert: CachePadded::new(AtomicBool::new(false)),
            failure: Mutex::new(None),
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Highest sequence published (single producer) or claimed (multi).
    pub fn cursor(&self) -> i64 {
        self.cursor.get()
    }

    /// Slots a producer could claim right now without waiting.
    pub fn remaining_capacity(&self) -> usize {
        let consumed = self.min_gating();
        let produced = self.cursor.get();
        (self.capacity() as i64 - (produced - consumed)).max(0) as usize
    }

    /// The slot of sequence `sequence`.
    ///
    /// The cell itself is safe to obtain; dereferencing it is not. A thread
    /// may read a slot's event only while its sequence is published and not
    /// yet released by the reader's own sequence, and may write it only while
    /// it holds the slot exclusively: a producer between claim and publish,
    /// or the single processor of an exclusive stage.
    #[inline(always)]
    pub(crate) fn slot(&self, sequence: i64) -> &UnsafeCell<E> {
        let index = (sequence & self.mask) as usize;
        // SAFETY: `index <= mask < slots.len()` by construction.
        unsafe { self.slots.get_unchecked(index) }
    }

    /// The slots of `first..=last` (at most a capacity's worth) as two
    /// contiguous runs: up to the end of the array, then from its start
    /// (empty unless the range wraps). The same rules as [`slot`](Self::slot)
    /// govern dereferencing them. Contiguous runs let the compiler vectorise
    /// a batch fill, which `slot`'s masking per sequence prevents.
    #[inline(always)]
    pub(crate) fn slot_runs(&self, first: i64, last: i64) -> [&[UnsafeCell<E>]; 2] {
        let start = (first & self.mask) as usize;
        let len = (last - first + 1) as usize;
        debug_assert!(len <= self.slots.len());
        let head = len.min(self.slots.len() - start);
        [&self.slots[start..start + head], &self.slots[..len - head]]
    }

    /// Asks the CPU to fetch the cache lines of slots `first..=last` for
    /// writing (x86-64 `PREFETCHW`), so that the producer's stores to them
    /// later do not each wait for the line to come back from a reader's
    /// core. A hint: it changes no memory; nothing happens elsewhere or
    /// under loom.
    #[inline(always)]
    pub(crate) fn prefetch_for_write(&self, first: i64, last: i64) {
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        {
            let step = (CACHE_LINE / std::mem::size_of::<UnsafeCell<E>>().max(1)).max(1) as i64;
            let mut sequence = first;
            while sequence <= last {
                let slot: *const UnsafeCell<E> = self.slot(sequence);
                // SAFETY: PREFETCHW only moves a cache line: it reads no
                // data into registers, writes no memory and never faults,
                // whatever the address (and `slot` is in the slot array).
                // CPUs without the PRFCHW feature execute it as a NOP.
                unsafe {
                    std::arch::asm!(
                        "prefetchw [{0}]",
                        in(reg) slot,
                        options(nostack, preserves_flags, readonly)
                    );
                }
                sequence += step;
            }
        }
        #[cfg(not(all(target_arch = "x86_64", not(loom))))]
        let _ = (first, last);
    }

    /// The smallest last-stage sequence: everything up to it may be reused.
    #[inline]
    pub(crate) fn min_gating(&self) -> i64 {
        minimum(&self.gating, self.cursor.get())
    }

    /// Makes `first..=last` visible to processors and wakes blocked ones.
    #[inline]
    pub(crate) fn publish(&self, first: i64, last: i64) {
        if self.available.is_empty() {
            self.publish_cursor(last);
        } else {
            self.publish_available(first, last);
        }
    }

    /// Single producer: everything up to `last` is written; one store says so.
    #[inline(always)]
    pub(crate) fn publish_cursor(&self, last: i64) {
        self.cursor.set(last);
        self.waiter.signal();
    }

    /// Multi-producer: marks each of `first..=last` published in its lap.
    #[inline(always)]
    pub(crate) fn publish_available(&self, first: i64, last: i64) {
        for sequence in first..last + 1 {
            let index = (sequence & self.mask) as usize;
            // Release: publishes this slot's contents; pairs with the
            // Acquire load in `is_published`.
            self.available[index].store(self.lap(sequence), Ordering::Release);
        }
        self.waiter.signal();
    }

    /// The highest sequence in `lowest..=available` such that every sequence
    /// from `lowest` up to it is published.
    #[inline]
    pub(crate) fn highest_published(&self, lowest: i64, available: i64) -> i64 {
        if self.available.is_empty() {
            return available;
        }
        (lowest..=available)
            .find(|&sequence| !self.is_published(sequence))
            .map_or(available, |gap| gap - 1)
    }

    fn is_published(&self, sequence: i64) -> bool {
        let index = (sequence & self.mask) as usize;
        // Acquire: pairs with the Release store in `publish`, so the slot's
        // contents are visible once the lap matches.
        self.available[index].load(Ordering::Acquire) == self.lap(sequence)
    }

    #[inline]
    fn lap(&self, sequence: i64) -> i32 {
        (sequence >> self.shift) as i32
    }

    /// Whether the ring has halted; every wait gives up once it has.
    #[inline]
    pub(crate) fn is_halted(&self) -> bool {
        // Acquire: pairs with the Release in `halt`, so a thread that sees
        // the halt also sees the failure recorded before it.
        self.alert.load(Ordering::Acquire)
    }

    /// Stops every processor at its next wait and fails waiting producers.
    pub(crate) fn halt(&self) {
        // Release: pairs with the Acquire in `is_halted`, publishing the
        // failure recorded before the halt.
        self.alert.store(true, Ordering::Release);
        self.waiter.wake_all();
    }

    /// Records `failure` (the first one wins) and halts.
    pub(crate) fn fail(&self, failure: Failure) {
        self.failure.lock().get_or_insert(failure);
        self.halt();
    }

    /// Takes the recorded failure, if any.
    pub(crate) fn take_failure(&self) -> Option<Failure> {
        self.failure.lock().take()
    }

    /// Whether a failure has been recorded.
    pub(crate) fn has_failed(&self) -> bool {
        self.failure.lock().is_some()
    }
}

impl<E> std::fmt::Debug for RingBuffer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingBuffer")
            .field("capacity", &self.capacity())
            .field("cursor", &self.cursor())
            .field("multi_producer", &!self.available.is_empty())
            .field("halted", &self.is_halted())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn ring(capacity: usize) -> RingBuffer<usize> {
        let mut next = 0;
        let factory = move || {
            next += 1;
            next - 1
        };
        RingBuffer::new(
            capacity,
            factory,
            false,
            Vec::new(),
            WaitStrategy::busy_spin(),
        )
    }

    /// The slot indexes of the runs covering `first..=last`.
    fn runs(ring: &RingBuffer<usize>, first: i64, last: i64) -> [Vec<usize>; 2] {
        let read = |run: &[UnsafeCell<usize>]| {
            run.iter()
                // SAFETY: single-threaded test; nothing writes the slots.
                .map(|cell| cell.with(|slot| unsafe { *slot }))
                .collect()
        };
        let [head, tail] = ring.slot_runs(first, last);
        [read(head), read(tail)]
    }

    #[test]
    fn slot_runs_split_where_the_range_wraps() {
        let ring = ring(8);
        assert_eq!(runs(&ring, 2, 5), [vec![2, 3, 4, 5], vec![]]);
        assert_eq!(runs(&ring, 6, 9), [vec![6, 7], vec![0, 1]]);
        // Later laps map onto the same slots; a whole ring is one run or two.
        assert_eq!(runs(&ring, 16, 23), [(0..8).collect(), vec![]]);
        assert_eq!(runs(&ring, 21, 28), [vec![5, 6, 7], vec![0, 1, 2, 3, 4]]);
        assert_eq!(runs(&ring, 7, 7), [vec![7], vec![]]);
    }
}
