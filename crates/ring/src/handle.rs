//! The running ring: observe it, drain it, stop it.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::exception::Failure;
use crate::metrics::{ProcessorEntry, ProcessorSnapshot, RingMetrics, RingMonitor};
use crate::poller::EventPoller;
use crate::ring_buffer::RingBuffer;
use crate::sequence::{minimum, Sequence};

/// Why a ring stopped badly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// A handler failed and the exception handler chose to halt.
    #[error("{0}")]
    Failed(Box<Failure>),
    /// `shutdown_timeout` ran out before everything published was processed;
    /// the ring was halted with events unprocessed. From
    /// [`RingHandle::drain`]: the ring is still running.
    #[error("ring did not drain within {0:?}")]
    DrainTimeout(Duration),
    /// [`RingHandle::drain`] found the ring halted.
    #[error("the ring has halted")]
    Halted,
    /// These processors were still inside a handler callback when the
    /// timeout of `shutdown_timeout` or `halt_timeout` ran out; their
    /// threads were left running, detached, and stop at their next look at
    /// the ring.
    #[error("processor threads {0:?} did not stop in time; left running detached")]
    Stuck(Vec<String>),
    /// A processor thread panicked outside any handler callback.
    #[error("processor thread {0} panicked")]
    ThreadPanicked(String),
}

/// How long the processor threads get to notice a halt when a timeout has
/// already run out (they look at the halt flag at least every few µs while
/// waiting, so only a thread stuck in a handler takes longer).
const JOIN_GRACE: Duration = Duration::from_millis(100);

/// How long a drop waits for the last stage to move while a processor keeps
/// failing its batch, before it gives up draining (see `Drop`).
const DROP_STALL: Duration = Duration::from_secs(1);

/// Owns a started ring's processor threads and its untaken pollers.
///
/// Dropping the handle drains and stops the ring as
/// [`shutdown`](Self::shutdown) does, with the result logged instead of
/// returned; it gives up draining when a processor keeps failing and
/// rewinding its batch (say under [`RewindStrategy::Always`](crate::RewindStrategy::Always))
/// and nothing has passed the last stage for a second, and then halts. It
/// waits for a handler stuck inside a callback: bound that with
/// [`shutdown_timeout`](Self::shutdown_timeout).
pub struct RingHandle<E> {
    ring: Arc<RingBuffer<E>>,
    last_stage: Vec<Arc<Sequence>>,
    processors: Vec<ProcessorEntry>,
    threads: Vec<(String, JoinHandle<()>)>,
    pollers: Vec<Option<EventPoller<E>>>,
}

