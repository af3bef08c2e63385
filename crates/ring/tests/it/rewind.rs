//! Rewind strategies: giving up, skipping, backing off between attempts.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{triangle, wait_until, within, Sum};
use ringpipe_ring::{
    EventHandler, Failure, FailureAction, HandlerError, RewindStrategy, RingBuilder, RingError,
    SkipOnFailure,
};

/// Fails sequence `at` with a retryable error on every attempt; logs the
/// attempt numbers `on_rewind` is given, with when it was called.
struct AlwaysRewind {
    at: i64,
    rewinds: Arc<Mutex<Vec<(u32, Instant)>>>,
}

impl EventHandler<u64> for AlwaysRewind {
    fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        if sequence == self.at {
            return Err(HandlerError::rewind("still down"));
        }
        Ok(())
    }

    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        self.rewinds.lock().unwrap().push((attempt, Instant::now()));
        Ok(())
    }
}

/// An exception handler that records each failure's attempt count.
fn recording(
    action: FailureAction,
) -> (
    Arc<Mutex<Vec<u32>>>,
    impl Fn(&Failure) -> FailureAction + Send + Sync,
) {
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&attempts);
    (attempts, move |failure: &Failure| {
        log.lock().unwrap().push(failure.attempts);
        action
    })
}

#[test]
fn give_up_after_three_attempts_reaches_the_exception_handler() {
    let rewinds = Arc::new(Mutex::new(Vec::new()));
    let (attempts, exceptions) = recording(FailureAction::Halt);
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .rewind_strategy(RewindStrategy::GiveUpAfter(3))
        .exception_handler(exceptions)
        .handle_events_with(AlwaysRewind {
            at: 5,
            rewinds: Arc::clone(&rewinds),
        })
        .start()
        .unwrap();
    for i in 0..8 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    wait_until("the ring to halt", || ring.is_halted());
    let result = within("shutdown", move || ring.shutdown());
    let Err(RingError::Failed(failure)) = result else {
        panic!("{result:?}");
    };
    assert_eq!((failure.attempts, failure.sequence), (3, Some(5)));
    assert!(failure.error.is_retryable());
    assert_eq!(*attempts.lock().unwrap(), [3]);
    let rewound: Vec<u32> = rewinds.lock().unwrap().iter().map(|r| r.0).collect();
    assert_eq!(rewound, [1, 2, 3]);
}

#[test]
fn skip_on_failure_skips_the_batch_and_counts_it() {
    let rewinds = Arc::new(Mutex::new(Vec::new()));
    let downstream = Sum::default();
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .exception_handler(SkipOnFailure)
        .rewind_strategy(RewindStrategy::GiveUpAfter(2))
        .max_batch_size(1)
        .handle_events_with(AlwaysRewind {
            at: 5,
            rewinds: Arc::clone(&rewinds),
        })
        .then(downstream.clone())
        .start()
        .unwrap();
    for i in 0..100 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    wait_until("the last stage to drain", || {
        ring.processors().iter().all(|p| p.sequence == 99)
    });
    let first = &ring.processors()[0];
    assert_eq!(
        (
            first.events,
            first.batches,
            first.rewinds,
            first.skipped_batches
        ),
        (99, 99, 2, 1)
    );
    within("shutdown", move || ring.shutdown()).unwrap();
    assert_eq!(
        (downstream.count(), downstream.total()),
        (100, triangle(100))
    );
}

#[test]
fn backoff_pauses_between_attempts() {
    let rewinds = Arc::new(Mutex::new(Vec::new()));
    let (attempts, exceptions) = recording(FailureAction::Halt);
    let initial = Duration::from_millis(10);
    let max = Duration::from_millis(25);
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .rewind_strategy(RewindStrategy::backoff(initial, max, Some(4)))
        .exception_handler(exceptions)
        .handle_events_with(AlwaysRewind {
            at: 0,
            rewinds: Arc::clone(&rewinds),
        })
        .start()
        .unwrap();
    producer.publish(|slot| *slot = 0).unwrap();
    wait_until("the ring to halt", || ring.is_halted());
    assert!(matches!(
        within("shutdown", move || ring.shutdown()),
        Err(RingError::Failed(_))
    ));
    assert_eq!(*attempts.lock().unwrap(), [4]);
    let rewinds = rewinds.lock().unwrap();
    let numbers: Vec<u32> = rewinds.iter().map(|r| r.0).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    // Lower bounds only: a slow machine may pause longer, never shorter.
    let pauses = [initial, initial * 2, max];
    for (pair, pause) in rewinds.windows(2).zip(pauses) {
        let gap = pair[1].1 - pair[0].1;
        assert!(
            gap >= pause,
            "attempt {} came {gap:?} after the last",
            pair[1].0
        );
    }
}
