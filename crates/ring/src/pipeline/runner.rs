//! Wiring a source, the ring and sharded sinks into one run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::stages::{ClearStage, RowEvent, RunState, SinkStage};
use super::summary::summary;
use super::{PipelineError, PipelineFailure, Progress, RecordPosition, RunSummary, Sink, Source};
use crate::{
    BuildError, Failure, FailureAction, Producer, RewindStrategy, RingBuilder, RingError,
    WaitStrategy,
};

/// Rows the source thread claims and publishes at a time.
const PUBLISH_BLOCK: usize = 256;

/// Runs `source → ring → shards × sink → clearing stage` to completion.
///
/// The calling thread runs the source: it claims slots in blocks, lets the
/// source fill each slot's row in place, and publishes them. Shard `i` of
/// `n` owns the rows whose sequence `% n == i` (or whole blocks of records,
/// see [`Pipeline::shard_block`]) and commits them once per ring batch (at
/// most `batch_rows` of its own rows). A retryable sink error rolls the
/// shard's batch back and replays it under the rewind strategy; a fatal one
/// halts the run after everything committed so far stays committed.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::pipeline::{Pipeline, Row, Sink, SinkError, Source};
/// # #[derive(Debug, thiserror::Error)] #[error("never")] struct Never;
/// # impl SinkError for Never { fn is_retryable(&self) -> bool { false } }
///
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
///     type Error = Never;
///     fn write(&mut self, _: &Row) -> Result<(), Never> { self.pending += 1; Ok(()) }
///     fn flush(&mut self) -> Result<(), Never> { self.done += self.pending; self.pending = 0; Ok(()) }
///     fn rollback(&mut self) -> Result<(), Never> { self.pending = 0; Ok(()) }
/// }
///
/// let source = Numbers { columns: vec!["n".into()], next: 0 };
/// let summary = Pipeline::new(source).shards(4).run(|_shard| Ok(Count::default()))?;
/// assert_eq!(summary.rows_read, 1000);
/// assert_eq!(summary.rows_written, 1000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Pipeline<S> {
    source: S,
    shards: usize,
    batch_rows: usize,
    capacity: Option<usize>,
    wait: WaitStrategy,
    rewind: RewindStrategy,
    keep_bytes: usize,
    progress_every: Duration,
    /// Per shard: the last record already committed by an earlier run.
    resume: Vec<u64>,
    /// Consecutive records per shard turn (1: plain sequence modulo).
    shard_block: u64,
    /// Set when a sibling pipeline of the same run failed (see `Regions`).
    pub(super) stop: Option<Arc<AtomicBool>>,
    /// Whether the source loop ended because `stop` was set.
    stopped_early: bool,
}

impl<S: Source> Pipeline<S> {
    /// A pipeline reading `source`, with 1 shard and 2,000 rows per batch.
    pub fn new(source: S) -> Self {
        Pipeline {
            source,
            shards: 1,
            batch_rows: 2_000,
            capacity: None,
            wait: WaitStrategy::blocking(),
            rewind: RewindStrategy::default(),
            keep_bytes: 64 * 1024,
            progress_every: Duration::from_millis(200),
            resume: Vec::new(),
            shard_block: 1,
            stop: None,
            stopped_early: false,
        }
    }

    /// Number of sink shards.
    pub fn shard_count(&self) -> usize {
        self.shards
    }

    /// Number of sink instances (connections), each on its own thread.
    ///
    /// # Panics
    ///
    /// Panics if `shards` is zero.
    pub fn shards(mut self, shards: usize) -> Self {
        assert!(shards > 0, "a pipeline needs at least one shard");
        self.shards = shards;
        self
    }

    /// The most rows one shard commits in one transaction.
    ///
    /// # Panics
    ///
    /// Panics if `rows` is zero.
    pub fn batch_rows(mut self, rows: usize) -> Self {
        assert!(rows > 0, "a batch holds at least one row");
        self.batch_rows = rows;
        self
    }

