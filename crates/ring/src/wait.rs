//! How threads wait for the ring to move: the CPU/latency trade-off.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use crate::sync::{fence, spin_hint, yield_now, AtomicU64, Ordering};

/// How a waiting thread (a processor with nothing to do, or a producer facing
/// a full ring) spends its time until the sequence it needs arrives.
///
/// | strategy | latency | CPU while idle | use when |
/// |---|---|---|---|
/// | [`busy_spin`](Self::busy_spin) | lowest (tens of ns) | one full core per waiter | a core per thread, latency first |
/// | [`yielding`](Self::yielding) | low (sub-µs when cores are free) | a core, but yields it to runnable threads | more threads than cores, still latency-minded |
/// | [`sleeping`](Self::sleeping) | ~50–100 µs after a long idle | near zero after the spin phase | background pipelines, batch jobs |
/// | [`blocking`](Self::blocking) | a wake-up (µs to tens of µs) | zero | many idle consumers, I/O-bound stages |
///
/// Any strategy can also [`timeout`](Self::timeout): a processor whose wait
/// exceeds it calls its handler's `on_timeout` and keeps waiting.
///
/// The spinning kinds (busy-spin, yielding) *gather*: a processor that
/// finishes a batch and finds fewer than 256 events already waiting (so the
/// producer is streaming and the processor is right behind it) pauses for
/// 8 PAUSEs before taking them, looks how far the batch grew, and pauses
/// once more for as long as the batch needs at that rate to reach 256
/// events (at most four looks and 128 PAUSEs: ~1.8 µs where a PAUSE takes
/// 14 ns, ~3.2 µs where it takes 25); a producer adding less than one
/// event per two PAUSEs is not waited for after the first look, and the
/// batches after such a look are taken at once (1, then 2, 4 … up to 256
/// batches after as many such looks in a row, until a look finds the
/// producer streaming again), so a steady load the processor keeps up
/// with does not pay the first look's pause on every event. Each
/// poll of the cursor steals its cache line from the producer, so a
/// processor polling right behind a streaming producer takes batches of a
/// few events and slows the producer down: gathering turned batches of ~8
/// events into ~200 and raised 1P→1C busy-spin throughput by 20–30%, and
/// pacing the second pause by the rate gathers ~400 and raised it by
/// another ~1.6× (docs/benchmarks.md). A
/// processor that had to *wait* for its next event never gathers, so a
/// lone event (a request, a ping) is handed over at once; gathering delays
/// only events that were already queued.
/// [`without_gathering`](Self::without_gathering) turns it off.
///
/// Every strategy makes progress with more busy threads than cores: even
/// busy-spin yields its time slice once every few thousand spins, so a
/// thread waiting on a descheduled peer cannot starve it for a whole slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitStrategy {
    kind: WaitKind,
    timeout: Option<Duration>,
    gathering: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitKind {
    BusySpin,
    Yielding,
    Sleeping {
        spins: u32,
        yields: u32,
        park: Duration,
    },
    Blocking,
}

/// Busy-spin steps between forced yields, so oversubscribed rings progress.
const SPINS_PER_YIELD: u32 = 4096;
/// Busy-spin polls before the first PAUSE (a few microseconds of polling):
/// a PAUSE lasts 25 ns on the AMD benchmark machine, so a waiter that
/// pauses notices a hand-off up to that much later (docs/benchmarks.md).
/// A processor makes these polls in a tight loop (see [`Waiter::hot_polls`]).
/// Under loom, two: enough to put the tight loop in the models (each poll is
/// an atomic load, where loom may switch threads), few enough to keep them
/// bounded; every later step yields.
const HOT_POLLS: u32 = if cfg!(loom) { 2 } else { 4096 };
/// Spins before the yielding strategy starts yielding.
const YIELDING_SPINS: u32 = 100;
/// Longest a blocked thread sleeps before it re-checks by itself. Wake-ups
/// are not lost (see [`Waiter::signal`]); this only bounds the damage if a
/// future change ever breaks that argument.
const BLOCKING_BACKSTOP: Duration = Duration::from_millis(10);

impl WaitStrategy {
    /// Spins on the sequence: lowest latency, burns a core per waiting thread.
    pub const fn busy_spin() -> Self {
        Self::of(WaitKind::BusySpin)
    }

    /// Spins briefly, then yields its time slice between checks.
    pub const fn yielding() -> Self {
        Self::of(WaitKind::Yielding)
    }

    /// Spins 100 times, yields 100 times, then sleeps 50 µs between checks.
    pub const fn sleeping() -> Self {
        Self::sleeping_with(100, 100, Duration::from_micros(50))
    }

    /// Spins `spins` times, yields `yields` times, then sleeps `park`
    /// between checks.
    pub const fn sleeping_with(spins: u32, yields: u32, park: Duration) -> Self {
        Self::of(WaitKind::Sleeping {
            spins,
            yields,
            park,
        })
    }

