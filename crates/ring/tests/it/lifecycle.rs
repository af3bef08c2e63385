//! A ring's life: wait strategies, draining and stopping, timeouts, panics,
//! batch sizes and what the handle reports (rewind strategies: `rewind.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{
    assert_batches_well_formed, triangle, wait_until, within, BatchLog, HaltProbe, Sum,
};
use ringpipe_ring::{
    ClaimError, EventHandler, HandlerError, RingBuilder, RingError, SkipOnFailure, WaitStrategy,
};

const EVENTS: u64 = 100_000;

/// 1 producer → `sharded` sequence-sharded handlers plus one whole-stream
/// handler → one downstream handler; checks exact counts and sums.
fn two_stages(wait: WaitStrategy, sharded: usize) {
    let shards = Sum::default();
    let first = Sum::default();
    let second = Sum::default();
    let mut builder = RingBuilder::new(1024, || 0u64)
        .wait_strategy(wait)
        .handle_events_with(first.clone());
    if sharded > 0 {
        builder = builder.handle_sharded(sharded, |_| shards.clone());
    }
    let (mut producer, ring) = builder.then(second.clone()).start().unwrap();
    for i in 0..EVENTS {
        producer.publish(|slot| *slot = i).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    for (stage, sum) in [("first", &first), ("second", &second)] {
        assert_eq!(
            (sum.count(), sum.total()),
            (EVENTS, triangle(EVENTS)),
            "{stage}"
        );
    }
    if sharded > 0 {
        assert_eq!((shards.count(), shards.total()), (EVENTS, triangle(EVENTS)));
    }
}

#[test]
fn busy_spin_two_stages_exact_sum() {
    two_stages(WaitStrategy::busy_spin(), 0);
}

#[test]
fn yielding_two_stages_exact_sum() {
    two_stages(WaitStrategy::yielding(), 0);
}

#[test]
fn sleeping_two_stages_exact_sum() {
    two_stages(WaitStrategy::sleeping(), 0);
}

#[test]
fn blocking_two_stages_exact_sum() {
    two_stages(WaitStrategy::blocking(), 0);
}

#[test]
fn busy_spin_with_more_busy_threads_than_cores_finishes() {
    // 2 shards + 1 + 1 downstream = 4 spinning processors and the producer,
    // on a 2-core machine: busy-spin must still give way now and then.
    two_stages(WaitStrategy::busy_spin(), 2);
}

#[test]
fn shutdown_processes_everything_already_published() {
    let first = Sum::default();
    let second = Sum::default();
    let (mut producer, ring) = RingBuilder::new(1024, || 0u64)
        .handle_events_with(first.clone())
        .then(second.clone())
        .start()
        .unwrap();
    for i in 0..EVENTS {
        producer.publish(|slot| *slot = i).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    assert_eq!((first.count(), first.total()), (EVENTS, triangle(EVENTS)));
    assert_eq!((second.count(), second.total()), (EVENTS, triangle(EVENTS)));
}

#[test]
fn dropping_the_handle_drains() {
    let sum = Sum::default();
    let (mut producer, ring) = RingBuilder::new(64, || 0u64)
        .handle_events_with(sum.clone())
        .start()
        .unwrap();
    for i in 0..10_000 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    within("drop", move || drop(ring));
    assert_eq!((sum.count(), sum.total()), (10_000, triangle(10_000)));
}

/// Blocks in `on_event` for sequence `stuck_at` until the ring halts;
/// records every sequence it is given.
struct StuckUntilHalt {
    stuck_at: i64,
    probe: HaltProbe<u64>,
    seen: Arc<Mutex<Vec<i64>>>,
}

impl EventHandler<u64> for StuckUntilHalt {
    fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        self.seen.lock().unwrap().push(sequence);
        if sequence == self.stuck_at {
            self.probe.wait_for_halt();
        }
        Ok(())
    }
}

#[test]
fn shutdown_timeout_with_a_stuck_handler_reports_drain_timeout() {
    let probe = HaltProbe::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (producer, ring) = RingBuilder::new(4, || 0u64)
        .handle_events_with(StuckUntilHalt {
            stuck_at: 0,
            probe: probe.clone(),
            seen: Arc::clone(&seen),
        })
        .start_multi()
        .unwrap();
    for i in 0..4 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    assert_eq!(
        producer.try_next().err(),
        Some(ClaimError::InsufficientCapacity)
    );
    probe.arm(&producer);
    let timeout = Duration::from_millis(50);
    let result = within("shutdown_timeout", move || ring.shutdown_timeout(timeout));
    assert!(
        matches!(result, Err(RingError::DrainTimeout(t)) if t == timeout),
        "{result:?}"
    );
    assert_eq!(producer.publish(|_| {}), Err(ClaimError::Halted));
}

#[test]
fn halt_abandons_what_is_left_in_the_ring() {
    let probe = HaltProbe::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (producer, ring) = RingBuilder::new(8, || 0u64)
        .max_batch_size(1)
        .handle_events_with(StuckUntilHalt {
            stuck_at: 0,
            probe: probe.clone(),
            seen: Arc::clone(&seen),
        })
        .start_multi()
        .unwrap();
    for i in 0..8 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    probe.arm(&producer);
    // Halt only once the handler is inside sequence 0: halted before it
    // starts, the processor would rightly abandon all eight.
    wait_until("the handler to reach sequence 0", || {
        !seen.lock().unwrap().is_empty()
    });
    within("halt", move || ring.halt()).unwrap();
    // The handler was inside sequence 0 when the ring halted; the 7 events
    // behind it are abandoned, not processed.
    assert_eq!(*seen.lock().unwrap(), [0]);
}

/// Reports every `on_timeout` sequence.
struct TimeoutLog {
    timeouts: Arc<Mutex<Vec<i64>>>,
}

impl EventHandler<u64> for TimeoutLog {
    fn on_event(&mut self, _: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
        Ok(())
    }

    fn on_timeout(&mut self, sequence: i64) -> Result<(), HandlerError> {
        self.timeouts.lock().unwrap().push(sequence);
        Ok(())
    }
}

#[test]
fn timeout_reports_the_last_processed_sequence() {
    let timeouts = Arc::new(Mutex::new(Vec::new()));
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .wait_strategy(WaitStrategy::blocking().timeout(Duration::from_millis(20)))
        .handle_events_with(TimeoutLog {
            timeouts: Arc::clone(&timeouts),
        })
        .start()
        .unwrap();
    // One claim: the handler sees either nothing or all five.
    producer
        .publish_batch(5, |slot, i| *slot = i as u64)
        .unwrap();
    wait_until("a timeout after the batch", || {
        timeouts.lock().unwrap().contains(&4)
    });
    within("shutdown", move || ring.shutdown()).unwrap();
    let timeouts = timeouts.lock().unwrap();
    assert!(timeouts.iter().all(|&s| s == -1 || s == 4), "{timeouts:?}");
}

/// Panics on sequence `at`.
struct PanicAt {
    at: i64,
}

impl EventHandler<u64> for PanicAt {
    fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        assert_ne!(sequence, self.at, "boom at {sequence}");
        Ok(())
    }
}

