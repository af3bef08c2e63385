//! What a service embedding the ring relies on: replays it can tell apart,
//! a callback for a skipped batch, failures that name their processor, a
//! drain that keeps the ring running, bounded stops, metrics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{triangle, wait_until, within, Sum};
use ringpipe_ring::{
    BatchInfo, EventHandler, Failure, FailureAction, HandlerError, RewindStrategy, RingBuilder,
    RingError, WaitStrategy,
};

type Shared<T> = Arc<Mutex<Vec<T>>>;

/// Fails retryably on `fail_at` while `failures` last; records batches.
struct Flaky {
    fail_at: i64,
    failures: u32,
    batches: Shared<BatchInfo>,
    skipped: Shared<BatchInfo>,
}

impl Flaky {
    fn new(fail_at: i64, failures: u32) -> (Self, Shared<BatchInfo>, Shared<BatchInfo>) {
        let (batches, skipped) = (Shared::default(), Shared::default());
        let flaky = Flaky {
            fail_at,
            failures,
            batches: Arc::clone(&batches),
            skipped: Arc::clone(&skipped),
        };
        (flaky, batches, skipped)
    }
}

impl EventHandler<u64> for Flaky {
    fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        if sequence == self.fail_at && self.failures > 0 {
            self.failures -= 1;
            return Err(HandlerError::rewind("transient"));
        }
        Ok(())
    }

    fn on_batch(&mut self, batch: &BatchInfo) {
        self.batches.lock().unwrap().push(*batch);
    }

    fn on_batch_skipped(&mut self, batch: &BatchInfo) {
        self.skipped.lock().unwrap().push(*batch);
    }
}

#[test]
fn a_replay_carries_the_batch_first_sequence_and_its_attempt() {
    let (flaky, batches, _) = Flaky::new(5, 2);
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .rewind_strategy(RewindStrategy::Always)
        .max_batch_size(4)
        .handle_events_with(flaky)
        .start()
        .unwrap();
    for i in 0..8 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    let batches = batches.lock().unwrap();
    let failing: Vec<_> = batches
        .iter()
        .filter(|b| (b.first_sequence..=b.last_sequence).contains(&5))
        .collect();
    assert_eq!(failing.len(), 3, "{batches:?}");
    for (i, batch) in failing.iter().enumerate() {
        assert_eq!(batch.attempt, i as u32 + 1);
        assert_eq!(batch.is_replay(), i > 0);
        assert_eq!(
            (batch.first_sequence, batch.last_sequence),
            (failing[0].first_sequence, failing[0].last_sequence)
        );
    }
    assert!(batches
        .iter()
        .filter(|b| b.attempt > 1)
        .all(|b| b.first_sequence == failing[0].first_sequence));
}

#[test]
fn a_given_up_batch_gets_on_batch_skipped_and_the_failure_names_its_processor() {
    let (flaky, _, skipped) = Flaky::new(3, u32::MAX);
    let shared = (Arc::clone(&flaky.batches), Arc::clone(&flaky.skipped));
    let failures: Shared<(String, Option<usize>, i64, u32)> = Shared::default();
    let log = Arc::clone(&failures);
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .thread_name("svc")
        .rewind_strategy(RewindStrategy::GiveUpAfter(2))
        .max_batch_size(1)
        .exception_handler(move |f: &Failure| {
            let entry = (
                f.processor.clone(),
                f.processor_index,
                f.first_sequence,
                f.attempts,
            );
            log.lock().unwrap().push(entry);
            FailureAction::SkipBatch
        })
        .handle_events_with(Sum::default())
        .then_sharded(2, |i| Flaky {
            fail_at: if i == 1 { 3 } else { -1 },
            failures: u32::MAX,
            batches: Arc::clone(&shared.0),
            skipped: Arc::clone(&shared.1),
        })
        .start()
        .unwrap();
    drop(flaky);
    for i in 0..8 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    let names: Vec<String> = ring.processors().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["svc-s0h0", "svc-s1h0.0", "svc-s1h0.1"]);
    within("shutdown", move || ring.shutdown()).unwrap();
    assert_eq!(
        *failures.lock().unwrap(),
        [("svc-s1h0.1".to_string(), Some(2), 3, 2)]
    );
    let skipped = skipped.lock().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!((skipped[0].first_sequence, skipped[0].attempt), (3, 2));
}

#[test]
fn a_producer_panic_reaches_the_exception_handler() {
    let failures: Shared<(String, Option<usize>, Option<i64>)> = Shared::default();
    let log = Arc::clone(&failures);
    let (mut producer, ring) = RingBuilder::new(8, || 0u64)
        .exception_handler(move |f: &Failure| {
            log.lock()
                .unwrap()
                .push((f.processor.clone(), f.processor_index, f.sequence));
            FailureAction::SkipBatch
        })
        .handle_events_with(Sum::default())
        .start()
        .unwrap();
    producer.publish(|slot| *slot = 1).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        producer.publish(|_| panic!("bad input")).unwrap();
    }));
    assert!(panicked.is_err());
    assert_eq!(
        *failures.lock().unwrap(),
        [("producer".to_string(), None, Some(1))]
    );
    assert!(
        ring.is_halted(),
        "a lost claim halts the ring whatever the answer"
    );
    assert!(matches!(
        within("shutdown", move || ring.shutdown()),
        Err(RingError::Failed(_))
    ));
}

