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
//! The [`pipeline`] module builds on the ring: a [`pipeline::Source`] fills
//! rows, sharded [`pipeline::Sink`]s commit them once per batch.
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

pub mod pipeline;

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
