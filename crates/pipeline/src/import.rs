//! The library's front door: [`Import`] runs a source's regions into a
//! target's sharded sinks, resumably.

use std::sync::Arc;
use std::time::Duration;

use ringpipe_ring::WaitStrategy;

use crate::regions::Regions;
use crate::runner::{Pipeline, Settings};
use crate::{
    ImportError, ImportFailure, ImportIdentity, Ownership, Progress, ResumeError, RunSummary,
    Source, StoredCheckpoint, Target, TargetError,
};

/// An import: regions of one input, read at once, into a target's shards,
/// one transaction per batch, exactly once across crashes and resumes.
///
/// [`Import`] owns everything between the two ends: how the shards are
/// dealt to the regions, which shard owns which record ([`Ownership`]),
/// the import's identity and checkpoints, resumption, retries of failed
/// batches, and the summary. A source yields rows, a sink writes and
/// commits them; neither sees the rest.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringpipe_pipeline::{Checkpoint, Import, Row, Sink, Source};
///
/// /// The numbers 1 to 1000.
/// struct Numbers { columns: Vec<String>, next: u32 }
/// impl Source for Numbers {
///     type Error = std::io::Error;
///     fn columns(&self) -> &[String] { &self.columns }
///     fn next_row(&mut self, row: &mut Row) -> Result<bool, Self::Error> {
///         self.next += 1;
///         row.clear();
///         row.set(0, &self.next.to_string());
///         Ok(self.next <= 1000)
///     }
/// }
///
/// #[derive(Default)]
/// struct Count { pending: u64, done: u64 }
/// impl Sink for Count {
///     type Error = Infallible;
///     fn begin(&mut self) -> Result<(), Infallible> { self.pending = 0; Ok(()) }
///     fn write(&mut self, _: &Row) -> Result<(), Infallible> { self.pending += 1; Ok(()) }
///     fn commit(&mut self, _: &Checkpoint<'_>) -> Result<(), Infallible> {
///         self.done += self.pending;
///         Ok(())
///     }
/// }
///
/// let source = Numbers { columns: vec!["n".into()], next: 0 };
/// let summary = Import::new(|_shard| Ok(Count::default()))
///     .shards(4)
///     .run(vec![source])?;
/// assert_eq!((summary.rows_read, summary.rows_written), (1000, 1000));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Import<T> {
    target: T,
    shards: usize,
    shard_block: Option<u64>,
    settings: Settings,
    /// The input's fingerprint and the mapping, when checkpoints are kept.
    identity: Option<(String, String)>,
    resume: bool,
}

impl<T: Target> Import<T> {
    /// An import into `target` with 1 shard, 2,000 rows per batch, the
    /// blocking wait strategy and a minute of retries per batch.
    pub fn new(target: T) -> Self {
        Import {
            target,
            shards: 1,
            shard_block: None,
            settings: Settings {
                batch_rows: 2_000,
                capacity: None,
                wait: WaitStrategy::blocking(),
                retry_for: Duration::from_secs(60),
                keep_bytes: 64 * 1024,
                progress_every: Duration::from_millis(200),
            },
            identity: None,
            resume: false,
        }
    }

