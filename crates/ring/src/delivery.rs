//! Batch delivery, shared by the processor threads and the
//! [`EventPoller`](crate::EventPoller): cut a batch, deliver it once to a
//! handler, and decide what follows a failed attempt (replay, skip, halt).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::barrier::SequenceBarrier;
use crate::exception::{ExceptionHandler, Failure, FailureAction};
use crate::handler::{BatchInfo, Dispatch, HandlerError};
use crate::metrics::ProcessorStats;
use crate::rewind::{RewindDecision, RewindStrategy};
use crate::ring_buffer::{RingBuffer, SlotRuns};
use crate::sequence::Sequence;
use crate::shard::Shard;
use crate::sync::UnsafeCell;
/// Everything a processor (or poller) needs besides its handler; built by
/// the graph.
pub(crate) struct ProcessorParts<E> {
    pub(crate) name: String,
    /// Position in graph order, as in `RingHandle::processors`.
    pub(crate) index: usize,
    pub(crate) ring: Arc<RingBuffer<E>>,
    pub(crate) barrier: SequenceBarrier<E>,
    pub(crate) sequence: Arc<Sequence>,
    pub(crate) stats: Arc<CachePadded<ProcessorStats>>,
    pub(crate) shard: Shard<E>,
    pub(crate) max_batch: usize,
    pub(crate) rewind: RewindStrategy,
    pub(crate) exceptions: Arc<dyn ExceptionHandler>,
}

/// A failed attempt at a batch: the event it failed on, if known, and why.
pub(crate) type AttemptError = (Option<i64>, HandlerError);

/// What follows a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterFailure {
    /// Replay the batch from its first event after this pause.
    Replay(Duration),
    /// The exception handler skipped the batch: release it and go on.
    Skip,
    /// The ring is halted.
    Halt,
}

impl<E> ProcessorParts<E> {
    /// The batch `first..=last` cut from `available` events, for `attempt`,
    /// and the last event this processor owns in it; `None` when it owns
    /// none of them (sharding).
    #[inline]
    pub(crate) fn batch(
        &mut self,
        first: i64,
        last: i64,
        available: i64,
        attempt: u32,
    ) -> Option<(BatchInfo, i64)> {
        let owned = self.shard.plan(&self.ring, first, last)?;
        let batch = BatchInfo {
            first_sequence: first,
            last_sequence: last,
            len: owned.count,
            queue_depth: (available - first + 1) as usize,
            attempt,
        };
        Some((batch, owned.last))
    }

    /// One attempt at `batch`: `on_batch`, then every owned event. A panic
    /// is caught and pinned on the event being handled.
    pub(crate) fn attempt<D: Dispatch<E>>(
        &self,
        handler: &mut D,
        batch: &BatchInfo,
        own_last: i64,
    ) -> Result<(), AttemptError> {
        // The event being delivered, so that a panic can be pinned on it.
        // The delivery loop writes it only on the way out of a panic (see
        // `deliver_in`), not per event.
        let mut at = batch.first_sequence;
        catch_unwind(AssertUnwindSafe(|| {
            self.deliver(handler, batch, own_last, &mut at)
        }))
        .unwrap_or_else(|panic| Err((Some(at), panicked(panic))))
    }

    /// Releases everything up to `last` to later stages and producers.
    #[inline]
    pub(crate) fn release(&self, last: i64) {
        self.sequence.set(last);
        self.ring.waiter.signal();
    }

    /// Releases a delivered batch and counts it.
    #[inline]
    pub(crate) fn complete(&self, batch: &BatchInfo) {
        self.release(batch.last_sequence);
        self.stats.record_batch(batch.len);
    }