#[test]
fn drain_keeps_the_ring_running_and_the_monitor_outlives_the_handle() {
    let sum = Sum::default();
    let (mut producer, ring) = RingBuilder::new(64, || 0u64)
        .handle_events_with(sum.clone())
        .start()
        .unwrap();
    for i in 0..100 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    ring.drain(Duration::from_secs(60)).unwrap();
    assert_eq!(sum.count(), 100, "drained");
    assert!(!ring.is_halted(), "still running");
    for i in 100..200 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    let monitor = ring.monitor();
    within("shutdown", move || ring.shutdown()).unwrap();
    assert_eq!(sum.total(), triangle(200));
    let metrics = monitor.metrics();
    let last = &metrics.processors[0];
    assert_eq!(
        (metrics.cursor, last.sequence, last.lag, last.events),
        (199, 199, 0, 200)
    );
    let counted: u64 = last.batch_sizes.buckets().map(|(_, n)| n).sum();
    assert_eq!(
        counted, last.batches,
        "every batch is in the histogram once"
    );
}

/// Blocks in `on_event` until `release` is set; sets `entered` on the way
/// in. Both flags carry nothing but themselves (Release on the store,
/// Acquire on the load is more than they need, and says which side
/// publishes).
struct Stuck {
    release: Arc<AtomicBool>,
    entered: Arc<AtomicBool>,
}

impl Stuck {
    fn new(release: &Arc<AtomicBool>) -> Self {
        Stuck {
            release: Arc::clone(release),
            entered: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl EventHandler<u64> for Stuck {
    fn on_event(&mut self, _: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
        self.entered.store(true, Ordering::Release);
        while !self.release.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }
}

#[test]
fn shutdown_timeout_and_halt_timeout_return_while_a_handler_is_stuck() {
    let release = Arc::new(AtomicBool::new(false));
    for halt in [false, true] {
        let stuck = Stuck::new(&release);
        let entered = Arc::clone(&stuck.entered);
        let (mut producer, ring) = RingBuilder::new(8, || 0u64)
            .thread_name(if halt { "halted" } else { "drained" })
            .handle_events_with(stuck)
            .start()
            .unwrap();
        producer.publish(|slot| *slot = 1).unwrap();
        // Inside `on_event`: a halt asked for before the handler took the
        // event would stop it cleanly, before it got stuck.
        wait_until("the handler to get stuck", || {
            entered.load(Ordering::Acquire)
        });
        assert_eq!(ring.processors()[0].sequence, -1);
        let started = Instant::now();
        let result = within("the stop", move || match halt {
            false => ring.shutdown_timeout(Duration::from_millis(50)),
            true => ring.halt_timeout(Duration::from_millis(50)),
        });
        let took = started.elapsed();
        let name = if halt { "halted-s0h0" } else { "drained-s0h0" };
        assert!(
            matches!(&result, Err(RingError::Stuck(names)) if names == &[name]),
            "{result:?}"
        );
        assert!(took < Duration::from_secs(5), "bounded: {took:?}");
    }
    // Let the detached threads finish.
    release.store(true, Ordering::Release);
}

#[test]
fn dropping_the_handle_returns_when_a_handler_rewinds_forever() {
    let (flaky, _, _) = Flaky::new(0, u32::MAX);
    let (mut producer, ring) = RingBuilder::new(8, || 0u64)
        .rewind_strategy(RewindStrategy::Always)
        .wait_strategy(WaitStrategy::yielding())
        .handle_events_with(flaky)
        .start()
        .unwrap();
    producer.publish(|slot| *slot = 1).unwrap();
    wait_until("the processor to retry", || ring.processors()[0].retrying);
    within("drop", move || drop(ring));
}

#[test]
fn publish_closures_receive_the_sequence() {
    let (mut producer, ring) = RingBuilder::new(8, || 0u64)
        .handle_events_with(Sum::default())
        .start()
        .unwrap();
    producer.publish(|slot| *slot = 0).unwrap();
    let seq = producer
        .publish_with_seq(|slot, seq| *slot = seq as u64)
        .unwrap();
    assert_eq!(seq, 1);
    let mut seen = Vec::new();
    let last = producer
        .publish_batch_with_seq(3, |_, seq| seen.push(seq))
        .unwrap();
    assert_eq!((seen, last), (vec![2, 3, 4], 4));
    ring.shutdown().unwrap();

    let (producer, ring) = RingBuilder::new(8, || 0u64)
        .handle_events_with(Sum::default())
        .start_multi()
        .unwrap();
    let other = producer.clone();
    assert_eq!(
        other
            .publish_with_seq(|slot, seq| *slot = seq as u64)
            .unwrap(),
        0
    );
    let mut seen = Vec::new();
    let last = producer
        .publish_batch_with_seq(2, |_, seq| seen.push(seq))
        .unwrap();
    assert_eq!((seen, last), (vec![1, 2], 2));
    ring.shutdown().unwrap();
}

#[test]
fn producer_waits_for_capacity_are_counted() {
    let release = Arc::new(AtomicBool::new(false));
    let (mut producer, ring) = RingBuilder::new(4, || 0u64)
        .handle_events_with(Stuck::new(&release))
        .start()
        .unwrap();
    let opener = {
        let release = Arc::clone(&release);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            release.store(true, Ordering::Release);
        })
    };
    for i in 0..8 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    opener.join().unwrap();
    let metrics = ring.metrics();
    assert!(metrics.producer_waits >= 1, "{metrics:?}");
    assert!(
        metrics.producer_wait >= Duration::from_millis(5),
        "{metrics:?}"
    );
    within("shutdown", move || ring.shutdown()).unwrap();
}
