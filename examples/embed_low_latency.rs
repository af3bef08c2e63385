//! A service loop handing requests between threads on the ring.
//!
//! A network thread (here: a loop) publishes requests; a matching engine
//! thread handles them and answers on a second ring that the network thread
//! drains. Busy-spin gives the lowest hand-off latency when each thread has
//! a core; on a shared machine, `WaitStrategy::yielding` is the safer pick.
//! Both rings keep their publication markers in the slots
//! (`RingBuilder::publish_in_slots`): a hand-off then moves one cache line
//! between the cores, not two.
//!
//! Run: `cargo run --release --example embed_low_latency`

use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringpipe_ring::{EventHandler, HandlerError, Producer, RingBuilder, WaitStrategy};

#[derive(Default, Clone, Copy)]
struct Request {
    id: u64,
    sent: Option<Instant>,
}

/// The engine: handles each request and publishes a reply on the reply ring.
struct Engine {
    replies: Producer<Request>,
}

impl EventHandler<Request> for Engine {
    fn on_event(&mut self, request: &Request, _: i64, _: bool) -> Result<(), HandlerError> {
        let reply = *request;
        self.replies
            .publish(|slot| *slot = reply)
            .map_err(HandlerError::fatal)
    }
}

/// Measures the round trip of each reply.
struct Replies {
    latencies: mpsc::Sender<Duration>,
}

impl EventHandler<Request> for Replies {
    fn on_event(&mut self, reply: &Request, _: i64, _: bool) -> Result<(), HandlerError> {
        let sent = reply.sent.expect("every request is stamped");
        let _ = self.latencies.send(sent.elapsed());
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const REQUESTS: u64 = 20_000;
    let wait = WaitStrategy::yielding();
    let (latency_tx, latency_rx) = mpsc::channel();
    let (replies, reply_ring) = RingBuilder::new(1024, Request::default)
        .wait_strategy(wait)
        .publish_in_slots()
        .thread_name("reply")
        .handle_events_with(Replies {
            latencies: latency_tx,
        })
        .start()?;
    let (mut requests, engine_ring) = RingBuilder::new(1024, Request::default)
        .wait_strategy(wait)
        .publish_in_slots()
        .thread_name("engine")
        .handle_events_with(Engine { replies })
        .start()?;

    for id in 0..REQUESTS {
        requests.publish(|slot| {
            slot.id = id;
            slot.sent = Some(Instant::now());
        })?;
        // Pace the requests like a service would, one in flight at a time.
        latency_rx.recv()?;
    }
    engine_ring.shutdown()?;
    reply_ring.shutdown()?;

    let mut latencies: Vec<Duration> = latency_rx.try_iter().collect();
    latencies.sort();
    println!(
        "{REQUESTS} round trips; the ring hand-offs are timed in benches/ring.rs (cargo bench --bench ring)"
    );
    let _ = latencies;
    Ok(())
}
