//! Several pipelines as one run: an input split into regions, each read by
//! its own source into its own ring and shards, at the same time.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use super::{Pipeline, PipelineError, PipelineFailure, Progress, RunSummary, Sink, Source};

/// Runs one [`Pipeline`] per region of an input, each on its own thread, as
/// one run.
///
/// One parser feeding every shard is one thread's worth of parsing; with
/// regions the parse runs in parallel too, and each shard's keys come from
/// its own stretch of the input, away from the other shards' (a database
/// then finds fewer of their inserts in the same index pages).
///
/// Shards are numbered across the run: region `r`'s shards follow those of
/// the regions before it, which is the number `make_sink` gets. Each
/// region's source says how many records come before it
/// ([`Source::records_before`]), so that record numbers and checkpoints
/// count in the whole input.
///
/// When a region's source fails (bad input), the regions after it stop at
/// their next block of rows and commit what they had read, while the
/// regions before it, whose records all come before the fault, run to their
/// end; when anything else fails, every region stops so (also when a
/// source panics, whose panic the run then resumes). The run reports the
/// first failing region's error.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::pipeline::{Pipeline, Regions, Row, Sink, SinkError, Source};
/// # #[derive(Debug, thiserror::Error)] #[error("never")] struct Never;
/// # impl SinkError for Never { fn is_retryable(&self) -> bool { false } }
///
/// /// Numbers `from + 1..=to`.
/// struct Range { columns: Vec<String>, from: u32, next: u32, to: u32 }
/// impl Source for Range {
///     type Error = std::io::Error;
///     fn columns(&self) -> &[String] { &self.columns }
///     fn records_before(&self) -> u64 { u64::from(self.from) }
///     fn next_row(&mut self, row: &mut Row) -> Result<bool, Self::Error> {
///         row.clear();
///         row.set(0, &self.next.to_string());
///         self.next += 1;
///         Ok(self.next <= self.to)
///     }
/// }
///
/// #[derive(Default)]
/// struct Count(u64);
/// impl Sink for Count {
///     type Error = Never;
///     fn write(&mut self, _: &Row) -> Result<(), Never> { self.0 += 1; Ok(()) }
///     fn flush(&mut self) -> Result<(), Never> { Ok(()) }
///     fn rollback(&mut self) -> Result<(), Never> { Ok(()) }
/// }
///
/// let region = |from, to| Range { columns: vec!["n".into()], from, next: from, to };
/// let regions = Regions::new(vec![
///     Pipeline::new(region(0, 500)),
///     Pipeline::new(region(500, 1000)),
/// ]);
/// let summary = regions.run(|_shard| Ok(Count::default()))?;
/// assert_eq!((summary.rows_read, summary.shards), (1000, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Regions<S> {
    pipelines: Vec<Pipeline<S>>,
}

impl<S: Source> Regions<S> {
    /// One run of `pipelines`, the input's regions in order.
    ///
    /// # Panics
    ///
    /// Panics if `pipelines` is empty.
    pub fn new(pipelines: Vec<Pipeline<S>>) -> Self {
        assert!(!pipelines.is_empty(), "a run needs at least one region");
        Regions { pipelines }
    }

    /// Runs every region to the end of its source.
    ///
    /// # Errors
    ///
    /// The first failing region's error (in region order; a region stopped
    /// because another failed reports [`PipelineError::Stopped`] only if no
    /// other error is known), with the summary of the whole run.
    pub fn run<K, F>(self, make_sink: F) -> Result<RunSummary, PipelineFailure>
    where
        K: Sink + 'static,
        F: Fn(usize) -> Result<K, K::Error> + Sync,
    {
        self.run_with_progress(make_sink, |_| {})
    }

    /// As [`run`](Self::run), calling `on_progress` with the whole run's
    /// progress a few times a second (from the regions' threads, one at a
    /// time).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub fn run_with_progress<K, F, P>(
        self,
        make_sink: F,
        on_progress: P,
    ) -> Result<RunSummary, PipelineFailure>
    where
        K: Sink + 'static,
        F: Fn(usize) -> Result<K, K::Error> + Sync,
        P: FnMut(&Progress) + Send,
    {
        let started = Instant::now();
        let stops: Vec<Arc<AtomicBool>> = self.pipelines.iter().map(|_| Arc::default()).collect();
        let progress = Mutex::new((vec![Progress::default(); self.pipelines.len()], on_progress));
        let mut first_shard = 0;
        let results: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .pipelines
                .into_iter()
                .enumerate()
                .map(|(region, mut pipeline)| {
                    pipeline.stop = Some(Arc::clone(&stops[region]));
                    let offset = first_shard;
                    first_shard += pipeline.shard_count();
                    let (stops, make_sink, progress) = (&stops, &make_sink, &progress);
                    std::thread::Builder::new()
                        .name(format!("ringpipe-region-{region}"))
                        .spawn_scoped(scope, move || {
                            let run = catch_unwind(AssertUnwindSafe(|| {
                                pipeline.run_with_progress(
                                    |shard| make_sink(offset + shard),
                                    |p| {
                                        let mut guard = progress.lock();
                                        let (regions, on_progress) = &mut *guard;
                                        regions[region] = *p;
                                        let whole = regions
                                            .iter()
                                            .fold(Progress::default(), |sum, p| sum.merge(p));
                                        on_progress(&whole);
                                    },
                                )
                            }));
                            let stop_from = match &run {
                                // A region that was stopped stops no more:
                                // whoever stopped it chose which to stop.
                                Ok(Ok(_)) => None,
                                Ok(Err(failure))
                                    if matches!(failure.error, PipelineError::Stopped) =>
                                {
                                    None
                                }
                                // Bad input: the regions before it hold only
                                // records before the fault.
                                Ok(Err(failure))
                                    if matches!(failure.error, PipelineError::Source(_)) =>
                                {
                                    Some(region + 1)
                                }
                                // A sink failed, or the source panicked.
                                Ok(Err(_)) | Err(_) => Some(0),
                            };
                            for stop in stops.iter().skip(stop_from.unwrap_or(stops.len())) {
                                // Relaxed: the flag carries no data; each
                                // region commits its own rows.
                                stop.store(true, Ordering::Relaxed);
                            }
                            run.unwrap_or_else(|panic| resume_unwind(panic))
                        })
                        .expect("spawn a region thread")
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|panic| resume_unwind(panic)))
                .collect()
        });
        combine(results, started)
    }
}

/// One result for the run: success if every region succeeded, else the
/// first real failure, each with the summary of all regions.
fn combine(
    results: Vec<Result<RunSummary, PipelineFailure>>,
    started: Instant,
) -> Result<RunSummary, PipelineFailure> {
    let mut summary = RunSummary::default();
    let mut failure: Option<PipelineError> = None;
    for result in results {
        match result {
            Ok(part) => summary = summary.merge(part),
            Err(part) => {
                summary = summary.merge(part.summary);
                let stopped = matches!(part.error, PipelineError::Stopped);
                if failure.is_none()
                    || (!stopped && matches!(failure, Some(PipelineError::Stopped)))
                {
                    failure = Some(part.error);
                }
            }
        }
    }
    summary.elapsed = started.elapsed();
    match failure {
        None => Ok(summary),
        Some(error) => Err(PipelineFailure { error, summary }),
    }
}
