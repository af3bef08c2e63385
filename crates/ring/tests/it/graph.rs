//! The processor graph: sharding, exclusive (`&mut`) stages, diamonds, and
//! what the builder refuses.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{assert_batches_well_formed, within, BatchLog, Rng, Sum};
use ringpipe_ring::{
    BuildError, EventHandler, EventHandlerMut, HandlerError, RingBuilder, WaitStrategy,
};

#[test]
fn sharded_end_of_batch_falls_on_each_shards_last_own_event() {
    const SHARDS: usize = 3;
    const EVENTS: usize = 20_000;
    let out = Arc::default();
    let (mut producer, ring) = RingBuilder::new(64, || 0u64)
        .handle_sharded(SHARDS, |i| BatchLog::new(i, &out))
        .start()
        .unwrap();
    let mut published = 0;
    while published < EVENTS {
        let n = (published % 7 + 1).min(EVENTS - published);
        producer
            .publish_batch(n, |slot, i| *slot = i as u64)
            .unwrap();
        published += n;
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    let logs = out.lock().unwrap();
    assert_eq!(logs.len(), SHARDS);
    for (ordinal, batches) in logs.iter() {
        assert_batches_well_formed(batches);
        let sequences: Vec<i64> = batches.iter().flat_map(|b| b.sequences.clone()).collect();
        // Every own sequence exactly once, in order: consecutive owned
        // sequences, across batch boundaries too, are `SHARDS` apart.
        let want: Vec<i64> = (*ordinal as i64..EVENTS as i64).step_by(SHARDS).collect();
        assert_eq!(sequences, want, "shard {ordinal}");
    }
}

#[test]
fn key_sharding_sends_equal_keys_to_the_same_instance() {
    let reads = key_sharding(3);
    assert!(reads >= 30_000, "{reads} key reads");
}

#[test]
fn one_key_sharded_instance_takes_every_event_without_reading_keys() {
    assert_eq!(key_sharding(1), 0);
}

/// Runs 30,000 events with random keys through `shards` key-sharded
/// instances and checks who handled what; returns how often the key
/// function ran.
fn key_sharding(shards: usize) -> usize {
    const EVENTS: u64 = 30_000;

    /// Each instance's ordinal and the `(key, sequence)` pairs it handled.
    type Seen = Arc<Mutex<Vec<(usize, Vec<(u64, i64)>)>>>;
    /// Records `(key, sequence)` of everything it handles.
    struct Keys {
        seen: Vec<(u64, i64)>,
        out: Seen,
        ordinal: usize,
    }
    impl EventHandler<(u64, u64)> for Keys {
        fn on_event(&mut self, e: &(u64, u64), sequence: i64, _: bool) -> Result<(), HandlerError> {
            self.seen.push((e.0, sequence));
            Ok(())
        }
        fn on_shutdown(&mut self) {
            let seen = std::mem::take(&mut self.seen);
            self.out.lock().unwrap().push((self.ordinal, seen));
        }
    }

    let out = Seen::default();
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let (mut producer, ring) = RingBuilder::new(256, || (0u64, 0u64))
        .handle_sharded_by_key(
            shards,
            move |event: &(u64, u64)| {
                counted.fetch_add(1, Ordering::Relaxed);
                event.0
            },
            |ordinal| Keys {
                seen: Vec::new(),
                out: Arc::clone(&out),
                ordinal,
            },
        )
        .start()
        .unwrap();
    let mut rng = Rng::new(7);
    let keys: Vec<u64> = (0..EVENTS).map(|_| rng.below(50)).collect();
    for (i, &key) in keys.iter().enumerate() {
        producer.publish(|slot| *slot = (key, i as u64)).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();

    let logs = out.lock().unwrap();
    assert_eq!(logs.len(), shards);
    let mut total = 0;
    for (ordinal, seen) in logs.iter() {
        total += seen.len();
        assert!(
            seen.windows(2).all(|w| w[0].1 < w[1].1),
            "shard {ordinal} out of order"
        );
        for &(key, sequence) in seen {
            assert_eq!(keys[sequence as usize], key, "sequence {sequence}");
            // The key alone picks the instance, so equal keys meet one.
            assert_eq!(key as usize % shards, *ordinal, "key {key}");
        }
    }
    assert_eq!(total, EVENTS as usize);
    // Relaxed: a count, read after `shutdown` joined the threads that made it.
    reads.load(Ordering::Relaxed)
}

/// Zeroes every event.
struct Clear;

impl EventHandlerMut<u64> for Clear {
    fn on_event(&mut self, event: &mut u64, _: i64, _: bool) -> Result<(), HandlerError> {
        *event = 0;
        Ok(())
    }
}

#[test]
fn an_exclusive_handler_cannot_share_its_stage() {
    let stage_of = |builder: RingBuilder<u64>| match builder.start() {
        Err(BuildError::SharedExclusiveStage { stage }) => stage,
        Err(error) => panic!("{error}"),
        Ok(_) => panic!("started a ring with a shared exclusive stage"),
    };
    let shared_then_mut = RingBuilder::new(8, || 0u64)
        .handle_events_with(Sum::default())
        .handle_events_with_mut(Clear);
    assert_eq!(stage_of(shared_then_mut), 0);
    let mut_then_sharded = RingBuilder::new(8, || 0u64)
        .handle_events_with(Sum::default())
        .then_mut(Clear)
        .handle_sharded(2, |_| Sum::default());
    assert_eq!(stage_of(mut_then_sharded), 1);
    let two_sharded_groups = RingBuilder::new(8, || 0u64)
        .handle_sharded_mut(2, |_| Clear)
        .handle_sharded_mut(2, |_| Clear);
    assert_eq!(stage_of(two_sharded_groups), 0);
}

#[test]
fn the_builder_refuses_bad_graphs() {
    let capacity = RingBuilder::new(12, || 0u64).handle_events_with(Sum::default());
    assert!(matches!(capacity.start(), Err(BuildError::Capacity(12))));
    let empty = RingBuilder::new(8, || 0u64);
    assert!(matches!(empty.start(), Err(BuildError::NoHandlers)));
    let no_shards = RingBuilder::new(8, || 0u64).handle_sharded(0, |_| Sum::default());
    assert!(matches!(no_shards.start(), Err(BuildError::NoShards)));
}

#[test]
fn an_exclusive_sharded_group_alone_in_its_stage_runs() {
    /// Adds `ordinal + 1` to each of its events.
    struct Tag(u64);
    impl EventHandlerMut<u64> for Tag {
        fn on_event(&mut self, event: &mut u64, _: i64, _: bool) -> Result<(), HandlerError> {
            *event += self.0 + 1;
            Ok(())
        }
    }
    let sum = Sum::default();
    let (mut producer, ring) = RingBuilder::new(32, || 0u64)
        .handle_sharded_mut(2, |i| Tag(i as u64))
        .then(sum.clone())
        .start()
        .unwrap();
    for _ in 0..1000 {
        producer.publish(|slot| *slot = 0).unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    // Even sequences got 1, odd ones 2.
    assert_eq!((sum.count(), sum.total()), (1000, 500 + 1000));
}

/// Heap data that counts how many of its kind are alive.
struct Payload {
    text: String,
    live: Arc<AtomicI64>,
}

impl Payload {
    fn new(text: String, live: &Arc<AtomicI64>) -> Self {
        live.fetch_add(1, Ordering::Relaxed);
        Payload {
            text,
            live: Arc::clone(live),
        }
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Default)]
struct Row {
    payload: Option<Payload>,
}

/// Reads each row's payload (it must still be there).
#[derive(Clone, Default)]
struct Reader {
    present: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl EventHandler<Row> for Reader {
    fn on_event(&mut self, row: &Row, _: i64, _: bool) -> Result<(), HandlerError> {
        if let Some(payload) = &row.payload {
            self.present.fetch_add(1, Ordering::Relaxed);
            self.bytes
                .fetch_add(payload.text.len() as u64, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Takes each row's payload and checks it belongs to that sequence.
#[derive(Clone, Default)]
struct Take {
    taken: Arc<AtomicU64>,
    wrong: Arc<AtomicU64>,
}

impl EventHandlerMut<Row> for Take {
    fn on_event(&mut self, row: &mut Row, sequence: i64, _: bool) -> Result<(), HandlerError> {
        match row.payload.take() {
            Some(payload) if payload.text == format!("row {sequence}") => {
                self.taken.fetch_add(1, Ordering::Relaxed)
            }
            _ => self.wrong.fetch_add(1, Ordering::Relaxed),
        };
        Ok(())
    }
}

#[test]
fn a_final_exclusive_stage_releases_heap_data_after_readers_saw_it() {
    const EVENTS: u64 = 50_000;
    let live = Arc::new(AtomicI64::new(0));
    let readers = [Reader::default(), Reader::default()];
    let take = Take::default();
    let (mut producer, ring) = RingBuilder::new(128, Row::default)
        .wait_strategy(WaitStrategy::yielding())
        .handle_events_with(readers[0].clone())
        .handle_sharded(2, |_| readers[1].clone())
        .then_mut(take.clone())
        .start()
        .unwrap();
    let mut bytes = 0;
    for i in 0..EVENTS {
        let text = format!("row {i}");
        bytes += text.len() as u64;
        producer
            .publish(|row| row.payload = Some(Payload::new(text, &live)))
            .unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    for reader in &readers {
        let present = reader.present.load(Ordering::Relaxed);
        assert_eq!(present, EVENTS, "a reader found a payload already taken");
        assert_eq!(reader.bytes.load(Ordering::Relaxed), bytes);
    }
    assert_eq!(take.taken.load(Ordering::Relaxed), EVENTS);
    assert_eq!(take.wrong.load(Ordering::Relaxed), 0);
    // The producer still holds the ring and all its slots: none holds data.
    assert_eq!(live.load(Ordering::Relaxed), 0);
    drop(producer);
}

/// A diamond's event: B and C each stamp their own field.
#[derive(Default)]
struct Diamond {
    value: u64,
    b: AtomicU64,
    c: AtomicU64,
}

/// Stamps `value + 1` into the field `field` picks.
struct Stamp(fn(&Diamond) -> &AtomicU64);

impl EventHandler<Diamond> for Stamp {
    fn on_event(&mut self, event: &Diamond, _: i64, _: bool) -> Result<(), HandlerError> {
        // Relaxed: the processor's sequence (Release/Acquire) must carry it.
        (self.0)(event).store(event.value + 1, Ordering::Relaxed);
        Ok(())
    }
}

/// The diamond's join: counts events both branches had stamped.
#[derive(Clone, Default)]
struct Join {
    complete: Arc<AtomicU64>,
    incomplete: Arc<AtomicU64>,
    next: Arc<AtomicI64>,
}

impl EventHandler<Diamond> for Join {
    fn on_event(&mut self, event: &Diamond, sequence: i64, _: bool) -> Result<(), HandlerError> {
        let want = event.value + 1;
        let stamped = event.b.load(Ordering::Relaxed) == want
            && event.c.load(Ordering::Relaxed) == want
            && self.next.fetch_add(1, Ordering::Relaxed) == sequence;
        let counter = if stamped {
            &self.complete
        } else {
            &self.incomplete
        };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[test]
fn diamond_join_sees_both_branches() {
    const EVENTS: u64 = 100_000;
    let join = Join::default();
    let a = Sum::default();
    /// A is a plain reader of the value.
    struct A(Sum);
    impl EventHandler<Diamond> for A {
        fn on_event(&mut self, e: &Diamond, s: i64, end: bool) -> Result<(), HandlerError> {
            self.0.on_event(&e.value, s, end)
        }
    }
    let (mut producer, ring) = RingBuilder::new(256, Diamond::default)
        .handle_events_with(A(a.clone()))
        .then(Stamp(|e| &e.b))
        .handle_events_with(Stamp(|e| &e.c))
        .then(join.clone())
        .start()
        .unwrap();
    for i in 0..EVENTS {
        producer
            .publish(|event| {
                event.value = i;
                *event.b.get_mut() = 0;
                *event.c.get_mut() = 0;
            })
            .unwrap();
    }
    within("shutdown", move || ring.shutdown()).unwrap();
    assert_eq!(a.total(), crate::common::triangle(EVENTS));
    assert_eq!(join.incomplete.load(Ordering::Relaxed), 0);
    assert_eq!(join.complete.load(Ordering::Relaxed), EVENTS);
}

#[test]
fn graph_order_names_processors_by_stage() {
    let (_producer, ring) = RingBuilder::new(8, || 0u64)
        .thread_name("g")
        .handle_events_with(Sum::default())
        .handle_sharded(2, |_| Sum::default())
        .then(Sum::default())
        .start()
        .unwrap();
    let names: Vec<String> = ring.processors().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["g-s0h0", "g-s0h1.0", "g-s0h1.1", "g-s1h0"]);
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
    within("shutdown", move || ring.shutdown()).unwrap();
}
