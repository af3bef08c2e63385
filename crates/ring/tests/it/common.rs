//! Handlers and helpers shared by the ring's integration tests.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ringpipe_ring::{ClaimError, EventHandler, HandlerError, MultiProducer};

/// How long a test waits for something that must happen before declaring a
/// hang. Only a failing test ever waits this long; passing tests never
/// depend on it.
pub const HANG: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and returns its result, failing the test if
/// it has not returned within [`HANG`] (a hang must fail, not block CI).
pub fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what} did not return within {HANG:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Polls `done` every millisecond until it holds; fails the test after
/// [`HANG`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < HANG,
            "{what}: still waiting after {HANG:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The sum `0 + 1 + … + (n - 1)`.
pub fn triangle(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// A well-mixed per-event checksum term (SplitMix64 finaliser), so a lost
/// event and a duplicated one cannot cancel out.
pub fn mix(producer: u64, counter: u64) -> u64 {
    let mut z = (producer << 48 ^ counter).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small deterministic pseudo-random generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(mix(seed, 0x5eed) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Counts `u64` events and sums their values into shared counters.
#[derive(Debug, Clone, Default)]
pub struct Sum {
    pub count: Arc<AtomicU64>,
    pub total: Arc<AtomicU64>,
}

impl Sum {
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Acquire)
    }
}

impl EventHandler<u64> for Sum {
    fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
        self.total.fetch_add(*event, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Release);
        Ok(())
    }
}

/// One batch as a handler saw it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batch {
    /// `batch_len` from `on_batch_start`.
    pub len: usize,
    /// The sequences delivered, in order.
    pub sequences: Vec<i64>,
    /// `end_of_batch` of each delivery.
    pub ends: Vec<bool>,
}

/// Each [`BatchLog`]'s ordinal and batches, in the order they shut down.
pub type BatchLogs = Arc<Mutex<Vec<(usize, Vec<Batch>)>>>;

/// Records every batch; publishes the log into `out` at `on_shutdown`.
#[derive(Debug)]
pub struct BatchLog {
    pub ordinal: usize,
    batches: Vec<Batch>,
    out: BatchLogs,
}

impl BatchLog {
    pub fn new(ordinal: usize, out: &BatchLogs) -> Self {
        BatchLog {
            ordinal,
            batches: Vec::new(),
            out: Arc::clone(out),
        }
    }
}

impl<E> EventHandler<E> for BatchLog {
    fn on_event(&mut self, _: &E, sequence: i64, end: bool) -> Result<(), HandlerError> {
        let batch = self.batches.last_mut().expect("on_batch_start came first");
        batch.sequences.push(sequence);
        batch.ends.push(end);
        Ok(())
    }

    fn on_batch_start(&mut self, len: usize, _queue_depth: usize) {
        self.batches.push(Batch {
            len,
            ..Batch::default()
        });
    }

    fn on_shutdown(&mut self) {
        let batches = std::mem::take(&mut self.batches);
        self.out.lock().unwrap().push((self.ordinal, batches));
    }
}

/// Checks that a handler's batches are well formed: each holds exactly the
/// `len` events `on_batch_start` announced, `end_of_batch` is set on its last
/// event and no other, and sequences strictly increase throughout.
pub fn assert_batches_well_formed(batches: &[Batch]) {
    let mut previous = -1;
    for batch in batches {
        assert_eq!(batch.sequences.len(), batch.len, "{batch:?}");
        let mut want = vec![false; batch.len];
        if let Some(last) = want.last_mut() {
            *last = true;
        }
        assert_eq!(batch.ends, want, "{batch:?}");
        for &sequence in &batch.sequences {
            assert!(sequence > previous, "{sequence} after {previous}");
            previous = sequence;
        }
    }
}

/// Lets a handler stay stuck until the ring has halted, with no clock.
///
/// The handler holds a clone; the test sets a multi-producer into it once
/// the ring is *full* (so `try_next` can only answer "no room" or "halted",
/// never claim a slot). The stuck handler then polls `try_next` until it
/// reports [`ClaimError::Halted`].
pub struct HaltProbe<E>(Arc<OnceLock<MultiProducer<E>>>);

impl<E> Clone for HaltProbe<E> {
    fn clone(&self) -> Self {
        HaltProbe(Arc::clone(&self.0))
    }
}

impl<E> Default for HaltProbe<E> {
    fn default() -> Self {
        HaltProbe(Arc::new(OnceLock::new()))
    }
}

impl<E> HaltProbe<E> {
    /// Arms the probe; call only once the ring is full.
    pub fn arm(&self, producer: &MultiProducer<E>) {
        assert!(self.0.set(producer.clone()).is_ok(), "armed twice");
    }

    /// Blocks until the ring has halted.
    pub fn wait_for_halt(&self) {
        loop {
            if let Some(producer) = self.0.get() {
                match producer.try_next() {
                    Err(ClaimError::Halted) => return,
                    Err(_) => {}
                    Ok(_) => panic!("the halt probe claimed a slot: the ring was not full"),
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
