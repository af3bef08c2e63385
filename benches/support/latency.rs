//! Round-trip latency: ping-pong between two threads over two rings (or two
//! channels). The pinger stamps each ping with the time it was sent; the
//! ponger echoes it back; the pinger records `now - stamp` on arrival and
//! sends the next ping with that same `now`. Pinger on core 0, ponger on
//! core 1, busy-spin waits for the rings (channels spin, then park); our
//! rings keep their publication markers in the slots, as a latency-bound
//! user would build them.

use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::time::Instant;

use hdrhistogram::Histogram;

use super::peers::Channel;
use super::{pin_if, CAPACITY, CONSUMER_CORE, PRODUCER_CORE};

/// Round trips to measure and to run first without recording.
#[derive(Debug, Clone, Copy)]
pub struct Trips {
    /// Recorded round trips.
    pub measured: u64,
    /// Unrecorded warm-up round trips before them.
    pub warmup: u64,
}

impl Trips {
    fn total(self) -> u64 {
        self.measured + self.warmup
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

fn nanos(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// The pinger's bookkeeping, shared by the ring contenders.
struct Pings {
    epoch: Instant,
    trips: Trips,
    seen: u64,
    histogram: Histogram<u64>,
}

impl Pings {
    fn new(epoch: Instant, trips: Trips) -> Self {
        Pings {
            epoch,
            trips,
            seen: 0,
            histogram: histogram(),
        }
    }

    /// Records the pong stamped `sent`; returns the stamp of the next ping,
    /// or `None` when every round trip is done.
    #[inline(always)]
    fn pong(&mut self, sent: u64) -> Option<u64> {
        let now = nanos(self.epoch);
        self.seen += 1;
        if self.seen > self.trips.warmup {
            self.histogram
                .saturating_record(now.saturating_sub(sent).max(1));
        }
        (self.seen < self.trips.total()).then_some(now)
    }
}

/// Our ring: ring 1 carries pings to the ponger's processor, which
/// publishes into ring 2, whose processor is the pinger.
pub mod ours {
    use ringpipe_ring::{EventHandler, HandlerError, Producer, RingBuilder, WaitStrategy};

    use super::*;

    /// Each side gets the other ring's producer through a channel on its
    /// first event (the rings cannot be built in a cycle).
    struct Outbox {
        producer: Option<Producer<u64>>,
        inbox: Receiver<Producer<u64>>,
    }

    impl Outbox {
        fn send(&mut self, value: u64) -> Result<(), HandlerError> {
            let inbox = &self.inbox;
            self.producer
                .get_or_insert_with(|| inbox.recv().expect("producer handed over"))
                .publish(|slot| *slot = value)
                .map_err(HandlerError::fatal)
        }
    }

    struct Ponger(Outbox);

    impl EventHandler<u64> for Ponger {
        fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
            self.0.send(*event)
        }
    }

    struct Pinger {
        out: Outbox,
        pings: Pings,
        done: Option<SyncSender<Histogram<u64>>>,
    }

    impl EventHandler<u64> for Pinger {
        fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
            match self.pings.pong(*event) {
                Some(stamp) => self.out.send(stamp),
                None => {
                    let done = self.done.take().expect("finished once");
                    let _ = done.send(self.pings.histogram.clone());
                    Ok(())
                }
            }
        }
    }

    /// A latency-bound ring: publication markers in the slots, so a hand-off
    /// moves one cache line, not two (`RingBuilder::publish_in_slots`).
    fn ring(core: usize) -> RingBuilder<u64> {
        RingBuilder::new(CAPACITY, || 0u64)
            .wait_strategy(WaitStrategy::busy_spin())
            .publish_in_slots()
            .pin_to_cores([core])
    }

    /// One measured ping-pong session.
    pub fn run(trips: Trips) -> Histogram<u64> {
        let (to_pinger, pinger_inbox) = channel();
        let (to_ponger, ponger_inbox) = channel();
        let (done, finished) = sync_channel(1);
        let epoch = Instant::now();
        let ponger = Ponger(Outbox {
            producer: None,
            inbox: ponger_inbox,
        });
        let (mut pings, ring1) = ring(CONSUMER_CORE)
            .handle_events_with(ponger)
            .start()
            .expect("start");
        let pinger = Pinger {
            out: Outbox {
                producer: None,
                inbox: pinger_inbox,
            },
            pings: Pings::new(epoch, trips),
            done: Some(done),
        };
        let (pongs, ring2) = ring(PRODUCER_CORE)
            .handle_events_with(pinger)
            .start()
            .expect("start");
        assert!(to_ponger.send(pongs).is_ok(), "ponger gone");
        pings
            .publish(|slot| *slot = nanos(epoch))
            .expect("first ping");
        assert!(to_pinger.send(pings).is_ok(), "pinger gone");
        let histogram = finished.recv().expect("pinger finished");
        ring1.shutdown().expect("shutdown");
        ring2.shutdown().expect("shutdown");
        histogram
    }
}

/// The `disruptor` crate: same shape, closures as handlers.
pub mod disruptor_crate {
    use disruptor::{
        build_single_producer, BusySpin, ProcessorSettings, Producer, SingleConsumerBarrier,
        SingleProducer,
    };

