//! Which events of a batch a processor owns: all, `sequence % n`, or a key.

use std::sync::Arc;

use crate::ring_buffer::RingBuffer;

/// A key function for [`RingBuilder::handle_sharded_by_key`](crate::RingBuilder::handle_sharded_by_key).
pub type ShardKey<E> = Arc<dyn Fn(&E) -> u64 + Send + Sync>;

/// The slice of the sequence space one processor handles.
pub(crate) enum Shard<E> {
    /// Every event.
    All,
    /// Events whose `sequence % count == ordinal`.
    Modulo { ordinal: i64, count: i64 },
    /// Events whose `key(event) % count == ordinal`.
    Key {
        ordinal: u64,
        count: u64,
        key: ShardKey<E>,
        /// Which events of the batch planned last are owned, so that
        /// delivering it calls the key function no second time.
        planned: Planned,
    },
}

/// The owned events of the batch a key-sharded processor planned last:
/// bit `s - first` for sequence `s`.
#[derive(Debug)]
pub(crate) struct Planned {
    first: i64,
    /// `first - 1` while nothing is planned.
    last: i64,
    bits: Vec<u64>,
}

impl Default for Planned {
    fn default() -> Self {
        Planned {
            first: 0,
            last: -1,
            bits: Vec::new(),
        }
    }
}

impl Planned {
    /// Whether `from..=last` lies in the planned batch.
    fn covers(&self, from: i64, last: i64) -> bool {
        self.first <= from && last <= self.last
    }

    /// The first owned sequence in `from..=last` (which it covers), or
    /// `last + 1`.
    fn next(&self, from: i64, last: i64) -> i64 {
        if from > last {
            return last + 1;
        }
        let (start, end) = ((from - self.first) as usize, (last - self.first) as usize);
        let mut word = start / 64;
        let mut bits = self.bits[word] & (!0u64 << (start % 64));
        loop {
            if bits != 0 {
                let at = word * 64 + bits.trailing_zeros() as usize;
                return match at <= end {
                    true => self.first + at as i64,
                    false => last + 1,
                };
            }
            word += 1;
            if word * 64 > end {
                return last + 1;
            }
            bits = self.bits[word];
        }
    }
}

/// The owned part of a batch: how many events, and the last one (which is
/// delivered with `end_of_batch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owned {
    pub(crate) count: usize,
    pub(crate) last: i64,
}

impl<E> Shard<E> {
    /// The owned events of `first..=last`, or `None` when there are none.
    #[inline]
    pub(crate) fn plan(&mut self, ring: &RingBuffer<E>, first: i64, last: i64) -> Option<Owned> {
        match self {
            Shard::All => Some(Owned {
                count: (last - first + 1) as usize,
                last,
            }),
            &mut Shard::Modulo { ordinal, count } => {
                let own_first = first + (ordinal - first).rem_euclid(count);
                let own_last = last - (last - ordinal).rem_euclid(count);
                (own_first <= last).then(|| Owned {
                    count: ((own_last - own_first) / count + 1) as usize,
                    last: own_last,
                })
            }
            Shard::Key {
                ordinal,
                count,
                key,
                planned,
            } => {
                let len = (last - first + 1) as usize;
                planned.bits.clear();
                planned.bits.resize(len.div_ceil(64), 0);
                (planned.first, planned.last) = (first, last);
                let mut owned = Owned { count: 0, last };
                for (at, sequence) in (first..=last).enumerate() {
                    if owns(ring, key, (*ordinal, *count), sequence) {
                        planned.bits[at / 64] |= 1 << (at % 64);
                        owned.count += 1;
                        owned.last = sequence;
                    }
                }
                (owned.count > 0).then_some(owned)
            }
        }
    }

    /// The first owned sequence in `from..=last`.
    #[inline]
    pub(crate) fn next_owned(&self, ring: &RingBuffer<E>, from: i64, last: i64) -> Option<i64> {
        let next = match self {
            Shard::All => from,
            Shard::Modulo { ordinal, count } => from + (ordinal - from).rem_euclid(*count),
            // The batch's events stay as planned until it is released:
            // the producer cannot reuse their slots, and no exclusive
            // handler shares a stage with a key-sharded one.
            Shard::Key { planned, .. } if planned.covers(from, last) => planned.next(from, last),
            Shard::Key {
                ordinal,
                count,
                key,
                ..
            } => (from..=last)
                .find(|&sequence| owns(ring, key, (*ordinal, *count), sequence))
                .unwrap_or(last + 1),
        };
        (next <= last).then_some(next)
    }
}

