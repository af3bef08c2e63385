//! The preallocated slots and the shared state every party coordinates on.

use std::sync::Arc;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::exception::{ExceptionHandler, Failure};
use crate::producer_stats::ProducerStats;
use crate::sequence::{minimum, Sequence, INITIAL_SEQUENCE};
use crate::sync::{AtomicBool, AtomicI32, AtomicI64, Ordering, UnsafeCell};
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
///
/// With markers in the slots ([`RingBuilder::publish_in_slots`](crate::RingBuilder::publish_in_slots)),
/// each slot also carries the sequence last published into it, in the
/// slot's own cache line, and a first-stage processor learns what it may
/// read from those markers alone (the cursor still counts as above, for
/// shutdown and capacity, but nobody waits on it). A hand-off then moves
/// one cache line from the producer's core to the consumer's instead of
/// two (the cursor's, then the slot's).
pub struct RingBuffer<E> {
    slots: Slots<E>,
    /// Slot 0's event cell, in either layout.
    first_event: *const UnsafeCell<E>,
    /// Whether the layout is `Slots::Marked`: `slot` steps from
    /// `first_event` by a constant per layout, so that a loop over slots
    /// keeps a constant stride (and vectorises) in each.
    marked: bool,
    mask: i64,
    shift: u32,
    pub(crate) cursor: Sequence,
    multi_producer: bool,
    /// Multi-producer in the plain layout only (empty otherwise): the lap
    /// each slot was last published in.
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
    /// Told about a producer that panicked with a claim (see
    /// [`fail_producer`](Self::fail_producer)); the builder sets it.
    exceptions: Option<Arc<dyn ExceptionHandler>>,
    /// The producers' waits for capacity.
    producer_stats: ProducerStats,
}

/// The slot array, in one of two layouts chosen when the ring is built.
enum Slots<E> {
    /// Events back to back; publication is told by the cursor (single
    /// producer) or the `available` laps (several).
    Plain(Box<[UnsafeCell<E>]>),
    /// Each event behind the marker that publishes it.
    Marked(Box<[MarkedSlot<E>]>),
}

/// A slot with its publication marker: the sequence last published into
/// it, then the event, so that a small event shares the marker's cache
/// line.
#[repr(C)]
pub(crate) struct MarkedSlot<E> {
    /// The sequence last published into this slot; -1 before the first.
    published: AtomicI64,
    event: UnsafeCell<E>,
}

impl<E> MarkedSlot<E> {
    /// The event's cell; [`RingBuffer::slot`] says when it may be used.
    #[inline(always)]
    pub(crate) fn event(&self) -> &UnsafeCell<E> {
        &self.event
    }
}

