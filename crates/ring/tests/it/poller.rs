//! The poller: a consumer the caller drives, with the batch and rewind
//! semantics of a processor thread.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{triangle, within, Sum};
use ringpipe_ring::{
    BatchInfo, EventHandler, FailureAction, HandlerError, PollState, RewindStrategy, RingBuilder,
};

/// Records every delivery and every batch; fails retryably on `fail_at`
/// for its first `failures` attempts.
#[derive(Default)]
struct Recorder {
    deliveries: Vec<(i64, u64, bool)>,
    batches: Vec<BatchInfo>,
    rewinds: Vec<u32>,
    skipped: Vec<BatchInfo>,
    fail_at: Option<i64>,
    failures: u32,
    fatal: bool,
}

impl EventHandler<u64> for Recorder {
    fn on_event(&mut self, event: &u64, sequence: i64, end: bool) -> Result<(), HandlerError> {
        self.deliveries.push((sequence, *event, end));
        if self.fail_at == Some(sequence) && self.failures > 0 {
            self.failures -= 1;
            return Err(match self.fatal {
                true => HandlerError::fatal("broken"),
                false => HandlerError::rewind("transient"),
            });
        }
        Ok(())
    }

    fn on_batch(&mut self, batch: &BatchInfo) {
        self.batches.push(*batch);
    }

    fn on_rewind(&mut self, attempt: u32) -> Result<(), HandlerError> {
        self.rewinds.push(attempt);
        Ok(())
    }

    fn on_batch_skipped(&mut self, batch: &BatchInfo) {
        self.skipped.push(*batch);
    }
}

#[test]
fn a_poller_moves_to_and_is_shared_between_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<ringpipe_ring::EventPoller<u64>>();
}

#[test]
fn a_poller_takes_what_is_ready_as_one_batch_and_releases_it() {
    let (mut producer, mut ring) = RingBuilder::new(8, || 0u64).add_poller().start().unwrap();
    let mut poller = ring.take_poller(0).unwrap();
    assert!(ring.take_poller(0).is_none(), "taken once");
    let mut handler = Recorder::default();
    assert_eq!(poller.poll(&mut handler), PollState::Idle);
    for i in 0..5 {
        producer.publish(|slot| *slot = i * 10).unwrap();
    }
    let PollState::Processed(batch) = poller.poll(&mut handler) else {
        panic!("a batch was ready");
    };
    assert_eq!(
        (batch.first_sequence, batch.last_sequence, batch.len),
        (0, 4, 5)
    );
    assert_eq!((batch.attempt, batch.is_replay()), (1, false));
    let want: Vec<_> = (0..5).map(|s| (s, s as u64 * 10, s == 4)).collect();
    assert_eq!(handler.deliveries, want);
    assert_eq!(poller.sequence(), 4);
    assert_eq!(
        ring.processors()[0].sequence,
        4,
        "released to the producers"
    );
    // The ring is 8 slots: the poller's progress is what frees them.
    for i in 5..13 {
        producer.publish(|slot| *slot = i * 10).unwrap();
    }
    assert!(matches!(poller.poll(&mut handler), PollState::Processed(_)));
    assert_eq!(poller.poll(&mut handler), PollState::Idle);
    drop(poller);
    assert!(ring.is_halted(), "a dropped poller halts the ring");
    within("shutdown", move || ring.shutdown()).unwrap();
}

#[test]
fn a_rewound_batch_is_replayed_whole_by_the_next_poll() {
    let (mut producer, mut ring) = RingBuilder::new(16, || 0u64)
        .rewind_strategy(RewindStrategy::Always)
        .add_poller()
        .start()
        .unwrap();
    let mut poller = ring.take_poller(0).unwrap();
    for i in 0..4 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    let mut handler = Recorder {
        fail_at: Some(2),
        failures: 2,
        ..Recorder::default()
    };
    for attempt in 1..=2 {
        let state = poller.poll(&mut handler);
        assert_eq!(
            state,
            PollState::Rewound {
                attempt,
                pause: Duration::ZERO
            }
        );
        assert_eq!(poller.sequence(), -1, "nothing released");
    }
    // Published meanwhile: not part of the replayed batch.
    producer.publish(|slot| *slot = 4).unwrap();
    let PollState::Processed(batch) = poller.poll(&mut handler) else {
        panic!("the replay succeeds");
    };
    assert_eq!(
        (batch.first_sequence, batch.last_sequence, batch.attempt),
        (0, 3, 3)
    );
    let firsts: Vec<_> = handler
        .batches
        .iter()
        .map(|b| (b.first_sequence, b.attempt))
        .collect();
    assert_eq!(firsts, [(0, 1), (0, 2), (0, 3)]);
    assert_eq!(handler.rewinds, [1, 2]);
    let replays = handler.deliveries.iter().filter(|d| d.0 == 0).count();
    assert_eq!(replays, 3, "each attempt starts at the batch's first event");
    assert!(matches!(poller.poll(&mut handler), PollState::Processed(b) if b.first_sequence == 4));
    let snapshot = &ring.processors()[0];
    assert_eq!(
        (snapshot.rewinds, snapshot.events, snapshot.batches),
        (2, 5, 2)
    );
    assert_eq!(poller.poll(&mut handler), PollState::Idle);
    // Everything was polled: the drain finds nothing left, then halts.
    let stop = std::thread::spawn(move || ring.shutdown());
    stop.join().unwrap().unwrap();
    assert_eq!(poller.poll(&mut handler), PollState::Halted);
}

