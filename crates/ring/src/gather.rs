//! Gathering: a spinning processor that finds a short batch waiting lets
//! it grow while the producer is still streaming (see
//! [`WaitStrategy`](crate::WaitStrategy) for why), and remembers across
//! batches whether the producer was fast enough for that to pay.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::sync::spin_hint;

/// A batch this long is taken at once...
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
/// The most batches taken at once between two looks, however many slow
/// verdicts came in a row (the window doubles from 1 with each).
const SKIP_MOST: u32 = 256;

/// One processor's gathering, remembered across its batches.
///
/// A look that finds the producer too slow to wait for costs the batch its
/// first pause (8 PAUSEs: 110–200 ns on the benchmark machines) and gains
/// nothing; under a steady load the processor keeps up with, every batch
/// would pay it. So after such a verdict the next batch is taken at once,
/// after two verdicts in a row the next two, then four, up to
/// [`SKIP_MOST`]; then one batch looks again, so a producer that speeds up
/// is noticed within 257 batches. A look that pays (the batch grew long
/// enough, or kept growing through the budget) forgets the verdicts.
///
/// Only the processor's (or poller's) own thread touches it. The fields
/// are atomics, at the cost of a plain load and store each, so that the
/// barrier holding them stays shareable as the rest of it is (a shared
/// `EventPoller` stays `Sync`); std's, not loom's, as they order nothing.
#[derive(Debug, Default)]
pub(crate) struct Gathering {
    /// Batches still to take at once.
    skip: AtomicU32,
    /// The window the last slow verdict opened (the next opens twice as
    /// many); 0 after a look that paid.
    window: AtomicU32,
}

impl Gathering {
    /// The highest sequence to take, the batch `first..=seen` found
    /// waiting: `seen` itself while slow verdicts say so, else what a
    /// [`gather`] let it grow to (`poll` reads the highest readable
    /// sequence again).
    #[inline]
    pub(crate) fn take(&self, first: i64, seen: i64, poll: impl FnMut() -> i64) -> i64 {
        // Relaxed here and below: one thread's own state (see above).
        let skip = self.skip.load(Ordering::Relaxed);
        if skip > 0 {
            self.skip.store(skip - 1, Ordering::Relaxed);
            return seen;
        }
        let (highest, slow) = gather(first, seen, poll);
        self.note(slow);
        highest
    }

    /// Records a look's verdict: a slow producer doubles the window and
    /// starts it, a fast one closes it.
    fn note(&self, slow: bool) {
        if slow {
            let window = (self.window.load(Ordering::Relaxed) * 2).clamp(1, SKIP_MOST);
            self.window.store(window, Ordering::Relaxed);
            self.skip.store(window, Ordering::Relaxed);
        } else {
            self.window.store(0, Ordering::Relaxed);
        }
    }
}