    /// Parks on a condition variable until a producer or upstream processor
    /// signals progress. Signalling costs publishers a fence per publication.
    pub const fn blocking() -> Self {
        Self::of(WaitKind::Blocking)
    }

    /// Reports a wait longer than `timeout` to the processor's handler
    /// (`on_timeout`), then keeps waiting.
    pub const fn timeout(self, timeout: Duration) -> Self {
        WaitStrategy {
            timeout: Some(timeout),
            ..self
        }
    }

    /// Hands every event over as soon as it is seen, even when the producer
    /// is streaming: no gathering (see [`WaitStrategy`]). For spinning
    /// strategies where queued events must not wait the extra microsecond or
    /// two (at most 128 PAUSEs).
    pub const fn without_gathering(self) -> Self {
        WaitStrategy {
            gathering: false,
            ..self
        }
    }

    const fn of(kind: WaitKind) -> Self {
        WaitStrategy {
            kind,
            timeout: None,
            // Only spinning processors poll often enough to slow a producer.
            gathering: matches!(kind, WaitKind::BusySpin | WaitKind::Yielding),
        }
    }
}

impl Default for WaitStrategy {
    /// [`WaitStrategy::yielding`]: low latency without starving other
    /// threads when there are fewer cores than busy threads.
    fn default() -> Self {
        Self::yielding()
    }
}

/// A wait that ran past the strategy's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimedOut;

/// The ring-wide half of a wait strategy: the condition variable that
/// blocking waiters sleep on.
#[derive(Debug)]
pub(crate) struct Waiter {
    strategy: WaitStrategy,
    /// `strategy` is blocking: the one thing publishers check, per publish.
    blocking: bool,
    /// Threads inside a blocking wait; publishers skip the lock when zero.
    sleepers: CachePadded<AtomicU64>,
    lock: Mutex<()>,
    condvar: Condvar,
}

impl Waiter {
    pub(crate) fn new(strategy: WaitStrategy) -> Self {
        Waiter {
            strategy,
            blocking: strategy.kind == WaitKind::Blocking,
            sleepers: CachePadded::new(AtomicU64::new(0)),
            lock: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    /// Starts one wait; call [`Idle::pause`] until the condition holds.
    pub(crate) fn idle(&self) -> Idle<'_> {
        Idle {
            waiter: self,
            steps: 0,
            deadline: None,
        }
    }

    /// Tells blocked waiters that a sequence moved. Called after every
    /// publication and every processed batch; free for non-blocking kinds.
    #[inline(always)]
    pub(crate) fn signal(&self) {
        if !self.blocking {
            return;
        }
        self.wake_sleepers();
    }

    #[cold]
    fn wake_sleepers(&self) {
        // SeqCst fence: orders the sequence store before it against the
        // `sleepers` load after it. A waiter increments `sleepers` (SeqCst)
        // before re-checking the sequence under the lock, so either we see
        // it and notify under the lock, or it sees our store: no lost wake-up.
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _guard = self.lock.lock();
            self.condvar.notify_all();
        }
    }

    /// Polls a processor makes in a tight loop before its first [`Idle`]
    /// step: [`HOT_POLLS`] for busy-spin, none for the other kinds.
    ///
    /// A tight loop (one load and compare per poll, the halt checked now and
    /// then) notices a publication a step sooner than [`Idle::pause`]'s
    /// bookkeeping does. In the ping-pong benchmark the disruptor crate's
    /// median round trip had been ~100 ns ahead of ours; with the tight loop
    /// it is 40–70 ns ahead (docs/benchmarks.md). A timeout counts from the
    /// end of these polls, a few microseconds late.
    #[inline(always)]
    pub(crate) fn hot_polls(&self) -> u32 {
        match self.strategy.kind {
            WaitKind::BusySpin => HOT_POLLS,
            _ => 0,
        }
    }

    /// Whether a processor that finds a short batch waiting lets it grow.
    #[inline(always)]
    pub(crate) fn gathers(&self) -> bool {
        self.strategy.gathering
    }

    /// Wakes every blocked waiter so it can see a halt.
    pub(crate) fn wake_all(&self) {
        let _guard = self.lock.lock();
        self.condvar.notify_all();
    }
}

/// One thread's progress through a single wait.
pub(crate) struct Idle<'a> {
    waiter: &'a Waiter,
    steps: u32,
    deadline: Option<Instant>,
}

