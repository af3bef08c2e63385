//! Metrics of a running ring, cheap enough to leave on: counters each
//! processor updates once per batch, the producers' time spent waiting for
//! capacity, and the snapshots a monitor reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::ring_buffer::RingBuffer;
use crate::sequence::Sequence;

/// Buckets of the batch-size histogram: bucket `b` counts batches of
/// `2^b ..= 2^(b+1) - 1` events, the last one every larger batch too.
pub const BATCH_SIZE_BUCKETS: usize = 17;

/// Counters one processor keeps about itself, read by monitors.
///
/// Only the processor's thread writes them, once per batch, so a relaxed
/// load and store (no read-modify-write) is enough; readers want a recent
/// value, not a synchronised one. They are std atomics even under loom:
/// nothing in the ring's protocol reads them, so modelling them would only
/// multiply the interleavings loom explores.
#[derive(Debug, Default)]
pub(crate) struct ProcessorStats {
    events: AtomicU64,
    batches: AtomicU64,
    rewinds: AtomicU64,
    skipped_batches: AtomicU64,
    /// Failed attempts at the batch being retried now (0 when none).
    retrying: AtomicU64,
    batch_sizes: [AtomicU64; BATCH_SIZE_BUCKETS],
}

impl ProcessorStats {
    /// Relaxed (see the type): one writer.
    #[inline(always)]
    fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// A batch of `events` (the handler's own) completed.
    #[inline]
    pub(crate) fn record_batch(&self, events: usize) {
        Self::add(&self.events, events as u64);
        Self::add(&self.batches, 1);
        Self::add(&self.batch_sizes[bucket(events)], 1);
        // Relaxed, here and below (see the type): a gauge for monitors and
        // the handle's drop, which only needs to see it eventually.
        if self.retrying.load(Ordering::Relaxed) != 0 {
            self.retrying.store(0, Ordering::Relaxed);
        }
    }

    /// Failed attempt number `attempt` of the current batch will be rewound.
    pub(crate) fn record_rewind(&self, attempt: u32) {
        Self::add(&self.rewinds, 1);
        // Relaxed: as in `record_batch`.
        self.retrying.store(u64::from(attempt), Ordering::Relaxed);
    }

    /// The exception handler skipped the current batch.
    pub(crate) fn record_skip(&self) {
        Self::add(&self.skipped_batches, 1);
        // Relaxed: as in `record_batch`.
        self.retrying.store(0, Ordering::Relaxed);
    }

    /// Whether the processor is retrying a batch that failed.
    pub(crate) fn is_retrying(&self) -> bool {
        // Relaxed: as in `record_batch`.
        self.retrying.load(Ordering::Relaxed) != 0
    }
}

/// The bucket of a batch of `events` events (an empty batch counts as 1).
fn bucket(events: usize) -> usize {
    (usize::BITS - 1 - events.max(1).leading_zeros()).min(BATCH_SIZE_BUCKETS as u32 - 1) as usize
}

/// How many batches fell in each power-of-two size range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchSizes {
    counts: [u64; BATCH_SIZE_BUCKETS],
}

impl BatchSizes {
    /// `(smallest size, count)` per bucket: bucket `b` starts at `2^b` and
    /// ends before the next bucket's start (the last has no end).
    pub fn buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .map(|(b, &count)| (1 << b, count))
    }

    /// The smallest size `s` such that at least `q` (0..=1) of the batches
    /// had fewer than `2 * s` events: a power-of-two estimate of the
    /// quantile. 0 when there were no batches.
    pub fn quantile(&self, q: f64) -> usize {
        let total: u64 = self.counts.iter().sum();
        let want = (q.clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (size, count) in self.buckets() {
            seen += count;
            if seen >= want && total > 0 {
                return size;
            }
        }
        0
    }
}

