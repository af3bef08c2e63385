//! What happens when a handler fails for good.

use std::fmt;

use crate::handler::HandlerError;

/// A batch that failed for good: a fatal error, a panic, or a retryable
/// error the rewind strategy gave up on; or a producer that panicked
/// holding a claim.
#[derive(Debug)]
#[non_exhaustive]
pub struct Failure {
    /// Name of the processor that failed, as in
    /// [`ProcessorSnapshot::name`](crate::ProcessorSnapshot::name)
    /// (`{prefix}-s{stage}h{group}`, `.{instance}` for a sharded instance),
    /// or `producer`.
    pub processor: String,
    /// Position of the processor in graph order, the index of its entry in
    /// [`RingHandle::processors`](crate::RingHandle::processors); `None`
    /// for a producer.
    pub processor_index: Option<usize>,
    /// First sequence of the failed batch.
    pub first_sequence: i64,
    /// Last sequence of the failed batch.
    pub last_sequence: i64,
    /// The event being handled when it failed, if known.
    pub sequence: Option<i64>,
    /// How many times the batch was attempted.
    pub attempts: u32,
    /// The last error.
    pub error: HandlerError,
}

impl Failure {
    pub(crate) fn producer_panicked(sequence: i64) -> Self {
        Failure {
            processor: "producer".into(),
            processor_index: None,
            first_sequence: sequence,
            last_sequence: sequence,
            sequence: Some(sequence),
            attempts: 1,
            error: HandlerError::Panicked("producer panicked while holding a claim".into()),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed on batch {}..={}",
            self.processor, self.first_sequence, self.last_sequence
        )?;
        if let Some(sequence) = self.sequence {
            write!(f, " at sequence {sequence}")?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        write!(f, ": {}", self.error)
    }
}

/// What to do with a failed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureAction {
    /// Halt the whole ring: every processor stops, producers get
    /// [`ClaimError::Halted`](crate::ClaimError::Halted), and the handle's
    /// `shutdown`/`halt` returns the failure.
    Halt,
    /// Count the batch as processed by this handler and go on. Its events
    /// still flow to later stages.
    SkipBatch,
}

/// Decides, per failed batch, whether the ring halts or skips it.
///
/// Called on the failing processor's thread (a poller's: the thread that
/// polls). Implement it to report failures somewhere (a metrics counter, a
/// dead-letter log) and decide. A producer that panics while holding a
/// claim is reported here too, on the producer's thread, with
/// [`Failure::processor_index`] `None`; the ring halts whatever the answer,
/// since the claim's slots can never be published.
pub trait ExceptionHandler: Send + Sync {
    /// Reports `failure` and chooses what happens next.
    fn on_failure(&self, failure: &Failure) -> FailureAction;
}

impl<F: Fn(&Failure) -> FailureAction + Send + Sync> ExceptionHandler for F {
    fn on_failure(&self, failure: &Failure) -> FailureAction {
        self(failure)
    }
}

/// The default: logs the failure at error level and halts the ring.
#[derive(Debug, Clone, Copy, Default)]
pub struct HaltOnFailure;

impl ExceptionHandler for HaltOnFailure {
    fn on_failure(&self, failure: &Failure) -> FailureAction {
        log::error!("{failure}; halting the ring");
        FailureAction::Halt
    }
}

/// Logs the failure at warn level and skips the batch: never silently.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkipOnFailure;

impl ExceptionHandler for SkipOnFailure {
    fn on_failure(&self, failure: &Failure) -> FailureAction {
        log::warn!("{failure}; skipping the batch");
        FailureAction::SkipBatch
    }
}
