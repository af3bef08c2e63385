//! Stress: two producers → three sequence-sharded handlers → one downstream
//! stage, millions of events, with and without injected rewinds, in both
//! slot layouts (publication markers in the slots or not); and one producer
//! publishing both producers' events in the marked layout.
//!
//! `RINGPIPE_STRESS_EVENTS` sets the number of events per test (default
//! [`DEFAULT_EVENTS`], 10 million: about 7 s for both tests together in a
//! debug build on an otherwise idle 2-core machine).

use std::sync::{Arc, Mutex};

use crate::common::{mix, wait_until, within, Rng};
use ringpipe_ring::{
    EventHandler, HandlerError, MultiProducer, Producer, RewindStrategy, RingBuilder, WaitStrategy,
};

/// Events per stress test when `RINGPIPE_STRESS_EVENTS` is unset.
const DEFAULT_EVENTS: u64 = 10_000_000;
const PRODUCERS: u64 = 2;
const SHARDS: usize = 3;
const CAPACITY: usize = 4096;

fn events() -> u64 {
    std::env::var("RINGPIPE_STRESS_EVENTS")
        .ok()
        .map(|v| v.parse().expect("RINGPIPE_STRESS_EVENTS is a number"))
        .unwrap_or(DEFAULT_EVENTS)
}

/// Who published an event, and the how-manieth of that producer's it is.
#[derive(Debug, Clone, Copy, Default)]
struct Event {
    producer: u64,
    counter: u64,
}

/// What one handler saw, counted only over committed batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    count: u64,
    checksum: u64,
    last_sequence: i64,
    /// Last counter seen from each producer; -1 before the first.
    last_counter: [i64; PRODUCERS as usize],
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            count: 0,
            checksum: 0,
            last_sequence: -1,
            last_counter: [-1; PRODUCERS as usize],
        }
    }
}

impl Tally {
    /// Adds `event`; describes the first ordering violation, if any.
    /// `contiguous` demands that no sequence or counter is skipped.
    fn add(&mut self, event: &Event, sequence: i64, contiguous: bool) -> Result<(), String> {
        let last = &mut self.last_counter[event.producer as usize];
        let counter = event.counter as i64;
        let in_order = if contiguous {
            sequence == self.last_sequence + 1 && counter == *last + 1
        } else {
            sequence > self.last_sequence && counter > *last
        };
        if !in_order {
            return Err(format!(
                "sequence {sequence} (producer {} counter {counter}) after sequence {} / counter {}",
                event.producer, self.last_sequence, *last
            ));
        }
        *last = counter;
        self.last_sequence = sequence;
        self.count += 1;
        self.checksum = self
            .checksum
            .wrapping_add(mix(event.producer, event.counter));
        Ok(())
    }
}

/// A handler's final word: its tally, the rewinds it asked for, and the
/// violations it saw (the first few).
#[derive(Debug, Clone, Default)]
struct Report {
    ordinal: usize,
    tally: Tally,
    injected_rewinds: u64,
    errors: Vec<String>,
}

type Reports = Arc<Mutex<Vec<Report>>>;

/// One of the sharded handlers. Keeps its tally like a database sink keeps
/// a transaction: `pending` during the batch, committed at `end_of_batch`,
/// rolled back in `on_rewind`. With `rewind_percent > 0` it fails the first
/// attempt of that share of its batches, at a pseudo-random event.
struct ShardChecker {
    ordinal: usize,
    rng: Rng,
    rewind_percent: u64,
    committed: Tally,
    pending: Tally,
    batch_len: usize,
    delivered: usize,
    fail_at: Option<usize>,
    replaying: bool,
    report: Report,
    out: Reports,
}

impl ShardChecker {
    fn new(ordinal: usize, rewind_percent: u64, out: &Reports) -> Self {
        ShardChecker {
            ordinal,
            rng: Rng::new(ordinal as u64),
            rewind_percent,
            committed: Tally::default(),
            pending: Tally::default(),
            batch_len: 0,
            delivered: 0,
            fail_at: None,
            replaying: false,
            report: Report {
                ordinal,
                ..Report::default()
            },
            out: Arc::clone(out),
        }
    }

    fn error(&mut self, error: String) {
        if self.report.errors.len() < 10 {
            self.report.errors.push(error);
        }
    }
}

