//! The throughput contenders: our ring, the `disruptor` crate, and two
//! bounded channels. Each `run` builds its pipeline for one [`Params`],
//! times publication of `0..events` until every consumer has seen the last
//! event, checks the consumers' sums and returns the elapsed time.
//!
//! Thread start-up and ring allocation are outside the timed span for
//! every contender; draining the ring (and joining the consumer threads)
//! is inside it.

use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{check, on_producer_thread, pin_if, run_producers, Params, Sum, Topology, Wait};
use super::{CAPACITY, CONSUMER_CORE};

/// Two fresh consumer totals (stage A / shard sum, and stage B).
fn totals() -> (Arc<AtomicU64>, Arc<AtomicU64>) {
    (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)))
}

/// Checks the totals a topology fills: both stages of a pipeline, else one.
fn check_topology(what: &str, p: &Params, a: &Arc<AtomicU64>, b: &Arc<AtomicU64>) {
    match p.topology {
        Topology::Pipeline2 => check(what, &[a, b], p.events),
        _ => check(what, &[a], p.events),
    }
}

/// Our ring, `ringpipe-ring`.
pub mod ours {
    use ringpipe_ring::{EventHandler, HandlerError, RingBuilder, RingHandle, WaitStrategy};

    use super::*;

    impl EventHandler<u64> for Sum {
        #[inline(always)]
        fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
            self.add(*event);
            Ok(())
        }
    }

    /// Our wait strategy for `wait`.
    pub fn strategy(wait: Wait) -> WaitStrategy {
        let strategy = match wait {
            Wait::Busy => WaitStrategy::busy_spin(),
            Wait::Yield => WaitStrategy::yielding(),
        };
        // An A/B switch for what gathering buys (see the bench's docs).
        match std::env::var_os("RINGPIPE_BENCH_NO_GATHER") {
            Some(_) => strategy.without_gathering(),
            None => strategy,
        }
    }

    /// One timed run.
    pub fn run(p: &Params) -> Duration {
        let (a, b) = totals();
        let mut builder = RingBuilder::new(CAPACITY, || 0u64).wait_strategy(strategy(p.wait));
        if p.pinned {
            builder = builder.pin_to_cores([CONSUMER_CORE]);
        }
        let elapsed = match p.topology {
            Topology::Spsc => single(p, builder.handle_events_with(Sum::new(&a))),
            Topology::Shard2 => single(p, builder.handle_sharded(2, |_| Sum::new(&a))),
            Topology::Pipeline2 => single(
                p,
                builder.handle_events_with(Sum::new(&a)).then(Sum::new(&b)),
            ),
            Topology::Mpsc2 => multi(p, builder.handle_events_with(Sum::new(&a))),
        };
        check_topology("ours", p, &a, &b);
        elapsed
    }

    fn single(p: &Params, builder: RingBuilder<u64>) -> Duration {
        let (mut producer, ring) = builder.start().expect("start ring");
        let (events, batch) = (p.events, p.batch);
        on_producer_thread(p.pinned, move || {
            let start = Instant::now();
            if batch == 1 {
                for i in 0..events {
                    producer.publish(|slot| *slot = i).expect("publish");
                }
            } else {
                for base in (0..events).step_by(batch) {
                    producer
                        .publish_batch(batch, |slot, i| *slot = base + i as u64)
                        .expect("publish");
                }
            }
            report_batches(&ring, events);
            ring.shutdown().expect("shutdown");
            start.elapsed()
        })
    }

    /// With `RINGPIPE_BENCH_BATCHES=1`, waits for the ring to drain and
    /// prints each processor's mean batch size (the timing then includes
    /// the wait; use it to diagnose, not to measure).
    fn report_batches(ring: &RingHandle<u64>, events: u64) {
        if std::env::var_os("RINGPIPE_BENCH_BATCHES").is_none() {
            return;
        }
        while ring
            .processors()
            .iter()
            .any(|p| p.sequence + 1 < events as i64)
        {
            std::hint::spin_loop();
        }
        for p in ring.processors() {
            let mean = p.events as f64 / p.batches.max(1) as f64;
            eprintln!(
                "    {}: {} events in {} batches ({mean:.1}/batch)",
                p.name, p.events, p.batches
            );
        }
    }

    fn multi(p: &Params, builder: RingBuilder<u64>) -> Duration {
        let (producer, ring) = builder.start_multi().expect("start ring");
        let start = run_producers(2, p.events, |_| {
            let producer = producer.clone();
            move |range: Range<u64>| {
                for i in range {
                    producer.publish(|slot| *slot = i).expect("publish");
                }
            }
        });
        ring.shutdown().expect("shutdown");
        start.elapsed()
    }
}

/// The `disruptor` crate (4.x).
pub mod disruptor_crate {
    use disruptor::builder::single::SPBuilder;
    use disruptor::builder::NC;
    use disruptor::wait_strategies::WaitStrategy;
    use disruptor::{
        build_multi_producer, build_single_producer, BusySpin, ProcessorSettings, Producer,
        SingleProducerBarrier,
    };