/// Whether the event at `sequence` is the one of `count` key-sharded
/// instances whose number is `ordinal`.
fn owns<E>(
    ring: &RingBuffer<E>,
    key: &ShardKey<E>,
    (ordinal, count): (u64, u64),
    sequence: i64,
) -> bool {
    // SAFETY: called only for sequences of the processor's current batch,
    // which are published and not yet released, so reading is allowed;
    // no exclusive reference to the slot exists while `key` runs.
    ring.slot(sequence)
        .with(|event| key(unsafe { &*event }) % count == ordinal)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::wait::WaitStrategy;

    fn ring() -> RingBuffer<u64> {
        let mut next = 0;
        RingBuffer::new(
            16,
            || {
                next += 1;
                next
            },
            false,
            Vec::new(),
            WaitStrategy::busy_spin(),
            false,
        )
    }

    fn owned_by<E>(shard: &Shard<E>, ring: &RingBuffer<E>, first: i64, last: i64) -> Vec<i64> {
        std::iter::successors(shard.next_owned(ring, first, last), |s| {
            shard.next_owned(ring, s + 1, last)
        })
        .collect()
    }

    #[test]
    fn modulo_owns_exactly_its_residue_and_ends_on_its_last() {
        let ring = ring();
        for count in 1..5 {
            for ordinal in 0..count {
                let mut shard: Shard<u64> = Shard::Modulo { ordinal, count };
                for (first, last) in [(0, 0), (0, 9), (3, 4), (7, 15)] {
                    let want: Vec<i64> = (first..=last).filter(|s| s % count == ordinal).collect();
                    assert_eq!(owned_by(&shard, &ring, first, last), want);
                    let plan = shard.plan(&ring, first, last);
                    assert_eq!(
                        plan.map(|p| p.count),
                        (!want.is_empty()).then_some(want.len())
                    );
                    assert_eq!(plan.map(|p| p.last), want.last().copied());
                }
            }
        }
    }

    #[test]
    fn key_sharding_sends_equal_keys_to_one_ordinal() {
        let ring = ring(); // slot s holds s + 1
        let key: ShardKey<u64> = Arc::new(|value| value / 3);
        let owners: Vec<Vec<i64>> = (0..2)
            .map(|ordinal| {
                let shard = Shard::Key {
                    ordinal,
                    count: 2,
                    key: key.clone(),
                    planned: Planned::default(),
                };
                owned_by(&shard, &ring, 0, 11)
            })
            .collect();
        assert_eq!(owners[0].len() + owners[1].len(), 12);
        for sequence in 0..12i64 {
            let owner = ((sequence as u64 + 1) / 3 % 2) as usize;
            assert!(owners[owner].contains(&sequence));
        }
    }

    #[test]
    fn a_planned_key_batch_is_delivered_without_reading_keys_again() {
        use std::sync::atomic::{AtomicUsize, Ordering};

        // Relaxed throughout: a count made and read on this one thread.
        let ring = ring(); // slot s holds s % 16 + 1
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let key: ShardKey<u64> = Arc::new(move |value| {
            counted.fetch_add(1, Ordering::Relaxed);
            value * 7 / 3
        });
        for count in 2..5 {
            for ordinal in 0..count {
                let fresh = || Shard::Key {
                    ordinal,
                    count,
                    key: key.clone(),
                    planned: Planned::default(),
                };
                for (first, last) in [(0, 0), (0, 63), (0, 64), (5, 200), (70, 130), (63, 64)] {
                    let want = owned_by(&fresh(), &ring, first, last);
                    let mut shard = fresh();
                    let plan = shard.plan(&ring, first, last);
                    let planned_calls = calls.load(Ordering::Relaxed);
                    assert_eq!(owned_by(&shard, &ring, first, last), want);
                    assert_eq!(calls.load(Ordering::Relaxed), planned_calls);
                    assert_eq!(
                        plan.map(|p| p.count),
                        (!want.is_empty()).then_some(want.len())
                    );
                    assert_eq!(plan.map(|p| p.last), want.last().copied());
                }
            }
        }
    }
}