    /// After a failed attempt (`batch.attempt` attempts so far): rewinds
    /// the handler and asks the strategy, or hands the batch to the
    /// exception handler.
    pub(crate) fn after_failure<D: Dispatch<E>>(
        &self,
        handler: &mut D,
        batch: &BatchInfo,
        (at, error): AttemptError,
    ) -> AfterFailure {
        if !error.is_retryable() {
            return self.give_up(handler, batch, at, error);
        }
        self.stats.record_rewind(batch.attempt);
        if let Err(rollback) = guard(|| handler.on_rewind(batch.attempt)) {
            return self.give_up(handler, batch, at, rollback);
        }
        match self.rewind.decide(batch.attempt) {
            RewindDecision::Rewind { pause } => AfterFailure::Replay(pause),
            RewindDecision::GiveUp => self.give_up(handler, batch, at, error),
        }
    }

    fn give_up<D: Dispatch<E>>(
        &self,
        handler: &mut D,
        batch: &BatchInfo,
        at: Option<i64>,
        error: HandlerError,
    ) -> AfterFailure {
        let (first, last) = (batch.first_sequence, batch.last_sequence);
        if !self.escalate(first, last, at, batch.attempt, error) {
            return AfterFailure::Halt;
        }
        if let Err(error) = guard(|| {
            handler.on_batch_skipped(batch);
            Ok(())
        }) {
            log::error!("{}: on_batch_skipped failed: {error}", self.name);
        }
        AfterFailure::Skip
    }

    /// Hands a failure to the exception handler; true to go on.
    pub(crate) fn escalate(
        &self,
        first: i64,
        last: i64,
        at: Option<i64>,
        attempts: u32,
        error: HandlerError,
    ) -> bool {
        let failure = Failure {
            processor: self.name.clone(),
            processor_index: Some(self.index),
            first_sequence: first,
            last_sequence: last,
            sequence: at,
            attempts,
            error,
        };
        let action = catch_unwind(AssertUnwindSafe(|| self.exceptions.on_failure(&failure)));
        if let Ok(FailureAction::SkipBatch) = action {
            self.stats.record_skip();
            return true;
        }
        self.ring.fail(failure);
        false
    }

    fn deliver<D: Dispatch<E>>(
        &self,
        handler: &mut D,
        batch: &BatchInfo,
        own_last: i64,
        at: &mut i64,
    ) -> Result<(), AttemptError> {
        // One loop per slot layout, each with a constant stride.
        match self.ring.publishes_in_slots() {
            // SAFETY: the ring's own layout.
            false => unsafe { self.deliver_in::<D, false>(handler, batch, own_last, at) },
            // SAFETY: the ring's own layout.
            true => unsafe { self.deliver_in::<D, true>(handler, batch, own_last, at) },
        }
    }

