//! The batch event processor: the loop each handler thread runs.

use std::time::{Duration, Instant};

use crate::barrier::WaitError;
use crate::delivery::{guard, AfterFailure, ProcessorParts};
use crate::handler::Dispatch;

/// Runs one handler over the ring on its own thread: wait for a batch,
/// deliver it, publish the processor's sequence once at the end of it.
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
            if !self.parts.escalate(0, -1, None, 1, error) {
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
                    next = last + 1;
                }
                Err(WaitError::TimedOut) => {
                    let timeout = guard(|| self.handler.on_timeout(next - 1));
                    if let Err(error) = timeout {
                        if !self.parts.escalate(next, next - 1, None, 1, error) {
                            break;
                        }
                    }
                }
                Err(WaitError::Halted) => break,
            }
        }
        self.shutdown();
    }

    fn shutdown(mut self) {
        if let Err(error) = guard(|| {
            self.handler.on_shutdown();
            Ok(())
        }) {
            log::error!("{}: on_shutdown failed: {error}", self.parts.name);
        }
    }

    /// Delivers `first..=last` until it succeeds or is given up, then
    /// releases it; returns false when the ring must halt.
    fn process(&mut self, first: i64, last: i64, available: i64) -> bool {
        let mut attempt = 1;
        loop {
            let parts = &mut self.parts;
            let Some((batch, own_last)) = parts.batch(first, last, available, attempt) else {
                parts.release(last);
                return true;
            };
            let Err(error) = parts.attempt(&mut self.handler, &batch, own_last) else {
                parts.complete(&batch);
                return true;
            };
            match parts.after_failure(&mut self.handler, &batch, error) {
                AfterFailure::Replay(pause) => {
                    if !self.pause(pause) {
                        return false;
                    }
                }
                AfterFailure::Skip => {
                    parts.release(last);
                    return true;
                }
                AfterFailure::Halt => return false,
            }
            attempt += 1;
        }
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
}