    /// Ring slots (a power of two). Default: `batch_rows × shards` rounded up
    /// to a power of two, between 1,024 and 65,536; the ring's rows are most
    /// of an import's memory.
    pub fn capacity(mut self, slots: usize) -> Self {
        self.capacity = Some(slots);
        self
    }

    /// How idle stages wait (default [`WaitStrategy::blocking`]: an import is
    /// bound by its sink, and the source publishes rows in blocks, so a
    /// wake-up per block is cheap while spinning or sleeping in short slices
    /// took CPU from the database: 6.3 vs 4.3 client CPU-s per 1M rows).
    pub fn wait_strategy(mut self, wait: WaitStrategy) -> Self {
        self.wait = wait;
        self
    }

    /// How a shard retries a batch that failed retryably.
    pub fn rewind_strategy(mut self, rewind: RewindStrategy) -> Self {
        self.rewind = rewind;
        self
    }

    /// Column buffers larger than this are freed once their row is done.
    pub fn keep_bytes(mut self, bytes: usize) -> Self {
        self.keep_bytes = bytes;
        self
    }

    /// Hands records to shards in blocks of `records` consecutive ones:
    /// record `r` goes to shard `((r - 1) / records) % shards`. The default,
    /// 1, is plain sequence-modulo sharding.
    ///
    /// A database sink wants blocks: with modulo sharding, consecutive keys
    /// alternate between connections, which then insert into the same index
    /// pages and contend for them; blocks give each connection its own key
    /// ranges, as parallel bulk loads of separate chunks would.
    ///
    /// # Panics
    ///
    /// Panics if `records` is zero.
    pub fn shard_block(mut self, records: u64) -> Self {
        assert!(records > 0, "a shard block holds at least one record");
        self.shard_block = records;
        self
    }

    /// The shard that owns record `record` (1-based).
    fn shard_of(&self, record: u64) -> usize {
        ((record.saturating_sub(1) / self.shard_block) % self.shards as u64) as usize
    }

    /// Resumes an interrupted run: `last_record[i]` is the last record shard
    /// `i` committed before (0 for none). Records up to it that shard `i`
    /// owns are read but not sent to the sink, so every record is committed
    /// exactly once over both runs. The shard count must be the one of the
    /// interrupted run, and so must the [`shard_block`](Self::shard_block).
    ///
    /// Records are numbered 1, 2, … in the order the source emits them;
    /// the pipeline sets that number in each row's
    /// [`RecordPosition::record`](super::RecordPosition), which is what a
    /// sink's checkpoint stores.
    pub fn resume_after(mut self, last_record: Vec<u64>) -> Self {
        self.resume = last_record;
        self
    }

    /// Runs to the end of the source.
    ///
    /// # Errors
    ///
    /// See [`PipelineError`]; the failure carries the run's summary.
    pub fn run<K, F>(self, make_sink: F) -> Result<RunSummary, PipelineFailure>
    where
        K: Sink + 'static,
        F: FnMut(usize) -> Result<K, K::Error>,
    {
        self.run_with_progress(make_sink, |_| {})
    }

