//! What a processor calls: the event handler traits and their error type.

use crate::sync::UnsafeCell;

/// Any error a handler wants to pass through.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a handler could not process an event.
///
/// The variant decides what the processor does next: [`Rewind`] replays the
/// whole current batch (after calling the handler's `on_rewind`), under the
/// processor's [`RewindStrategy`](crate::RewindStrategy); [`Fatal`] goes
/// straight to the [`ExceptionHandler`](crate::ExceptionHandler).
///
/// [`Rewind`]: HandlerError::Rewind
/// [`Fatal`]: HandlerError::Fatal
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// A transient failure: the same batch may succeed if replayed.
    #[error("{0}")]
    Rewind(BoxError),
    /// A failure that replaying cannot fix.
    #[error("{0}")]
    Fatal(BoxError),
    /// The handler panicked; the message is the panic payload.
    #[error("handler panicked: {0}")]
    Panicked(String),
}

impl HandlerError {
    /// A retryable error: ask for the batch to be rewound and replayed.
    pub fn rewind(error: impl Into<BoxError>) -> Self {
        HandlerError::Rewind(error.into())
    }

    /// A non-retryable error.
    pub fn fatal(error: impl Into<BoxError>) -> Self {
        HandlerError::Fatal(error.into())
    }

    /// Whether the processor may rewind and replay the batch.
    pub fn is_retryable(&self) -> bool {
        matches!(self, HandlerError::Rewind(_))
    }
}

/// What a handler learns about a batch before its first event
/// ([`EventHandler::on_batch`]).
///
/// A replay of a rewound batch has the same `first_sequence` and
/// `last_sequence` and a higher `attempt`, so a handler can tell a replay
/// from a new batch without keeping state of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchInfo {
    /// First sequence of the batch in the ring. A sharded handler's first
    /// own event may come later.
    pub first_sequence: i64,
    /// Last sequence of the batch in the ring.
    pub last_sequence: i64,
    /// Events of the batch this handler owns (all of them unless sharded).
    pub len: usize,
    /// Events that were available when the batch was cut (at least
    /// `last_sequence - first_sequence + 1`; more when the batch was capped
    /// by the maximum batch size).
    pub queue_depth: usize,
    /// 1 for the first delivery of the batch, `n + 1` for its `n`-th replay.
    pub attempt: u32,
}

impl BatchInfo {
    /// Whether this delivery replays a rewound batch.
    pub fn is_replay(&self) -> bool {
        self.attempt > 1
    }
}

/// Consumes events by shared reference; any number of these may run in
/// parallel on the same events.
///
/// The processor calls, on its own thread: `on_start` once; then for each
/// batch [`on_batch`](EventHandler::on_batch) (whose default calls
/// `on_batch_start`) followed by `on_event` for every event of the batch
/// that this handler owns (all of them unless sharded), the last one with
/// `end_of_batch == true`; `on_shutdown` once at the end. A batch is
/// everything published and not yet processed, capped by the processor's
/// maximum batch size. The processor publishes its progress once per batch,
/// after the batch's last event, so a batch is released downstream as a
/// whole or not at all.
///
/// # Errors
///
/// Returning [`HandlerError::Rewind`] from `on_event` makes the processor call
/// [`on_rewind`](EventHandler::on_rewind) and replay the batch from its first
/// event; other errors and panics go to the exception handler.
pub trait EventHandler<E>: Send {
    /// Handles one event. `sequence` is its position in the ring.
    ///
    /// # Errors
    ///
    /// See the trait documentation.
    fn on_event(
        &mut self,
        event: &E,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError>;

    /// A batch of `batch_len` events (this handler's own) is about to be
    /// delivered; `queue_depth` events were available when it was cut.
    /// Called by the default [`on_batch`](EventHandler::on_batch), once per
    /// attempt.
    fn on_batch_start(&mut self, batch_len: usize, queue_depth: usize) {
        let _ = (batch_len, queue_depth);
    }

    /// A batch is about to be delivered, or replayed after a rewind
    /// (`batch.attempt > 1`). The default calls
    /// [`on_batch_start`](EventHandler::on_batch_start).
    fn on_batch(&mut self, batch: &BatchInfo) {
        self.on_batch_start(batch.len, batch.queue_depth);
    }

    /// The batch failed for good (a fatal error, a panic, or a rewind the
    /// strategy gave up on) and the exception handler chose
    /// [`SkipBatch`](crate::FailureAction::SkipBatch): its events count as
    /// handled and the processor moves on. `batch.attempt` is the number of
    /// attempts made. Undo or dead-letter what the batch left here.
    fn on_batch_skipped(&mut self, batch: &BatchInfo) {
        let _ = batch;
    }

    /// Runs once on the processor's thread before the first event.
    fn on_start(&mut self) {}

    /// Runs once on the processor's thread after the last event.
    fn on_shutdown(&mut self) {}

    /// The wait strategy's timeout elapsed with no new event; `sequence` is
    /// the last one processed.
    ///
    /// # Errors
    ///
    /// An error goes to the exception handler.
    fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError> {
        let _ = sequence;
        Ok(())
    }

    /// The current batch failed with a retryable error (`attempt` failures
    /// so far, counting from 1); undo its effects here (a database sink rolls
    /// back). Called before the rewind strategy decides whether to replay.
    ///
    /// # Errors
    ///
    /// An error here ends the batch's retries and goes to the exception
    /// handler.
    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        let _ = attempt;
        Ok(())
    }
}

