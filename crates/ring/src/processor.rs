//! The batch event processor: the loop each handler thread runs.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::barrier::{SequenceBarrier, WaitError};
use crate::exception::{ExceptionHandler, Failure, FailureAction};
use crate::handler::{Dispatch, HandlerError};
use crate::rewind::{RewindDecision, RewindStrategy};
use crate::ring_buffer::RingBuffer;
use crate::sequence::Sequence;
use crate::shard::Shard;
use crate::sync::{AtomicU64, Ordering};

/// Counters one processor keeps about itself, read by the ring handle.
///
/// Only the processor's thread writes them, once per batch, so a relaxed
/// load and store (no read-modify-write) is enough; readers want a recent
/// value, not a synchronised one.
#[derive(Debug, Default)]
pub(crate) struct ProcessorStats {
    pub(crate) events: AtomicU64,
    pub(crate) batches: AtomicU64,
    pub(crate) rewinds: AtomicU64,
    pub(crate) skipped_batches: AtomicU64,
}

impl ProcessorStats {
    #[inline(always)]
    fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

/// Everything a processor needs besides its handler; built by the graph.
pub(crate) struct ProcessorParts<E> {
    pub(crate) name: String,
    pub(crate) ring: Arc<RingBuffer<E>>,
    pub(crate) barrier: SequenceBarrier<E>,
    pub(crate) sequence: Arc<Sequence>,
    pub(crate) stats: Arc<CachePadded<ProcessorStats>>,
    pub(crate) shard: Shard<E>,
    pub(crate) max_batch: usize,
    pub(crate) rewind: RewindStrategy,
    pub(crate) exceptions: Arc<dyn ExceptionHandler>,
}

/// A failed attempt at a batch: the event it failed on, if any, and why.
type AttemptError = (Option<i64>, HandlerError);

/// Runs one handler over the ring: wait for a batch, deliver it, publish the
/// processor's sequence once at the end of the batch.
pub(crate) struct BatchProcessor<E, D> {
    parts: ProcessorParts<E>,
    handler: D,
}

impl<E, D: Dispatch<E>> BatchProcessor<E, D> {
    pub(crate) fn new(parts: ProcessorParts<E>, handler: D) -> Self {
        BatchProcessor { parts, handler }
    }

    /// The processor's thread body; returns when the ring halts.
    pub(crate) fn run(mut self) {
        if let Err(error) = guard(|| {
            self.handler.on_start();
            Ok(())
        }) {
            // Go on when the exception handler skips the failure: returning
            // without halting left a dead processor whose sequence gated the
            // producers and `shutdown` forever (found by the lifecycle test
            // `on_start_panic_skipped_by_the_exception_handler_keeps_processing`).
            if !self.escalate(0, -1, None, 1, error) {
                return;
            }
        }
        let mut next = self.parts.sequence.get() + 1;
        loop {
            match self.parts.barrier.wait_for(next) {
                Ok(available) => {
                    let last = available.min(next + self.parts.max_batch as i64 - 1);
                    if !self.process(next, last, available) {
                        break;
                    }
                    self.parts.sequence.set(last);
                    self.parts.ring.waiter.signal();
                    next = last + 1;
                }
                Err(WaitError::TimedOut) => {
                    let timeout = guard(|| self.handler.on_timeout(next - 1));
                    if let Err(error) = timeout {
                        if !self.escalate(next, next - 1, None, 1, error) {
                            break;
                        }
                    }
                }
                Err(WaitError::Halted) => break,
            }
        }
        if let Err(error) = guard(|| {
            self.handler.on_shutdown();
            Ok(())
        }) {
            log::error!("{}: on_shutdown failed: {error}", self.parts.name);
        }
    }

    /// Delivers `first..=last` until it succeeds or is given up; returns
    /// false when the ring must halt.
    fn process(&mut self, first: i64, last: i64, available: i64) -> bool {
        let mut attempt = 0;
        loop {
            // The event being delivered, so a panic can be pinned on it.
            let mut at = first;
            let attempt_result = catch_unwind(AssertUnwindSafe(|| {
                self.deliver(first, last, available, &mut at)
            }))
            .unwrap_or_else(|panic| Err((Some(at), panicked(panic))));
            let error = match attempt_result {
                Ok(()) => return true,
                Err(error) => error,
            };
            attempt += 1;
            let (at, error) = error;
            if !error.is_retryable() {
                return self.escalate(first, last, at, attempt, error);
            }
            ProcessorStats::add(&self.parts.stats.rewinds, 1);
            if let Err(rollback) = guard(|| self.handler.on_rewind(attempt)) {
                return self.escalate(first, last, at, attempt, rollback);
            }
            match self.parts.rewind.decide(attempt) {
                RewindDecision::Rewind { pause } => {
                    if !self.pause(pause) {
                        return false;
                    }
                }
                RewindDecision::GiveUp => return self.escalate(first, last, at, attempt, error),
            }
        }
    }