    /// [`deliver`](Self::deliver) in the layout `MARKED`.
    ///
    /// The per-event path is the handler call: events come from contiguous
    /// runs of slots (no index masking), end-of-batch is the last event,
    /// delivered on its own, the result check folds away when the handler
    /// returns a known `Ok`, and the sequence being handled is written to
    /// `at` only by the guard's drop while a panic unwinds through it.
    ///
    /// # Safety
    ///
    /// `MARKED == self.ring.publishes_in_slots()`.
    #[inline(always)]
    unsafe fn deliver_in<D: Dispatch<E>, const MARKED: bool>(
        &self,
        handler: &mut D,
        batch: &BatchInfo,
        own_last: i64,
        at: &mut i64,
    ) -> Result<(), AttemptError> {
        let ring = &*self.ring;
        handler.on_batch(batch);
        let (first, last) = (batch.first_sequence, batch.last_sequence);
        let mut cursor = PanicAt {
            at,
            sequence: first,
        };
        if let Shard::All = self.shard {
            // Every event but the last over contiguous runs of slots: no
            // masking per event, and no end-of-batch compare either.
            match ring.slot_runs(first, last - 1) {
                SlotRuns::Plain(runs) => {
                    for run in runs {
                        for cell in run {
                            // SAFETY: `cursor.sequence` is this cell's
                            // sequence, in the released batch (see `dispatch`).
                            unsafe { dispatch_cell(handler, cell, cursor.sequence, false) }?;
                            cursor.sequence += 1;
                        }
                    }
                }
                SlotRuns::Marked(runs) => {
                    for run in runs {
                        for slot in run {
                            let cell = slot.event();
                            // SAFETY: as above.
                            unsafe { dispatch_cell(handler, cell, cursor.sequence, false) }?;
                            cursor.sequence += 1;
                        }
                    }
                }
            }
            // SAFETY: `MARKED` is the ring's layout (this function's
            // contract); `last` is in the released batch.
            unsafe { dispatch::<_, _, MARKED>(handler, ring, last, true) }?;
        } else if let Shard::Modulo { count, .. } = self.shard {
            // Owned events are `count` apart: a step, not a remainder, per event.
            if let Some(own_first) = self.shard.next_owned(ring, first, last) {
                cursor.sequence = own_first;
                while cursor.sequence < own_last {
                    // SAFETY: as above; an owned sequence of the batch.
                    unsafe { dispatch::<_, _, MARKED>(handler, ring, cursor.sequence, false) }?;
                    cursor.sequence += count;
                }
                // SAFETY: as above.
                unsafe { dispatch::<_, _, MARKED>(handler, ring, own_last, true) }?;
            }
        } else {
            let mut next = self.shard.next_owned(ring, first, last);
            while let Some(sequence) = next {
                cursor.sequence = sequence;
                // SAFETY: as above.
                unsafe { dispatch::<_, _, MARKED>(handler, ring, sequence, sequence == own_last) }?;
                next = self.shard.next_owned(ring, sequence + 1, last);
            }
        }
        cursor.done();
        Ok(())
    }
}

/// Writes the sequence being delivered to `at` if dropped while a handler
/// panics: the loop keeps it in a register otherwise.
struct PanicAt<'a> {
    at: &'a mut i64,
    sequence: i64,
}

impl PanicAt<'_> {
    #[inline(always)]
    fn done(self) {
        std::mem::forget(self);
    }
}

impl Drop for PanicAt<'_> {
    fn drop(&mut self) {
        *self.at = self.sequence;
    }
}

/// Delivers one event of the current batch to `handler`.
///
/// # Safety
///
/// `MARKED == ring.publishes_in_slots()`.
#[inline(always)]
unsafe fn dispatch<E, D: Dispatch<E>, const MARKED: bool>(
    handler: &mut D,
    ring: &RingBuffer<E>,
    sequence: i64,
    end_of_batch: bool,
) -> Result<(), AttemptError> {
    // SAFETY: `MARKED` is the ring's layout (this function's contract).
    let slot = unsafe { ring.slot_in::<MARKED>(sequence) };
    // SAFETY: the slot of `sequence`, which the caller vouches for.
    unsafe { dispatch_cell(handler, slot, sequence, end_of_batch) }
}

/// Delivers the event in `cell`, the slot of `sequence`.
///
/// # Safety
///
/// `sequence` is in the batch the barrier released to this processor
/// (published, and finished by every upstream stage), and `cell` is its
/// slot. The processor's own sequence has not passed it, so later stages
/// and the producers keep off it. Exclusive handlers are the only member of
/// their stage, or own this sequence alone in their sharded group (the
/// graph enforces both), so their access is exclusive.
#[inline(always)]
unsafe fn dispatch_cell<E, D: Dispatch<E>>(
    handler: &mut D,
    cell: &UnsafeCell<E>,
    sequence: i64,
    end_of_batch: bool,
) -> Result<(), AttemptError> {
    // SAFETY: the access `dispatch` needs is this function's contract.
    unsafe { handler.dispatch(cell, sequence, end_of_batch) }
        .map_err(|error| (Some(sequence), error))
}

/// Runs a handler callback, turning a panic into [`HandlerError::Panicked`].
pub(crate) fn guard(f: impl FnOnce() -> Result<(), HandlerError>) -> Result<(), HandlerError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| Err(panicked(panic)))
}

fn panicked(payload: Box<dyn std::any::Any + Send>) -> HandlerError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into());
    HandlerError::Panicked(message)
}
