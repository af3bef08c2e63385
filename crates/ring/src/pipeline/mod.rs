//! Source → ring → sharded sinks: the traits anyone can implement to swap
//! either end, and the runner that wires them together.
//!
//! A [`Source`] fills preallocated [`Row`]s in place; each of `n` [`Sink`]
//! shards writes the rows whose ring sequence `% n` is its ordinal and
//! commits once per ring batch; a retryable sink error rewinds the batch
//! (rollback, then replay). [`Pipeline`] runs the whole thing;
//! [`Regions`] runs one pipeline per region of an input, at once, as one
//! run (the importer reads a plain file that way).

mod regions;
mod row;
mod runner;
mod sink;
mod source;
mod stages;
mod summary;

pub use regions::Regions;
pub use row::{RecordPosition, Row};
pub use runner::Pipeline;
pub use sink::{Sink, SinkError};
pub use source::{Source, SourceProgress};
pub use summary::{PipelineError, PipelineFailure, Progress, RunSummary};
