//! Several pipelines as one run: an input split into regions, each read by
//! its own source into its own ring and shards, at the same time.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::runner::Pipeline;
use crate::summary::{RunError, RunFailure};
use crate::{Progress, RunSummary, Sink, Source};

/// Runs one [`Pipeline`] per region of an input, each on its own thread, as
/// one run.
///
/// One parser feeding every shard is one thread's worth of parsing; with
/// regions the parse runs in parallel too, and each shard's keys come from
/// its own stretch of the input, away from the other shards' (a database
/// then finds fewer of their inserts in the same index pages).
///
/// Shards are numbered across the run: region `r`'s shards follow those of
/// the regions before it, which is the number `make_sink` gets (each
/// pipeline knows its first shard). Each
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
pub(crate) struct Regions<S> {
    pipelines: Vec<Pipeline<S>>,
}

impl<S: Source> Regions<S> {
    /// One run of `pipelines`, the input's regions in order.
    ///
    /// # Panics
    ///
    /// Panics if `pipelines` is empty.
    pub(crate) fn new(pipelines: Vec<Pipeline<S>>) -> Self {
        assert!(!pipelines.is_empty(), "a run needs at least one region");
        Regions { pipelines }
    }

    /// Runs every region to the end of its source, calling `on_progress`
    /// with the whole run's progress a few times a second (from the regions'
    /// threads, one at a time).
    ///
    /// # Errors
    ///
    /// The first failing region's error (in region order; a region stopped
    /// because another failed reports [`RunError::Stopped`] only if no
    /// other error is known), with the summary of the whole run.
    pub(crate) fn run<K, F, P>(self, make_sink: F, on_progress: P) -> Result<RunSummary, RunFailure>
    where
        K: Sink + 'static,
        F: Fn(usize) -> Result<K, K::Error> + Sync,
        P: FnMut(&Progress) + Send,
    {
        let started = Instant::now();
        let stops: Vec<Arc<AtomicBool>> = self.pipelines.iter().map(|_| Arc::default()).collect();
        let progress = Mutex::new((vec![Progress::default(); self.pipelines.len()], on_progress));
        let results: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .pipelines
                .into_iter()
                .enumerate()
                .map(|(region, mut pipeline)| {
                    pipeline.stop = Some(Arc::clone(&stops[region]));
                    let (stops, make_sink, progress) = (&stops, &make_sink, &progress);
                    std::thread::Builder::new()
                        .name(format!("ringpipe-region-{region}"))
                        .spawn_scoped(scope, move || {
                            let run = catch_unwind(AssertUnwindSafe(|| {
                                pipeline.run(make_sink, |p| {
                                    let mut guard = progress.lock();
                                    let (regions, on_progress) = &mut *guard;
                                    regions[region] = *p;
                                    let whole = regions
                                        .iter()
                                        .fold(Progress::default(), |sum, p| sum.merge(p));
                                    on_progress(&whole);
                                })
                            }));
                            let stop_from = match &run {
                                // A region that was stopped stops no more:
                                // whoever stopped it chose which to stop.
                                Ok(Ok(_)) => None,
                                Ok(Err(failure)) if matches!(failure.error, RunError::Stopped) => {
                                    None
                                }
                                // Bad input: the regions before it hold only
                                // records before the fault.
                                Ok(Err(failure))
                                    if matches!(failure.error, RunError::Source(_)) =>
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
    results: Vec<Result<RunSummary, RunFailure>>,
    started: Instant,
) -> Result<RunSummary, RunFailure> {
    let mut summary = RunSummary::default();
    let mut failure: Option<RunError> = None;
    for result in results {
        match result {
            Ok(part) => summary = summary.merge(part),
            Err(part) => {
                summary = summary.merge(part.summary);
                let stopped = matches!(part.error, RunError::Stopped);
                if failure.is_none() || (!stopped && matches!(failure, Some(RunError::Stopped))) {
                    failure = Some(part.error);
                }
            }
        }
    }
    summary.elapsed = started.elapsed();
    match failure {
        None => Ok(summary),
        Some(error) => Err(RunFailure { error, summary }),
    }
}
