//! Where an import's rows go: a [`Target`] opens one [`Sink`] per shard and
//! keeps the import's checkpoints.

use std::convert::Infallible;

use crate::{Checkpoint, ImportIdentity, Row, Sink};

/// The error of a target's sinks.
pub type TargetError<T> = <<T as Target>::Sink as Sink>::Error;

/// The destination of an import: it opens a sink per shard and, if it can
/// resume, reads back and clears the checkpoints its sinks committed.
///
/// A plain closure `Fn(usize) -> Result<K, K::Error>` is a target that
/// keeps no checkpoints. A resumable target stores each commit's
/// [`Checkpoint`] with the rows (in the same transaction) and implements
/// [`checkpoints`](Target::checkpoints) and
/// [`clear_checkpoints`](Target::clear_checkpoints).
pub trait Target: Sync {
    /// The per-shard writer.
    type Sink: Sink + 'static;

    /// Runs once before any sink opens. A fresh import (`resuming ==
    /// false`) may empty the destination here; a resumed one must not.
    ///
    /// # Errors
    ///
    /// When the destination cannot be prepared; nothing is read then.
    fn prepare(&self, resuming: bool) -> Result<(), TargetError<Self>> {
        let _ = resuming;
        Ok(())
    }

    /// Opens the sink of `shard` (numbered across the whole import).
    ///
    /// # Errors
    ///
    /// When the sink cannot be opened; the import then stops.
    fn open(&self, shard: usize) -> Result<Self::Sink, TargetError<Self>>;

    /// Every checkpoint stored for this destination, with the identity of
    /// the import that committed it. The default: none (a target that
    /// cannot resume).
    ///
    /// # Errors
    ///
    /// When the checkpoints cannot be read.
    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, TargetError<Self>> {
        Ok(Vec::new())
    }

    /// Forgets every checkpoint of this destination: a fresh import starts
    /// from none, and a finished one leaves none behind.
    ///
    /// # Errors
    ///
    /// When the checkpoints cannot be cleared.
    fn clear_checkpoints(&self) -> Result<(), TargetError<Self>> {
        Ok(())
    }
}

/// A checkpoint as a target read it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCheckpoint {
    /// The import that committed it.
    pub identity: ImportIdentity,
    /// The shard, numbered across the import.
    pub shard: usize,
    /// The last record (1-based, in the whole input) the shard committed.
    pub last_record: u64,
}

impl<K, F> Target for F
where
    K: Sink + 'static,
    F: Fn(usize) -> Result<K, K::Error> + Sync,
{
    type Sink = K;

    fn open(&self, shard: usize) -> Result<K, K::Error> {
        self(shard)
    }
}

/// A target whose sinks accept every row and store nothing: a dry run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl Target for Discard {
    type Sink = Discard;

    fn open(&self, _: usize) -> Result<Discard, Infallible> {
        Ok(Discard)
    }
}

impl Sink for Discard {
    type Error = Infallible;

    fn write(&mut self, _: &Row) -> Result<(), Infallible> {
        Ok(())
    }

    fn commit(&mut self, _: &Checkpoint<'_>) -> Result<(), Infallible> {
        Ok(())
    }
}
