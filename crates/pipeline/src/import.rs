//! The library's front door: [`Import`] runs a source's regions into a
//! target's sharded sinks, resumably.

use std::sync::Arc;
use std::time::Duration;

use ringpipe_ring::WaitStrategy;

use crate::regions::Regions;
use crate::resume::{start_point, Start};
use crate::retry::retrying;
use crate::runner::{Pipeline, Resume, Settings};
use crate::split_check::{Neighbours, SplitCheck};
use crate::{
    ImportError, ImportFailure, ImportIdentity, Layout, Ownership, Part, Progress, ResumeError,
    RunSummary, Source, Target, TargetError,
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
    part: Part,
    /// Several writers allowed into a target where order matters.
    any_order: bool,
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
            part: Part::WHOLE,
            any_order: false,
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

    /// Column buffers larger than this are freed before their slot is
    /// filled again.
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

    /// Continues the import recorded in the target's checkpoints instead
    /// of starting afresh: records already committed are read but not
    /// written again. Idempotent, as a scheduler's retries need: with no
    /// checkpoint of this import (its part) it starts afresh (without
    /// clearing anything), and when the import (part) has finished it
    /// returns at once with
    /// [`already_complete`](RunSummary::already_complete) set. Checkpoints
    /// of another input, mapping, shard or part count are refused
    /// ([`ResumeError::Differs`]).
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// Imports only part `part.index` of `part.count` of the input, with
    /// checkpoints of its own: `count` imports, one per part, started
    /// anywhere in any order, import the input exactly once.
    ///
    /// [`run`](Self::run) then takes the regions of the whole input cut
    /// into a multiple of `count` (`count × r`, their records numbered in
    /// the whole input) and runs only the `r` consecutive regions of this
    /// part, dropping the others unread. A fresh part import clears only
    /// its own part's checkpoints of the same input
    /// ([`Target::clear_part`]); the whole input's clears every checkpoint
    /// of the target.
    pub fn part(mut self, part: Part) -> Self {
        self.part = part;
        self
    }

    /// Lets several writers (shards, or the imports of a cut input's
    /// parts) write into a target whose outcome depends on the order of the
    /// records of one key ([`Target::order_matters`]: the first or the last
    /// record of a key wins). Records of one key written by different
    /// writers then land in whichever order their commits take, so either
    /// may win: right when the input holds each key once, or when any of a
    /// key's records will do. Without it such an import refuses more than
    /// one shard and any part but the whole ([`ImportError::Settings`]).
    pub fn any_order(mut self, any_order: bool) -> Self {
        self.any_order = any_order;
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
        let (start, neighbours) = self.start(plan.identity.as_deref()).map_err(failed)?;
        let (last_record, region_start, rows_crc) = match start {
            Start::Fresh => (Vec::new(), Vec::new(), Vec::new()),
            Start::After {
                last_record,
                region_start,
                rows_crc,
                ..
            } => (last_record, region_start, rows_crc),
            Start::Complete => return Ok(self.complete_summary()),
        };
        let stored = (&last_record[..], &region_start[..]);
        let checks = SplitCheck::per_region(plan.part_regions, plan.each, stored, neighbours)
            .map_err(|e| failed(e.into()))?;
        let mine = plan.part_regions * self.part.index as usize;
        let pipelines = regions
            .into_iter()
            .skip(mine)
            .take(plan.part_regions)
            .enumerate()
            .map(|(region, source)| {
                let first = region * plan.each;
                let resume = Resume {
                    last_record: region_part(&last_record, first, plan.each),
                    split: checks[region],
                    rows_crc: region_part(&rows_crc, first, plan.each),
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
        self.finish(plan.identity.as_deref()).map_err(|error| {
            Box::new(ImportFailure {
                error: ImportError::Target(error),
                summary,
            })
        })?;
        Ok(summary)
    }

    /// Checks the settings against the region count and settles the
    /// import's identity.
    fn plan<SE>(&self, all_regions: usize) -> Result<Plan, ImportError<SE, TargetError<T>>> {
        let settings = |why: String| ImportError::Settings(why);
        if all_regions == 0 {
            return Err(settings("an import needs at least one region".into()));
        }
        let parts = self.part.count as usize;
        if all_regions % parts != 0 {
            return Err(settings(format!(
                "the input's {all_regions} regions cannot be cut into {parts} parts \
                 (the region count must be a multiple of the part count)"
            )));
        }
        if !self.part.is_whole() && self.target.empties() {
            return Err(settings(format!(
                "part {} empties the target before it loads: a part must not empty what \
                 the others load; empty it once before starting the parts",
                self.part
            )));
        }
        if self.target.order_matters()
            && !self.any_order
            && (self.shards > 1 || !self.part.is_whole())
        {
            let writers = match self.part.is_whole() {
                true => format!("{} shards", self.shards),
                false => format!("part {} of a cut input", self.part),
            };
            return Err(settings(format!(
                "the target keeps the first or the last record of a key, which only one \
                 writer keeps in the input's order, not {writers}: import with one shard \
                 and the whole input, or allow any order"
            )));
        }
        let regions = all_regions / parts;
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
        let layout = Layout {
            shard_block: block,
            regions,
        };
        let identity = self.identity.as_ref().map(|(input, mapping)| {
            Arc::new(ImportIdentity {
                input: input.clone(),
                shards: self.shards as u32,
                mapping: format!("{mapping}{}", layout.suffix()),
                part: self.part,
            })
        });
        Ok(Plan {
            part_regions: regions,
            each: self.shards / regions,
            block,
            identity,
        })
    }

    /// Settles where the import starts: afresh (clearing the checkpoints
    /// it replaces), after its checkpoints, or nowhere (its part is
    /// complete), and what the input's other parts committed; then
    /// prepares the target unless there is nothing to do.
    fn start<SE>(
        &self,
        identity: Option<&ImportIdentity>,
    ) -> Result<(Start, Neighbours), ImportError<SE, TargetError<T>>> {
        let read = || {
            retrying("reading the checkpoints", self.settings.retry_for, || {
                self.target.checkpoints()
            })
            .map_err(ImportError::Target)
        };
        let (start, neighbours) = match (self.resume, identity) {
            (false, _) => {
                retrying("clearing the checkpoints", self.settings.retry_for, || {
                    self.clear(identity)
                })
                .map_err(ImportError::Target)?;
                let neighbours = match identity {
                    Some(identity) if !self.part.is_whole() => Neighbours::of(identity, &read()?),
                    _ => Neighbours::default(),
                };
                (Start::Fresh, neighbours)
            }
            (true, None) => return Err(ResumeError::NoCheckpoints.into()),
            (true, Some(identity)) => {
                let stored = read()?;
                (
                    start_point(identity, &stored)?,
                    Neighbours::of(identity, &stored),
                )
            }
        };
        let diverted = match &start {
            Start::Complete => return Ok((start, neighbours)),
            Start::Fresh => None,
            Start::After { diverted, .. } => Some(*diverted),
        };
        self.target
            .prepare(diverted.is_some())
            .map_err(ImportError::Target)?;
        if let Some(diverted) = diverted {
            self.target.carry_diverted(diverted);
        }
        Ok((start, neighbours))
    }

    /// Forgets the checkpoints a fresh start replaces: the whole target's
    /// for the whole input, this part's of this input for a part.
    fn clear(&self, identity: Option<&ImportIdentity>) -> Result<(), TargetError<T>> {
        match (self.part.is_whole(), identity) {
            (true, _) => self.target.clear_checkpoints(),
            (false, Some(identity)) => self.target.clear_part(identity),
            (false, None) => Ok(()),
        }
    }

    /// After a successful run: marks the import (part) complete, or, when
    /// it kept no checkpoints, leaves none behind (retried like a batch:
    /// both statements are idempotent).
    fn finish(&self, identity: Option<&ImportIdentity>) -> Result<(), TargetError<T>> {
        retrying(
            "finishing the checkpoints",
            self.settings.retry_for,
            || match identity {
                Some(identity) => self.target.mark_complete(identity),
                None => self.clear(None),
            },
        )
    }

    /// What a resume of a finished import (part) reports.
    fn complete_summary(&self) -> RunSummary {
        RunSummary {
            shards: self.shards,
            already_complete: true,
            ..RunSummary::default()
        }
    }
}

/// What [`Import::run`] returns: the summary, or the failure with the
/// source's and the target's own error types (boxed: it is large).
pub type ImportResult<S, T> =
    Result<RunSummary, Box<ImportFailure<<S as Source>::Error, TargetError<T>>>>;

/// The `each` entries of `all` from `first` on (none when `all` is empty:
/// a fresh run).
fn region_part<T: Clone>(all: &[T], first: usize, each: usize) -> Vec<T> {
    match all.is_empty() {
        true => Vec::new(),
        false => all[first..first + each].to_vec(),
    }
}

/// How an import's shards and records are laid out.
struct Plan {
    /// Regions of this part (of the whole input, without parts).
    part_regions: usize,
    /// Shards per region.
    each: usize,
    /// Records per shard turn.
    block: u64,
    identity: Option<Arc<ImportIdentity>>,
}