fn panicking_handler_halts_the_ring(wait: WaitStrategy) {
    let (mut producer, ring) = RingBuilder::new(4, || 0u64)
        .wait_strategy(wait)
        .thread_name("panicky")
        .handle_events_with(PanicAt { at: 10 })
        .start()
        .unwrap();
    // Keep publishing into the tiny ring: the producer must get `Halted`
    // once the handler has failed, never hang on the full ring.
    let published = within("the producer to see the halt", move || {
        let mut published = 0i64;
        loop {
            match producer.publish(|slot| *slot = published as u64) {
                Ok(()) => published += 1,
                Err(ClaimError::Halted) => return published,
                Err(error) => panic!("{error}"),
            }
        }
    });
    // Sequence 10 was published; the processor released at most up to 9,
    // so the producer got at most 4 (the capacity) beyond that.
    assert!((11..=14).contains(&published), "published {published}");
    assert!(ring.has_failed() && ring.is_halted());
    let result = within("shutdown", move || ring.shutdown());
    let Err(RingError::Failed(failure)) = result else {
        panic!("{result:?}");
    };
    assert_eq!(failure.processor, "panicky-s0h0");
    // A panic does not say which event it came from; the batch does.
    assert_eq!(failure.sequence, Some(10), "{failure}");
    assert!((failure.first_sequence..=failure.last_sequence).contains(&10));
    assert_eq!(failure.attempts, 1);
    assert!(
        matches!(&failure.error, HandlerError::Panicked(m) if m.contains("boom at 10")),
        "{failure}"
    );
}

