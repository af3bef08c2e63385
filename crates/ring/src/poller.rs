//! A consumer the caller drives: [`EventPoller`], after the LMAX
//! Disruptor's `EventPoller`.

use std::time::Duration;

use crate::barrier::Readiness;
use crate::delivery::{AfterFailure, ProcessorParts};
use crate::handler::{BatchInfo, EventHandler, Shared};

/// What one [`EventPoller::poll`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PollState {
    /// A batch was handled and released to later stages and producers.
    Processed(BatchInfo),
    /// Nothing is published past the poller's sequence.
    Idle,
    /// Events are published, but an upstream stage has not finished them.
    Gating,
    /// The batch failed with a retryable error and the handler's
    /// `on_rewind` ran; the next `poll` replays it from its first event
    /// (attempt `attempt + 1`). The rewind strategy advises waiting `pause`
    /// first: the poller does not sleep, its caller decides.
    Rewound {
        /// Failed attempts at this batch so far.
        attempt: u32,
        /// The strategy's pause before the replay.
        pause: Duration,
    },
    /// The batch failed for good and the exception handler skipped it
    /// (after the handler's `on_batch_skipped`); it counts as handled.
    Skipped(BatchInfo),
    /// The ring has halted: by `halt`, by a failure (this poller's own
    /// included, when the exception handler chose to halt), or because the
    /// handle was dropped. Nothing more will be delivered.
    Halted,
}

/// A consumer without a thread: the caller's own loop asks it for whatever
/// is ready, so a service can poll the ring between its other work.
///
/// Built with [`RingBuilder::add_poller`](crate::RingBuilder::add_poller) or
/// [`then_poller`](crate::RingBuilder::then_poller) and taken from the
/// started ring with [`RingHandle::take_poller`](crate::RingHandle::take_poller).
/// A poller is a processor like any other: its sequence gates later stages
/// and the producers, and it appears in [`RingHandle::processors`](crate::RingHandle::processors).
///
/// Each [`poll`](Self::poll) takes everything ready (up to the maximum
/// batch size) as one batch and hands it to an [`EventHandler`] with the
/// contract a processor thread follows: `on_batch`, then `on_event` for
/// each event, the last with `end_of_batch`; the poller's sequence moves
/// once, after the batch. A retryable error rewinds the batch: `on_rewind`
/// runs and the next poll replays it from its first event; a fatal error,
/// a panic, or a rewind the strategy gives up on goes to the exception
/// handler. `on_start`, `on_shutdown` and `on_timeout` are the caller's to
/// call, since it owns the loop.
///
/// Dropping a poller halts the ring (its sequence would otherwise gate the
/// producers forever): stop the producers and poll until
/// [`PollState::Idle`] first.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::{EventHandler, HandlerError, PollState, RingBuilder};
///
/// struct Sum(u64);
/// impl EventHandler<u64> for Sum {
///     fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
///         self.0 += event;
///         Ok(())
///     }
/// }
///
/// let (mut producer, mut ring) = RingBuilder::new(64, || 0u64).add_poller().start()?;
/// let mut poller = ring.take_poller(0).expect("one poller");
/// let mut sum = Sum(0);
/// for i in 1..=10 {
///     producer.publish(|slot| *slot = i)?;
/// }
/// while let PollState::Processed(_) = poller.poll(&mut sum) {}
/// assert_eq!(sum.0, 55);
/// drop(poller);
/// ring.shutdown()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EventPoller<E> {
    parts: ProcessorParts<E>,
    /// The first sequence of the next (or pending) batch.
    next: i64,
    /// A batch that failed retryably: `(last, available)` as it was cut, and
    /// the failed attempts so far, so the next poll replays exactly it.
    pending: Option<(i64, i64, u32)>,
}

impl<E> EventPoller<E> {
    pub(crate) fn new(parts: ProcessorParts<E>) -> Self {
        let next = parts.sequence.get() + 1;
        EventPoller {
            parts,
            next,
            pending: None,
        }
    }

    /// The poller's name, as in [`RingHandle::processors`](crate::RingHandle::processors).
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// The last sequence this poller has released.
    pub fn sequence(&self) -> i64 {
        self.next - 1
    }

    /// Handles whatever is ready as one batch, without waiting.
    ///
    /// # Panics
    ///
    /// A panic in `handler` does not unwind out of `poll`: it is a failure
    /// like a fatal error, for the exception handler.
    pub fn poll<H: EventHandler<E>>(&mut self, handler: &mut H) -> PollState {
        if self.parts.ring.is_halted() {
            return PollState::Halted;
        }
        let (last, available, failed) = match self.pending {
            Some(pending) => pending,
            None => match self.parts.barrier.readiness(self.next) {
                Readiness::Ready(available) => {
                    let last = available.min(self.next + self.parts.max_batch as i64 - 1);
                    (last, available, 0)
                }
                Readiness::Idle => return PollState::Idle,
                Readiness::Gating => return PollState::Gating,
            },
        };
        let Some((batch, own_last)) = self.parts.batch(self.next, last, available, failed + 1)
        else {
            // Unreachable while pollers are never sharded: none of these
            // events is this poller's, so release them and look again.
            self.release(last);
            return self.poll(handler);
        };
        let mut handler = Shared(handler);
        let Err(error) = self.parts.attempt(&mut handler, &batch, own_last) else {
            self.parts.stats.record_batch(batch.len);
            self.release(last);
            return PollState::Processed(batch);
        };
        match self.parts.after_failure(&mut handler, &batch, error) {
            AfterFailure::Replay(pause) => {
                self.pending = Some((last, available, batch.attempt));
                PollState::Rewound {
                    attempt: batch.attempt,
                    pause,
                }
            }
            AfterFailure::Skip => {
                self.release(last);
                PollState::Skipped(batch)
            }
            AfterFailure::Halt => PollState::Halted,
        }
    }

    fn release(&mut self, last: i64) {
        self.parts.release(last);
        self.pending = None;
        self.next = last + 1;
    }
}

impl<E> Drop for EventPoller<E> {
    fn drop(&mut self) {
        // Nobody will move this poller's sequence again: without a halt,
        // producers and the handle's drain would wait on it forever.
        self.parts.ring.halt();
    }
}

impl<E> std::fmt::Debug for EventPoller<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventPoller")
            .field("name", &self.parts.name)
            .field("sequence", &self.sequence())
            .finish_non_exhaustive()
    }
}