    use super::*;

    /// Our `WaitStrategy::yielding` for the crate, which ships no yielding
    /// strategy: spin (with a PAUSE) for the first 100 empty polls of a
    /// wait, then yield the time slice on every later one. The crate calls
    /// `wait_for(sequence)` once per empty poll and keeps no state, so the
    /// count lives in a thread-local that restarts when the awaited
    /// sequence changes.
    #[derive(Clone, Copy)]
    pub struct SpinThenYield;

    /// Polls spent spinning before yielding, as in our yielding strategy.
    const YIELDING_SPINS: u32 = 100;

    thread_local! {
        static WAITING: std::cell::Cell<(i64, u32)> = const { std::cell::Cell::new((i64::MIN, 0)) };
    }

    impl WaitStrategy for SpinThenYield {
        fn wait_for(&self, sequence: i64) {
            let steps = WAITING.with(|waiting| {
                let (awaited, steps) = waiting.get();
                let steps = if awaited == sequence { steps + 1 } else { 1 };
                waiting.set((sequence, steps));
                steps
            });
            if steps <= YIELDING_SPINS {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// One timed run.
    pub fn run(p: &Params) -> Duration {
        match p.wait {
            Wait::Busy => run_with(p, BusySpin),
            Wait::Yield => run_with(p, SpinThenYield),
        }
    }

    fn handler(mut sum: Sum) -> impl FnMut(&u64, i64, bool) + Send + 'static {
        move |event, _, _| sum.add(*event)
    }

    /// The crate has no sharding: each handler skips `sequence % 2 != ordinal`
    /// (the pattern the Disruptor FAQ recommends).
    fn shard(mut sum: Sum, ordinal: i64) -> impl FnMut(&u64, i64, bool) + Send + 'static {
        move |event, sequence, _| {
            if sequence % 2 == ordinal {
                sum.add(*event)
            }
        }
    }

    fn builder<W: WaitStrategy + 'static>(
        p: &Params,
        wait: W,
    ) -> SPBuilder<NC, u64, W, SingleProducerBarrier> {
        let builder = build_single_producer(CAPACITY, || 0u64, wait);
        if p.pinned {
            builder.pin_at_core(CONSUMER_CORE)
        } else {
            builder
        }
    }

    fn run_with<W: WaitStrategy + 'static>(p: &Params, wait: W) -> Duration {
        let (a, b) = totals();
        let elapsed = match p.topology {
            Topology::Spsc => single(
                p,
                builder(p, wait)
                    .handle_events_with(handler(Sum::new(&a)))
                    .build(),
            ),
            Topology::Shard2 => single(
                p,
                builder(p, wait)
                    .handle_events_with(shard(Sum::new(&a), 0))
                    .handle_events_with(shard(Sum::new(&a), 1))
                    .build(),
            ),
            Topology::Pipeline2 => single(
                p,
                builder(p, wait)
                    .handle_events_with(handler(Sum::new(&a)))
                    .and_then()
                    .handle_events_with(handler(Sum::new(&b)))
                    .build(),
            ),
            Topology::Mpsc2 => multi(
                p,
                build_multi_producer(CAPACITY, || 0u64, wait)
                    .handle_events_with(handler(Sum::new(&a)))
                    .build(),
            ),
        };
        check_topology("disruptor", p, &a, &b);
        elapsed
    }

    fn single(p: &Params, mut producer: impl Producer<u64> + Send + 'static) -> Duration {
        let (events, batch) = (p.events, p.batch);
        on_producer_thread(p.pinned, move || {
            let start = Instant::now();
            if batch == 1 {
                for i in 0..events {
                    producer.publish(|slot| *slot = i);
                }
            } else {
                for base in (0..events).step_by(batch) {
                    producer.batch_publish(batch, |slots| {
                        for (i, slot) in slots.enumerate() {
                            *slot = base + i as u64;
                        }
                    });
                }
            }
            // Dropping the producer waits for the consumers to drain and joins them.
            drop(producer);
            start.elapsed()
        })
    }

    fn multi<P>(p: &Params, producer: P) -> Duration
    where
        P: Producer<u64> + Clone + Send,
    {
        let start = run_producers(2, p.events, |_| {
            let mut producer = producer.clone();
            move |range: Range<u64>| {
                for i in range {
                    producer.publish(|slot| *slot = i);
                }
            }
        });
        // The last clone dropped drains the ring and joins the consumer.
        drop(producer);
        start.elapsed()
    }
}

