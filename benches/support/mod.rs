//! Shared pieces of the ring benchmark: run parameters, the summing
//! consumer every contender uses, thread helpers, and the contenders.

pub mod chart;
pub mod latency;
pub mod load;
pub mod peers;
pub mod stats;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Ring / channel capacity, the same for every contender.
pub const CAPACITY: usize = 65_536;
/// Core of the producer thread in pinned cases.
pub const PRODUCER_CORE: usize = 0;
/// Core of the consumer thread in pinned cases.
pub const CONSUMER_CORE: usize = 1;

/// How idle threads wait, where the contender lets us choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Spin on the sequence.
    Busy,
    /// Spin briefly, then yield the time slice.
    Yield,
}

/// The shape of the event flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// One producer, one consumer.
    Spsc,
    /// Two producers, one consumer (multi-producer sequencer).
    Mpsc2,
    /// One producer, two handlers each taking `sequence % 2`.
    Shard2,
    /// One producer, stage A, then stage B.
    Pipeline2,
}

/// What one timed run does.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Events published in the run (a multiple of `batch`).
    pub events: u64,
    /// Wait strategy.
    pub wait: Wait,
    /// Producer on [`PRODUCER_CORE`], consumer on [`CONSUMER_CORE`].
    pub pinned: bool,
    /// Slots claimed per publication (1 = one event at a time).
    pub batch: usize,
    /// Event flow.
    pub topology: Topology,
}

/// The sum every consumer must arrive at: events carry `0..events`.
pub fn expected_sum(events: u64) -> u64 {
    events * (events - 1) / 2
}

/// A consumer's running sum; adds itself to `out` when dropped, i.e. when
/// the consumer thread ends, so reading `out` after the join is exact.
pub struct Sum {
    sum: u64,
    out: Arc<AtomicU64>,
}

impl Sum {
    /// A sum that reports into `out`.
    pub fn new(out: &Arc<AtomicU64>) -> Self {
        Sum {
            sum: 0,
            out: Arc::clone(out),
        }
    }

    /// Adds one event.
    #[inline(always)]
    pub fn add(&mut self, value: u64) {
        self.sum = self.sum.wrapping_add(value);
    }
}

impl Drop for Sum {
    fn drop(&mut self) {
        self.out.fetch_add(self.sum, Ordering::Relaxed);
    }
}

/// Panics unless every consumer in `totals` summed all `events`.
pub fn check(what: &str, totals: &[&Arc<AtomicU64>], events: u64) {
    for total in totals {
        let got = total.load(Ordering::Relaxed);
        assert_eq!(got, expected_sum(events), "{what}: wrong consumer sum");
    }
}

/// Pins the current thread to `core` if `pinned`.
pub fn pin_if(pinned: bool, core: usize) {
    if pinned && !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        panic!("could not pin thread to core {core}");
    }
}

/// Runs `body` on a fresh producer thread (pinned to [`PRODUCER_CORE`] if
/// asked) and returns its result; the bench's main thread stays unpinned.
pub fn on_producer_thread<R: Send + 'static>(
    pinned: bool,
    body: impl FnOnce() -> R + Send + 'static,
) -> R {
    std::thread::spawn(move || {
        pin_if(pinned, PRODUCER_CORE);
        body()
    })
    .join()
    .expect("producer thread panicked")
}

/// Runs `producers` producer threads that start together; producer `k`
/// gets its half-open range of event values. Returns, once all are done,
/// the instant they started.
pub fn run_producers<F>(producers: usize, events: u64, make: impl Fn(usize) -> F) -> Instant
where
    F: FnOnce(std::ops::Range<u64>) + Send,
{
    let start = Barrier::new(producers + 1);
    let per = events / producers as u64;
    std::thread::scope(|scope| {
        for k in 0..producers {
            let body = make(k);
            let start = &start;
            let range = k as u64 * per..if k + 1 == producers {
                events
            } else {
                (k as u64 + 1) * per
            };
            scope.spawn(move || {
                start.wait();
                body(range);
            });
        }
        start.wait();
        Instant::now()
    })
}
