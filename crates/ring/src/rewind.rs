//! Rewind-on-error: when a batch that failed retryably is replayed.

use std::time::Duration;

/// How a processor answers a retryable failure of its current batch.
///
/// After each failed attempt the handler's `on_rewind` runs (a database sink
/// rolls back there); then the strategy, given the number of failures so far
/// (the first failure is attempt 1; the count resets when a batch
/// completes), either replays the batch from its first event or gives up,
/// in which case the exception handler decides between halting and skipping.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringpipe_ring::{RewindDecision, RewindStrategy};
///
/// let strategy = RewindStrategy::backoff(Duration::from_millis(10), Duration::from_millis(25), Some(4));
/// assert_eq!(strategy.decide(1), RewindDecision::Rewind { pause: Duration::from_millis(10) });
/// assert_eq!(strategy.decide(2), RewindDecision::Rewind { pause: Duration::from_millis(20) });
/// assert_eq!(strategy.decide(3), RewindDecision::Rewind { pause: Duration::from_millis(25) });
/// assert_eq!(strategy.decide(4), RewindDecision::GiveUp);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RewindStrategy {
    /// Replay immediately, forever.
    Always,
    /// Replay immediately; give up after this many attempts in all.
    GiveUpAfter(u32),
    /// Pause `initial`, doubling up to `max`, between attempts; give up after
    /// `attempts` attempts in all when set.
    Backoff {
        /// Pause after the first failure.
        initial: Duration,
        /// Longest pause.
        max: Duration,
        /// Attempts in all before giving up; `None` retries forever.
        attempts: Option<u32>,
    },
}

/// A rewind strategy's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindDecision {
    /// Pause, then replay the batch.
    Rewind {
        /// How long to wait first.
        pause: Duration,
    },
    /// Stop retrying; the exception handler takes over.
    GiveUp,
}

impl RewindStrategy {
    /// Exponential backoff from `initial` to `max`, `attempts` tries in all.
    pub const fn backoff(initial: Duration, max: Duration, attempts: Option<u32>) -> Self {
        RewindStrategy::Backoff {
            initial,
            max,
            attempts,
        }
    }

    /// What to do after failure number `attempt` (1 for the first).
    pub fn decide(&self, attempt: u32) -> RewindDecision {
        match *self {
            RewindStrategy::Always => RewindDecision::Rewind {
                pause: Duration::ZERO,
            },
            RewindStrategy::GiveUpAfter(limit) if attempt < limit => RewindDecision::Rewind {
                pause: Duration::ZERO,
            },
            RewindStrategy::GiveUpAfter(_) => RewindDecision::GiveUp,
            RewindStrategy::Backoff {
                attempts: Some(limit),
                ..
            } if attempt >= limit => RewindDecision::GiveUp,
            RewindStrategy::Backoff { initial, max, .. } => {
                let doublings = attempt.saturating_sub(1).min(30);
                let pause = initial.saturating_mul(1 << doublings).min(max);
                RewindDecision::Rewind { pause }
            }
        }
    }
}

impl Default for RewindStrategy {
    /// Backoff from 1 ms to 1 s, 10 attempts in all.
    fn default() -> Self {
        RewindStrategy::backoff(Duration::from_millis(1), Duration::from_secs(1), Some(10))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn give_up_after_counts_attempts_in_all() {
        let strategy = RewindStrategy::GiveUpAfter(3);
        assert!(matches!(strategy.decide(1), RewindDecision::Rewind { .. }));
        assert!(matches!(strategy.decide(2), RewindDecision::Rewind { .. }));
        assert_eq!(strategy.decide(3), RewindDecision::GiveUp);
    }

    #[test]
    fn always_never_gives_up() {
        assert!(matches!(
            RewindStrategy::Always.decide(u32::MAX),
            RewindDecision::Rewind { .. }
        ));
    }

    #[test]
    fn unbounded_backoff_saturates_at_max() {
        let strategy =
            RewindStrategy::backoff(Duration::from_secs(1), Duration::from_secs(5), None);
        assert_eq!(
            strategy.decide(1000),
            RewindDecision::Rewind {
                pause: Duration::from_secs(5)
            }
        );
    }
}
