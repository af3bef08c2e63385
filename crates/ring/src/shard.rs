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
    },
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
    pub(crate) fn plan(&self, ring: &RingBuffer<E>, first: i64, last: i64) -> Option<Owned> {
        match self {
            Shard::All => Some(Owned {
                count: (last - first + 1) as usize,
                last,
            }),
            Shard::Modulo { ordinal, count } => {
                let own_first = first + (ordinal - first).rem_euclid(*count);
                let own_last = last - (last - ordinal).rem_euclid(*count);
                (own_first <= last).then(|| Owned {
                    count: ((own_last - own_first) / count + 1) as usize,
                    last: own_last,
                })
            }
            Shard::Key { .. } => {
                let mut owned = Owned { count: 0, last };
                for sequence in first..=last {
                    if self.owns_by_key(ring, sequence) {
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
            Shard::Key { .. } => (from..=last)
                .find(|&sequence| self.owns_by_key(ring, sequence))
                .unwrap_or(last + 1),
        };
        (next <= last).then_some(next)
    }

    fn owns_by_key(&self, ring: &RingBuffer<E>, sequence: i64) -> bool {
        let Shard::Key {
            ordinal,
            count,
            key,
        } = self
        else {
            return true;
        };
        // SAFETY: called only for sequences of the processor's current batch,
        // which are published and not yet released, so reading is allowed;
        // no exclusive reference to the slot exists while `key` runs.
        ring.slot(sequence)
            .with(|event| key(unsafe { &*event }) % count == *ordinal)
    }
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
                let shard: Shard<u64> = Shard::Modulo { ordinal, count };
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
}