impl EventHandler<Event> for ShardChecker {
    fn on_batch_start(&mut self, batch_len: usize, _queue_depth: usize) {
        self.pending = self.committed;
        self.batch_len = batch_len;
        self.delivered = 0;
        let inject = !self.replaying && self.rng.below(100) < self.rewind_percent;
        self.fail_at = inject.then(|| self.rng.below(batch_len as u64) as usize);
    }

    fn on_event(&mut self, event: &Event, sequence: i64, end: bool) -> Result<(), HandlerError> {
        if self.fail_at == Some(self.delivered) {
            self.report.injected_rewinds += 1;
            return Err(HandlerError::rewind("injected"));
        }
        self.delivered += 1;
        if sequence % SHARDS as i64 != self.ordinal as i64 {
            self.error(format!("shard {} got sequence {sequence}", self.ordinal));
        }
        if end != (self.delivered == self.batch_len) {
            self.error(format!(
                "end_of_batch {end} at event {} of {} (sequence {sequence})",
                self.delivered, self.batch_len
            ));
        }
        if let Err(error) = self.pending.add(event, sequence, false) {
            self.error(error);
        }
        if end {
            self.committed = self.pending;
            self.replaying = false;
        }
        Ok(())
    }

    fn on_rewind(&mut self, _attempt: u32) -> Result<(), HandlerError> {
        self.pending = self.committed;
        self.replaying = true;
        Ok(())
    }

    fn on_shutdown(&mut self) {
        self.report.tally = self.committed;
        self.out.lock().unwrap().push(self.report.clone());
    }
}

/// The downstream stage: must see every event exactly once, in sequence
/// order, with each producer's counters contiguous.
struct Downstream {
    tally: Tally,
    report: Report,
    out: Reports,
}

impl EventHandler<Event> for Downstream {
    fn on_event(&mut self, event: &Event, sequence: i64, _: bool) -> Result<(), HandlerError> {
        if let Err(error) = self.tally.add(event, sequence, true) {
            if self.report.errors.len() < 10 {
                self.report.errors.push(error);
            }
        }
        Ok(())
    }

    fn on_shutdown(&mut self) {
        self.report.tally = self.tally;
        self.out.lock().unwrap().push(self.report.clone());
    }
}

/// Publishes `count` events for producer `id`, in claims of 1 to 16 slots.
fn produce(producer: MultiProducer<Event>, id: u64, count: u64) {
    let mut counter = 0;
    while counter < count {
        let n = (counter % 16 + 1).min(count - counter);
        let base = counter;
        producer
            .publish_batch(n as usize, |event, i| {
                *event = Event {
                    producer: id,
                    counter: base + i as u64,
                }
            })
            .expect("the ring does not halt");
        counter += n;
    }
}

/// One producer publishing what [`produce`] publishes for each of the
/// [`PRODUCERS`], interleaved in claims of 1 to 16 slots.
fn produce_alone(mut producer: Producer<Event>, count: u64) {
    let mut counters = [0u64; PRODUCERS as usize];
    let mut turn = 0;
    while counters.iter().any(|&c| c < count) {
        let id = turn % PRODUCERS;
        turn += 1;
        let base = counters[id as usize];
        let n = (base % 16 + 1).min(count - base);
        if n == 0 {
            continue;
        }
        producer
            .publish_batch(n as usize, |event, i| {
                *event = Event {
                    producer: id,
                    counter: base + i as u64,
                }
            })
            .expect("the ring does not halt");
        counters[id as usize] += n;
    }
}

/// How a stress run builds its ring.
#[derive(Clone, Copy)]
struct Setup {
    rewind_percent: u64,
    /// Publication markers in the slots (`RingBuilder::publish_in_slots`).
    markers: bool,
    /// One producer publishes every producer's events.
    single_producer: bool,
}

