//! Exactly once across an interruption: every combination of shards,
//! regions and shard blocks, interrupted at several points and resumed,
//! commits every record exactly once.

use ringpipe_pipeline::{Import, ImportError, Layout, ResumeError};

use crate::support::{region, regions, Faults, Memory};

/// Records in the input of the matrix.
const TOTAL: u64 = 6_000;

/// Imports `TOTAL` records with a fatal fault at `fail_id`, then resumes
/// with the same settings, and checks the result is exact.
fn interrupt_and_resume(shards: usize, region_count: u64, block: Option<u64>, fail_id: u64) {
    let case =
        format!("shards {shards}, regions {region_count}, block {block:?}, fail at {fail_id}");
    let import = |target: &Memory, resume: bool| {
        let mut import = Import::new(target.clone())
            .shards(shards)
            .batch_rows(50)
            .checkpoints("numbers", "id,name")
            .resume(resume);
        if let Some(block) = block {
            import = import.shard_block(block);
        }
        import.run(regions(TOTAL, region_count))
    };
    let target = Memory::default();
    let first = target.with_faults(Faults {
        fatal_id: Some(fail_id),
        ..Faults::default()
    });
    let failure = import(&first, false).expect_err(&case);
    assert!(
        matches!(failure.error, ImportError::Sink { .. }),
        "{case}: {failure}"
    );
    let committed_before = target.committed_ids().len() as u64;
    assert!(
        committed_before < TOTAL,
        "{case}: the fault landed after the end"
    );
    // Nothing committed, nothing recorded: the resume starts afresh.
    let summary = import(&target, true).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(summary.rows_read, TOTAL, "{case}");
    assert_eq!(summary.rows_skipped, committed_before, "{case}");
    assert_eq!(summary.rows_written, TOTAL - committed_before, "{case}");
    // `committed_ids` also fails on a record committed twice.
    assert_eq!(target.committed_ids(), (1..=TOTAL).collect(), "{case}");
}

#[test]
fn every_layout_resumes_exactly_after_an_interruption() {
    for shards in [1, 2, 4, 6] {
        for region_count in [1, 2, 3] {
            if shards % region_count as usize != 0 {
                continue;
            }
            for block in [Some(1), Some(7), None] {
                for fail_id in [1, 777, 2_999, 3_001, 5_999] {
                    interrupt_and_resume(shards, region_count, block, fail_id);
                }
            }
        }
    }
}

#[test]
fn a_resume_with_other_settings_is_refused() {
    let target = Memory::default().with_faults(Faults {
        fatal_id: Some(100),
        ..Faults::default()
    });
    let import = |shards: usize, input: &str| {
        Import::new(target.clone())
            .shards(shards)
            .batch_rows(10)
            .checkpoints(input, "id,name")
    };
    import(2, "a").run(regions(1_000, 1)).unwrap_err();
    let failure = import(4, "a")
        .resume(true)
        .run(regions(1_000, 1))
        .unwrap_err();
    assert!(
        matches!(
            failure.error,
            ImportError::Resume(ResumeError::Differs {
                what: "shard count",
                ..
            })
        ),
        "{failure}"
    );
    let failure = import(2, "b")
        .resume(true)
        .run(regions(1_000, 1))
        .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "the interrupted import had input a, this one has b"
    );
    let failure = import(2, "a")
        .resume(true)
        .run(regions(1_000, 2))
        .unwrap_err();
    let layout = |regions| Layout {
        shard_block: 10,
        regions,
    };
    assert!(
        matches!(
            failure.error,
            ImportError::Resume(ResumeError::Layout { was, now })
                if was == layout(1) && now == layout(2)
        ),
        "{failure}"
    );
}

#[test]
fn resuming_with_nothing_recorded_starts_afresh_and_a_finished_one_is_complete() {
    let target = Memory::default();
    let import = || {
        Import::new(target.clone())
            .checkpoints("a", "m")
            .resume(true)
            .run(regions(10, 1))
    };
    let first = import().unwrap();
    assert_eq!((first.rows_written, first.already_complete), (10, false));
    let again = import().unwrap();
    assert_eq!((again.rows_read, again.already_complete), (0, true));
    assert_eq!(target.committed_ids(), (1..=10).collect());
}

#[test]
fn a_resume_that_splits_the_input_elsewhere_is_refused_before_it_writes() {
    // The interrupted run split 1..=1000 at record 501 and failed in its
    // second region, which had committed through record 890 or so.
    let target = Memory::default();
    let import = |target: &Memory, resume: bool, split: u64, second_from: u64| {
        Import::new(target.clone())
            .shards(2)
            .batch_rows(10)
            .checkpoints("numbers", "id,name")
            .resume(resume)
            .run(vec![region(0, split), region(second_from, 1_000)])
    };
    let failing = target.with_faults(Faults {
        fatal_id: Some(900),
        ..Faults::default()
    });
    import(&failing, false, 500, 500).unwrap_err();
    let committed = target.committed_ids();
    assert!(committed.contains(&501) && !committed.contains(&900));
    // The split moved down (the second region would skip 401..=500, which
    // only the first region could have committed), moved up (the first
    // region would take 501..=600, which the second committed), or was
    // not found (the first region reads to the end).
    // (Moved, either region may be the first to find it; it stops the
    // other.)
    for (split, second_from, names) in [
        (
            400,
            400,
            &[
                "region 1 starts at record 401",
                "region 0 ends at record 400",
            ][..],
        ),
        (
            600,
            600,
            &[
                "region 0 reaches record 501",
                "region 1 starts at record 601",
            ],
        ),
        (1_000, 1_000, &["region 0 reaches record 501"]),
    ] {
        let failure = import(&target, true, split, second_from).unwrap_err();
        assert!(
            matches!(&failure.error, ImportError::Resume(ResumeError::Split(why))
                if names.iter().any(|name| why.contains(name))),
            "split at {split}: {failure}"
        );
        // Nothing was written twice (`committed_ids` checks), and nothing
        // past the point where the splits part.
        assert!(target
            .committed_ids()
            .iter()
            .all(|&id| id <= 500 || committed.contains(&id)));
    }
    // The same split resumes exactly.
    import(&target, true, 500, 500).unwrap();
    assert_eq!(target.committed_ids(), (1..=1_000).collect());
}

#[test]
fn a_resume_whose_committed_records_changed_is_refused() {
    let target = Memory::default();
    let import = |target: &Memory, resume: bool, changed: Option<u64>| {
        let mut sources = regions(1_000, 2);
        for source in &mut sources {
            source.changed = changed;
        }
        Import::new(target.clone())
            .shards(2)
            .batch_rows(10)
            .checkpoints("numbers", "id,name")
            .resume(resume)
            .run(sources)
    };
    // Interrupted at 900 in the second region, with batches replayed on the
    // way (a replayed batch counts once in the digest).
    let failing = target.with_faults(Faults {
        fatal_id: Some(900),
        retryable_every: Some(3),
        ..Faults::default()
    });
    import(&failing, false, None).unwrap_err();
    assert!(target.committed_ids().contains(&600));
    // Record 600, committed by the second region's shard, reads
    // differently now.
    let failure = import(&target, true, Some(600)).unwrap_err();
    assert!(
        matches!(
            failure.error,
            ImportError::Resume(ResumeError::InputChanged { shard: 1, .. })
        ),
        "{failure}"
    );
    // The input as it was resumes exactly.
    import(&target, true, None).unwrap();
    assert_eq!(target.committed_ids(), (1..=1_000).collect());
}
