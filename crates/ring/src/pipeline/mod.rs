//! Source → ring → sharded sinks: the traits anyone can implement to swap
//! either end, and the runner that wires them together.

mod row;
mod sink;
mod source;

pub use row::{RecordPosition, Row};
pub use sink::{Sink, SinkError};
pub use source::{Source, SourceProgress};
