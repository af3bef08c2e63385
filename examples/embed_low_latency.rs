//! A small low-latency service on two rings: requests in, a staged
//! pipeline, replies out.
//!
//! The client loop publishes requests at a steady rate on the request ring,
//! where a validating stage (exclusive access: it writes its verdict into
//! the request) runs before the engine, which answers on the reply ring.
//! The client has no reply thread: between two requests it polls the reply
//! ring with an `EventPoller`, so the replies come back on the thread that
//! measures them. It prints the round-trip percentiles (hdrhistogram) and
//! the rings' metrics.
//!
//! Yielding waits suit a shared machine; give each thread a core and use
//! `WaitStrategy::busy_spin()` for the lowest latency.
//!
//! Run: `cargo run --release --example embed_low_latency [requests] [per-second]`

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ringpipe_ring::{
    ClaimError, EventHandler, EventHandlerMut, HandlerError, PollState, Producer, RingBuilder,
    RingMetrics, WaitStrategy,
};

#[derive(Default, Clone, Copy)]
struct Request {
    id: u64,
    sent: Option<Instant>,
    quantity: u64,
    price: u64,
    accepted: bool,
}

#[derive(Default, Clone, Copy)]
struct Reply {
    id: u64,
    sent: Option<Instant>,
    notional: Option<u64>,
}

/// Stage 1: checks each request and records the verdict in it.
struct Validate;

impl EventHandlerMut<Request> for Validate {
    fn on_event(&mut self, request: &mut Request, _: i64, _: bool) -> Result<(), HandlerError> {
        request.accepted = request.quantity > 0 && request.quantity <= 1_000;
        Ok(())
    }
}

/// Stage 2: answers each request on the reply ring.
struct Engine {
    replies: Producer<Reply>,
}

impl EventHandler<Request> for Engine {
    fn on_event(&mut self, request: &Request, _: i64, _: bool) -> Result<(), HandlerError> {
        let reply = Reply {
            id: request.id,
            sent: request.sent,
            notional: request.accepted.then(|| request.quantity * request.price),
        };
        self.replies
            .publish(|slot| *slot = reply)
            .map_err(HandlerError::fatal)
    }
}

/// The client's side of the reply ring: records each round trip.
struct Client {
    latencies: Histogram<u64>,
    replies: u64,
    rejected: u64,
}

impl EventHandler<Reply> for Client {
    fn on_event(&mut self, reply: &Reply, _: i64, _: bool) -> Result<(), HandlerError> {
        let sent = reply
            .sent
            .ok_or_else(|| HandlerError::fatal("an unstamped reply"))?;
        let nanos = sent.elapsed().as_nanos() as u64;
        self.latencies.saturating_record(nanos.max(1));
        self.replies += 1;
        self.rejected += u64::from(reply.notional.is_none());
        let _ = reply.id;
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let requests = args.next().transpose()?.unwrap_or(200_000);
    let per_second = args.next().transpose()?.unwrap_or(100_000).max(1);
    let wait = WaitStrategy::yielding();

    let (replies, mut reply_ring) = RingBuilder::new(1024, Reply::default)
        .wait_strategy(wait)
        .thread_name("replies")
        .add_poller()
        .start()?;
    let mut poller = reply_ring
        .take_poller(0)
        .ok_or("the reply ring has one poller")?;
    let (mut producer, request_ring) = RingBuilder::new(1024, Request::default)
        .wait_strategy(wait)
        .thread_name("requests")
        .handle_events_with_mut(Validate)
        .then(Engine { replies })
        .start()?;

    let mut client = Client {
        latencies: Histogram::new_with_bounds(1, 60_000_000_000, 3)?,
        replies: 0,
        rejected: 0,
    };
    let period = Duration::from_secs(1) / per_second as u32;
    let started = Instant::now();
    for id in 0..requests {
        let due = started + period * id as u32;
        loop {
            poll(&mut poller, &mut client)?;
            if Instant::now() >= due {
                break;
            }
        }
        // Never block on a full request ring: the engine may be waiting
        // for room on the reply ring, which only this loop's polls free.
        let mut claim = loop {
            match producer.try_next() {
                Ok(claim) => break claim,
                Err(ClaimError::InsufficientCapacity) => poll(&mut poller, &mut client)?,
                Err(error) => return Err(error.into()),
            }
        };
        *claim.get_mut(0) = Request {
            id,
            sent: Some(Instant::now()),
            quantity: id % 1_200,
            price: 100 + id % 7,
            accepted: false,
        };
        claim.publish();
    }
    while client.replies < requests {
        poll(&mut poller, &mut client)?;
    }
    let elapsed = started.elapsed();
    let (requests_metrics, replies_metrics) = (request_ring.metrics(), reply_ring.metrics());
    drop(poller);
    request_ring.shutdown()?;
    reply_ring.shutdown()?;

    let us = |q: f64| client.latencies.value_at_quantile(q) as f64 / 1_000.0;
    println!(
        "{requests} requests at {per_second}/s in {:.2} s ({} rejected); round trip p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs",
        elapsed.as_secs_f64(),
        client.rejected,
        us(0.5),
        us(0.99),
        us(0.999),
        client.latencies.max() as f64 / 1_000.0
    );
    print_metrics("requests", &requests_metrics);
    print_metrics("replies", &replies_metrics);
    Ok(())
}

/// Polls the reply ring once, yielding the core when nothing was ready (the
/// pipeline's threads may need it); an error if the ring halted.
fn poll(
    poller: &mut ringpipe_ring::EventPoller<Reply>,
    client: &mut Client,
) -> Result<(), Box<dyn std::error::Error>> {
    match poller.poll(client) {
        PollState::Halted => Err("the reply ring halted".into()),
        PollState::Idle | PollState::Gating => {
            std::thread::yield_now();
            Ok(())
        }
        _ => Ok(()),
    }
}

fn print_metrics(ring: &str, metrics: &RingMetrics) {
    println!(
        "{ring} ring: cursor {}, producer waited for capacity {} times ({:?})",
        metrics.cursor, metrics.producer_waits, metrics.producer_wait
    );
    for p in &metrics.processors {
        println!(
            "  {}: {} events in {} batches (batch size p50 {}, p99 {}), lag {}, rewinds {}, skipped {}",
            p.name,
            p.events,
            p.batches,
            p.batch_sizes.quantile(0.5),
            p.batch_sizes.quantile(0.99),
            p.lag,
            p.rewinds,
            p.skipped_batches
        );
    }
}