    /// As [`run`](Self::run), calling `on_progress` a few times a second.
    ///
    /// # Errors
    ///
    /// See [`PipelineError`].
    pub fn run_with_progress<K, F, P>(
        mut self,
        mut make_sink: F,
        mut on_progress: P,
    ) -> Result<RunSummary, PipelineFailure>
    where
        K: Sink + 'static,
        F: FnMut(usize) -> Result<K, K::Error>,
        P: FnMut(&Progress),
    {
        let started = Instant::now();
        let state = Arc::new(RunState::default());
        let shards = self.shards;
        let fail = |error, (rows_read, rows_skipped)| PipelineFailure {
            error,
            summary: summary(&state, shards, (rows_read, rows_skipped), started),
        };
        let mut sinks = Vec::with_capacity(self.shards);
        for shard in 0..self.shards {
            match make_sink(shard) {
                Ok(sink) => sinks.push(SinkStage::new(sink, Arc::clone(&state))),
                Err(error) => {
                    let error = PipelineError::SinkSetup {
                        shard,
                        error: Box::new(error),
                    };
                    return Err(fail(error, (0, 0)));
                }
            }
        }
        let (mut producer, ring) = self
            .ring(sinks, &state)
            .map_err(|e| fail(e.into(), (0, 0)))?;
        let block = (ring.capacity() / 4).clamp(1, PUBLISH_BLOCK);
        let (read, rows_read, rows_skipped) =
            self.produce(&mut producer, block, &state, started, &mut on_progress);
        if read.is_err() {
            state.mark_failed();
        }
        drop(producer);
        let drained = ring.shutdown();
        let error = match (read, drained) {
            (Err(error), _) => PipelineError::Source(Box::new(error)),
            (Ok(()), Err(RingError::Failed(failure))) => PipelineError::Sink(failure),
            (Ok(()), Ok(())) if self.stopped_early => PipelineError::Stopped,
            (Ok(()), Err(other)) => PipelineError::Ring(other),
            (Ok(()), Ok(())) => match state.close_error.lock().take() {
                Some(error) => PipelineError::SinkClose(error),
                None => {
                    on_progress(&self.progress(&state, rows_read, started));
                    return Ok(summary(&state, shards, (rows_read, rows_skipped), started));
                }
            },
        };
        Err(fail(error, (rows_read, rows_skipped)))
    }

    /// Reads the source into the ring until it ends, fails, or the ring
    /// halts; returns how the source ended, rows read and rows skipped.
    fn produce(
        &mut self,
        producer: &mut Producer<RowEvent>,
        block: usize,
        state: &RunState,
        started: Instant,
        on_progress: &mut impl FnMut(&Progress),
    ) -> (Result<(), S::Error>, u64, u64) {
        let (mut rows_read, mut rows_skipped) = (0, 0);
        let mut last_report = Instant::now();
        // Rows are claimed and published in blocks: one cursor store and one
        // wake-up per block instead of per row. Publishing row by row made
        // every idle stage wake (and spin) once per row, which cost more CPU
        // than parsing itself (8.1 vs 3.8 CPU-s per 1M rows, dry run).
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
                    outcome = self.source.next_row(&mut event.row);
                    let record = self.source.records_before() + rows_read + 1;
                    let position = event.row.position();
                    event
                        .row
                        .set_position(RecordPosition { record, ..position });
                    let last = self.resume.get(self.shard_of(record));
                    skip = last.is_some_and(|&last| record <= last);
                    event.filled = matches!(outcome, Ok(true)) && !skip;
                });
                match outcome {
                    Ok(true) => {
                        rows_read += 1;
                        rows_skipped += u64::from(skip);
                    }
                    Ok(false) => end = Some(Ok(())),
                    Err(error) => end = Some(Err(error)),
                }
            }
            drop(claim);
            if let Some(end) = end {
                break end;
            }
            if last_report.elapsed() >= self.progress_every {
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
    ) -> Result<(crate::Producer<RowEvent>, crate::RingHandle<RowEvent>), BuildError> {
        let columns = self.source.columns().len();
        let ring_batch = self.batch_rows.saturating_mul(self.shards);
        let capacity = self
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
        let builder = RingBuilder::new(capacity, move || RowEvent::new(columns))
            .wait_strategy(self.wait)
            .thread_name("ringpipe-sink")
            .exception_handler(on_failure)
            .max_batch_size(ring_batch.min(capacity))
            .rewind_strategy(self.rewind);
        // Record numbers equal sequence + 1, so a block of 1 is plain
        // sequence modulo, which needs no look at the event.
        let builder = match self.shard_block {
            1 => builder.handle_sharded(self.shards, &mut next_sink),
            block => builder.handle_sharded_by_key(
                self.shards,
                move |event: &RowEvent| event.row.position().record.saturating_sub(1) / block,
                &mut next_sink,
            ),
        };
        builder
            .then_mut(ClearStage {
                keep_bytes: self.keep_bytes,
            })
            .start()
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
