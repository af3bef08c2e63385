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
//! # Why it is fast
//!
//! Each choice below is measured in `docs/benchmarks.md` (`cargo bench
//! --bench ring`, interleaved rounds against the `disruptor` crate,
//! `crossbeam-channel` and `std::sync::mpsc::sync_channel`):
//!
//! * **Nothing is allocated per event.** Slots are built once and
//!   overwritten in place; a `Vec` or `String` in an event keeps its
//!   capacity from lap to lap.
//! * **One store per publication, one per batch.** A single producer claims
//!   with plain arithmetic on its own counters (no atomic read-modify-write)
//!   and publishes with one Release store of the cursor; `publish_batch`
//!   publishes `n` events with that one store, filling the slots as plain
//!   slice loops that the compiler vectorises, after asking the CPU to fetch
//!   the slots of a batch 2 KiB further on for writing (`PREFETCHW`: +9–12%
//!   on batches of 256). A processor takes *everything* available as one
//!   batch and stores its own sequence once per batch.
//! * **Gathering.** A processor that finishes a batch and finds only a few
//!   events already waiting is right behind a streaming producer, and each
//!   of its polls pulls the cursor's cache line away from that producer. It
//!   pauses 8 PAUSEs, sees how fast the batch grows, and pauses once more
//!   for as long as the batch needs at that rate to reach 256 events; a
//!   processor that had to wait for its next event takes it at once, so
//!   latency is untouched. Gathering at all grew batches from 6–9 events
//!   to 160–290 and took 1P→1C busy-spin from 0.98–1.22 × the `disruptor`
//!   crate to 1.13–1.38 × (AMD machine); pacing the second pause by the
//!   rate, on a CPU whose PAUSE is 14 ns instead of 25, grew them from
//!   ~150 to ~400 and 1P→1C from 140–230 to 220–340 M events/s
//!   ([`WaitStrategy::without_gathering`] turns it off).
//! * **Cached gating.** Producers remember how far the slowest last-stage
//!   processor had got and reread the processors' sequences only when that
//!   cache says the ring is full.
//! * **No false sharing.** The cursor, each processor's sequence, the halt
//!   flag and the blocking strategy's sleeper count each sit on their own
//!   128-byte line (`crossbeam_utils::CachePadded`).
//! * **A short hot path.** `publish` builds no guard object on the normal
//!   path (a panic guard is forgotten once the slot is filled), the wait for
//!   room is `#[cold]` and out of line, and publishers of a non-blocking ring
//!   pay one predictable branch for wake-ups. Before these changes our
//!   producer spent about 50 instructions per event to the `disruptor`
//!   crate's 20 (callgrind). Half-open loop ranges (`first..last + 1`
//!   instead of `..=`) doubled batch publish, to 1.25 G events/s. `publish`
//!   branches on the slot layout once, before the slot store (after it, the
//!   compiler reloaded every flag, since the store may alias the ring), and
//!   fetches the slot line 2 KiB on for writing once per line (+~15% on
//!   1P→1C).
//! * **A tight first poll.** A busy-spinning processor with nothing to do
//!   first polls the cursor in a loop of one load and compare, looking at
//!   the halt flag every 64 polls, instead of taking a step of its wait
//!   strategy's bookkeeping per poll. On the Intel machine that took the
//!   ping-pong's median round trip from 1.24 × the `disruptor` crate's to
//!   1.02–1.07 ×, and its p99 from 1.10 × to 0.99–1.04 ×.
//! * **Publication in the slot, for latency.** In a ring built with
//!   [`RingBuilder::publish_in_slots`], each slot carries the sequence last
//!   published into it, beside the event, and a first-stage processor polls
//!   that marker instead of the cursor: a hand-off moves one cache line
//!   between the cores instead of two (the cursor's, then the slot's). The
//!   ping-pong's p99 went from parity with the `disruptor` crate (per-round
//!   ratios 0.97–1.06) to **0.67–0.68 ×**, its median round trip from ~1.03 ×
//!   to 0.78–0.87 ×. It is a choice per ring because a small event then
//!   takes a bigger slot and every event a marker store and load (marked
//!   rings ran batch publish of `u64` events at 0.32–0.39 ×);
//!   the processor runs one loop per layout, so the default layout's batch
//!   throughput is unchanged.
//! * **Spinning that respects the machine.** Busy-spin polls for a few
//!   microseconds (4,096 polls) before pausing between polls and yields once
//!   every 4,096 steps, so a ring with more busy threads than cores still
//!   progresses: on this 2-core machine, the oversubscribed 2-stage pipeline
//!   runs 9–11 × faster than the `disruptor` crate's, whose producer spins
//!   on a full ring without ever yielding.
//!
//! Where it is not ahead (same document): on the AMD machine, before the
//! paced gathering and not re-measured there since, yielding 1P→1C was at
//! parity with the `disruptor` crate and batch publish of 64 a little
//! behind it (0.92–0.98 ×); on the Intel machine every throughput case is
//! ahead (1P→1C 3.8–7.5 ×, batch 1.15–1.16 × in the latest full run). The
//! round trip of a ring in the default layout is at parity with the
//! `disruptor` crate's (per-round p99 ratios 0.97–1.06), not below it;
//! build a latency-bound ring with [`RingBuilder::publish_in_slots`].
#![deny(unsafe_op_in_unsafe_fn)]

mod barrier;
mod exception;
mod graph;
mod handle;
mod handler;
#[cfg(all(test, loom))]
mod loom_tests;
mod processor;
mod producer;
mod rewind;
mod ring_buffer;
mod sequence;
mod sequencer;
mod shard;
mod sync;
mod wait;

pub use exception::{ExceptionHandler, Failure, FailureAction, HaltOnFailure, SkipOnFailure};
pub use graph::{BuildError, RingBuilder};
pub use handle::{ProcessorSnapshot, RingError, RingHandle};
pub use handler::{BoxError, EventHandler, EventHandlerMut, HandlerError};
pub use producer::{Claim, MultiProducer, Producer};
pub use rewind::{RewindDecision, RewindStrategy};
pub use ring_buffer::RingBuffer;
pub use sequence::{Sequence, INITIAL_SEQUENCE};
pub use sequencer::ClaimError;
pub use shard::ShardKey;
pub use wait::WaitStrategy;
