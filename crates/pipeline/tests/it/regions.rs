//! Several regions as one import: shard numbering across the run, record
//! numbers that count in the whole input, and one region's failure
//! stopping the others with nothing lost or doubled.

use ringpipe_pipeline::{Import, ImportError};

use crate::support::{committed_run, region, Faults, Memory};

#[test]
fn shards_are_numbered_across_regions_and_records_across_the_input() {
    let target = Memory::default();
    let summary = Import::new(target.clone())
        .shards(4)
        .batch_rows(100)
        .run(vec![region(0, 3_000), region(3_000, 5_001)])
        .unwrap();
    assert_eq!(
        (summary.rows_read, summary.rows_written, summary.shards),
        (5_001, 5_001, 4)
    );
    let rows = target.sorted();
    assert_eq!(rows.len(), 5_001, "every row once");
    for (i, &(shard, id, record)) in rows.iter().enumerate() {
        assert_eq!(id, i as u64 + 1);
        assert_eq!(record, id, "record numbers count in the whole input");
        let first_shard = if id <= 3_000 { 0 } else { 2 };
        let expected = first_shard + ((id - 1) / 100 % 2) as usize;
        assert_eq!(shard, expected, "record {id}");
    }
}

#[test]
fn bad_input_stops_the_later_regions_and_its_error_is_reported() {
    let target = Memory::default();
    let mut bad = region(0, 100_000);
    bad.fail_at = Some(50_001);
    let failure = Import::new(target.clone())
        .shards(2)
        .batch_rows(1_000)
        // Far longer than the failing region: it must stop early.
        .run(vec![bad, region(100_000, 10_000_000)])
        .unwrap_err();
    assert!(
        matches!(failure.error, ImportError::Source(ref e) if e.0 == 50_001),
        "{failure}"
    );
    let rows = target.sorted();
    assert_eq!(committed_run(&rows, 0, 1), 50_000, "all before the fault");
    let later = committed_run(&rows, 1, 100_001);
    assert!(
        later < 9_900_000,
        "the later region stopped early ({later} rows)"
    );
    assert_eq!(failure.summary.rows_written, rows.len() as u64);
}

#[test]
fn bad_input_lets_the_earlier_regions_finish_and_stops_the_later_ones() {
    let target = Memory::default();
    let mut bad = region(200_000, 300_000);
    bad.fail_at = Some(200_101);
    let failure = Import::new(target.clone())
        .shards(3)
        .batch_rows(1_000)
        // The third region, stopped by the fault before it, must not stop the first.
        .run(vec![region(0, 200_000), bad, region(300_000, 10_300_000)])
        .unwrap_err();
    assert!(matches!(failure.error, ImportError::Source(_)), "{failure}");
    let rows = target.sorted();
    assert_eq!(
        committed_run(&rows, 0, 1),
        200_000,
        "everything before the fault"
    );
    assert_eq!(committed_run(&rows, 1, 200_001), 100);
    let later = committed_run(&rows, 2, 300_001);
    assert!(
        later < 9_900_000,
        "the later region stopped early ({later} rows)"
    );
}

#[test]
fn a_failing_sink_stops_every_region() {
    let target = Memory::default().with_faults(Faults {
        fatal_id: Some(10_050_001),
        ..Faults::default()
    });
    let failure = Import::new(target.clone())
        .shards(2)
        .batch_rows(1_000)
        .run(vec![region(0, 10_000_000), region(10_000_000, 10_100_000)])
        .unwrap_err();
    assert!(
        matches!(failure.error, ImportError::Sink { shard: 1, .. }),
        "{failure}"
    );
    let rows = target.sorted();
    let first = committed_run(&rows, 0, 1);
    assert!(
        first < 9_900_000,
        "the earlier region stopped early ({first} rows)"
    );
    // The failing batch rolled back: a prefix of the ids before it stays.
    let second = committed_run(&rows, 1, 10_000_001);
    assert!(second <= 50_000, "{second} rows, some past the failing one");
}

#[test]
fn a_panicking_source_stops_every_region_and_the_panic_goes_on() {
    let target = Memory::default();
    let mut buggy = region(10_000_000, 10_100_000);
    buggy.fail_at = Some(10_050_001);
    buggy.panics = true;
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Import::new(target.clone())
            .shards(2)
            .batch_rows(1_000)
            .run(vec![region(0, 10_000_000), buggy])
    }));
    let panic = run.expect_err("the source's panic reaches the caller");
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("source bug at 10050001")
    );
    let first = committed_run(&target.sorted(), 0, 1);
    assert!(
        first < 9_900_000,
        "the earlier region stopped early ({first} rows)"
    );
}