impl Idle<'_> {
    /// Counts `polls` polls already made in a tight loop (see
    /// [`Waiter::hot_polls`]) as this wait's first steps.
    pub(crate) fn after_polls(mut self, polls: u32) -> Self {
        self.steps = polls;
        self
    }

    /// Waits one step. `ready` re-checks the awaited condition; the blocking
    /// kind calls it under the lock before sleeping.
    ///
    /// Returns `Err(TimedOut)` once the strategy's timeout has elapsed since
    /// this wait began; the caller decides what a timeout means.
    #[inline]
    pub(crate) fn pause(&mut self, ready: impl Fn() -> bool) -> Result<(), TimedOut> {
        self.steps = self.steps.wrapping_add(1);
        match self.waiter.strategy.kind {
            WaitKind::BusySpin => {
                if self.steps % SPINS_PER_YIELD == 0 {
                    yield_now();
                } else if self.steps > HOT_POLLS {
                    spin_hint();
                }
            }
            WaitKind::Yielding => {
                if self.steps <= YIELDING_SPINS {
                    spin_hint();
                } else {
                    yield_now();
                }
            }
            WaitKind::Sleeping {
                spins,
                yields,
                park,
            } => {
                if self.steps <= spins {
                    spin_hint();
                } else if self.steps <= spins.saturating_add(yields) {
                    yield_now();
                } else {
                    std::thread::sleep(park);
                }
            }
            WaitKind::Blocking => self.block(&ready),
        }
        self.check_deadline()
    }

    fn block(&self, ready: &impl Fn() -> bool) {
        let waiter = self.waiter;
        // SeqCst: pairs with the fence in `Waiter::signal` (see there).
        waiter.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut guard = waiter.lock.lock();
        if !ready() {
            let slice = match self.deadline {
                Some(deadline) => deadline
                    .saturating_duration_since(Instant::now())
                    .min(BLOCKING_BACKSTOP),
                None => BLOCKING_BACKSTOP,
            };
            waiter.condvar.wait_for(&mut guard, slice);
        }
        drop(guard);
        // Relaxed: leaving needs no ordering; a publisher that still counts
        // this thread only pays a needless notify.
        waiter.sleepers.fetch_sub(1, Ordering::Relaxed);
    }

    #[inline(always)]
    fn check_deadline(&mut self) -> Result<(), TimedOut> {
        match self.waiter.strategy.timeout {
            None => Ok(()),
            Some(timeout) => self.check_timeout(timeout),
        }
    }

    fn check_timeout(&mut self, timeout: Duration) -> Result<(), TimedOut> {
        // Reading the clock costs ~20 ns; spinning kinds look every 64 steps.
        let spinning = matches!(
            self.waiter.strategy.kind,
            WaitKind::BusySpin | WaitKind::Yielding
        );
        if spinning && self.steps % 64 != 1 {
            return Ok(());
        }
        let now = Instant::now();
        let deadline = *self.deadline.get_or_insert(now + timeout);
        if now >= deadline {
            self.deadline = None;
            return Err(TimedOut);
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_times_out_when_nothing_arrives() {
        for strategy in [
            WaitStrategy::busy_spin(),
            WaitStrategy::yielding(),
            WaitStrategy::sleeping(),
            WaitStrategy::blocking(),
        ] {
            let waiter = Waiter::new(strategy.timeout(Duration::from_millis(5)));
            let mut idle = waiter.idle();
            let started = Instant::now();
            while idle.pause(|| false).is_ok() {}
            assert!(
                started.elapsed() >= Duration::from_millis(5),
                "{strategy:?}"
            );
        }
    }

    #[test]
    fn only_spinning_strategies_gather_by_default() {
        let gathers = |s: WaitStrategy| Waiter::new(s).gathers();
        assert!(gathers(WaitStrategy::busy_spin()));
        assert!(gathers(
            WaitStrategy::yielding().timeout(Duration::from_secs(1))
        ));
        assert!(!gathers(WaitStrategy::busy_spin().without_gathering()));
        assert!(!gathers(WaitStrategy::sleeping()));
        assert!(!gathers(WaitStrategy::blocking()));
    }

    #[test]
    fn blocking_waiter_wakes_on_signal_not_backstop() {
        let waiter = std::sync::Arc::new(Waiter::new(WaitStrategy::blocking()));
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (w, f) = (waiter.clone(), flag.clone());
        let sleeper = std::thread::spawn(move || {
            let mut idle = w.idle();
            let mut pauses = 0;
            while !f.load(std::sync::atomic::Ordering::Acquire) {
                idle.pause(|| f.load(std::sync::atomic::Ordering::Acquire))
                    .unwrap();
                pauses += 1;
            }
            pauses
        });
        std::thread::sleep(Duration::from_millis(30));
        flag.store(true, std::sync::atomic::Ordering::Release);
        waiter.signal();
        let pauses = sleeper.join().unwrap();
        // 30 ms of sleeping costs ~3 backstop wake-ups, not thousands of spins.
        assert!(pauses <= 8, "{pauses} pauses");
    }
}