/// A snapshot of one processor (or poller), for monitoring.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessorSnapshot {
    /// The processor's name: `{prefix}-s{stage}h{group}`, with `.{instance}`
    /// appended for the instances of a sharded group (the prefix is
    /// [`RingBuilder::thread_name`](crate::RingBuilder::thread_name),
    /// `ringpipe` by default). A processor's thread has the same name.
    pub name: String,
    /// Its position in graph order (as in [`Failure::processor_index`](crate::Failure::processor_index)).
    pub index: usize,
    /// The last sequence it has processed.
    pub sequence: i64,
    /// How far it is behind the cursor (`cursor - sequence`, at least 0).
    pub lag: u64,
    /// Events delivered to its handler (its own only, when sharded; replays
    /// of rewound batches are not counted).
    pub events: u64,
    /// Batches completed.
    pub batches: u64,
    /// Failed attempts that led to `on_rewind`.
    pub rewinds: u64,
    /// Batches the exception handler chose to skip.
    pub skipped_batches: u64,
    /// Whether it is retrying a batch that failed right now.
    pub retrying: bool,
    /// Completed batches by size.
    pub batch_sizes: BatchSizes,
}

/// A ring's metrics at one moment ([`RingMonitor::metrics`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RingMetrics {
    /// The highest sequence published (single producer) or claimed (multi).
    pub cursor: i64,
    /// How often a producer found the ring full and had to wait.
    pub producer_waits: u64,
    /// The producers' total time waiting for capacity.
    pub producer_wait: Duration,
    /// Every processor, in graph order.
    pub processors: Vec<ProcessorSnapshot>,
}

/// One processor as a monitor sees it.
#[derive(Clone)]
pub(crate) struct ProcessorEntry {
    pub(crate) name: String,
    pub(crate) sequence: Arc<Sequence>,
    pub(crate) stats: Arc<CachePadded<ProcessorStats>>,
}

/// A cloneable view of a ring's metrics that outlives its
/// [`RingHandle`](crate::RingHandle), so that final statistics can be
/// read after `shutdown`. It keeps the ring's memory alive while it lives.
pub struct RingMonitor<E> {
    pub(crate) ring: Arc<RingBuffer<E>>,
    pub(crate) processors: Arc<[ProcessorEntry]>,
}

impl<E> Clone for RingMonitor<E> {
    fn clone(&self) -> Self {
        RingMonitor {
            ring: Arc::clone(&self.ring),
            processors: Arc::clone(&self.processors),
        }
    }
}

impl<E> RingMonitor<E> {
    /// Each processor's sequence, lag and counters, in graph order.
    pub fn processors(&self) -> Vec<ProcessorSnapshot> {
        let cursor = self.ring.cursor();
        // Relaxed: monitoring wants a recent value, not a synchronised one.
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        self.processors
            .iter()
            .enumerate()
            .map(|(index, p)| {
                let sequence = p.sequence.get();
                let stats = &p.stats;
                ProcessorSnapshot {
                    name: p.name.clone(),
                    index,
                    sequence,
                    lag: (cursor - sequence).max(0) as u64,
                    events: load(&stats.events),
                    batches: load(&stats.batches),
                    rewinds: load(&stats.rewinds),
                    skipped_batches: load(&stats.skipped_batches),
                    retrying: stats.is_retrying(),
                    batch_sizes: BatchSizes {
                        counts: std::array::from_fn(|b| load(&stats.batch_sizes[b])),
                    },
                }
            })
            .collect()
    }

    /// The cursor, the producers' waits for capacity and every processor.
    pub fn metrics(&self) -> RingMetrics {
        let (waits, nanos) = self.ring.producer_stats().read();
        RingMetrics {
            cursor: self.ring.cursor(),
            producer_waits: waits,
            producer_wait: Duration::from_nanos(nanos),
            processors: self.processors(),
        }
    }
}

impl<E> std::fmt::Debug for RingMonitor<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingMonitor")
            .field("processors", &self.processors.len())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes_fall_in_power_of_two_buckets() {
        assert_eq!([0, 1, 2, 3, 4, 7, 8].map(bucket), [0, 0, 1, 1, 2, 2, 3]);
        assert_eq!(bucket(usize::MAX), BATCH_SIZE_BUCKETS - 1);
        let stats = ProcessorStats::default();
        for events in [1, 1, 1, 64, 100] {
            stats.record_batch(events);
        }
        let sizes = BatchSizes {
            counts: std::array::from_fn(|b| stats.batch_sizes[b].load(Ordering::Relaxed)),
        };
        assert_eq!(sizes.quantile(0.5), 1);
        assert_eq!(sizes.quantile(1.0), 64);
        assert_eq!(BatchSizes::default().quantile(0.5), 0);
    }
}