impl<E> RingHandle<E> {
    pub(crate) fn new(ring: Arc<RingBuffer<E>>, last_stage: Vec<Arc<Sequence>>) -> Self {
        RingHandle {
            ring,
            last_stage,
            processors: Vec::new(),
            threads: Vec::new(),
            pollers: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, entry: ProcessorEntry, thread: JoinHandle<()>) {
        self.threads.push((entry.name.clone(), thread));
        self.processors.push(entry);
    }

    pub(crate) fn push_poller(&mut self, entry: ProcessorEntry, poller: EventPoller<E>) {
        self.pollers.push(Some(poller));
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

    /// Each processor's sequence, lag and counters, in graph order.
    pub fn processors(&self) -> Vec<ProcessorSnapshot> {
        self.monitor().processors()
    }

    /// The cursor, the producers' waits for capacity and every processor.
    pub fn metrics(&self) -> RingMetrics {
        self.monitor().metrics()
    }

    /// A view of the metrics that can move to another thread and that
    /// outlives the handle: final statistics after `shutdown`.
    pub fn monitor(&self) -> RingMonitor<E> {
        RingMonitor {
            ring: Arc::clone(&self.ring),
            processors: self.processors.clone().into(),
        }
    }

    /// Takes the `index`-th poller (counting only pollers, in graph order),
    /// once; `None` if there is no such poller or it was taken.
    pub fn take_poller(&mut self, index: usize) -> Option<EventPoller<E>> {
        self.pollers.get_mut(index)?.take()
    }

    /// Waits until every event published before the call has passed the
    /// last stage, and leaves the ring running (for a service that wants a
    /// quiet point without stopping).
    ///
    /// # Errors
    ///
    /// [`RingError::DrainTimeout`] after `timeout`, [`RingError::Halted`] if
    /// the ring halted first.
    pub fn drain(&self, timeout: Duration) -> Result<(), RingError> {
        let target = self.ring.cursor();
        let deadline = Instant::now() + timeout;
        loop {
            if minimum(&self.last_stage, target) >= target {
                return Ok(());
            }
            if self.ring.is_halted() {
                return Err(RingError::Halted);
            }
            if Instant::now() >= deadline {
                return Err(RingError::DrainTimeout(timeout));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Waits until every event published so far has passed the last stage,
    /// then stops the processors and joins their threads. Untaken pollers
    /// are dropped first (which halts the ring: nothing would consume their
    /// stage).
    ///
    /// Stop the producers first: an event published while this runs may or
    /// may not be processed.
    ///
    /// # Errors
    ///
    /// [`RingError::Failed`] if a handler failure halted the ring (then not
    /// everything was processed); [`RingError::ThreadPanicked`].
    pub fn shutdown(mut self) -> Result<(), RingError> {
        self.pollers.clear();
        self.drain_all(None, false);
        self.stop(None)
    }

    /// As [`shutdown`](Self::shutdown), but halts after `timeout`, and
    /// returns within about `timeout` (plus 100 ms for the threads to see
    /// the halt) even when a handler is stuck inside a callback.
    ///
    /// # Errors
    ///
    /// As `shutdown`, plus [`RingError::DrainTimeout`] and
    /// [`RingError::Stuck`] (the stuck threads are left running detached).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Result<(), RingError> {
        let deadline = Instant::now() + timeout;
        self.pollers.clear();
        let drained = self.drain_all(Some(deadline), false);
        self.stop(Some(deadline))?;
        match drained {
            true => Ok(()),
            false => Err(RingError::DrainTimeout(timeout)),
        }
    }

    /// Stops the processors at their next wait, abandoning whatever is left
    /// in the ring, and joins their threads. A handler stuck inside a
    /// callback keeps this waiting: [`halt_timeout`](Self::halt_timeout)
    /// bounds it.
    ///
    /// # Errors
    ///
    /// As [`shutdown`](Self::shutdown).
    pub fn halt(mut self) -> Result<(), RingError> {
        self.stop(None)
    }

    /// As [`halt`](Self::halt), returning within `timeout` (at least 100
    /// ms) even while a handler is stuck.
    ///
    /// # Errors
    ///
    /// As `halt`, plus [`RingError::Stuck`] (the stuck threads are left
    /// running detached).
    pub fn halt_timeout(mut self, timeout: Duration) -> Result<(), RingError> {
        self.stop(Some(Instant::now() + timeout))
    }

    /// True once drained; false on deadline, on halt, or (with
    /// `give_up_on_stall`) when the last stage has not moved for
    /// [`DROP_STALL`] while a processor retries a failed batch.
    fn drain_all(&self, deadline: Option<Instant>, give_up_on_stall: bool) -> bool {
        let (mut seen, mut moved) = (i64::MIN, Instant::now());
        loop {
            let target = self.ring.cursor();
            let done = minimum(&self.last_stage, target);
            if done >= target {
                return true;
            }
            if self.ring.is_halted() || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            if done != seen {
                (seen, moved) = (done, Instant::now());
            } else if give_up_on_stall && moved.elapsed() >= DROP_STALL && self.retrying() {
                log::error!("a processor keeps failing its batch; halting without draining");
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Whether any processor is retrying a failed batch.
    fn retrying(&self) -> bool {
        self.processors.iter().any(|p| p.stats.is_retrying())
    }

    /// Halts, drops untaken pollers and joins the threads, waiting for each
    /// no later than `deadline` (plus [`JOIN_GRACE`]) when one is given.
    fn stop(&mut self, deadline: Option<Instant>) -> Result<(), RingError> {
        self.ring.halt();
        self.pollers.clear();
        let deadline = deadline.map(|d| d.max(Instant::now() + JOIN_GRACE));
        let (mut panicked, mut stuck) = (None, Vec::new());
        for (name, thread) in self.threads.drain(..) {
            if let Some(deadline) = deadline {
                while !thread.is_finished() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                if !thread.is_finished() {
                    // Dropping the join handle detaches the thread.
                    stuck.push(name);
                    continue;
                }
            }
            if thread.join().is_err() {
                panicked.get_or_insert(name);
            }
        }
        if let Some(failure) = self.ring.take_failure() {
            return Err(RingError::Failed(Box::new(failure)));
        }
        if !stuck.is_empty() {
            return Err(RingError::Stuck(stuck));
        }
        panicked.map_or(Ok(()), |name| Err(RingError::ThreadPanicked(name)))
    }
}

impl<E> Drop for RingHandle<E> {
    fn drop(&mut self) {
        if self.threads.is_empty() && self.pollers.is_empty() {
            return;
        }
        self.pollers.clear();
        self.drain_all(None, true);
        if let Err(error) = self.stop(None) {
            log::error!("ring stopped with an error: {error}");
        }
    }
}

impl<E> std::fmt::Debug for RingHandle<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingHandle")
            .field("ring", &self.ring)
            .field("processors", &self.processors.len())
            .finish_non_exhaustive()
    }
}
