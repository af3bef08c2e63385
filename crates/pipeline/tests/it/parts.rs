//! An input cut into parts, each imported on its own: in any order, one
//! part failing and resumed, every record lands exactly once; finished
//! parts resume as complete; another cut of the input is refused.

use ringpipe_pipeline::{Import, ImportError, Part, ResumeError};

use crate::support::{region, regions, Faults, Memory, Numbers};

/// Records of the input.
const TOTAL: u64 = 4_000;
/// Parts, and regions per part.
const PARTS: u32 = 4;
const PER_PART: u64 = 2;

/// Part `index` of the input into `target`, 2 regions and 4 shards.
fn import_part(
    target: &Memory,
    index: u32,
    resume: bool,
) -> ringpipe_pipeline::ImportResult<crate::support::Numbers, Memory> {
    Import::new(target.clone())
        .shards(4)
        .batch_rows(50)
        .checkpoints("numbers", "id,name")
        .part(Part::new(index, PARTS).unwrap())
        .resume(resume)
        .run(regions(TOTAL, PARTS as u64 * PER_PART))
}

#[test]
fn parts_in_any_order_one_failing_then_resumed_import_each_record_once() {
    let target = Memory::default();
    // Part 3 (records 3001..=4000) fails half-way.
    let faulty = target.with_faults(Faults {
        fatal_id: Some(3_500),
        ..Faults::default()
    });
    let failure = import_part(&faulty, 3, false).unwrap_err();
    assert!(
        matches!(failure.error, ImportError::Sink { .. }),
        "{failure}"
    );
    let committed_before = target.committed_ids().len() as u64;
    assert!((1..1_000).contains(&committed_before), "{committed_before}");
    // The other parts start afresh, in another order; none clears part 3.
    for index in [1, 0, 2] {
        let summary = import_part(&target, index, false).unwrap();
        assert_eq!((summary.rows_read, summary.rows_written), (1_000, 1_000));
    }
    // A scheduler retries everything with the same command.
    for index in [0, 3, 1, 2] {
        let summary = import_part(&target, index, true).unwrap();
        match index {
            3 => {
                assert_eq!(summary.rows_skipped, committed_before);
                assert_eq!(summary.rows_written, 1_000 - committed_before);
            }
            _ => assert!(summary.already_complete, "part {index}"),
        }
    }
    // `committed_ids` also fails on a record committed twice.
    assert_eq!(target.committed_ids(), (1..=TOTAL).collect());
    for index in 0..PARTS {
        let again = import_part(&target, index, true).unwrap();
        assert!(again.already_complete && again.rows_read == 0);
    }
    assert_eq!(target.committed_ids().len() as u64, TOTAL);
}

#[test]
fn checkpoint_bookkeeping_that_fails_retryably_is_retried() {
    let target = Memory::default();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    let flaky = target.with_faults(Faults {
        flaky_bookkeeping: Some(seen.clone()),
        ..Faults::default()
    });
    let summary = import_part(&flaky, 0, false).unwrap();
    assert_eq!(summary.rows_written, 1_000);
    let again = import_part(&flaky, 0, true).unwrap();
    assert!(again.already_complete);
    let mut kinds: Vec<&str> = seen.lock().unwrap().iter().copied().collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["clear part", "mark complete", "read"]);
    assert_eq!(target.committed_ids().len(), 1_000);
}

#[test]
fn a_part_records_its_own_records_and_numbers() {
    let target = Memory::default();
    import_part(&target, 2, false).unwrap();
    let rows = target.sorted();
    assert_eq!(rows.first().map(|r| (r.1, r.2)), Some((2_001, 2_001)));
    assert_eq!(rows.last().map(|r| (r.1, r.2)), Some((3_000, 3_000)));
}

