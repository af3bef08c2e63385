//! ringpipe-ring: a lock-free, LMAX-Disruptor-style ring buffer.
//!
//! Producers claim preallocated slots, fill them in place and publish them;
//! event processors, each on its own thread, take everything published so
//! far as one batch and publish their progress once per batch. Processors
//! form a graph of stages ([`RingBuilder`]); a stage can be *sharded*, so
//! that instance `i` of `n` sees only the events whose `sequence % n == i`,
//! and a handler can ask for its batch to be *rewound* and replayed after a
//! retryable error (a database sink rolls back and tries again).
//!
//! ```
//! use ringpipe_ring::{EventHandler, HandlerError, RingBuilder, WaitStrategy};
//!
//! struct Sum(u64);
//! impl EventHandler<u64> for Sum {
//!     fn on_event(&mut self, value: &u64, _seq: i64, end_of_batch: bool) -> Result<(), HandlerError> {
//!         self.0 += value;
//!         if end_of_batch {
//!             // A database sink would commit here.
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let (mut producer, ring) = RingBuilder::new(1024, || 0u64)
//!     .wait_strategy(WaitStrategy::yielding())
//!     .handle_events_with(Sum(0))
//!     .start()?;
//! for i in 0..10_000 {
//!     producer.publish(|slot| *slot = i)?;
//! }
//! ring.shutdown()?; // drains everything published, then joins
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `ringpipe-pipeline` crate builds an importer on the ring: a source
//! fills rows, sharded sinks commit them once per batch.
//!
//! # Which handle to use
//!
//! * [`Producer`] or [`MultiProducer`]: a ring started with
//!   [`RingBuilder::start`] has exactly one producer, which claims slots
//!   with plain arithmetic on counters only it owns; it is `Send` but not
//!   `Clone` or `Sync`. Use it whenever one thread publishes (feed several
//!   sources through that thread rather than reaching for the other). A ring
//!   started with [`RingBuilder::start_multi`] hands out a cloneable
//!   [`MultiProducer`] whose claims are an atomic add on the shared cursor
//!   and whose publications mark each slot: use it when several threads must
//!   publish directly.
//! * [`EventHandler`] or [`EventHandlerMut`]: an `EventHandler` reads events
//!   by shared reference, so any number of them may run in parallel in one
//!   stage (a journaller beside a replicator). An `EventHandlerMut` gets
//!   exclusive access and may modify the event in place (decode into it,
//!   attach a result for a later stage); the builder accepts it only alone
//!   in its stage, or as a sharded group whose instances own disjoint
//!   events. Prefer `EventHandler` unless the handler must write the event.
//! * A thread per handler, or an [`EventPoller`]: a processor thread waits
//!   with the ring's [`WaitStrategy`]; a poller has no thread, and a
//!   service's own loop asks it for whatever is ready, with the same batch
//!   and rewind semantics.
//!
//! [`RingHandle`] drains and stops the ring; [`RingHandle::monitor`] gives a
//! [`RingMonitor`] whose [`RingMetrics`] (each processor's lag, batch-size
//! histogram, rewinds; the producers' time waiting for capacity) cost the
//! hot path a few relaxed stores per batch, so they can stay on.
//!
//! # Why it is fast
//!
//! `cargo bench --bench ring` compares it, in interleaved rounds, with the
//! `disruptor` crate, `crossbeam-channel` and `std::sync::mpsc::sync_channel`.
//!
//! * **Nothing is allocated per event.** Slots are built once and
//!   overwritten in place; a `Vec` or `String` in an event keeps its
//!   capacity from lap to lap.
//! * **One store per publication, one per batch.** A single producer claims
//!   with plain arithmetic on its own counters (no atomic read-modify-write)
//!   and publishes with one Release store of the cursor; `publish_batch`
//!   publishes `n` events with that one store, filling the slots as plain
//!   slice loops that the compiler vectorises, after asking the CPU to fetch
//!   the slots of a batch 2 KiB further on for writing (`PREFETCHW`). A
//!   processor takes *everything* available as one batch and stores its own
//!   sequence once per batch.
//! * **A batch is a loop over contiguous slots.** A processor walks a batch
//!   as at most two slices of the slot array, so an inlined handler's
//!   per-event work is the handler's own: the result check folds away, the
//!   sequence that a panic is pinned on is written only while unwinding, and
//!   end-of-batch is the last event, delivered on its own.
//! * **Gathering.** A processor that finishes a batch and finds only a few
//!   events already waiting is right behind a streaming producer, and each
//!   of its polls pulls the cursor's cache line away from that producer. It
//!   pauses briefly, sees how fast the batch grows, and pauses once more for
//!   as long as the batch needs at that rate to reach 256 events. A
//!   producer adding less than one event per two PAUSEs is not waited for
//!   (its polls do not slow it, so gathering would only delay its events),
//!   nor looked at again for the next batches (1, then 2, 4 … up to 256
//!   after as many such looks in a row); a processor that had to wait for
//!   its next event takes it at once
//!   ([`WaitStrategy::without_gathering`] turns gathering off).
//! * **Cached gating.** Producers remember how far the slowest last-stage
//!   processor had got and reread the processors' sequences only when that
//!   cache says the ring is full.
//! * **No false sharing.** The cursor, each processor's sequence, the halt
//!   flag and the blocking strategy's sleeper count each sit on their own
//!   128-byte line (`crossbeam_utils::CachePadded`).
//! * **A short hot path.** `publish` builds no guard object on the normal
//!   path (a panic guard is forgotten once the slot is filled), the wait for
//!   room is `#[cold]` and out of line, and publishers of a non-blocking ring
//!   pay one predictable branch for wake-ups. `publish` branches on the slot
//!   layout once, before the slot store (after it, the compiler would reload
//!   every flag, since the store may alias the ring).
//! * **A tight first poll.** A busy-spinning processor with nothing to do
//!   first polls the cursor in a loop of one load and compare, looking at
//!   the halt flag every 64 polls, instead of taking a step of its wait
//!   strategy's bookkeeping per poll.
//! * **Publication in the slot, for latency.** In a ring built with
//!   [`RingBuilder::publish_in_slots`], each slot carries the sequence last
//!   published into it, beside the event, and a first-stage processor polls
//!   that marker instead of the cursor: a hand-off moves one cache line
//!   between the cores instead of two (the cursor's, then the slot's). It
//!   is a choice per ring because a small event then takes a bigger slot and
//!   every event a marker store and load, which costs throughput of small
//!   events; the default layout is the throughput layout.
//! * **Spinning that respects the machine.** Busy-spin polls for a few
//!   microseconds before pausing between polls and yields once every 4,096
//!   steps, so a ring with more busy threads than cores still progresses.
#![deny(unsafe_op_in_unsafe_fn)]

mod barrier;
mod delivery;
mod exception;
mod gather;
mod graph;
mod handle;
mod handler;
#[cfg(all(test, loom))]
mod loom_tests;
mod metrics;
mod poller;
mod processor;
mod producer;
mod producer_stats;
mod rewind;
mod ring_buffer;
mod sequence;
mod sequencer;
mod shard;
mod sync;
mod wait;

pub use exception::{ExceptionHandler, Failure, FailureAction, HaltOnFailure, SkipOnFailure};
pub use graph::{BuildError, RingBuilder};
pub use handle::{RingError, RingHandle};
pub use handler::{BatchInfo, BoxError, EventHandler, EventHandlerMut, HandlerError};
pub use metrics::{BatchSizes, ProcessorSnapshot, RingMetrics, RingMonitor, BATCH_SIZE_BUCKETS};
pub use poller::{EventPoller, PollState};
pub use producer::{Claim, MultiProducer, Producer};
pub use rewind::{RewindDecision, RewindStrategy};
pub use sequencer::ClaimError;
pub use shard::ShardKey;
pub use wait::WaitStrategy;
