//! Loom models of the ring's protocols.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p ringpipe-ring --release --lib -- loom`
//! (CI's bound; with `LOOM_MAX_PREEMPTIONS=3` every model passes too, in
//! about three minutes on two cores).
//!
//! Each model uses a tiny ring and one more event than fits, so runs wrap
//! around, and ends in one hard assertion. Slot accesses go through loom's
//! `UnsafeCell` (see `sync.rs`), so a producer that overwrites a slot a
//! consumer may still read, or a consumer that reads a slot before it was
//! published, fails the model even when the values happen to come out right.
//!
//! Processor threads started by `RingBuilder` are std threads, so the models
//! assemble the crate-internal pieces (ring, producers, barriers, the batch
//! processor) by hand on loom threads. A model's processors stop when one
//! of its handlers, having seen the last event, halts the ring.
//!
//! Two threads per model where both wait on each other: every wait in the
//! ring spins with `yield_now` under loom, and loom lets two spinning threads
//! take turns for free while a third runnable thread never runs (loom issue
//! #53, "two threads blocked on a third oscillate"), which no branch limit
//! can bound. So where a protocol has three parties, one of them runs
//! between the others' steps on the same thread (a producer using `try_next`
//! between a consumer's batches), or its work is done before the others
//! start (a prefilled ring).

use std::sync::{Arc, Mutex};

use crossbeam_utils::CachePadded;
use loom::sync::atomic::{AtomicU64, AtomicUsize};
use loom::thread;

use crate::barrier::SequenceBarrier;
use crate::delivery::ProcessorParts;
use crate::exception::HaltOnFailure;
use crate::handler::{EventHandler, EventHandlerMut, Exclusive, HandlerError, Shared};
use crate::metrics::ProcessorStats;
use crate::poller::{EventPoller, PollState};
use crate::processor::BatchProcessor;
use crate::producer::{MultiProducer, Producer};
use crate::rewind::RewindStrategy;
use crate::ring_buffer::RingBuffer;
use crate::sequence::{Sequence, INITIAL_SEQUENCE};
use crate::sequencer::ClaimError;
use crate::shard::Shard;
use crate::sync::Ordering;
use crate::wait::WaitStrategy;

/// Events in every model: one more than a 2-slot ring holds.
const EVENTS: i64 = 3;
/// What a slot holds before its first publication.
const UNWRITTEN: u64 = u64::MAX;

/// Runs `f` under loom for each slot layout (`f(false)`: the plain one,
/// `f(true)`: markers in the slots), with a preemption bound of 2 unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise.
fn model(f: impl Fn(bool) + Sync + Send + 'static) {
    let f = std::sync::Arc::new(f);
    for markers in [false, true] {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(2);
        }
        let f = std::sync::Arc::clone(&f);
        builder.check(move || f(markers));
    }
}

fn sequence() -> Arc<Sequence> {
    Arc::new(Sequence::new(INITIAL_SEQUENCE))
}

fn ring<E>(
    capacity: usize,
    factory: impl FnMut() -> E,
    multi: bool,
    gating: &[Arc<Sequence>],
    markers: bool,
) -> Arc<RingBuffer<E>> {
    Arc::new(RingBuffer::new(
        capacity,
        factory,
        multi,
        gating.to_vec(),
        WaitStrategy::busy_spin(),
        markers,
    ))
}

/// The value the models' producers write for sequence `sequence`.
fn value_of(sequence: i64) -> u64 {
    sequence as u64 + 10
}

/// Reads the event at `sequence`.
///
/// # Safety
///
/// The caller must have read access: `sequence` was returned by its barrier
/// and its own sequence has not passed it yet.
unsafe fn read<E: Copy>(ring: &RingBuffer<E>, sequence: i64) -> E {
    // SAFETY: guaranteed by the caller.
    ring.slot(sequence).with(|event| unsafe { *event })
}