#[test]
fn another_cut_of_the_input_is_refused_and_regions_must_divide() {
    let target = Memory::default().with_faults(Faults {
        fatal_id: Some(1_500),
        ..Faults::default()
    });
    import_part(&target, 1, false).unwrap_err();
    let other_cut = Import::new(target.clone())
        .shards(4)
        .checkpoints("numbers", "id,name")
        .part(Part::new(1, 2).unwrap())
        .resume(true)
        .run(regions(TOTAL, 4))
        .unwrap_err();
    assert!(
        matches!(
            other_cut.error,
            ImportError::Resume(ResumeError::Differs {
                what: "part count",
                ..
            })
        ),
        "{other_cut}"
    );
    let uneven = Import::new(Memory::default())
        .part(Part::new(0, 3).unwrap())
        .run(regions(100, 4))
        .unwrap_err();
    assert!(matches!(uneven.error, ImportError::Settings(_)), "{uneven}");
}

#[test]
fn a_part_that_would_overlap_another_part_is_refused() {
    // Two parts of 1,000 records cut at record 501, one region each.
    let target = Memory::default();
    let part = |index: u32, split: u64, resume: bool| {
        Import::new(target.clone())
            .shards(1)
            .batch_rows(50)
            .checkpoints("numbers", "id,name")
            .part(Part::new(index, 2).unwrap())
            .resume(resume)
            .run(vec![region(0, split), region(split, 1_000)])
    };
    let refused = |result: ringpipe_pipeline::ImportResult<Numbers, Memory>, naming: &str| {
        let failure = result.unwrap_err();
        assert!(
            matches!(&failure.error, ImportError::Resume(ResumeError::Split(why))
                if why.contains(naming)),
            "{failure}"
        );
    };
    part(1, 500, false).unwrap();
    // Part 0 run by an importer that cuts the input at 601 (another
    // version's rule, a plan gone wrong) would write 501..=600 again: it
    // stops before 501, having committed the records before it.
    refused(part(0, 600, false), "reaches record 501");
    // `committed_ids` also fails on a record committed twice.
    assert_eq!(target.committed_ids(), (1..=1_000).collect());
    let resumed = part(0, 500, true).unwrap();
    assert_eq!((resumed.rows_skipped, resumed.rows_written), (500, 0));
    // Part 1 cut at 401 would write 401..=500 again, which part 0
    // committed; cut at 511, it would leave 501..=510 to no part.
    refused(
        part(1, 400, false),
        "the part before it ended at record 500",
    );
    refused(
        part(1, 510, false),
        "the part before it ended at record 500",
    );
    assert_eq!(target.committed_ids(), (1..=1_000).collect());
}

#[test]
fn a_part_is_refused_a_target_that_empties_on_a_fresh_start() {
    let target = Memory {
        empties: true,
        ..Memory::default()
    };
    for resume in [false, true] {
        let failure = import_part(&target, 1, resume).unwrap_err();
        assert!(
            matches!(failure.error, ImportError::Settings(_)),
            "{failure}"
        );
        assert!(failure.to_string().contains("must not empty"), "{failure}");
    }
    // The whole input may.
    Import::new(target).run(regions(100, 1)).unwrap();
}

#[test]
fn a_target_where_order_matters_takes_one_writer_unless_any_order_will_do() {
    let target = Memory {
        order_matters: true,
        ..Memory::default()
    };
    let refused = |failure: &ringpipe_pipeline::ImportFailure<_, _>, writers: &str| {
        assert!(
            matches!(failure.error, ImportError::Settings(_)),
            "{failure}"
        );
        assert!(failure.to_string().contains(writers), "{failure}");
    };
    let shards = Import::new(target.clone())
        .shards(2)
        .run(regions(100, 1))
        .unwrap_err();
    refused(&shards, "not 2 shards");
    let part = Import::new(target.clone())
        .part(Part::new(1, 2).unwrap())
        .run(regions(100, 2))
        .unwrap_err();
    refused(&part, "not part 1/2");
    // One writer of the whole input keeps the order; so may any writers
    // when any order will do.
    Import::new(target.clone()).run(regions(100, 1)).unwrap();
    let summary = Import::new(target.clone())
        .shards(2)
        .any_order(true)
        .run(regions(100, 1))
        .unwrap();
    assert_eq!(summary.rows_written, 100);
}