    use super::*;

    type Sp = SingleProducer<u64, SingleConsumerBarrier>;

    /// One measured ping-pong session.
    pub fn run(trips: Trips) -> Histogram<u64> {
        let (to_pinger, pinger_inbox) = channel::<Sp>();
        let (to_ponger, ponger_inbox) = channel::<Sp>();
        let (done, finished) = sync_channel(1);
        let epoch = Instant::now();
        let mut pongs_out: Option<Sp> = None;
        let ponger = move |event: &u64, _: i64, _: bool| {
            let value = *event;
            pongs_out
                .get_or_insert_with(|| ponger_inbox.recv().expect("producer handed over"))
                .publish(|slot| *slot = value);
        };
        let mut pings = build_single_producer(CAPACITY, || 0u64, BusySpin)
            .pin_at_core(CONSUMER_CORE)
            .handle_events_with(ponger)
            .build();
        let mut state = Pings::new(epoch, trips);
        let mut pings_out: Option<Sp> = None;
        let pinger = move |event: &u64, _: i64, _: bool| match state.pong(*event) {
            Some(stamp) => {
                pings_out
                    .get_or_insert_with(|| pinger_inbox.recv().expect("producer handed over"))
                    .publish(|slot| *slot = stamp);
            }
            // Hand our producer of ring 1 back: dropping it here would join
            // ring 1's thread, which owns (and on exit drops, joining us)
            // the producer of ring 2.
            None => {
                let _ = done.send((state.histogram.clone(), pings_out.take()));
            }
        };
        let pongs = build_single_producer(CAPACITY, || 0u64, BusySpin)
            .pin_at_core(PRODUCER_CORE)
            .handle_events_with(pinger)
            .build();
        assert!(to_ponger.send(pongs).is_ok(), "ponger gone");
        pings.publish(|slot| *slot = nanos(epoch));
        assert!(to_pinger.send(pings).is_ok(), "pinger gone");
        let (histogram, pings) = finished.recv().expect("pinger finished");
        // Shuts ring 1 down, whose thread drops the ring 2 producer in turn.
        drop(pings);
        histogram
    }
}

/// Two channels, a pinger thread and a ponger thread.
pub fn channels<C: Channel>(trips: Trips) -> Histogram<u64> {
    let (ping_tx, ping_rx) = C::bounded(CAPACITY);
    let (pong_tx, pong_rx) = C::bounded(CAPACITY);
    let ponger = std::thread::spawn(move || {
        pin_if(true, CONSUMER_CORE);
        while let Some(value) = C::recv(&ping_rx) {
            C::send(&pong_tx, value);
        }
    });
    let pinger = std::thread::spawn(move || {
        pin_if(true, PRODUCER_CORE);
        let epoch = Instant::now();
        let mut pings = Pings::new(epoch, trips);
        let mut stamp = nanos(epoch);
        loop {
            C::send(&ping_tx, stamp);
            let sent = C::recv(&pong_rx).expect("ponger alive");
            match pings.pong(sent) {
                Some(next) => stamp = next,
                None => break,
            }
        }
        drop(ping_tx);
        pings.histogram
    });
    let histogram = pinger.join().expect("pinger panicked");
    ponger.join().expect("ponger panicked");
    histogram
}