/// A bounded channel flavour: crossbeam's `bounded` or std's `sync_channel`.
pub trait Channel: 'static {
    /// Sending half.
    type Tx: Clone + Send + 'static;
    /// Receiving half.
    type Rx: Send + 'static;
    /// A channel of `capacity` messages.
    fn bounded(capacity: usize) -> (Self::Tx, Self::Rx);
    /// Blocking send.
    fn send(tx: &Self::Tx, value: u64);
    /// Blocking receive; `None` once every sender is gone.
    fn recv(rx: &Self::Rx) -> Option<u64>;
}

/// `crossbeam_channel::bounded`.
pub struct Crossbeam;

impl Channel for Crossbeam {
    type Tx = crossbeam_channel::Sender<u64>;
    type Rx = crossbeam_channel::Receiver<u64>;
    fn bounded(capacity: usize) -> (Self::Tx, Self::Rx) {
        crossbeam_channel::bounded(capacity)
    }
    #[inline(always)]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect("receiver alive");
    }
    #[inline(always)]
    fn recv(rx: &Self::Rx) -> Option<u64> {
        rx.recv().ok()
    }
}

/// `std::sync::mpsc::sync_channel`.
pub struct StdSync;

impl Channel for StdSync {
    type Tx = std::sync::mpsc::SyncSender<u64>;
    type Rx = std::sync::mpsc::Receiver<u64>;
    fn bounded(capacity: usize) -> (Self::Tx, Self::Rx) {
        std::sync::mpsc::sync_channel(capacity)
    }
    #[inline(always)]
    fn send(tx: &Self::Tx, value: u64) {
        tx.send(value).expect("receiver alive");
    }
    #[inline(always)]
    fn recv(rx: &Self::Rx) -> Option<u64> {
        rx.recv().ok()
    }
}

/// Channel contenders; a channel has no wait strategy (it spins briefly,
/// then parks), so `Params::wait` does not apply.
pub mod channel {
    use std::thread::JoinHandle;

    use super::*;

    /// A consumer thread summing `rx` into `sum`, optionally forwarding.
    fn consumer<C: Channel>(
        pinned: bool,
        rx: C::Rx,
        mut sum: Sum,
        forward: Option<C::Tx>,
    ) -> JoinHandle<()> {
        std::thread::spawn(move || {
            pin_if(pinned, CONSUMER_CORE);
            while let Some(value) = C::recv(&rx) {
                sum.add(value);
                if let Some(tx) = &forward {
                    C::send(tx, value);
                }
            }
        })
    }

    /// One timed run.
    pub fn run<C: Channel>(p: &Params) -> Duration {
        assert_eq!(p.batch, 1, "channels have no batch publication");
        let (a, b) = totals();
        let elapsed = match p.topology {
            Topology::Spsc => {
                let (tx, rx) = C::bounded(CAPACITY);
                let consumers = vec![consumer::<C>(p.pinned, rx, Sum::new(&a), None)];
                single::<C>(p, vec![tx], consumers)
            }
            Topology::Shard2 => {
                let (tx0, rx0) = C::bounded(CAPACITY);
                let (tx1, rx1) = C::bounded(CAPACITY);
                let consumers = vec![
                    consumer::<C>(false, rx0, Sum::new(&a), None),
                    consumer::<C>(false, rx1, Sum::new(&a), None),
                ];
                single::<C>(p, vec![tx0, tx1], consumers)
            }
            Topology::Pipeline2 => {
                let (tx, rx) = C::bounded(CAPACITY);
                let (tx_b, rx_b) = C::bounded(CAPACITY);
                let consumers = vec![
                    consumer::<C>(false, rx, Sum::new(&a), Some(tx_b)),
                    consumer::<C>(false, rx_b, Sum::new(&b), None),
                ];
                single::<C>(p, vec![tx], consumers)
            }
            Topology::Mpsc2 => multi::<C>(p, Sum::new(&a)),
        };
        check_topology("channel", p, &a, &b);
        elapsed
    }

    /// One producer; event `i` goes to `txs[i % txs.len()]`.
    fn single<C: Channel>(p: &Params, txs: Vec<C::Tx>, consumers: Vec<JoinHandle<()>>) -> Duration {
        let events = p.events;
        on_producer_thread(p.pinned, move || {
            let start = Instant::now();
            if let [tx] = txs.as_slice() {
                for i in 0..events {
                    C::send(tx, i);
                }
            } else {
                for i in 0..events {
                    C::send(&txs[i as usize % txs.len()], i);
                }
            }
            drop(txs);
            for consumer in consumers {
                consumer.join().expect("consumer panicked");
            }
            start.elapsed()
        })
    }

    fn multi<C: Channel>(p: &Params, sum: Sum) -> Duration {
        let (tx, rx) = C::bounded(CAPACITY);
        let consumer = consumer::<C>(false, rx, sum, None);
        let start = run_producers(2, p.events, |_| {
            let tx = tx.clone();
            move |range: Range<u64>| {
                for i in range {
                    C::send(&tx, i);
                }
            }
        });
        drop(tx);
        consumer.join().expect("consumer panicked");
        start.elapsed()
    }
}
