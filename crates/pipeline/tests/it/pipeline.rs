//! One region end to end: routing, retries, failures, progress.

use std::sync::atomic::Ordering;
use std::time::Duration;

use ringpipe_pipeline::{Import, ImportError};

use crate::support::{region, Faults, Memory};

#[test]
fn every_row_is_committed_once_by_the_shard_that_owns_it() {
    let target = Memory::default();
    let summary = Import::new(target.clone())
        .shards(3)
        .batch_rows(500)
        .shard_block(1)
        .run(vec![region(0, 50_000)])
        .unwrap();
    assert_eq!((summary.rows_read, summary.rows_written), (50_000, 50_000));
    assert_eq!(target.committed_ids(), (1..=50_000).collect());
    for (shard, id, record) in target.sorted() {
        assert_eq!(record, id);
        assert_eq!(
            (id - 1) % 3,
            shard as u64,
            "record {id} went to shard {shard}"
        );
    }
    assert_eq!(target.closed.load(Ordering::Relaxed), 3);
    assert!(
        target.store.lock().unwrap().checkpoints.is_empty(),
        "a finished import leaves no checkpoint"
    );
}

#[test]
fn retryable_commit_failures_are_rewound_and_lose_or_duplicate_nothing() {
    let target = Memory::default().with_faults(Faults {
        retryable_every: Some(3),
        ..Faults::default()
    });
    let summary = Import::new(target.clone())
        .shards(2)
        .batch_rows(100)
        .run(vec![region(0, 20_000)])
        .unwrap();
    assert_eq!(summary.rows_written, 20_000);
    assert!(summary.rewinds > 0, "no commit was ever retried");
    assert_eq!(target.committed_ids(), (1..=20_000).collect());
}

#[test]
fn a_retryable_error_past_the_retry_budget_fails_with_the_sinks_own_error() {
    let target = Memory::default().with_faults(Faults {
        retryable_every: Some(1),
        ..Faults::default()
    });
    let failure = Import::new(target.clone())
        .retry_for(Duration::from_millis(300))
        .run(vec![region(0, 100)])
        .unwrap_err();
    let ImportError::Sink {
        shard: 0,
        ref error,
    } = failure.error
    else {
        panic!("expected the sink's error, got {failure}");
    };
    assert!(error.retryable && error.message == "deadlock", "{error}");
    assert!(failure.summary.rewinds >= 2, "{:?}", failure.summary);
    assert!(target.committed_ids().is_empty());
}

#[test]
fn a_fatal_sink_error_stops_the_run_and_keeps_earlier_commits() {
    let target = Memory::default().with_faults(Faults {
        fatal_id: Some(30_001),
        ..Faults::default()
    });
    let failure = Import::new(target.clone())
        .shards(2)
        .batch_rows(64)
        .shard_block(1)
        .capacity(1024)
        .run(vec![region(0, 100_000)])
        .unwrap_err();
    // The typed error comes back as the sink made it.
    let ImportError::Sink { ref error, .. } = failure.error else {
        panic!("expected a sink failure, got {failure}");
    };
    assert_eq!(error.message, "cannot store 30001");
    let ids = target.committed_ids();
    assert!(!ids.contains(&30_001));
    assert_eq!(failure.summary.rows_written, ids.len() as u64);
    // Everything well before the failing batch was committed; the ring
    // (1,024 slots) bounds how far the other shard can have run ahead.
    assert!((1..=28_000).all(|id| ids.contains(&id)));
    assert!(
        failure.summary.rows_read < 100_000,
        "read on after the halt"
    );
    assert_eq!(
        target.closed.load(Ordering::Relaxed),
        0,
        "closed after a failure"
    );
}

#[test]
fn a_source_error_commits_everything_before_it() {
    let target = Memory::default();
    let mut source = region(0, 10_000);
    source.fail_at = Some(7_001);
    let failure = Import::new(target.clone())
        .shards(2)
        .run(vec![source])
        .unwrap_err();
    let ImportError::Source(ref bad) = failure.error else {
        panic!("expected a source error, got {failure}");
    };
    assert_eq!(bad.0, 7_001);
    assert_eq!(failure.to_string(), "bad record 7001");
    assert_eq!(failure.summary.rows_read, 7_000);
    assert_eq!(target.committed_ids(), (1..=7_000).collect());
}

#[test]
fn a_sink_that_cannot_open_fails_before_reading() {
    let target = Memory::default().with_faults(Faults {
        unopenable: Some(1),
        ..Faults::default()
    });
    let failure = Import::new(target)
        .shards(2)
        .run(vec![region(0, 10)])
        .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "cannot open the sink of shard 1: no connection"
    );
    assert_eq!(failure.summary.rows_read, 0);
}

#[test]
fn a_sink_refused_for_a_while_is_opened_when_the_server_lets_it() {
    let target = Memory::default().with_faults(Faults {
        refused_opens: std::sync::Arc::new(3.into()),
        ..Faults::default()
    });
    let summary = Import::new(target.clone())
        .shards(2)
        .run(vec![region(0, 100)])
        .unwrap();
    assert_eq!(summary.rows_written, 100);
    assert_eq!(target.faults.refused_opens.load(Ordering::SeqCst), 0);
}

#[test]
fn progress_is_reported_and_ends_with_the_totals() {
    let mut last = None;
    Import::new(Memory::default())
        .run_with_progress(vec![region(0, 5_000)], |p| last = Some(*p))
        .unwrap();
    let last = last.expect("no progress reported");
    assert_eq!((last.rows_read, last.rows_written), (5_000, 5_000));
    assert!(last.elapsed > Duration::ZERO);
}

#[test]
fn settings_that_contradict_each_other_are_refused_before_reading() {
    let failure = Import::new(Memory::default())
        .shards(3)
        .run(vec![region(0, 10), region(10, 20)])
        .unwrap_err();
    assert!(
        matches!(failure.error, ImportError::Settings(_)),
        "{failure}"
    );
    let failure = Import::new(Memory::default())
        .resume(true)
        .run(vec![region(0, 10)])
        .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "resuming needs an input that can be read again, not a pipe"
    );
}

#[test]
fn a_closure_is_a_target_and_discard_stores_nothing() {
    use ringpipe_pipeline::Discard;
    let summary = Import::new(|_| Ok(Discard))
        .shards(2)
        .run(vec![region(0, 1_000)])
        .unwrap();
    assert_eq!((summary.rows_read, summary.rows_written), (1_000, 1_000));
    let summary = Import::new(Discard).run(vec![region(0, 10)]).unwrap();
    assert_eq!(summary.commits, 1);
}