/// One batch of a hand-driven consumer: waits on `barrier` for `next`, calls
/// `read` on every available event, then releases the batch through `own`
/// (the protocol: set the sequence only after reading). Returns the next
/// sequence to wait for.
fn consume_batch<E>(
    barrier: &SequenceBarrier<E>,
    own: &Sequence,
    next: i64,
    read: &mut impl FnMut(i64),
) -> i64 {
    let available = barrier.wait_for(next).expect("the ring never halts here");
    (next..=available).for_each(&mut *read);
    own.set(available);
    available + 1
}

/// A hand-driven consumer of all `EVENTS` events; returns what `read`
/// returned, in order.
fn consume<E, T>(
    barrier: &SequenceBarrier<E>,
    own: &Sequence,
    mut read: impl FnMut(i64) -> T,
) -> Vec<T> {
    let mut seen = Vec::new();
    let mut next = 0;
    while next < EVENTS {
        next = consume_batch(barrier, own, next, &mut |s| seen.push(read(s)));
    }
    seen
}

/// Everything a hand-built processor needs.
fn parts<E>(
    ring: &Arc<RingBuffer<E>>,
    upstream: &[Arc<Sequence>],
    own: &Arc<Sequence>,
    shard: Shard<E>,
) -> ProcessorParts<E> {
    ProcessorParts {
        name: "loom".into(),
        index: 0,
        ring: Arc::clone(ring),
        barrier: SequenceBarrier::new(Arc::clone(ring), upstream.to_vec(), usize::MAX),
        sequence: Arc::clone(own),
        stats: Arc::new(CachePadded::new(ProcessorStats::default())),
        shard,
        max_batch: ring.capacity(),
        rewind: RewindStrategy::Always,
        exceptions: Arc::new(HaltOnFailure),
    }
}

/// Halts the ring once `EVENTS` events were counted, so that processors
/// (whose loop ends only on a halt) return once everything was handled.
#[derive(Clone)]
struct HaltWhenDone<E> {
    ring: Arc<RingBuffer<E>>,
    handled: Arc<AtomicUsize>,
}

