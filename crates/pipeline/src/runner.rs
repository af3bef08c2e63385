//! Wiring a source, the ring and sharded sinks into one run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringpipe_ring::{
    BuildError, Failure, FailureAction, Producer, RewindStrategy, RingBuilder, RingError,
    RingHandle, WaitStrategy,
};

use crate::digest::RowsDigest;
use crate::retry::retrying;
use crate::split_check::SplitCheck;
use crate::stages::{RowEvent, RunState, SinkStage};
use crate::summary::{summary, RunError, RunFailure};
use crate::{
    ImportIdentity, Ownership, Progress, RecordPosition, ResumeError, Row, RunSummary, Sink, Source,
};

/// Rows the source thread claims and publishes at a time.
const PUBLISH_BLOCK: usize = 256;

/// One region's run: `source → ring → shards × sink`.
///
/// The calling thread runs the source: it claims slots in blocks, lets the
/// source fill each slot's row in place, numbers the record, and publishes
/// the block. The ring routes each record to the shard its [`Ownership`]
/// names; a shard commits its rows once per ring batch (at most
/// `batch_rows` of its own). A retryable sink error rolls the shard's batch
/// back and replays it; a fatal one halts the run after everything
/// committed so far stays committed.
pub(crate) struct Pipeline<S> {
    source: S,
    /// Which of this region's shards owns which record.
    ownership: Ownership,
    /// The number, across the whole import, of this region's first shard.
    first_shard: usize,
    pub(crate) settings: Settings,
    /// What an earlier run of the import committed in this region.
    resume: Resume,
    /// The import's identity, for the checkpoints.
    identity: Option<Arc<ImportIdentity>>,
    /// Set when a sibling region of the same run failed (see `Regions`).
    pub(crate) stop: Option<Arc<AtomicBool>>,
    /// Whether the source loop ended because `stop` was set.
    stopped_early: bool,
    /// Per shard of this region: the digest of the committed records read
    /// again so far, checked against `resume.rows_crc` at the last one.
    reread: Vec<RowsDigest>,
}

/// Why a region's source loop stopped early.
enum Stop<E> {
    /// The source failed.
    Source(E),
    /// The record does not match what the checkpoints record.
    Resume(ResumeError),
}

/// What a resumed region knows of the run it continues (empty for a fresh
/// run).
#[derive(Debug, Clone, Default)]
pub(crate) struct Resume {
    /// Per shard of this region: the last record an earlier run committed.
    pub(crate) last_record: Vec<u64>,
    /// Where the earlier run split the input around this region.
    pub(crate) split: SplitCheck,
    /// Per shard of this region: the digest of the rows it committed
    /// (`None`: not known, so neither checked nor continued).
    pub(crate) rows_crc: Vec<Option<u32>>,
}

impl Resume {
    /// What shard `local` committed before: its digest, `Some(0)` (none)
    /// for a fresh run.
    fn committed_crc(&self, local: usize) -> Option<u32> {
        self.rows_crc.get(local).copied().unwrap_or(Some(0))
    }
}

/// How every region of an import runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) batch_rows: usize,
    pub(crate) capacity: Option<usize>,
    pub(crate) wait: WaitStrategy,
    pub(crate) retry_for: Duration,
    pub(crate) keep_bytes: usize,
    pub(crate) progress_every: Duration,
}

impl<S: Source> Pipeline<S> {
    /// A region read by `source`, whose shards are numbered from
    /// `first_shard` in the import, continuing what an earlier run
    /// committed (`resume`).
    pub(crate) fn new(
        source: S,
        ownership: Ownership,
        first_shard: usize,
        settings: Settings,
        resume: Resume,
        identity: Option<Arc<ImportIdentity>>,
    ) -> Self {
        Pipeline {
            source,
            ownership,
            first_shard,
            settings,
            resume,
            identity,
            stop: None,
            stopped_early: false,
            reread: vec![RowsDigest::after(0); ownership.shards()],
        }
    }

    /// Number of this region's shards.
    pub(crate) fn shard_count(&self) -> usize {
        self.ownership.shards()
    }