/// Lets a short batch grow while the producer is still adding to it.
///
/// `first` is the first sequence of the batch, `seen` the highest readable
/// one found so far, `poll` reads the highest readable one again. Pauses
/// without touching the producer's cache lines, then polls; stops as soon
/// as the batch is long enough, stops growing or grows too slowly to wait
/// for (the producer paused, or is slow: hand over now), after
/// [`GATHER_ROUNDS`] looks or [`GATHER_BUDGET`] PAUSEs. Returns the new
/// highest, and whether it stopped for a slow producer.
#[inline]
fn gather(first: i64, seen: i64, poll: impl FnMut() -> i64) -> (i64, bool) {
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
/// the first look costs only that look's short pause (docs/benchmarks.md),
/// which [`Gathering`] then spares the batches after it.
#[inline]
fn gather_paced(
    first: i64,
    mut seen: i64,
    mut poll: impl FnMut() -> i64,
    mut pause: impl FnMut(u32),
) -> (i64, bool) {
    if seen - first + 1 >= GATHER_ENOUGH {
        return (seen, false);
    }
    let mut pauses = GATHER_PAUSES;
    let mut budget = GATHER_BUDGET;
    for _ in 0..GATHER_ROUNDS {
        pause(pauses);
        budget -= pauses;
        let now = poll();
        if now - first + 1 >= GATHER_ENOUGH || budget == 0 {
            return (now, false);
        }
        let grown = now - seen;
        if grown * i64::from(GATHER_SLOW_PAUSES) < i64::from(pauses) {
            return (now, true);
        }
        let missing = GATHER_ENOUGH - (now - first + 1);
        let wanted = (i64::from(pauses) * missing + grown - 1) / grown;
        pauses = wanted.clamp(1, i64::from(budget)) as u32;
        seen = now;
    }
    (seen, false)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn gathering_stops_when_the_batch_stops_growing() {
        let mut polls = [100, 150, 150, 999].into_iter();
        assert_eq!(gather(10, 11, || polls.next().unwrap()), (150, true));
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
        assert_eq!((taken, polled), ((long, false), false));
        // A batch that grows long enough during a pause ends the gathering.
        let mut polls = [first + 5, first + GATHER_ENOUGH + 7, first + 9999].into_iter();
        let taken = gather(first, first, || polls.next().unwrap());
        assert_eq!(taken, (first + GATHER_ENOUGH + 7, false));
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
        assert_eq!(taken, (200, false));
        assert_eq!(pauses, vec![GATHER_PAUSES, GATHER_BUDGET - GATHER_PAUSES]);
        // A faster producer gets a shorter second pause: 64 events per 8
        // PAUSEs, 191 missing, so 24 PAUSEs (rounded up).
        let mut polls = [64, 300].into_iter();
        let mut pauses = Vec::new();
        let taken = gather_paced(first, 0, || polls.next().unwrap(), |n| pauses.push(n));
        assert_eq!((taken, pauses), ((300, false), vec![GATHER_PAUSES, 24]));
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
        assert_eq!((polls, taken, paused), (1, (1, true), vec![GATHER_PAUSES]));
        // The same holds at a later look: 100 events, then 6 more in 13
        // PAUSEs.
        let mut polls = [100, 106, 9999].into_iter();
        let mut paused = Vec::new();
        let taken = gather_paced(0, 0, || polls.next().unwrap(), |n| paused.push(n));
        assert_eq!((taken, paused), ((106, true), vec![GATHER_PAUSES, 13]));
    }

    #[test]
    fn gathering_gives_up_after_its_rounds_or_its_budget() {
        // A producer slowing down, each look short of the pace the last
        // one set, within the budget: at most `GATHER_ROUNDS` looks (8, 13,
        // 28 and 70 PAUSEs).
        let mut polls = [100, 150, 180, 220, 9999].into_iter();
        let mut paused = Vec::new();
        let taken = gather_paced(0, 0, || polls.next().unwrap(), |n| paused.push(n));
        assert_eq!((taken, polls.next()), ((220, false), Some(9999)));
        assert_eq!(paused, vec![8, 13, 28, 70]);
        // Had the last look found fewer than one event per two PAUSEs, the
        // verdict would have been a slow producer.
        let mut polls = [100, 150, 180, 200].into_iter();
        let taken = gather_paced(0, 0, || polls.next().unwrap(), |_| {});
        assert_eq!(taken, (200, true));
    }

    /// Takes one batch of `first..=first` whose every look finds the
    /// producer `slow` (one event more) or fast (a full batch); returns
    /// whether it looked.
    fn looked(gathering: &Gathering, slow: bool) -> bool {
        let mut polled = false;
        gathering.take(0, 0, || {
            polled = true;
            if slow {
                1
            } else {
                GATHER_ENOUGH
            }
        });
        polled
    }

    #[test]
    fn slow_verdicts_in_a_row_spare_ever_more_batches_the_look() {
        let gathering = Gathering::default();
        let mut looks = Vec::new();
        for _ in 0..40 {
            looks.push(looked(&gathering, true));
        }
        // Looks at batches 0, 2, 5, 10, 19, 36: after each, 1, 2, 4, 8, 16
        // batches taken at once.
        let at: Vec<usize> = (0..looks.len()).filter(|&i| looks[i]).collect();
        assert_eq!(at, vec![0, 2, 5, 10, 19, 36]);
        // The window stops doubling at `SKIP_MOST`.
        for _ in 0..2000 {
            looked(&gathering, true);
        }
        let gaps: Vec<usize> = {
            let looks: Vec<bool> = (0..1000).map(|_| looked(&gathering, true)).collect();
            let at: Vec<usize> = (0..looks.len()).filter(|&i| looks[i]).collect();
            at.windows(2).map(|w| w[1] - w[0]).collect()
        };
        assert!(!gaps.is_empty());
        assert!(
            gaps.iter().all(|&gap| gap == SKIP_MOST as usize + 1),
            "{gaps:?}"
        );
    }

    #[test]
    fn a_look_that_pays_forgets_the_slow_verdicts() {
        let gathering = Gathering::default();
        for _ in 0..100 {
            looked(&gathering, true);
        }
        // Skip to the next look, which finds the producer streaming: from
        // then on every batch looks.
        while !looked(&gathering, false) {}
        assert!((0..10).all(|_| looked(&gathering, false)));
        // A slow verdict after that spares only the one batch after it.
        assert!(looked(&gathering, true));
        assert!(!looked(&gathering, true));
        assert!(looked(&gathering, true));
    }
}