    /// One attempt at a batch.
    fn deliver(
        &mut self,
        first: i64,
        last: i64,
        available: i64,
        at: &mut i64,
    ) -> Result<(), AttemptError> {
        // One loop per slot layout, each with a constant stride.
        match self.parts.ring.publishes_in_slots() {
            // SAFETY: the ring's own layout.
            false => unsafe { self.deliver_in::<false>(first, last, available, at) },
            // SAFETY: the ring's own layout.
            true => unsafe { self.deliver_in::<true>(first, last, available, at) },
        }
    }

    /// [`deliver`](Self::deliver) in the layout `MARKED`.
    ///
    /// # Safety
    ///
    /// `MARKED == self.parts.ring.publishes_in_slots()`.
    #[inline(always)]
    unsafe fn deliver_in<const MARKED: bool>(
        &mut self,
        first: i64,
        last: i64,
        available: i64,
        at: &mut i64,
    ) -> Result<(), AttemptError> {
        let (parts, handler) = (&self.parts, &mut self.handler);
        let ring = &*parts.ring;
        let Some(owned) = parts.shard.plan(ring, first, last) else {
            return Ok(());
        };
        handler.on_batch_start(owned.count, (available - first + 1) as usize);
        if let Shard::All = parts.shard {
            for sequence in first..last + 1 {
                *at = sequence;
                // SAFETY: `MARKED` is the ring's layout (this function's
                // contract).
                unsafe { dispatch::<_, _, MARKED>(handler, ring, sequence, sequence == last) }?;
            }
        } else {
            let mut next = parts.shard.next_owned(ring, first, last);
            while let Some(sequence) = next {
                *at = sequence;
                // SAFETY: as above.
                unsafe {
                    dispatch::<_, _, MARKED>(handler, ring, sequence, sequence == owned.last)
                }?;
                next = parts.shard.next_owned(ring, sequence + 1, last);
            }
        }
        ProcessorStats::add(&parts.stats.events, owned.count as u64);
        ProcessorStats::add(&parts.stats.batches, 1);
        Ok(())
    }

    /// Sleeps `pause` in short slices; false if the ring halted meanwhile.
    fn pause(&self, pause: Duration) -> bool {
        let deadline = Instant::now() + pause;
        loop {
            if self.parts.ring.is_halted() {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    }

    /// Hands a failed batch to the exception handler; true to go on.
    fn escalate(
        &self,
        first: i64,
        last: i64,
        at: Option<i64>,
        attempts: u32,
        error: HandlerError,
    ) -> bool {
        let failure = Failure {
            processor: self.parts.name.clone(),
            first_sequence: first,
            last_sequence: last,
            sequence: at,
            attempts,
            error,
        };
        let action = catch_unwind(AssertUnwindSafe(|| {
            self.parts.exceptions.on_failure(&failure)
        }));
        if let Ok(FailureAction::SkipBatch) = action {
            ProcessorStats::add(&self.parts.stats.skipped_batches, 1);
            return true;
        }
        self.parts.ring.fail(failure);
        false
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
    // SAFETY: `sequence` is in the batch the barrier released to this
    // processor (published, and finished by every upstream stage), and the
    // processor's own sequence has not passed it, so later stages and the
    // producers keep off it. Exclusive handlers are the only member of their
    // stage, or own this sequence alone in their sharded group (the graph
    // enforces both), so their access is exclusive.
    unsafe { handler.dispatch(slot, sequence, end_of_batch) }
        .map_err(|error| (Some(sequence), error))
}

/// Runs a handler callback, turning a panic into [`HandlerError::Panicked`].
fn guard(f: impl FnOnce() -> Result<(), HandlerError>) -> Result<(), HandlerError> {
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