    /// Runs to the end of the source, opening shard `i`'s sink with
    /// `make_sink(first_shard + i)` and calling `on_progress` a few times a
    /// second.
    pub(crate) fn run<K, F, P>(
        mut self,
        make_sink: F,
        mut on_progress: P,
    ) -> Result<RunSummary, RunFailure>
    where
        K: Sink + 'static,
        F: Fn(usize) -> Result<K, K::Error>,
        P: FnMut(&Progress),
    {
        let started = Instant::now();
        let state = Arc::new(RunState::default());
        let shards = self.shard_count();
        let fail = |error, (rows_read, rows_skipped)| RunFailure {
            error,
            summary: summary(&state, shards, (rows_read, rows_skipped), started),
        };
        let mut sinks = Vec::with_capacity(shards);
        for local in 0..shards {
            let shard = self.first_shard + local;
            // A connection refused for a while (a server restarting, its
            // connections all taken by other importers) is waited for as a
            // batch's would be.
            let what = format!("opening shard {shard}'s sink");
            match retrying(&what, self.settings.retry_for, || make_sink(shard)) {
                Ok(sink) => sinks.push(SinkStage::new(
                    sink,
                    // Without checkpoints there is nothing to digest for.
                    (
                        shard,
                        self.identity.as_ref().and(self.resume.committed_crc(local)),
                    ),
                    self.identity.clone(),
                    self.settings.retry_for,
                    Arc::clone(&state),
                )),
                Err(error) => {
                    let error = RunError::SinkSetup {
                        shard,
                        error: Box::new(error),
                    };
                    return Err(fail(error, (0, 0)));
                }
            }
        }
        let (mut producer, ring) = self
            .ring(sinks, &state)
            .map_err(|e| fail(RunError::Build(e), (0, 0)))?;
        let block = (ring.capacity() / 4).clamp(1, PUBLISH_BLOCK);
        let (read, rows_read, rows_skipped) =
            self.produce(&mut producer, block, &state, started, &mut on_progress);
        if read.is_err() {
            state.mark_failed();
        }
        drop(producer);
        let drained = ring.shutdown();
        let error = match (read, drained) {
            (Err(error), _) => error,
            (Ok(()), Err(RingError::Failed(failure))) => RunError::Sink(failure),
            (Ok(()), Ok(())) if self.stopped_early => RunError::Stopped,
            (Ok(()), Err(other)) => RunError::Ring(other),
            (Ok(()), Ok(())) => match state.close_error.lock().take() {
                Some(error) => RunError::SinkClose(error),
                None => {
                    on_progress(&self.progress(&state, rows_read, started));
                    return Ok(summary(&state, shards, (rows_read, rows_skipped), started));
                }
            },
        };
        Err(fail(error, (rows_read, rows_skipped)))
    }

    /// Reads the source into the ring until it ends, fails, or the ring
    /// halts; returns how the source ended (failed, or found the input
    /// split elsewhere than the run it resumes), rows read and rows skipped.
    fn produce(
        &mut self,
        producer: &mut Producer<RowEvent>,
        block: usize,
        state: &RunState,
        started: Instant,
        on_progress: &mut impl FnMut(&Progress),
    ) -> (Result<(), RunError>, u64, u64) {
        let (mut rows_read, mut rows_skipped) = (0, 0);
        let mut last_report = Instant::now();
        let keep_bytes = self.settings.keep_bytes;
        // Rows are claimed and published in blocks: one cursor store and one
        // wake-up per block instead of per row, so idle stages wake once per
        // block rather than once per row.
        let read = loop {
            if self.stopped() {
                self.stopped_early = true;
                break Ok(()); // a sibling failed; the caller reports `Stopped`
            }
            let Ok(mut claim) = producer.next_n(block) else {
                break Ok(()); // a sink halted the ring; the caller reports its failure
            };
            let mut end = None;
            for index in 0..block {
                if end.is_some() {
                    claim.write(index, |event| event.filled = false);
                    continue;
                }
                let mut outcome = Ok(false);
                let mut skip = false;
                claim.write(index, |event| {
                    // The slot's buffers are bounded here, where the
                    // producer is about to write them anyway, so that one
                    // huge record does not pin its memory for the run.
                    event.row.shrink_to(keep_bytes);
                    outcome = self.source.next_row(&mut event.row).map_err(Stop::Source);
                    let record = self.source.records_before() + rows_read + 1;
                    let position = event.row.position();
                    event
                        .row
                        .set_position(RecordPosition { record, ..position });
                    event.filled = false;
                    if !matches!(outcome, Ok(true)) {
                        return;
                    }
                    if let Err(split) = self.resume.split.check(record, rows_read == 0) {
                        outcome = Err(Stop::Resume(split));
                        return;
                    }
                    if rows_read == 0 {
                        // Relaxed: the sinks read it only after the ring
                        // published this slot, which orders the store
                        // before their read.
                        state.region_start.store(record, Ordering::Relaxed);
                    }
                    skip = self.ownership.committed(record, &self.resume.last_record);
                    if skip {
                        if let Err(changed) = self.reread(record, &event.row) {
                            outcome = Err(Stop::Resume(changed));
                            return;
                        }
                    }
                    event.filled = !skip;
                });
                match outcome {
                    Ok(true) => {
                        rows_read += 1;
                        rows_skipped += u64::from(skip);
                    }
                    Ok(false) => {
                        let last =
                            (rows_read > 0).then(|| self.source.records_before() + rows_read);
                        let ended = self.resume.split.finish(last);
                        end = Some(ended.map_err(|e| RunError::Resume(Box::new(e))));
                    }
                    Err(Stop::Source(error)) => end = Some(Err(RunError::Source(Box::new(error)))),
                    Err(Stop::Resume(error)) => {
                        end = Some(Err(RunError::Resume(Box::new(error))));
                    }
                }
            }
            drop(claim);
            if let Some(end) = end {
                break end;
            }
            if last_report.elapsed() >= self.settings.progress_every {
                last_report = Instant::now();
                on_progress(&self.progress(state, rows_read, started));
            }
        };
        (read, rows_read, rows_skipped)
    }