/// The slots of a range, as contiguous runs of one layout (see
/// [`RingBuffer::slot_runs`]).
pub(crate) enum SlotRuns<'a, E> {
    Plain([&'a [UnsafeCell<E>]; 2]),
    Marked([&'a [MarkedSlot<E>]; 2]),
}

// SAFETY: the ring hands `&E` to processors on several threads at once
// (parallel handlers of one stage), so `E: Sync`; it hands `&mut E` to a
// producer or an exclusive processor on another thread, so `E: Send`. Slot
// access is otherwise serialised by the sequence protocol (see `slot`).
// `first_event` only points into `slots`, which the ring owns: sharing it
// shares nothing `slots` does not. Every other field is `Sync` and `Send`
// on its own (atomics, a `Mutex`, the waiter, and an
// `Arc<dyn ExceptionHandler>`, whose trait requires `Send + Sync`): keep it
// so when adding one, since this impl stops the compiler from checking.
unsafe impl<E: Send + Sync> Sync for RingBuffer<E> {}
// SAFETY: owning the ring owns the events; moving it moves `E`s (the boxed
// slot array stays where it is, so `first_event` stays valid).
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
        markers: bool,
    ) -> Self {
        debug_assert!(capacity.is_power_of_two());
        let slots = match markers {
            false => Slots::Plain((0..capacity).map(|_| UnsafeCell::new(factory())).collect()),
            true => Slots::Marked(
                (0..capacity)
                    .map(|_| MarkedSlot {
                        published: AtomicI64::new(INITIAL_SEQUENCE),
                        event: UnsafeCell::new(factory()),
                    })
                    .collect(),
            ),
        };
        let laps = if multi_producer && !markers {
            capacity
        } else {
            0
        };
        let first_event = match &slots {
            Slots::Plain(cells) => cells.as_ptr(),
            // Pointer arithmetic, no reference: the array may be empty (the
            // builder refuses that; this code does not rely on it).
            Slots::Marked(marked) => marked
                .as_ptr()
                .wrapping_byte_add(std::mem::offset_of!(MarkedSlot<E>, event))
                .cast::<UnsafeCell<E>>(),
        };
        RingBuffer {
            slots,
            first_event,
            marked: markers,
            mask: capacity as i64 - 1,
            shift: capacity.trailing_zeros(),
            cursor: Sequence::new(INITIAL_SEQUENCE),
            multi_producer,
            available: (0..laps).map(|_| AtomicI32::new(-1)).collect(),
            gating: gating.into_boxed_slice(),
            gate_cache: Sequence::new(INITIAL_SEQUENCE),
            waiter: Waiter::new(wait),
            alert: CachePadded::new(AtomicBool::new(false)),
            failure: Mutex::new(None),
            exceptions: None,
            producer_stats: ProducerStats::default(),
        }
    }

    /// Sets the exception handler a producer's panic is reported to.
    pub(crate) fn with_exception_handler(mut self, handler: Arc<dyn ExceptionHandler>) -> Self {
        self.exceptions = Some(handler);
        self
    }

    /// The producers' waits for capacity.
    #[inline]
    pub(crate) fn producer_stats(&self) -> &ProducerStats {
        &self.producer_stats
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        (self.mask + 1) as usize
    }

    /// Whether each slot carries its publication marker.
    #[inline(always)]
    pub(crate) fn publishes_in_slots(&self) -> bool {
        self.marked
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
        match self.marked {
            // SAFETY: the ring's own layout.
            false => unsafe { self.slot_in::<false>(sequence) },
            // SAFETY: the ring's own layout.
            true => unsafe { self.slot_in::<true>(sequence) },
        }
    }

    /// [`slot`](Self::slot) for a caller that knows the layout: a loop over
    /// slots then has a constant stride, which a branch per slot on the
    /// layout took away (batch publish of `u64` events measured ~12% slower
    /// with it, and ~22% with a check of the layout per slot).
    ///
    /// # Safety
    ///
    /// `MARKED == self.publishes_in_slots()`.
    #[inline(always)]
    pub(crate) unsafe fn slot_in<const MARKED: bool>(&self, sequence: i64) -> &UnsafeCell<E> {
        debug_assert_eq!(MARKED, self.marked, "the caller named the wrong layout");
        let index = (sequence & self.mask) as usize;
        let stride = match MARKED {
            false => std::mem::size_of::<UnsafeCell<E>>(),
            true => std::mem::size_of::<MarkedSlot<E>>(),
        };
        // SAFETY: `first_event` is slot 0's event cell in the slot array,
        // which `self.slots` owns and never moves or resizes, and `stride`
        // is the size of that array's element (the caller named the
        // layout), so `index <= mask < len` elements on lies the event cell
        // of slot `index`: in bounds, aligned and initialised, borrowed no
        // longer than `self`.
        unsafe { &*self.first_event.byte_add(index * stride) }
    }

    /// The marked slot of `sequence`; `None` in the plain layout.
    #[inline(always)]
    fn marked(&self, sequence: i64) -> Option<&MarkedSlot<E>> {
        let index = (sequence & self.mask) as usize;
        match &self.slots {
            Slots::Plain(_) => None,
            // SAFETY: `index <= mask < slots.len()` by construction.
            Slots::Marked(slots) => Some(unsafe { slots.get_unchecked(index) }),
        }
    }

    /// The slots of `first..=last` (at most a capacity's worth) as two
    /// contiguous runs: up to the end of the array, then from its start
    /// (empty unless the range wraps). The same rules as [`slot`](Self::slot)
    /// govern dereferencing them. Contiguous runs let the compiler vectorise
    /// a batch fill, which `slot`'s masking per sequence prevents.
    #[inline(always)]
    pub(crate) fn slot_runs(&self, first: i64, last: i64) -> SlotRuns<'_, E> {
        fn runs<T>(slots: &[T], start: usize, len: usize) -> [&[T]; 2] {
            debug_assert!(len <= slots.len());
            let head = len.min(slots.len() - start);
            [&slots[start..start + head], &slots[..len - head]]
        }
        let start = (first & self.mask) as usize;
        let len = (last - first + 1) as usize;
        match &self.slots {
            Slots::Plain(slots) => SlotRuns::Plain(runs(slots, start, len)),
            Slots::Marked(slots) => SlotRuns::Marked(runs(slots, start, len)),
        }
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
            let size = match self.slots {
                Slots::Plain(_) => std::mem::size_of::<UnsafeCell<E>>(),
                Slots::Marked(_) => std::mem::size_of::<MarkedSlot<E>>(),
            };
            let step = (CACHE_LINE / size.max(1)).max(1) as i64;
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
    /// The caller wrote every slot of the range (a single producer also
    /// every sequence before it).
    #[inline(always)]
    pub(crate) fn publish(&self, first: i64, last: i64) {
        match (self.multi_producer, self.marked) {
            (false, false) => self.publish_single::<false>(first, last),
            (false, true) => self.publish_single::<true>(first, last),
            (true, true) => {
                self.publish_markers(first, last);
                self.waiter.signal();
            }
            (true, false) => {
                self.publish_available(first, last);
                self.waiter.signal();
            }
        }
    }

    /// [`publish`](Self::publish) for the single producer of a ring whose
    /// layout the caller names. `Producer::publish` calls it directly,
    /// having branched on the layout before its slot store: after that
    /// store, which may alias the ring, every flag `publish` reads would be
    /// loaded again (measured on 1P→1C `u64` publication).
    ///
    /// Publishing in the wrong layout is no memory error, but a marked
    /// ring's readers would never see the events, hence the debug check.
    #[inline(always)]
    pub(crate) fn publish_single<const MARKED: bool>(&self, first: i64, last: i64) {
        debug_assert!(!self.multi_producer, "a multi-producer ring");
        debug_assert_eq!(MARKED, self.marked, "the caller named the wrong layout");
        if MARKED {
            self.publish_markers(first, last);
        }
        // Everything up to `last` is written; one store says so (in the
        // marked layout only to shutdown and capacity reports; no reader
        // waits on it).
        self.cursor.set(last);
        self.waiter.signal();
    }

    /// Marked layout: stores each slot's sequence in its marker.
    #[inline(always)]
    fn publish_markers(&self, first: i64, last: i64) {
        for sequence in first..last + 1 {
            if let Some(slot) = self.marked(sequence) {
                // Release: publishes the slot's contents; pairs with the
                // Acquire load in `is_published`. Single producer: also
                // every slot before it, written earlier by the same thread.
                slot.published.store(sequence, Ordering::Release);
            }
        }
    }

    /// Plain layout, several producers: marks each of `first..=last`
    /// published in its lap.
    #[inline(always)]
    fn publish_available(&self, first: i64, last: i64) {
        for sequence in first..last + 1 {
            let index = (sequence & self.mask) as usize;
            // Release: publishes this slot's contents; pairs with the
            // Acquire load in `is_published`.
            self.available[index].store(self.lap(sequence), Ordering::Release);
        }
    }

    /// The highest sequence in `lowest..=limit` such that every sequence
    /// from `lowest` up to it is published (`lowest - 1` if none is). The
    /// plain single-producer layout needs no look: the caller's `limit` is
    /// the cursor.
    #[inline]
    pub(crate) fn highest_published(&self, lowest: i64, limit: i64) -> i64 {
        if !self.multi_producer && !self.publishes_in_slots() {
            return limit;
        }
        (lowest..=limit)
            .find(|&sequence| !self.is_published(sequence))
            .map_or(limit, |gap| gap - 1)
    }

    /// Whether `sequence` is published, by its marker or its lap (not for
    /// the plain single-producer layout, which has neither).
    #[inline(always)]
    pub(crate) fn is_published(&self, sequence: i64) -> bool {
        if let Some(slot) = self.marked(sequence) {
            // Acquire: pairs with the Release store in `publish_markers`, so
            // the slot's contents are visible once the marker shows it.
            return slot.published.load(Ordering::Acquire) == sequence;
        }
        let index = (sequence & self.mask) as usize;
        // Acquire: pairs with the Release store in `publish_available`, so
        // the slot's contents are visible once the lap matches.
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

    /// A producer panicked holding the claim that starts at `sequence`: the
    /// claim can never be published, so the ring halts whatever the
    /// exception handler answers; the handler is told first, so that the
    /// failure reaches whatever it reports to.
    pub(crate) fn fail_producer(&self, sequence: i64) {
        let failure = Failure::producer_panicked(sequence);
        if let Some(handler) = &self.exceptions {
            let report = || handler.on_failure(&failure);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(report));
        }
        self.fail(failure);
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
            .field("multi_producer", &self.multi_producer)
            .field("publishes_in_slots", &self.publishes_in_slots())
            .field("halted", &self.is_halted())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn ring(capacity: usize, markers: bool) -> RingBuffer<usize> {
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
            markers,
        )
    }

    /// The slot indexes of the runs covering `first..=last`.
    fn runs(ring: &RingBuffer<usize>, first: i64, last: i64) -> [Vec<usize>; 2] {
        // SAFETY: single-threaded test; nothing writes the slots.
        let value = |cell: &UnsafeCell<usize>| cell.with(|slot| unsafe { *slot });
        match ring.slot_runs(first, last) {
            SlotRuns::Plain(runs) => runs.map(|run| run.iter().map(value).collect()),
            SlotRuns::Marked(runs) => {
                runs.map(|run| run.iter().map(|slot| value(slot.event())).collect())
            }
        }
    }

    #[test]
    fn slot_runs_split_where_the_range_wraps() {
        for markers in [false, true] {
            let ring = ring(8, markers);
            assert_eq!(runs(&ring, 2, 5), [vec![2, 3, 4, 5], vec![]]);
            assert_eq!(runs(&ring, 6, 9), [vec![6, 7], vec![0, 1]]);
            // Later laps map onto the same slots; a whole ring is one run or two.
            assert_eq!(runs(&ring, 16, 23), [(0..8).collect(), vec![]]);
            assert_eq!(runs(&ring, 21, 28), [vec![5, 6, 7], vec![0, 1, 2, 3, 4]]);
            assert_eq!(runs(&ring, 7, 7), [vec![7], vec![]]);
        }
    }

    #[test]
    fn a_marked_slot_is_published_by_its_own_marker_in_each_lap() {
        let ring = ring(8, true);
        assert!(ring.publishes_in_slots());
        assert!(!ring.is_published(0));
        ring.publish(0, 2);
        assert!(ring.is_published(0) && ring.is_published(2));
        assert!(!ring.is_published(3));
        assert_eq!(ring.highest_published(1, 7), 2);
        assert_eq!(ring.highest_published(3, 7), 2, "none from 3 on");
        assert_eq!(ring.highest_published(0, 1), 1, "stops at the limit");
        // Slot 0 again, one lap on: the old marker does not count.
        assert!(!ring.is_published(8));
        ring.publish(3, 8);
        assert!(ring.is_published(8) && !ring.is_published(0));
        assert_eq!(ring.highest_published(3, 100), 8);
        assert_eq!(ring.cursor(), 8, "a single producer's cursor follows");
    }
}
