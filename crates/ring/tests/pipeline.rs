//! The pipeline runner end to end, with an in-memory source and a sink that
//! records what it commits (the database sink has its own tests against a
//! real server).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ringpipe_ring::pipeline::{Pipeline, PipelineError, Row, Sink, SinkError, Source};
use ringpipe_ring::RewindStrategy;

/// Emits `count` records `(n, "row-n")`, failing at record `fail_at` if set.
struct Numbers {
    columns: Vec<String>,
    next: u64,
    count: u64,
    fail_at: Option<u64>,
}

impl Numbers {
    fn new(count: u64) -> Self {
        Numbers {
            columns: vec!["id".into(), "name".into()],
            next: 0,
            count,
            fail_at: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("bad record {0}")]
struct BadRecord(u64);

impl Source for Numbers {
    type Error = BadRecord;
    fn columns(&self) -> &[String] {
        &self.columns
    }
    fn next_row(&mut self, row: &mut Row) -> Result<bool, BadRecord> {
        self.next += 1;
        if self.fail_at == Some(self.next) {
            return Err(BadRecord(self.next));
        }
        row.clear();
        row.set(0, &self.next.to_string());
        row.value_mut(1).push_str(&format!("row-{}", self.next));
        Ok(self.next <= self.count)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct TestSinkError {
    message: String,
    retryable: bool,
}

impl SinkError for TestSinkError {
    fn is_retryable(&self) -> bool {
        self.retryable
    }
}

/// Commits into a shared log; fails flushes as its plan says.
struct RecordingSink {
    shard: usize,
    pending: Vec<u64>,
    committed: Arc<Mutex<Vec<(usize, u64)>>>,
    flushes: u64,
    /// Fail every flush whose number (1-based, per sink) is divisible by this.
    retryable_every: Option<u64>,
    /// Fail fatally when this id is written.
    fatal_id: Option<u64>,
    closed: Arc<AtomicU64>,
}

impl RecordingSink {
    fn new(
        shard: usize,
        committed: &Arc<Mutex<Vec<(usize, u64)>>>,
        closed: &Arc<AtomicU64>,
    ) -> Self {
        RecordingSink {
            shard,
            pending: Vec::new(),
            committed: Arc::clone(committed),
            flushes: 0,
            retryable_every: None,
            fatal_id: None,
            closed: Arc::clone(closed),
        }
    }
}

impl Sink for RecordingSink {
    type Error = TestSinkError;

    fn write(&mut self, row: &Row) -> Result<(), TestSinkError> {
        let id: u64 = row.get(0).unwrap().parse().unwrap();
        assert_eq!(row.get(1), Some(format!("row-{id}").as_str()));
        if self.fatal_id == Some(id) {
            return Err(TestSinkError {
                message: format!("cannot store {id}"),
                retryable: false,
            });
        }
        self.pending.push(id);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TestSinkError> {
        self.flushes += 1;
        if self
            .retryable_every
            .is_some_and(|every| self.flushes % every == 0)
        {
            return Err(TestSinkError {
                message: "deadlock".into(),
                retryable: true,
            });
        }
        let mut committed = self.committed.lock().unwrap();
        committed.extend(self.pending.drain(..).map(|id| (self.shard, id)));
        Ok(())
    }

    fn rollback(&mut self) -> Result<(), TestSinkError> {
        self.pending.clear();
        Ok(())
    }

    fn close(&mut self) -> Result<(), TestSinkError> {
        self.closed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

struct Harness {
    committed: Arc<Mutex<Vec<(usize, u64)>>>,
    closed: Arc<AtomicU64>,
}

impl Harness {
    fn new() -> Self {
        Harness {
            committed: Arc::default(),
            closed: Arc::default(),
        }
    }

    fn sink(&self, shard: usize) -> RecordingSink {
        RecordingSink::new(shard, &self.committed, &self.closed)
    }

    /// Committed ids, checking none was committed twice.
    fn committed_ids(&self) -> HashSet<u64> {
        let committed = self.committed.lock().unwrap();
        let ids: HashSet<u64> = committed.iter().map(|&(_, id)| id).collect();
        assert_eq!(ids.len(), committed.len(), "a row was committed twice");
        ids
    }
}

#[test]
fn every_row_is_committed_once_by_the_shard_that_owns_it() {
    let harness = Harness::new();
    let summary = Pipeline::new(Numbers::new(50_000))
        .shards(3)
        .batch_rows(500)
        .run(|shard| Ok(harness.sink(shard)))
        .unwrap();
    assert_eq!(summary.rows_read, 50_000);
    assert_eq!(summary.rows_written, 50_000);
    assert_eq!(harness.committed_ids(), (1..=50_000).collect());
    // Record n sits at ring sequence n - 1.
    for &(shard, id) in harness.committed.lock().unwrap().iter() {
        assert_eq!(
            (id - 1) % 3,
            shard as u64,
            "record {id} went to shard {shard}"
        );
    }
    assert_eq!(harness.closed.load(Ordering::Relaxed), 3);
}

#[test]
fn retryable_flush_failures_are_rewound_and_lose_or_duplicate_nothing() {
    let harness = Harness::new();
    let summary = Pipeline::new(Numbers::new(20_000))
        .shards(2)
        .batch_rows(100)
        .rewind_strategy(RewindStrategy::Always)
        .run(|shard| {
            let mut sink = harness.sink(shard);
            sink.retryable_every = Some(3);
            Ok(sink)
        })
        .unwrap();
    assert_eq!(summary.rows_written, 20_000);
    assert!(summary.rewinds > 0, "no flush was ever retried");
    assert_eq!(harness.committed_ids(), (1..=20_000).collect());
}

#[test]
fn a_fatal_sink_error_stops_the_run_and_keeps_earlier_commits() {
    let harness = Harness::new();
    let failure = Pipeline::new(Numbers::new(100_000))
        .shards(2)
        .batch_rows(64)
        .capacity(1024)
        .run(|shard| {
            let mut sink = harness.sink(shard);
            sink.fatal_id = Some(30_001);
            Ok(sink)
        })
        .unwrap_err();
    let PipelineError::Sink(ref sink_failure) = failure.error else {
        panic!("expected a sink failure, got {failure}");
    };
    assert!(
        sink_failure.to_string().contains("cannot store 30001"),
        "{sink_failure}"
    );
    let ids = harness.committed_ids();
    assert!(!ids.contains(&30_001));
    assert_eq!(failure.summary.rows_written, ids.len() as u64);
    // Everything well before the failing batch was committed; the ring
    // (1,024 slots) bounds how far the other shard can have run ahead.
    assert!((1..=28_000).all(|id| ids.contains(&id)));
    assert!(
        failure.summary.rows_read < 100_000,
        "the source kept reading after the halt"
    );
    assert_eq!(
        harness.closed.load(Ordering::Relaxed),
        0,
        "closed after a failure"
    );
}

#[test]
fn a_source_error_commits_everything_before_it() {
    let harness = Harness::new();
    let mut source = Numbers::new(10_000);
    source.fail_at = Some(7_001);
    let failure = Pipeline::new(source)
        .shards(2)
        .run(|shard| Ok(harness.sink(shard)))
        .unwrap_err();
    assert!(
        matches!(failure.error, PipelineError::Source(_)),
        "{failure}"
    );
    assert_eq!(failure.to_string(), "bad record 7001");
    assert_eq!(failure.summary.rows_read, 7_000);
    assert_eq!(harness.committed_ids(), (1..=7_000).collect());
}

#[test]
fn a_sink_that_cannot_open_fails_before_reading() {
    let failure = Pipeline::new(Numbers::new(10))
        .shards(2)
        .run(|shard| match shard {
            0 => Ok(Harness::new().sink(0)),
            _ => Err(TestSinkError {
                message: "no connection".into(),
                retryable: false,
            }),
        })
        .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "cannot open sink for shard 1: no connection"
    );
    assert_eq!(failure.summary.rows_read, 0);
}

#[test]
fn progress_is_reported_and_ends_with_the_totals() {
    let harness = Harness::new();
    let mut last = None;
    Pipeline::new(Numbers::new(5_000))
        .run_with_progress(|shard| Ok(harness.sink(shard)), |p| last = Some(*p))
        .unwrap();
    let last = last.expect("no progress reported");
    assert_eq!((last.rows_read, last.rows_written), (5_000, 5_000));
    assert!(last.elapsed > Duration::ZERO);
}

#[test]
fn a_resumed_run_commits_exactly_the_records_the_first_run_did_not() {
    // First run: dies on record 6,001 with shards committing independently.
    let harness = Harness::new();
    let failure = Pipeline::new(Numbers::new(10_000))
        .shards(3)
        .batch_rows(100)
        .run(|shard| {
            let mut sink = harness.sink(shard);
            sink.fatal_id = Some(6_001);
            Ok(sink)
        })
        .unwrap_err();
    assert!(matches!(failure.error, PipelineError::Sink(_)), "{failure}");
    // What a checkpoint would hold: each shard's last committed record.
    let mut last = vec![0u64; 3];
    for &(shard, id) in harness.committed.lock().unwrap().iter() {
        last[shard] = last[shard].max(id);
    }
    let first_run = harness.committed_ids();

    let summary = Pipeline::new(Numbers::new(10_000))
        .shards(3)
        .batch_rows(100)
        .resume_after(last.clone())
        .run(|shard| Ok(harness.sink(shard)))
        .unwrap();
    assert_eq!(summary.rows_read, 10_000);
    assert_eq!(summary.rows_skipped, first_run.len() as u64);
    assert_eq!(summary.rows_written, 10_000 - first_run.len() as u64);
    // committed_ids() also proves nothing was committed twice.
    assert_eq!(harness.committed_ids(), (1..=10_000).collect());
}

#[test]
fn block_sharding_gives_each_shard_runs_of_consecutive_records_and_resumes_exactly() {
    let harness = Harness::new();
    let failure = Pipeline::new(Numbers::new(9_000))
        .shards(2)
        .batch_rows(150)
        .shard_block(100)
        .run(|shard| {
            let mut sink = harness.sink(shard);
            sink.fatal_id = Some(5_555);
            Ok(sink)
        })
        .unwrap_err();
    assert!(matches!(failure.error, PipelineError::Sink(_)), "{failure}");
    let mut last = vec![0u64; 2];
    for &(shard, id) in harness.committed.lock().unwrap().iter() {
        assert_eq!(
            ((id - 1) / 100 % 2) as usize,
            shard,
            "record {id} went to shard {shard}"
        );
        last[shard] = last[shard].max(id);
    }
    let first_run = harness.committed_ids();
    let summary = Pipeline::new(Numbers::new(9_000))
        .shards(2)
        .batch_rows(150)
        .shard_block(100)
        .resume_after(last)
        .run(|shard| Ok(harness.sink(shard)))
        .unwrap();
    assert_eq!(summary.rows_skipped, first_run.len() as u64);
    assert_eq!(harness.committed_ids(), (1..=9_000).collect());
}
