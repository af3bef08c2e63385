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
/// event per two PAUSEs is not waited for after the first look. Each
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
/// Gathering (see [`WaitStrategy`]): a batch this long is taken at once...
const GATHER_ENOUGH: i64 = 256;
/// ...otherwise the processor pauses this many PAUSEs (14–25 ns each on the
/// benchmark machines)...
const GATHER_PAUSES: u32 = if cfg!(loom) { 1 } else { 8 };
/// ...and looks again (after a pause paced by the growth it saw), at most
/// this many times, while the batch still grows...
const GATHER_ROUNDS: u32 = if cfg!(loom) { 1 } else { 4 };
/// ...pausing no more than this many PAUSEs in all.
const GATHER_BUDGET: u32 = if cfg!(loom) { 1 } else { 128 };
/// A producer that added fewer than one event per this many PAUSEs since
/// the last look is not waited for.
const GATHER_SLOW_PAUSES: u32 = 2;
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

/// Lets a short batch grow while the producer is still adding to it.
///
/// `first` is the first sequence of the batch, `seen` the highest readable
/// one found so far, `poll` reads the highest readable one again. Pauses
/// without touching the producer's cache lines, then polls; stops as soon
/// as the batch is long enough, stops growing (the producer paused: hand
/// over now), after [`GATHER_ROUNDS`] looks or [`GATHER_BUDGET`] PAUSEs.
/// Returns the new highest.
#[inline]
pub(crate) fn gather(first: i64, seen: i64, poll: impl FnMut() -> i64) -> i64 {
    gather_paced(first, seen, poll, |pauses| {
        for _ in 0..pauses {
            spin_hint();
        }
    })
}

/// [`gather`] with its pauses made by `pause(n)` (n PAUSEs), so that tests
/// can count them.
///
/// After the first short pause the batch's growth tells the producer's
/// rate, and the next pause lasts as long as the batch needs at that rate
/// to reach [`GATHER_ENOUGH`]: one more look instead of several. Every look
/// takes the cursor's cache line from the producer, whose next publication
/// then waits for it; with fixed pauses of 8 PAUSEs (14 ns each on the
/// Intel benchmark machine) four looks gathered ~150 events and 1P→1C
/// busy-spin ran at 140–230 M events/s, paced it gathers ~400 and runs at
/// 220–340 M (docs/benchmarks.md).
///
/// A producer that added fewer than one event per two PAUSEs since the
/// last look (slower than ~20–35M events/s) is not waited for: it is not
/// fast enough for the polls' cache-line steals to slow it, so gathering
/// would only delay its events. At a steady 10M events/s, waiting out the
/// budget for such a producer made each event ~1.1 µs later; giving up at
/// the first look costs only that look's short pause (docs/benchmarks.md).
#[inline]
fn gather_paced(
    first: i64,
    mut seen: i64,
    mut poll: impl FnMut() -> i64,
    mut pause: impl FnMut(u32),
) -> i64 {
    if seen - first + 1 >= GATHER_ENOUGH {
        return seen;
    }
    let mut pauses = GATHER_PAUSES;
    let mut budget = GATHER_BUDGET;
    for _ in 0..GATHER_ROUNDS {
        pause(pauses);
        budget -= pauses;
        let now = poll();
        if now == seen || now - first + 1 >= GATHER_ENOUGH || budget == 0 {
            return now;
        }
        let grown = now - seen;
        if grown * i64::from(GATHER_SLOW_PAUSES) < i64::from(pauses) {
            return now;
        }
        let missing = GATHER_ENOUGH - (now - first + 1);
        let wanted = (i64::from(pauses) * missing + grown - 1) / grown;
        pauses = wanted.clamp(1, i64::from(budget)) as u32;
        seen = now;
    }
    seen
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
    fn gathering_stops_when_the_batch_stops_growing() {
        let mut polls = [100, 150, 150, 999].into_iter();
        assert_eq!(gather(10, 11, || polls.next().unwrap()), 150);
        assert_eq!(
            polls.next(),
            Some(999),
            "no poll after the batch stopped growing"
        );
    }

    #[test]
    fn gathering_takes_a_long_batch_at_once() {
        let first = 100;
        let long = first + GATHER_ENOUGH - 1;
        let mut polled = false;
        let taken = gather(first, long, || {
            polled = true;
            long + 1
        });
        assert_eq!((taken, polled), (long, false));
        // A batch that grows long enough during a pause ends the gathering.
        let mut polls = [first + 5, first + GATHER_ENOUGH + 7, first + 9999].into_iter();
        let taken = gather(first, first, || polls.next().unwrap());
        assert_eq!(taken, first + GATHER_ENOUGH + 7);
    }

    #[test]
    fn gathering_paces_its_next_look_by_the_rate_seen() {
        // 8 events in the first 8 PAUSEs: the 247 still missing for a
        // 256-event batch take 247 more PAUSEs at that rate, which the
        // budget cuts to what is left of it; then one look ends the batch.
        let first = 0;
        let mut polls = [8, 200, 9999].into_iter();
        let mut pauses = Vec::new();
        let taken = gather_paced(first, 0, || polls.next().unwrap(), |n| pauses.push(n));
        assert_eq!(taken, 200);
        assert_eq!(pauses, vec![GATHER_PAUSES, GATHER_BUDGET - GATHER_PAUSES]);
        // A faster producer gets a shorter second pause: 64 events per 8
        // PAUSEs, 191 missing, so 24 PAUSEs (rounded up).
        let mut polls = [64, 300].into_iter();
        let mut pauses = Vec::new();
        let taken = gather_paced(first, 0, || polls.next().unwrap(), |n| pauses.push(n));
        assert_eq!((taken, pauses), (300, vec![GATHER_PAUSES, 24]));
    }

    #[test]
    fn gathering_does_not_wait_for_a_producer_too_slow_to_fill_the_batch() {
        // One event in 8 PAUSEs (a steady 10M events/s where a PAUSE takes
        // 14 ns): the first look hands over what is there.
        let (mut seen, mut polls) = (0, 0);
        let mut paused = Vec::new();
        let taken = gather_paced(
            0,
            0,
            || {
                polls += 1;
                seen += 1;
                seen
            },
            |n| paused.push(n),
        );
        assert_eq!((polls, taken, paused), (1, 1, vec![GATHER_PAUSES]));
        // The same holds at a later look: 100 events, then 6 more in 13
        // PAUSEs.
        let mut polls = [100, 106, 9999].into_iter();
        let mut paused = Vec::new();
        let taken = gather_paced(0, 0, || polls.next().unwrap(), |n| paused.push(n));
        assert_eq!((taken, paused), (106, vec![GATHER_PAUSES, 13]));
    }

    #[test]
    fn gathering_gives_up_after_its_rounds_or_its_budget() {
        // A producer slowing down, each look short of the pace the last
        // one set, within the budget: at most `GATHER_ROUNDS` looks (8, 13,
        // 28 and 70 PAUSEs).
        let mut polls = [100, 150, 180, 200, 9999].into_iter();
        let mut paused = Vec::new();
        let taken = gather_paced(0, 0, || polls.next().unwrap(), |n| paused.push(n));
        assert_eq!((taken, polls.next()), (200, Some(9999)));
        assert_eq!(paused, vec![8, 13, 28, 70]);
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