    fn ring<K: Sink + 'static>(
        &self,
        sinks: Vec<SinkStage<K>>,
        state: &Arc<RunState>,
    ) -> Result<(Producer<RowEvent>, RingHandle<RowEvent>), BuildError> {
        let columns = self.source.columns().len();
        let settings = &self.settings;
        let ring_batch = settings.batch_rows.saturating_mul(self.shard_count());
        let capacity = settings
            .capacity
            .unwrap_or_else(|| ring_batch.clamp(1024, 1 << 16).next_power_of_two());
        let on_failure = {
            let state = Arc::clone(state);
            move |failure: &Failure| {
                state.mark_failed();
                // The caller gets the failure; log it only for those tracing the run.
                log::debug!("{failure}; stopping the import");
                FailureAction::Halt
            }
        };
        let mut sinks = sinks.into_iter();
        let mut next_sink = |_| sinks.next().expect("one sink per shard");
        // Retries are bounded by time in the sink stage, so the ring may
        // always replay; the backoff spaces the attempts.
        let rewind =
            RewindStrategy::backoff(Duration::from_millis(10), Duration::from_secs(2), None);
        let ownership = self.ownership;
        RingBuilder::new(capacity, move || RowEvent::new(columns))
            .wait_strategy(settings.wait)
            .thread_name("ringpipe-sink")
            .exception_handler(on_failure)
            .max_batch_size(ring_batch.min(capacity))
            .rewind_strategy(rewind)
            // The ring routes by the record's turn, the one rule of
            // `Ownership`, which resumption follows too.
            .handle_sharded_by_key(
                self.shard_count(),
                move |event: &RowEvent| ownership.turn(event.row.position().record),
                &mut next_sink,
            )
            .start()
    }

    /// Adds a committed record, read again, to its shard's digest; at the
    /// shard's last committed record, checks the digest against the one
    /// the checkpoint stored.
    fn reread(&mut self, record: u64, row: &Row) -> Result<(), ResumeError> {
        let local = self.ownership.shard_of(record);
        let Some(stored) = self.resume.rows_crc.get(local).copied().flatten() else {
            return Ok(()); // not known: nothing to check
        };
        let digest = &mut self.reread[local];
        digest.add(row);
        match self.resume.last_record.get(local) {
            Some(&last) if last == record && digest.value() != stored => {
                Err(ResumeError::InputChanged {
                    shard: self.first_shard + local,
                    record,
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether a sibling pipeline of the same run failed.
    fn stopped(&self) -> bool {
        // Relaxed: a hint to stop early; nothing is read through it.
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    fn progress(&self, state: &RunState, rows_read: u64, started: Instant) -> Progress {
        Progress {
            rows_read,
            rows_written: state.rows_written.load(Ordering::Relaxed),
            source: self.source.progress(),
            elapsed: started.elapsed(),
        }
    }
}