impl<E> HaltWhenDone<E> {
    fn new(ring: &Arc<RingBuffer<E>>) -> Self {
        HaltWhenDone {
            ring: Arc::clone(ring),
            handled: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn count(&self, events: usize) {
        // AcqRel: the last counter halts; nothing else rides on it.
        let before = self.handled.fetch_add(events, Ordering::AcqRel);
        if before + events == EVENTS as usize {
            self.ring.halt();
        }
    }
}

/// Publishes `value_of(s)` for every sequence in `sequences`.
fn produce(producer: &mut Producer<u64>, sequences: std::ops::Range<i64>) {
    for sequence in sequences {
        producer
            .publish(|slot| *slot = value_of(sequence))
            .expect("not halted");
    }
}

/// The failure a model's ring recorded, as text.
fn failure<E>(ring: &RingBuffer<E>) -> Option<String> {
    ring.take_failure().map(|f| f.to_string())
}

#[test]
fn loom_single_producer_wraps_without_overwriting_unread_slots() {
    model(|markers| {
        let consumed = sequence();
        let ring = ring(2, || UNWRITTEN, false, &[Arc::clone(&consumed)], markers);
        let mut producer = Producer::new(Arc::clone(&ring));
        let producer = thread::spawn(move || produce(&mut producer, 0..EVENTS));
        let barrier = SequenceBarrier::new(Arc::clone(&ring), Vec::new(), usize::MAX);
        // SAFETY: `consume` reads only sequences the barrier released and
        // sets `consumed` (which gates the producer) only afterwards.
        let seen = consume(&barrier, &consumed, |s| unsafe { read(&ring, s) });
        producer.join().unwrap();
        assert_eq!(seen, [10, 11, 12]);
    });
}

#[test]
fn loom_multi_producer_delivers_each_event_once_and_never_a_gap() {
    model(|markers| {
        let consumed = sequence();
        let ring = ring(2, || UNWRITTEN, true, &[Arc::clone(&consumed)], markers);
        // Producer 1 publishes 10; producer 2 publishes 20 and 21. The claim
        // order between them is up to the scheduler.
        let producers: Vec<_> = [(1u64, 1u64), (2, 2)]
            .into_iter()
            .map(|(id, count)| {
                let producer = MultiProducer::new(Arc::clone(&ring));
                thread::spawn(move || {
                    for k in 0..count {
                        producer.publish(|slot| *slot = id * 10 + k).unwrap();
                    }
                })
            })
            .collect();
        let barrier = SequenceBarrier::new(Arc::clone(&ring), Vec::new(), usize::MAX);
        // SAFETY: as in the single-producer model; an unpublished sequence
        // returned by the barrier would race with its producer's write.
        let mut seen = consume(&barrier, &consumed, |s| unsafe { read(&ring, s) });
        for producer in producers {
            producer.join().unwrap();
        }
        seen.sort_unstable();
        assert_eq!(seen, [10, 20, 21]);
    });
}

#[test]
fn loom_second_stage_sees_an_event_only_after_the_first_finished_it() {
    // Stage A (exclusive) stamps each event in place on its own thread;
    // the main thread is stage B, which reads the stamps, and the producer,
    // which claims with `try_next` between B's batches.
    model(|markers| {
        let stage_a = sequence();
        let stage_b = sequence();
        let ring = ring(
            2,
            || [UNWRITTEN; 2],
            false,
            &[Arc::clone(&stage_b)],
            markers,
        );
        let a = {
            let (ring, own) = (Arc::clone(&ring), Arc::clone(&stage_a));
            thread::spawn(move || {
                let barrier = SequenceBarrier::new(Arc::clone(&ring), Vec::new(), usize::MAX);
                consume(&barrier, &own, |s| {
                    // SAFETY: A is alone in its stage and B waits for A's
                    // sequence, so A holds the slot exclusively here.
                    ring.slot(s)
                        .with_mut(|event| unsafe { (*event)[1] = (*event)[0] * 2 });
                })
            })
        };
        let mut producer = Producer::new(Arc::clone(&ring));
        let barrier =
            SequenceBarrier::new(Arc::clone(&ring), vec![Arc::clone(&stage_a)], usize::MAX);
        let (mut published, mut next, mut stamps) = (0, 0, Vec::new());
        while next < EVENTS {
            while published < EVENTS {
                match producer.try_next() {
                    Ok(mut claim) => claim.write(0, |slot| *slot = [value_of(published), 0]),
                    Err(ClaimError::InsufficientCapacity) => break,
                    Err(ClaimError::Halted) => unreachable!("never halted"),
                }
                published += 1;
            }
            // SAFETY: B reads only what its barrier (A's sequence) released.
            let mut read = |s| stamps.push(unsafe { read(&ring, s)[1] });
            next = consume_batch(&barrier, &stage_b, next, &mut read);
        }
        a.join().unwrap();
        assert_eq!(stamps, [20, 22, 24]);
    });
}

/// Records every event it handles, with the shard it was handled by.
struct Recorder {
    ordinal: i64,
    out: Arc<Mutex<Vec<(i64, i64, u64)>>>,
    done: HaltWhenDone<u64>,
}

impl EventHandler<u64> for Recorder {
    fn on_event(&mut self, event: &u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        self.out
            .lock()
            .unwrap()
            .push((sequence, self.ordinal, *event));
        self.done.count(1);
        Ok(())
    }
}

#[test]
fn loom_sharded_processors_handle_each_event_once_in_the_right_shard() {
    // Two `Shard::Modulo` processors over a 4-slot ring the main thread
    // prefilled; the main thread runs shard 1 itself.
    model(|markers| {
        let shards = [sequence(), sequence()];
        let ring = ring(4, || UNWRITTEN, false, &shards, markers);
        produce(&mut Producer::new(Arc::clone(&ring)), 0..EVENTS);
        let out = Arc::new(Mutex::new(Vec::new()));
        let done = HaltWhenDone::new(&ring);
        let mut processors: Vec<_> = (0..2)
            .map(|ordinal| {
                let shard = Shard::Modulo { ordinal, count: 2 };
                let parts = parts(&ring, &[], &shards[ordinal as usize], shard);
                let handler = Recorder {
                    ordinal,
                    out: Arc::clone(&out),
                    done: done.clone(),
                };
                BatchProcessor::new(parts, Shared(handler))
            })
            .collect();
        let shard1 = processors.pop().unwrap();
        let shard0 = processors.pop().unwrap();
        let thread = thread::spawn(move || shard0.run());
        shard1.run();
        thread.join().unwrap();
        let mut seen = std::mem::take(&mut *out.lock().unwrap());
        seen.sort_unstable();
        let want = vec![(0, 0, 10), (1, 1, 11), (2, 0, 12)];
        assert_eq!((failure(&ring), seen), (None, want));
    });
}

/// Sequence 1 fails its first attempt with a retryable error; events are
/// committed (counted in `commits`) at the end of a successful batch.
struct Flaky {
    failed: bool,
    pending: Vec<i64>,
    /// Every delivery, replays included: (sequence, value).
    deliveries: Arc<Mutex<Vec<(i64, u64)>>>,
    commits: Arc<[AtomicU64; EVENTS as usize]>,
    /// Set when nothing downstream halts the ring.
    done: Option<HaltWhenDone<u64>>,
}

impl Flaky {
    fn new(commits: &Arc<[AtomicU64; EVENTS as usize]>, done: Option<HaltWhenDone<u64>>) -> Self {
        Flaky {
            failed: false,
            pending: Vec::new(),
            deliveries: Arc::default(),
            commits: Arc::clone(commits),
            done,
        }
    }

    /// Whether every delivery, replays included, carried its sequence's
    /// value, and sequence 1 was delivered twice (failed, then replayed).
    fn replayed_intact(deliveries: &Mutex<Vec<(i64, u64)>>) -> bool {
        let deliveries = deliveries.lock().unwrap();
        deliveries.iter().all(|&(s, v)| v == value_of(s))
            && deliveries.iter().filter(|&&(s, _)| s == 1).count() == 2
    }
}

impl EventHandler<u64> for Flaky {
    fn on_event(&mut self, event: &u64, sequence: i64, end: bool) -> Result<(), HandlerError> {
        self.deliveries.lock().unwrap().push((sequence, *event));
        if sequence == 1 && !self.failed {
            self.failed = true;
            return Err(HandlerError::rewind("transient"));
        }
        self.pending.push(sequence);
        if end {
            let committed = self.pending.len();
            for sequence in self.pending.drain(..) {
                // Relaxed: the processor's Release sequence store after the
                // batch is what must carry this to the next stage.
                let count = &self.commits[sequence as usize];
                count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
            if let Some(done) = &self.done {
                done.count(committed);
            }
        }
        Ok(())
    }

    fn on_rewind(&mut self, _attempt: u32) -> Result<(), HandlerError> {
        self.pending.clear();
        Ok(())
    }
}

fn commit_counts() -> Arc<[AtomicU64; EVENTS as usize]> {
    Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)])
}