#[test]
fn panicking_handler_halts_the_ring_yielding() {
    panicking_handler_halts_the_ring(WaitStrategy::yielding());
}

#[test]
fn panicking_handler_halts_the_ring_blocking() {
    panicking_handler_halts_the_ring(WaitStrategy::blocking());
}

#[test]
fn panicking_handler_halts_the_ring_busy_spin() {
    panicking_handler_halts_the_ring(WaitStrategy::busy_spin());
}

fn assert_producer_failure(result: Result<(), RingError>, sequence: i64) {
    let Err(RingError::Failed(failure)) = result else {
        panic!("{result:?}");
    };
    assert_eq!(failure.processor, "producer");
    assert_eq!(failure.sequence, Some(sequence));
    assert!(matches!(failure.error, HandlerError::Panicked(_)));
}

#[test]
fn multi_producer_panicking_inside_a_claim_halts_the_ring() {
    let sum = Sum::default();
    let (producer, ring) = RingBuilder::new(16, || 0u64)
        .wait_strategy(WaitStrategy::blocking())
        .handle_events_with(sum.clone())
        .then(Sum::default())
        .start_multi()
        .unwrap();
    let doomed = producer.clone();
    let died = std::thread::spawn(move || {
        for i in 0..5 {
            doomed.publish(|slot| *slot = i).unwrap();
        }
        let _claim = doomed.next().unwrap();
        panic!("producer dies holding sequence 5");
    })
    .join();
    assert!(died.is_err());
    assert!(ring.is_halted() && ring.has_failed());
    assert_eq!(producer.publish(|_| {}), Err(ClaimError::Halted));
    assert_producer_failure(within("shutdown", move || ring.shutdown()), 5);
    // Everything before the gap was published; nothing after it can be.
    assert!(sum.count() <= 5, "{}", sum.count());
}

#[test]
fn single_producer_panicking_inside_a_claim_halts_the_ring() {
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .handle_events_with(Sum::default())
        .start()
        .unwrap();
    producer.publish(|slot| *slot = 1).unwrap();
    let died = std::thread::spawn(move || {
        producer
            .publish(|_| panic!("producer dies filling sequence 1"))
            .unwrap();
    })
    .join();
    assert!(died.is_err());
    assert!(ring.is_halted());
    assert_producer_failure(within("shutdown", move || ring.shutdown()), 1);
}

#[test]
fn max_batch_size_caps_batches_and_end_of_batch_agrees() {
    /// Holds its first event until the ring is full, so later batches
    /// could be longer than the cap if the cap did not hold.
    struct HoldFirst {
        published: Arc<AtomicU64>,
        log: BatchLog,
    }
    impl EventHandler<u64> for HoldFirst {
        fn on_event(&mut self, e: &u64, sequence: i64, end: bool) -> Result<(), HandlerError> {
            if sequence == 0 {
                wait_until("the ring to fill", || {
                    self.published.load(Ordering::Acquire) >= 64
                });
            }
            EventHandler::<u64>::on_event(&mut self.log, e, sequence, end)
        }
        fn on_batch_start(&mut self, len: usize, depth: usize) {
            EventHandler::<u64>::on_batch_start(&mut self.log, len, depth)
        }
        fn on_shutdown(&mut self) {
            EventHandler::<u64>::on_shutdown(&mut self.log)
        }
    }

    let out = Arc::default();
    let published = Arc::new(AtomicU64::new(0));
    let (mut producer, ring) = RingBuilder::new(64, || 0u64)
        .max_batch_size(3)
        .handle_events_with(HoldFirst {
            published: Arc::clone(&published),
            log: BatchLog::new(0, &out),
        })
        .start()
        .unwrap();
    for i in 0..1000 {
        producer.publish(|slot| *slot = i).unwrap();
        published.store(i + 1, Ordering::Release);
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    let logs = out.lock().unwrap();
    let batches = &logs[0].1;
    assert_batches_well_formed(batches);
    assert_eq!(batches.iter().map(|b| b.len).sum::<usize>(), 1000);
    assert_eq!(batches.iter().map(|b| b.len).max(), Some(3));
}

#[test]
fn handle_reports_cursor_capacity_and_processor_counters() {
    /// Waits for `release` before its first event.
    struct Gated {
        release: Arc<AtomicBool>,
    }
    impl EventHandler<u64> for Gated {
        fn on_event(&mut self, _: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
            wait_until("release", || self.release.load(Ordering::Acquire));
            Ok(())
        }
    }

    let release = Arc::new(AtomicBool::new(false));
    let (mut producer, ring) = RingBuilder::new(16, || 0u64)
        .thread_name("obs")
        .handle_sharded(2, |_| Gated {
            release: Arc::clone(&release),
        })
        .then(Sum::default())
        .start()
        .unwrap();
    assert_eq!((ring.cursor(), ring.remaining_capacity()), (-1, 16));
    for i in 0..5 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    assert_eq!(ring.capacity(), 16);
    assert_eq!(ring.cursor(), 4);
    assert_eq!(producer.cursor(), 4);
    assert_eq!(ring.remaining_capacity(), 11);
    assert_eq!(producer.remaining_capacity(), 11);
    let stuck = ring.processors();
    let names: Vec<&str> = stuck.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["obs-s0h0.0", "obs-s0h0.1", "obs-s1h0"]);
    assert_eq!((stuck[0].sequence, stuck[0].events), (-1, 0));
    assert_eq!((stuck[2].sequence, stuck[2].events), (-1, 0));

    release.store(true, Ordering::Release);
    wait_until("the last stage to drain", || {
        ring.processors().iter().all(|p| p.sequence == 4)
    });
    let done = ring.processors();
    let events: Vec<u64> = done.iter().map(|p| p.events).collect();
    assert_eq!(events, [3, 2, 5]);
    assert!(done.iter().all(|p| p.batches >= 1 && p.rewinds == 0));
    assert_eq!(ring.remaining_capacity(), 16);
    assert!(!ring.is_halted() && !ring.has_failed());
    within("shutdown", move || ring.shutdown()).unwrap();
}