/// Consumes events by exclusive reference, so it may modify them in place.
///
/// The builder accepts these only as the sole member of a stage (one handler,
/// or one sharded group whose instances own disjoint sequences). Every
/// earlier stage has finished an event before this stage sees it, and every
/// later stage (and the producer's next lap) waits for this stage, so no
/// other reference to the event exists while `on_event` runs.
///
/// The lifecycle and error contract are those of [`EventHandler`].
pub trait EventHandlerMut<E>: Send {
    /// Handles (and may modify) one event.
    ///
    /// # Errors
    ///
    /// As [`EventHandler::on_event`].
    fn on_event(
        &mut self,
        event: &mut E,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError>;

    /// As [`EventHandler::on_batch_start`].
    fn on_batch_start(&mut self, batch_len: usize, queue_depth: usize) {
        let _ = (batch_len, queue_depth);
    }

    /// As [`EventHandler::on_batch`].
    fn on_batch(&mut self, batch: &BatchInfo) {
        self.on_batch_start(batch.len, batch.queue_depth);
    }

    /// As [`EventHandler::on_batch_skipped`].
    fn on_batch_skipped(&mut self, batch: &BatchInfo) {
        let _ = batch;
    }

    /// As [`EventHandler::on_start`].
    fn on_start(&mut self) {}

    /// As [`EventHandler::on_shutdown`].
    fn on_shutdown(&mut self) {}

    /// As [`EventHandler::on_timeout`].
    ///
    /// # Errors
    ///
    /// As [`EventHandler::on_timeout`].
    fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError> {
        let _ = sequence;
        Ok(())
    }

    /// As [`EventHandler::on_rewind`].
    ///
    /// # Errors
    ///
    /// As [`EventHandler::on_rewind`].
    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        let _ = attempt;
        Ok(())
    }
}

/// A borrowed handler is a handler: an [`EventPoller`](crate::EventPoller)
/// polls with `&mut handler`, which the caller keeps.
impl<E, H: EventHandler<E> + ?Sized> EventHandler<E> for &mut H {
    #[inline(always)]
    fn on_event(
        &mut self,
        event: &E,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError> {
        (**self).on_event(event, sequence, end_of_batch)
    }
    fn on_batch_start(&mut self, batch_len: usize, queue_depth: usize) {
        (**self).on_batch_start(batch_len, queue_depth)
    }
    #[inline(always)]
    fn on_batch(&mut self, batch: &BatchInfo) {
        (**self).on_batch(batch)
    }
    fn on_batch_skipped(&mut self, batch: &BatchInfo) {
        (**self).on_batch_skipped(batch)
    }
    fn on_start(&mut self) {
        (**self).on_start()
    }
    fn on_shutdown(&mut self) {
        (**self).on_shutdown()
    }
    fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError> {
        (**self).on_timeout(sequence)
    }
    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        (**self).on_rewind(attempt)
    }
}

/// How a processor reaches its handler, whichever access it has.
pub(crate) trait Dispatch<E>: Send {
    /// Delivers the event in `slot`.
    ///
    /// # Safety
    ///
    /// The caller must hold the access the implementation takes: read access
    /// (the sequence is published and not yet released by this processor)
    /// for [`Shared`], exclusive access for [`Exclusive`].
    unsafe fn dispatch(
        &mut self,
        slot: &UnsafeCell<E>,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError>;
    fn on_batch(&mut self, batch: &BatchInfo);
    fn on_batch_skipped(&mut self, batch: &BatchInfo);
    fn on_start(&mut self);
    fn on_shutdown(&mut self);
    fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError>;
    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError>;
}

/// A handler that reads events.
pub(crate) struct Shared<H>(pub(crate) H);
/// A handler that may modify events.
pub(crate) struct Exclusive<H>(pub(crate) H);

macro_rules! forward_lifecycle {
    () => {
        #[inline(always)]
        fn on_batch(&mut self, batch: &BatchInfo) {
            self.0.on_batch(batch)
        }
        fn on_batch_skipped(&mut self, batch: &BatchInfo) {
            self.0.on_batch_skipped(batch)
        }
        fn on_start(&mut self) {
            self.0.on_start()
        }
        fn on_shutdown(&mut self) {
            self.0.on_shutdown()
        }
        fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError> {
            self.0.on_timeout(sequence)
        }
        fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
            self.0.on_rewind(attempt)
        }
    };
}

impl<E, H: EventHandler<E>> Dispatch<E> for Shared<H> {
    #[inline(always)]
    unsafe fn dispatch(
        &mut self,
        slot: &UnsafeCell<E>,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError> {
        // SAFETY: the caller guarantees read access to the published slot.
        slot.with(|event| self.0.on_event(unsafe { &*event }, sequence, end_of_batch))
    }
    forward_lifecycle!();
}

impl<E, H: EventHandlerMut<E>> Dispatch<E> for Exclusive<H> {
    #[inline(always)]
    unsafe fn dispatch(
        &mut self,
        slot: &UnsafeCell<E>,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError> {
        slot.with_mut(|event| {
            // SAFETY: the caller guarantees exclusive access (see EventHandlerMut).
            let event = unsafe { &mut *event };
            self.0.on_event(event, sequence, end_of_batch)
        })
    }
    forward_lifecycle!();
}
