//! ringpipe-pipeline: source → ring → sharded sinks → checkpoints.
//!
//! A [`Source`] fills preallocated [`Row`]s in place; [`Import`] publishes
//! them into a ring per region of the input, where each of `n` shards owns
//! the records [`Ownership`] gives it; a shard's [`Sink`] writes its rows
//! and commits them once per batch together with a [`Checkpoint`], so an
//! interrupted import resumes exactly where it stopped. A retryable sink
//! error rolls the batch back and replays it.
//!
//! Writing a sink takes three calls (`begin`, `write`, `commit`) and an
//! error type of your own that says whether it is [`Retryable`];
//! [`Target`] opens one sink per shard and, for a resumable destination,
//! reads back and clears the checkpoints.

pub mod canonical;
mod decode;
mod digest;
mod doctor;
mod error;
pub mod exact;
mod identity;
mod import;
mod mode;
mod ownership;
mod recoveries;
mod regions;
mod reject_budget;
mod reject_file;
mod resume;
mod retry;
mod row;
mod runner;
mod sink;
mod source;
mod split;
mod split_check;
mod stages;
mod summary;
mod target;
mod timeouts;
mod usage;

pub use decode::{Decode, DecodeError};
pub use doctor::{DoctorReport, Finding, Severity};
pub use error::{ImportError, ImportFailure, ResumeError};
pub use identity::{fingerprint, ImportIdentity, Layout, Part};
pub use import::{Import, ImportResult};
pub use mode::Mode;
pub use ownership::Ownership;
pub use recoveries::{Recoveries, RecoveryCounters};
pub use reject_budget::RejectBudget;
pub use reject_file::RejectFile;
pub use row::{RecordPosition, Row, Value};
pub use sink::{Checkpoint, Retryable, Sink};
pub use source::{Source, SourceProgress};
pub use split::{CountingReader, RegionReader, SplitPlan, SplitPoint};
pub use summary::{Progress, RunSummary};
pub use target::{Discard, StoredCheckpoint, Target, TargetError};
pub use timeouts::{Keepalive, DEFAULT_CONNECT_TIMEOUT, DEFAULT_NET_TIMEOUT};
pub use usage::{ColumnUsage, IgnoredFields};