/// Logs its lifecycle calls; `on_start` panics if asked to.
struct Lifecycle {
    panic_on_start: bool,
    calls: Arc<Mutex<Vec<String>>>,
}

impl EventHandler<u64> for Lifecycle {
    fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        self.calls.lock().unwrap().push(format!("event {sequence}"));
        Ok(())
    }

    fn on_start(&mut self) {
        self.calls.lock().unwrap().push("start".into());
        assert!(!self.panic_on_start, "on_start fails");
    }

    fn on_shutdown(&mut self) {
        self.calls.lock().unwrap().push("shutdown".into());
    }
}

#[test]
fn lifecycle_calls_come_in_order() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (mut producer, ring) = RingBuilder::new(4, || 0u64)
        .handle_events_with(Lifecycle {
            panic_on_start: false,
            calls: Arc::clone(&calls),
        })
        .start()
        .unwrap();
    for i in 0..3 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    let want = ["start", "event 0", "event 1", "event 2", "shutdown"];
    assert_eq!(*calls.lock().unwrap(), want);
}

#[test]
fn on_start_panic_halts_the_ring_by_default() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (mut producer, ring) = RingBuilder::new(4, || 0u64)
        .handle_events_with(Lifecycle {
            panic_on_start: true,
            calls: Arc::clone(&calls),
        })
        .start()
        .unwrap();
    let halted = within("the producer to see the halt", move || loop {
        if let Err(error) = producer.publish(|_| {}) {
            return error;
        }
    });
    assert_eq!(halted, ClaimError::Halted);
    assert!(matches!(
        within("shutdown", move || ring.shutdown()),
        Err(RingError::Failed(f)) if f.sequence.is_none()
    ));
    assert_eq!(*calls.lock().unwrap(), ["start"]);
}

#[test]
fn on_start_panic_skipped_by_the_exception_handler_keeps_processing() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (mut producer, ring) = RingBuilder::new(4, || 0u64)
        .exception_handler(SkipOnFailure)
        .handle_events_with(Lifecycle {
            panic_on_start: true,
            calls: Arc::clone(&calls),
        })
        .start()
        .unwrap();
    within("publishing past the ring's capacity", move || {
        for i in 0..10 {
            producer.publish(|slot| *slot = i).unwrap();
        }
        ring.shutdown()
    })
    .unwrap();
    let calls = calls.lock().unwrap();
    assert_eq!(calls.len(), 12, "{calls:?}");
    assert_eq!(
        (calls[0].as_str(), calls[11].as_str()),
        ("start", "shutdown")
    );
}
