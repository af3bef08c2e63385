//! Retrying the checkpoint bookkeeping around the shards' work (clearing,
//! reading, marking complete): single statements that can meet the same
//! transient failures as a batch (a deadlock with another part's
//! checkpoint writes, a lost connection, a cluster node rejoining). Each is
//! idempotent, so running it again is safe.

use std::time::{Duration, Instant};

use crate::sink::Retryable;

/// The first pause after a failure; each later one doubles, up to
/// [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Runs `op` until it succeeds, fails for good, or has kept failing
/// retryably for `retry_for` (the import's retry budget); `what` names it
/// in the log.
pub(crate) fn retrying<R, E>(
    what: &str,
    retry_for: Duration,
    mut op: impl FnMut() -> Result<R, E>,
) -> Result<R, E>
where
    E: Retryable + std::fmt::Display,
{
    let mut since: Option<Instant> = None;
    let mut pause = FIRST_PAUSE;
    loop {
        match op() {
            Err(error) if error.is_retryable() => {
                let first = *since.get_or_insert_with(Instant::now);
                if first.elapsed() >= retry_for {
                    return Err(error);
                }
                log::warn!("{what} failed, retrying in {pause:?}: {error}");
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_PAUSE);
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fails(bool);

    impl std::fmt::Display for Fails {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "retryable: {}", self.0)
        }
    }

    impl Retryable for Fails {
        fn is_retryable(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn retryable_failures_are_retried_until_success() {
        let mut calls = 0;
        let result = retrying("op", Duration::from_secs(5), || {
            calls += 1;
            if calls < 3 {
                Err(Fails(true))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(result.unwrap(), 3);
    }

    #[test]
    fn a_fatal_failure_is_not_retried_and_the_budget_ends_the_retries() {
        let mut calls = 0;
        let result: Result<(), Fails> = retrying("op", Duration::from_secs(5), || {
            calls += 1;
            Err(Fails(false))
        });
        assert!(result.is_err() && calls == 1);
        let started = Instant::now();
        let result: Result<(), Fails> =
            retrying("op", Duration::from_millis(50), || Err(Fails(true)));
        assert!(result.unwrap_err().0);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
