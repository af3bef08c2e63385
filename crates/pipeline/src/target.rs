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

    /// Whether [`prepare`](Target::prepare) empties the destination on a
    /// fresh start (a truncating import). An import of one part of a cut
    /// input refuses such a target: a part must not empty what the other
    /// parts load. The default: `false`.
    fn empties(&self) -> bool {
        false
    }

    /// Whether what the destination keeps depends on the order in which
    /// records of the same key are written (the first or the last of a key
    /// wins: [`Mode::order_matters`](crate::Mode::order_matters)). Only one
    /// writer keeps the input's order, so an import into such a target
    /// refuses more than one shard, or a part of a cut input, unless told
    /// that any order will do ([`Import::any_order`](crate::Import::any_order)).
    /// The default: `false`.
    fn order_matters(&self) -> bool {
        false
    }

    /// On a resumed import, after [`prepare`](Target::prepare) and before
    /// any sink opens: the batches the interrupted runs committed set aside
    /// `diverted` bad records (the sum of [`StoredCheckpoint::diverted`]
    /// over the shards of this part). A target that limits bad records
    /// counts them against its limit, so that the limit holds for the
    /// import rather than for each run of it. The default does nothing.
    fn carry_diverted(&self, diverted: u64) {
        let _ = diverted;
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
    /// A resume starts from what this returns, so it must include a batch
    /// still committing on a connection of an import that was killed (its
    /// `COMMIT` sent, the server not yet done): wait for such a
    /// transaction, e.g. with a locking read of the checkpoint rows it
    /// holds. Read from before it, the resume would meet that batch's
    /// checkpoint later as if another import had written it.
    ///
    /// # Errors
    ///
    /// When the checkpoints cannot be read.
    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, TargetError<Self>> {
        Ok(Vec::new())
    }

    /// Forgets every checkpoint of this destination, whatever input and
    /// part committed it: a fresh import of the whole input starts from none.
    ///
    /// # Errors
    ///
    /// When the checkpoints cannot be cleared.
    fn clear_checkpoints(&self) -> Result<(), TargetError<Self>> {
        Ok(())
    }

    /// Forgets the checkpoints of `import.part.index` of `import.input`
    /// (any part count, any shard), and only those: a fresh import of one
    /// part must not touch the progress of the others. The default does
    /// nothing; a resumable target that is imported in parts implements it.
    ///
    /// # Errors
    ///
    /// When the checkpoints cannot be cleared.
    fn clear_part(&self, import: &ImportIdentity) -> Result<(), TargetError<Self>> {
        let _ = import;
        Ok(())
    }

    /// Records that `import` (its part, every shard of it) finished, so
    /// that a later resume of it has nothing to do. A stored checkpoint
    /// then reads back with [`complete`](StoredCheckpoint::complete) set;
    /// the marker is kept until a fresh import clears it. The default does
    /// nothing (a finished import then resumes by reading its input and
    /// skipping every record).
    ///
    /// # Errors
    ///
    /// When the marker cannot be stored.
    fn mark_complete(&self, import: &ImportIdentity) -> Result<(), TargetError<Self>> {
        let _ = import;
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
    /// The first record of the shard's region
    /// ([`Checkpoint::region_start`]); 0 when not known (a checkpoint stored
    /// before region starts were kept, or a completion marker of a shard
    /// that committed nothing), which a resume does not check.
    pub region_start: u64,
    /// The digest of the rows the shard committed
    /// ([`Checkpoint::rows_crc`]); `None` when not known (stored before
    /// digests were kept), which a resume does not check.
    pub rows_crc: Option<u32>,
    /// Whether the import's part finished ([`Target::mark_complete`]).
    pub complete: bool,
    /// Records the shard set aside as bad in the batches it committed
    /// ([`Sink::last_commit_diverted`](crate::Sink::last_commit_diverted)),
    /// over every run of the import; 0 when not known (stored before the
    /// count was kept). A resume charges them to the target's budget of
    /// bad records ([`Target::carry_diverted`]).
    pub diverted: u64,
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
