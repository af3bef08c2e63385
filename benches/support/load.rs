//! Latency under a steady offered load: one producer publishes at a fixed
//! rate (1M or 10M events/s), stamping each event with the time it was
//! published; the consumer records `now - stamp` when it handles the event.
//! Busy-spin both sides, producer on core 0 and consumer on core 1, the
//! default slot layout. Ours runs twice: as the busy-spin strategy is by
//! default (gathering, unless `RINGPIPE_BENCH_NO_GATHER=1`), and
//! `without_gathering`, the setting for a latency-bound ring. The first
//! tenth of each run is warm-up and not recorded. A producer that falls
//! behind its schedule publishes at once (no catch-up burst is skipped),
//! so an overloaded contender shows it as queueing delay.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{on_producer_thread, CAPACITY, CONSUMER_CORE};

/// One load run: events per second and how many events.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Offered events per second.
    pub rate: u64,
    /// Events published in the run.
    pub events: u64,
}

impl Load {
    fn period(self) -> Duration {
        Duration::from_nanos(1_000_000_000 / self.rate.max(1))
    }

    fn warmup(self) -> u64 {
        self.events / 10
    }
}

/// Where a consumer's histogram ends up when the consumer is dropped (on
/// its own thread, once the ring has drained).
type Out = Arc<Mutex<Option<Histogram<u64>>>>;

/// The consumer every contender uses.
struct Recorder {
    epoch: Instant,
    warmup: u64,
    seen: u64,
    histogram: Histogram<u64>,
    out: Out,
}

impl Recorder {
    fn new(epoch: Instant, load: Load, out: &Out) -> Self {
        Recorder {
            epoch,
            warmup: load.warmup(),
            seen: 0,
            histogram: Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("bounds"),
            out: Arc::clone(out),
        }
    }

    #[inline(always)]
    fn record(&mut self, stamp: u64) {
        self.seen += 1;
        if self.seen > self.warmup {
            let now = self.epoch.elapsed().as_nanos() as u64;
            self.histogram
                .saturating_record(now.saturating_sub(stamp).max(1));
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let histogram = std::mem::replace(&mut self.histogram, Histogram::new(1).expect("h"));
        *self.out.lock().expect("not poisoned") = Some(histogram);
    }
}

/// Publishes `load.events` stamps at `load.rate` through `publish`.
fn paced(load: Load, epoch: Instant, mut publish: impl FnMut(u64)) {
    let period = load.period();
    let start = Instant::now();
    let mut due = start;
    for _ in 0..load.events {
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        publish(epoch.elapsed().as_nanos() as u64);
        due += period;
    }
}

fn take(out: &Out) -> Histogram<u64> {
    out.lock()
        .expect("not poisoned")
        .take()
        .expect("consumer finished")
}

/// Our ring.
pub mod ours {
    use ringpipe_ring::{EventHandler, HandlerError, RingBuilder, WaitStrategy};

    use super::*;
    use crate::support::{peers, Wait};

    impl EventHandler<u64> for Recorder {
        #[inline(always)]
        fn on_event(&mut self, stamp: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
            self.record(*stamp);
            Ok(())
        }
    }

    /// One run at `load`, busy-spin as configured by default.
    pub fn run(load: Load) -> Histogram<u64> {
        run_with(load, peers::ours::strategy(Wait::Busy))
    }

    /// One run at `load`, busy-spin without gathering.
    pub fn run_without_gathering(load: Load) -> Histogram<u64> {
        run_with(load, WaitStrategy::busy_spin().without_gathering())
    }

    fn run_with(load: Load, strategy: WaitStrategy) -> Histogram<u64> {
        let out = Out::default();
        let epoch = Instant::now();
        let (mut producer, ring) = RingBuilder::new(CAPACITY, || 0u64)
            .wait_strategy(strategy)
            .pin_to_cores([CONSUMER_CORE])
            .handle_events_with(Recorder::new(epoch, load, &out))
            .start()
            .expect("start");
        on_producer_thread(true, move || {
            paced(load, epoch, |stamp| {
                producer.publish(|slot| *slot = stamp).expect("publish")
            });
            ring.shutdown().expect("shutdown");
        });
        take(&out)
    }
}

/// The `disruptor` crate.
pub mod disruptor_crate {
    use disruptor::{build_single_producer, BusySpin, ProcessorSettings, Producer};

    use super::*;

    /// One run at `load`.
    pub fn run(load: Load) -> Histogram<u64> {
        let out = Out::default();
        let epoch = Instant::now();
        let mut recorder = Recorder::new(epoch, load, &out);
        let mut producer = build_single_producer(CAPACITY, || 0u64, BusySpin)
            .pin_at_core(CONSUMER_CORE)
            .handle_events_with(move |stamp: &u64, _, _| recorder.record(*stamp))
            .build();
        on_producer_thread(true, move || {
            paced(load, epoch, |stamp| producer.publish(|slot| *slot = stamp));
            // Dropping the producer drains the ring and joins the consumer.
            drop(producer);
        });
        take(&out)
    }
}