fn counts(commits: &[AtomicU64]) -> Vec<u64> {
    commits.iter().map(|c| c.load(Ordering::Relaxed)).collect()
}

#[test]
fn loom_producer_never_overwrites_a_batch_being_replayed() {
    // The rewinding processor gates the producer directly: a replay rereads
    // slots the producer is waiting to reuse.
    model(|markers| {
        let own = sequence();
        let ring = ring(2, || UNWRITTEN, false, &[Arc::clone(&own)], markers);
        let commits = commit_counts();
        let flaky = Flaky::new(&commits, Some(HaltWhenDone::new(&ring)));
        let deliveries = Arc::clone(&flaky.deliveries);
        let processor = BatchProcessor::new(parts(&ring, &[], &own, Shard::All), Shared(flaky));
        let thread = thread::spawn(move || processor.run());
        produce(&mut Producer::new(Arc::clone(&ring)), 0..EVENTS);
        thread.join().unwrap();
        let replayed_intact = Flaky::replayed_intact(&deliveries);
        assert_eq!(
            (failure(&ring), replayed_intact, counts(&*commits)),
            (None, true, vec![1, 1, 1])
        );
    });
}

/// Downstream of [`Flaky`]: records (sequence, value, commits so far).
struct Committed {
    commits: Arc<[AtomicU64; EVENTS as usize]>,
    seen: Vec<(i64, u64, u64)>,
    out: Arc<Mutex<Vec<(i64, u64, u64)>>>,
    done: HaltWhenDone<u64>,
}

