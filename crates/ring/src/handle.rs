//! The running ring: observe it, drain it, stop it.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::exception::Failure;
use crate::processor::ProcessorStats;
use crate::ring_buffer::RingBuffer;
use crate::sequence::{minimum, Sequence};
use crate::sync::Ordering;

/// Why a ring stopped badly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// A handler failed and the exception handler chose to halt.
    #[error("{0}")]
    Failed(Box<Failure>),
    /// `shutdown_timeout` ran out before everything published was processed;
    /// the ring was halted with events unprocessed.
    #[error("ring did not drain within {0:?}; halted with events unprocessed")]
    DrainTimeout(Duration),
    /// A processor thread panicked outside any handler callback.
    #[error("processor thread {0} panicked")]
    ThreadPanicked(String),
}

/// A snapshot of one processor, for monitoring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorSnapshot {
    /// The processor's thread name.
    pub name: String,
    /// The last sequence it has processed.
    pub sequence: i64,
    /// Events delivered to its handler (its own only, when sharded; replays
    /// of rewound batches are not counted).
    pub events: u64,
    /// Batches completed.
    pub batches: u64,
    /// Failed attempts that led to `on_rewind`.
    pub rewinds: u64,
    /// Batches the exception handler chose to skip.
    pub skipped_batches: u64,
}

pub(crate) struct ProcessorEntry {
    pub(crate) name: String,
    pub(crate) sequence: Arc<Sequence>,
    pub(crate) stats: Arc<CachePadded<ProcessorStats>>,
}

/// Owns a started ring's processor threads.
///
/// Dropping the handle is [`shutdown`](Self::shutdown) with the result
/// logged instead of returned.
pub struct RingHandle<E> {
    ring: Arc<RingBuffer<E>>,
    last_stage: Vec<Arc<Sequence>>,
    processors: Vec<ProcessorEntry>,
    threads: Vec<(String, JoinHandle<()>)>,
}

impl<E> RingHandle<E> {
    pub(crate) fn new(ring: Arc<RingBuffer<E>>, last_stage: Vec<Arc<Sequence>>) -> Self {
        RingHandle {
            ring,
            last_stage,
            processors: Vec::new(),
            threads: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, entry: ProcessorEntry, thread: JoinHandle<()>) {
        self.threads.push((entry.name.clone(), thread));
        self.processors.push(entry);
    }

    /// The highest sequence published (single producer) or claimed (multi).
    pub fn cursor(&self) -> i64 {
        self.ring.cursor()
    }

    /// Slots producers could claim now without waiting.
    pub fn remaining_capacity(&self) -> usize {
        self.ring.remaining_capacity()
    }

    /// The ring's capacity.
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Whether the ring has halted (by failure or by `halt`).
    pub fn is_halted(&self) -> bool {
        self.ring.is_halted()
    }

    /// Whether a handler failure has halted the ring.
    pub fn has_failed(&self) -> bool {
        self.ring.has_failed()
    }

    /// Each processor's sequence and counters, in graph order.
    pub fn processors(&self) -> Vec<ProcessorSnapshot> {
        // Relaxed: monitoring wants a recent value, not a synchronised one.
        let load = |counter: &crate::sync::AtomicU64| counter.load(Ordering::Relaxed);
        self.processors
            .iter()
            .map(|p| ProcessorSnapshot {
                name: p.name.clone(),
                sequence: p.sequence.get(),
                events: load(&p.stats.events),
                batches: load(&p.stats.batches),
                rewinds: load(&p.stats.rewinds),
                skipped_batches: load(&p.stats.skipped_batches),
            })
            .collect()
    }

    /// Waits until every event published so far has passed the last stage,
    /// then stops the processors and joins their threads.
    ///
    /// Stop the producers first: an event published while this runs may or
    /// may not be processed.
    ///
    /// # Errors
    ///
    /// [`RingError::Failed`] if a handler failure halted the ring (then not
    /// everything was processed); [`RingError::ThreadPanicked`].
    pub fn shutdown(mut self) -> Result<(), RingError> {
        self.drain(None);
        self.stop()
    }

    /// As [`shutdown`](Self::shutdown), but halts anyway after `timeout`.
    ///
    /// # Errors
    ///
    /// As `shutdown`, plus [`RingError::DrainTimeout`].
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Result<(), RingError> {
        let drained = self.drain(Some(Instant::now() + timeout));
        self.stop()?;
        if drained {
            Ok(())
        } else {
            Err(RingError::DrainTimeout(timeout))
        }
    }

    /// Stops the processors at their next wait, abandoning whatever is left
    /// in the ring, and joins their threads.
    ///
    /// # Errors
    ///
    /// As [`shutdown`](Self::shutdown).
    pub fn halt(mut self) -> Result<(), RingError> {
        self.stop()
    }

    /// True once drained; false on deadline or halt.
    fn drain(&self, deadline: Option<Instant>) -> bool {
        loop {
            let target = self.ring.cursor();
            if minimum(&self.last_stage, target) >= target {
                return true;
            }
            if self.ring.is_halted() || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn stop(&mut self) -> Result<(), RingError> {
        self.ring.halt();
        let mut panicked = None;
        for (name, thread) in self.threads.drain(..) {
            if thread.join().is_err() {
                panicked.get_or_insert(name);
            }
        }
        if let Some(failure) = self.ring.take_failure() {
            return Err(RingError::Failed(Box::new(failure)));
        }
        panicked.map_or(Ok(()), |name| Err(RingError::ThreadPanicked(name)))
    }
}

impl<E> Drop for RingHandle<E> {
    fn drop(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        self.drain(None);
        if let Err(error) = self.stop() {
            log::error!("ring stopped with an error: {error}");
        }
    }
}