    /// Sink shards (connections) across the import, each on its own
    /// thread; the regions share them evenly, so the region count must
    /// divide it.
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = shards;
        self
    }

    /// The most rows one shard commits in one batch.
    pub fn batch_rows(mut self, rows: usize) -> Self {
        self.settings.batch_rows = rows;
        self
    }

    /// Consecutive records per shard turn (see [`Ownership`]); by default
    /// one batch's worth, so each commit holds a run of consecutive records.
    pub fn shard_block(mut self, records: u64) -> Self {
        self.shard_block = Some(records);
        self
    }

    /// Ring slots per region (a power of two). Default: `batch_rows ×
    /// shards` rounded up to a power of two, between 1,024 and 65,536; the
    /// ring's rows are most of an import's memory.
    pub fn capacity(mut self, slots: usize) -> Self {
        self.settings.capacity = Some(slots);
        self
    }

    /// How idle stages wait (default [`WaitStrategy::blocking`]: an import
    /// is bound by its sink, and spinning takes CPU from the database).
    pub fn wait_strategy(mut self, wait: WaitStrategy) -> Self {
        self.settings.wait = wait;
        self
    }

    /// How long a batch may keep failing retryably (rolled back and
    /// replayed with backoff) before the import fails: wall-clock time from
    /// the batch's first failure, pauses and the attempts themselves
    /// included. Zero: never retry.
    pub fn retry_for(mut self, limit: Duration) -> Self {
        self.settings.retry_for = limit;
        self
    }

    /// Column buffers larger than this are freed once their row is done.
    pub fn keep_bytes(mut self, bytes: usize) -> Self {
        self.settings.keep_bytes = bytes;
        self
    }

    /// Keeps checkpoints, so that an interrupted import can resume:
    /// `input` recognises the input ([`fingerprint`](crate::fingerprint) of
    /// a file), `mapping` everything else the caller decides that changes
    /// which record becomes which row (fields, columns, write mode). The
    /// import adds its own settings (shards, regions, shard block).
    pub fn checkpoints(mut self, input: impl Into<String>, mapping: impl Into<String>) -> Self {
        self.identity = Some((input.into(), mapping.into()));
        self
    }

    /// Continues the interrupted import recorded in the target's
    /// checkpoints instead of starting afresh: records already committed
    /// are read but not written again.
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// Runs the import of `regions`, the sources of the input's regions in
    /// order (one source: one region).
    ///
    /// # Errors
    ///
    /// See [`ImportError`]; the (boxed) failure carries what was done
    /// before it.
    pub fn run<S: Source>(self, regions: Vec<S>) -> ImportResult<S, T> {
        self.run_with_progress(regions, |_| {})
    }

    /// As [`run`](Self::run), calling `on_progress` a few times a second.
    ///
    /// # Errors
    ///
    /// See [`ImportError`].
    pub fn run_with_progress<S, P>(self, regions: Vec<S>, on_progress: P) -> ImportResult<S, T>
    where
        S: Source,
        P: FnMut(&Progress) + Send,
    {
        let failed = |error| {
            Box::new(ImportFailure {
                error,
                summary: RunSummary::default(),
            })
        };
        let plan = self.plan(regions.len()).map_err(failed)?;
        let last_record = self.start(plan.identity.as_deref()).map_err(failed)?;
        let pipelines = regions
            .into_iter()
            .enumerate()
            .map(|(region, source)| {
                let first = region * plan.each;
                let resume = match last_record.is_empty() {
                    true => Vec::new(),
                    false => last_record[first..first + plan.each].to_vec(),
                };
                let ownership = Ownership::new(plan.each, plan.block);
                let identity = plan.identity.clone();
                Pipeline::new(source, ownership, first, self.settings, resume, identity)
            })
            .collect();
        let run = Regions::new(pipelines).run(|shard| self.target.open(shard), on_progress);
        let summary = run.map_err(|failure| {
            Box::new(ImportFailure {
                error: ImportError::from_run(failure.error),
                summary: failure.summary,
            })
        })?;
        // A finished import leaves no checkpoint behind.
        self.target.clear_checkpoints().map_err(|error| {
            Box::new(ImportFailure {
                error: ImportError::Target(error),
                summary,
            })
        })?;
        Ok(summary)
    }

    /// Checks the settings against the region count and settles the
    /// import's identity.
    fn plan<SE>(&self, regions: usize) -> Result<Plan, ImportError<SE, TargetError<T>>> {
        let settings = |why: String| ImportError::Settings(why);
        if regions == 0 {
            return Err(settings("an import needs at least one region".into()));
        }
        if self.shards == 0 || self.shards % regions != 0 {
            return Err(settings(format!(
                "the region count ({regions}) must divide the shard count ({})",
                self.shards
            )));
        }
        if self.settings.batch_rows == 0 || self.shard_block == Some(0) {
            return Err(settings(
                "batches and shard blocks hold at least one record".into(),
            ));
        }
        let block = self.shard_block.unwrap_or(self.settings.batch_rows as u64);
        let identity = self.identity.as_ref().map(|(input, mapping)| {
            let regions = match regions {
                1 => String::new(),
                n => format!(";regions={n}"),
            };
            Arc::new(ImportIdentity {
                input: input.clone(),
                shards: self.shards as u32,
                mapping: format!("{mapping};shard-block={block}{regions}"),
            })
        });
        Ok(Plan {
            each: self.shards / regions,
            block,
            identity,
        })
    }

    /// Reads the checkpoints to resume from (per shard, the last record
    /// committed), or clears them for a fresh start; then prepares the
    /// target.
    fn start<SE>(
        &self,
        identity: Option<&ImportIdentity>,
    ) -> Result<Vec<u64>, ImportError<SE, TargetError<T>>> {
        let last_record = match (self.resume, identity) {
            (false, _) => {
                self.target
                    .clear_checkpoints()
                    .map_err(ImportError::Target)?;
                Vec::new()
            }
            (true, None) => return Err(ResumeError::NoCheckpoints.into()),
            (true, Some(identity)) => {
                let stored = self.target.checkpoints().map_err(ImportError::Target)?;
                resume_point(identity, &stored)?
            }
        };
        self.target
            .prepare(self.resume)
            .map_err(ImportError::Target)?;
        Ok(last_record)
    }
}

/// What [`Import::run`] returns: the summary, or the failure with the
/// source's and the target's own error types (boxed: it is large).
pub type ImportResult<S, T> =
    Result<RunSummary, Box<ImportFailure<<S as Source>::Error, TargetError<T>>>>;

/// How an import's shards and records are laid out.
struct Plan {
    /// Shards per region.
    each: usize,
    /// Records per shard turn.
    block: u64,
    identity: Option<Arc<ImportIdentity>>,
}

/// Per shard, the last record the interrupted import committed, after
/// checking that it was this import.
fn resume_point(
    identity: &ImportIdentity,
    stored: &[StoredCheckpoint],
) -> Result<Vec<u64>, ResumeError> {
    if stored.is_empty() {
        return Err(ResumeError::NothingToResume);
    }
    let mut last_record = vec![0; identity.shards as usize];
    for checkpoint in stored {
        let was = &checkpoint.identity;
        let differs = |what, was: &dyn ToString, now: &dyn ToString| ResumeError::Differs {
            what,
            was: was.to_string(),
            now: now.to_string(),
        };
        if was.shards != identity.shards {
            return Err(differs("shard count", &was.shards, &identity.shards));
        }
        if was.input != identity.input {
            return Err(differs("input", &was.input, &identity.input));
        }
        if was.mapping != identity.mapping {
            return Err(differs("mapping", &was.mapping, &identity.mapping));
        }
        match last_record.get_mut(checkpoint.shard) {
            Some(last) => *last = checkpoint.last_record,
            None => {
                return Err(differs(
                    "a checkpoint of shard",
                    &checkpoint.shard,
                    &"fewer",
                ));
            }
        }
    }
    Ok(last_record)
}