impl EventHandlerMut<u64> for Committed {
    fn on_event(&mut self, event: &mut u64, sequence: i64, _: bool) -> Result<(), HandlerError> {
        let commits = self.commits[sequence as usize].load(Ordering::Relaxed);
        self.seen.push((sequence, *event, commits));
        // Exclusive access: a replay upstream must never see this.
        *event = UNWRITTEN;
        self.done.count(1);
        Ok(())
    }

    fn on_shutdown(&mut self) {
        self.out.lock().unwrap().append(&mut self.seen);
    }
}

#[test]
fn loom_downstream_sees_a_rewound_batch_once_and_only_after_it_succeeded() {
    // A prefilled 4-slot ring; the rewinding stage runs on its own thread,
    // the main thread runs the (exclusive) stage behind it.
    model(|markers| {
        let first = sequence();
        let second = sequence();
        let ring = ring(4, || UNWRITTEN, false, &[Arc::clone(&second)], markers);
        produce(&mut Producer::new(Arc::clone(&ring)), 0..EVENTS);
        let commits = commit_counts();
        let flaky = Flaky::new(&commits, None);
        let deliveries = Arc::clone(&flaky.deliveries);
        let downstream = Arc::new(Mutex::new(Vec::new()));
        let committed = Committed {
            commits: Arc::clone(&commits),
            seen: Vec::new(),
            out: Arc::clone(&downstream),
            done: HaltWhenDone::new(&ring),
        };
        let a = BatchProcessor::new(parts(&ring, &[], &first, Shard::All), Shared(flaky));
        let upstream = [Arc::clone(&first)];
        let b = BatchProcessor::new(
            parts(&ring, &upstream, &second, Shard::All),
            Exclusive(committed),
        );
        let thread = thread::spawn(move || a.run());
        b.run();
        thread.join().unwrap();
        let replayed_intact = Flaky::replayed_intact(&deliveries);
        let downstream = std::mem::take(&mut *downstream.lock().unwrap());
        assert_eq!(
            (failure(&ring), replayed_intact, downstream),
            (None, true, vec![(0, 10, 1), (1, 11, 1), (2, 12, 1)])
        );
    });
}

#[test]
fn loom_poller_replays_a_rewound_batch_and_the_producer_never_overwrites_it() {
    // The poller runs on the model's main thread and gates the producer
    // directly: a replay rereads slots the producer is waiting to reuse.
    model(|markers| {
        let own = sequence();
        let ring = ring(2, || UNWRITTEN, false, &[Arc::clone(&own)], markers);
        let commits = commit_counts();
        let mut flaky = Flaky::new(&commits, None);
        let deliveries = Arc::clone(&flaky.deliveries);
        let mut poller = EventPoller::new(parts(&ring, &[], &own, Shard::All));
        let producer_ring = Arc::clone(&ring);
        let thread = thread::spawn(move || produce(&mut Producer::new(producer_ring), 0..EVENTS));
        let mut rewound = 0;
        while poller.sequence() < EVENTS - 1 {
            match poller.poll(&mut flaky) {
                PollState::Processed(_) => {}
                PollState::Rewound { .. } => rewound += 1,
                PollState::Idle | PollState::Gating => thread::yield_now(),
                other => panic!("{other:?}"),
            }
        }
        thread.join().unwrap();
        let replayed_intact = Flaky::replayed_intact(&deliveries);
        assert_eq!(
            (failure(&ring), rewound, replayed_intact, counts(&*commits)),
            (None, 1, true, vec![1, 1, 1])
        );
    });
}