/// Runs the whole topology over `total` events; checks every stage.
fn run(total: u64, setup: Setup) {
    let Setup {
        rewind_percent,
        markers,
        single_producer,
    } = setup;
    let shard_reports = Reports::default();
    let downstream_reports = Reports::default();
    let downstream = Downstream {
        tally: Tally::default(),
        report: Report::default(),
        out: Arc::clone(&downstream_reports),
    };
    let builder = RingBuilder::new(CAPACITY, Event::default)
        .wait_strategy(WaitStrategy::yielding())
        .rewind_strategy(RewindStrategy::Always)
        .thread_name("stress");
    let builder = if markers {
        builder.publish_in_slots()
    } else {
        builder
    };
    let builder = builder
        .handle_sharded(SHARDS, |i| {
            ShardChecker::new(i, rewind_percent, &shard_reports)
        })
        .then(downstream);

    let per_producer = total / PRODUCERS;
    let ring = if single_producer {
        let (producer, ring) = builder.start().unwrap();
        std::thread::spawn(move || produce_alone(producer, per_producer))
            .join()
            .unwrap();
        ring
    } else {
        let (producer, ring) = builder.start_multi().unwrap();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|id| {
                let producer = producer.clone();
                std::thread::spawn(move || produce(producer, id, per_producer))
            })
            .collect();
        for thread in producers {
            thread.join().unwrap();
        }
        ring
    };
    let total = per_producer * PRODUCERS;
    let last = total as i64 - 1;
    wait_until("the last stage to drain", || {
        ring.processors().iter().all(|p| p.sequence == last)
    });
    let snapshots = ring.processors();
    assert_eq!(ring.cursor(), last);
    assert_eq!(ring.remaining_capacity(), CAPACITY);
    within("shutdown", move || ring.shutdown()).unwrap();

    let checksum = (0..PRODUCERS)
        .flat_map(|p| (0..per_producer).map(move |k| mix(p, k)))
        .fold(0u64, u64::wrapping_add);
    let owned = |ordinal: usize| (total + (SHARDS - 1 - ordinal) as u64) / SHARDS as u64;

    let mut shards = shard_reports.lock().unwrap().clone();
    shards.sort_by_key(|r| r.ordinal);
    assert_eq!(shards.len(), SHARDS);
    for report in &shards {
        assert_eq!(
            report.errors,
            Vec::<String>::new(),
            "shard {}",
            report.ordinal
        );
        assert_eq!(report.tally.count, owned(report.ordinal));
        let snapshot = &snapshots[report.ordinal];
        assert_eq!(snapshot.name, format!("stress-s0h0.{}", report.ordinal));
        assert_eq!(snapshot.events, report.tally.count);
        assert_eq!(snapshot.rewinds, report.injected_rewinds);
        assert_eq!(snapshot.skipped_batches, 0);
    }
    let shard_checksum = shards
        .iter()
        .fold(0u64, |sum, r| sum.wrapping_add(r.tally.checksum));
    assert_eq!(shard_checksum, checksum, "sharded stage checksum");
    if rewind_percent > 0 {
        let injected: u64 = shards.iter().map(|r| r.injected_rewinds).sum();
        assert!(injected > 0, "no rewind was injected");
    }

    let downstream = downstream_reports.lock().unwrap().clone();
    assert_eq!(downstream.len(), 1);
    let downstream = &downstream[0];
    assert_eq!(downstream.errors, Vec::<String>::new());
    assert_eq!(downstream.tally.count, total);
    assert_eq!(downstream.tally.checksum, checksum, "downstream checksum");
    assert_eq!(downstream.tally.last_sequence, last);
    let last_counter = per_producer as i64 - 1;
    assert_eq!(downstream.tally.last_counter, [last_counter; 2]);
    assert_eq!(snapshots[SHARDS].events, total);
    assert_eq!(snapshots[SHARDS].rewinds, 0);
}

const PLAIN: Setup = Setup {
    rewind_percent: 0,
    markers: false,
    single_producer: false,
};

#[test]
fn two_producers_three_shards_one_downstream_every_event_once() {
    run(events(), PLAIN);
}

#[test]
fn injected_rewinds_keep_commits_exact_and_downstream_exactly_once() {
    let setup = Setup {
        rewind_percent: 1,
        ..PLAIN
    };
    run(events(), setup);
}

#[test]
fn markers_in_the_slots_two_producers_with_rewinds_every_event_once() {
    let setup = Setup {
        rewind_percent: 1,
        markers: true,
        ..PLAIN
    };
    run(events(), setup);
}

#[test]
fn markers_in_the_slots_one_producer_every_event_once() {
    let setup = Setup {
        markers: true,
        single_producer: true,
        ..PLAIN
    };
    run(events(), setup);
}