#[test]
fn a_skipped_batch_is_released_and_reported() {
    let failures = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&failures);
    let (mut producer, mut ring) = RingBuilder::new(16, || 0u64)
        .exception_handler(move |f: &ringpipe_ring::Failure| {
            log.lock()
                .unwrap()
                .push((f.processor_index, f.sequence, f.attempts));
            FailureAction::SkipBatch
        })
        .add_poller()
        .start()
        .unwrap();
    let mut poller = ring.take_poller(0).unwrap();
    for i in 0..3 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    let mut handler = Recorder {
        fail_at: Some(1),
        failures: 1,
        fatal: true,
        ..Recorder::default()
    };
    let PollState::Skipped(batch) = poller.poll(&mut handler) else {
        panic!("a fatal error with SkipBatch skips");
    };
    assert_eq!((batch.first_sequence, batch.last_sequence), (0, 2));
    assert_eq!(handler.skipped, [batch]);
    assert_eq!(*failures.lock().unwrap(), [(Some(0), Some(1), 1)]);
    assert_eq!(poller.sequence(), 2, "the skipped batch is released");
    assert_eq!(ring.processors()[0].skipped_batches, 1);
    drop(poller);
    ring.shutdown().unwrap();
}

#[test]
fn a_poller_behind_a_stage_reports_gating_and_sees_only_finished_events() {
    let first = Sum::default();
    let (mut producer, mut ring) = RingBuilder::new(1024, || 0u64)
        .handle_events_with(first.clone())
        .then_poller()
        .start()
        .unwrap();
    let mut poller = ring.take_poller(0).unwrap();
    let total = 1_000u64;
    let feeder = std::thread::spawn(move || {
        for i in 0..total {
            producer.publish(|slot| *slot = i).unwrap();
        }
    });
    let mut sum = Sum::default();
    let mut seen_before = 0;
    while sum.count() < total {
        match poller.poll(&mut sum) {
            PollState::Processed(batch) => {
                // Everything the poller handled has passed stage one.
                assert!(first.count() >= (batch.last_sequence + 1) as u64);
                seen_before = sum.count();
            }
            PollState::Idle | PollState::Gating => std::thread::yield_now(),
            other => panic!("{other:?} after {seen_before}"),
        }
    }
    feeder.join().unwrap();
    assert_eq!(sum.total(), triangle(total));
    assert_eq!(ring.processors()[1].name, poller.name());
    drop(poller);
    ring.shutdown().unwrap();
}

#[test]
fn a_panicking_poll_handler_halts_the_ring_with_its_sequence() {
    struct Panics;
    impl EventHandler<u64> for Panics {
        fn on_event(&mut self, _: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
            assert!(sequence != 1, "boom at 1");
            Ok(())
        }
    }
    let (mut producer, mut ring) = RingBuilder::new(8, || 0u64).add_poller().start().unwrap();
    let mut poller = ring.take_poller(0).unwrap();
    for i in 0..3 {
        producer.publish(|slot| *slot = i).unwrap();
    }
    assert_eq!(poller.poll(&mut Panics), PollState::Halted);
    assert_eq!(poller.poll(&mut Panics), PollState::Halted);
    drop(poller);
    let Err(ringpipe_ring::RingError::Failed(failure)) = ring.shutdown() else {
        panic!("the failure is reported");
    };
    assert_eq!(
        (failure.sequence, failure.processor_index),
        (Some(1), Some(0))
    );
}
