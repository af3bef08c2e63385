//! A resumed import must split its input where the interrupted one did.
//!
//! Which region (and so which shards) owns a record is decided by where
//! the regions start, and a resume skips a record when its owner's
//! checkpoint covers it ([`Ownership::committed`](crate::Ownership)). If
//! the split moved between the two runs (another version's rule, a plan
//! that stopped early in one of them), records between the old and the
//! new start would be skipped though nobody committed them, or written a
//! second time. The split is found while the import runs, so it cannot be
//! part of the [`ImportIdentity`](crate::ImportIdentity) compared before
//! it; instead each checkpoint stores its region's first record
//! ([`Checkpoint::region_start`](crate::Checkpoint::region_start)), and
//! each region checks its records against the interrupted run's
//! checkpoints before it publishes them.
//!
//! Three rules, together enough that every record a region writes was
//! committed by nobody and every record it skips was committed by its
//! owner:
//! 1. a region whose shards committed starts at the record it started at
//!    then;
//! 2. a region starts after every record the regions before it committed;
//! 3. a region stops before the first record of any later region whose
//!    shards committed.
//!
//! An input cut into parts ([`Part`](crate::Part)) is one sequence of
//! regions imported by several importers, each with checkpoints of its
//! own, so rules 2 and 3 also hold across parts: a part, fresh or resumed,
//! starts after every record the parts before it committed and stops
//! before the first record of the parts after it that committed
//! ([`Neighbours`]). Parts run by different versions, or one whose plan
//! went wrong, then cannot overlap; and where the parts around it tell
//! where it must start (the part before finished) or end (the part after
//! committed in its first region), a part must start or end exactly
//! there, so that no record falls between two parts.

use crate::{ImportIdentity, Layout, ResumeError, StoredCheckpoint};

/// What the other parts of a cut input committed, as one part's regions
/// must respect it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Neighbours {
    /// The last record a part before this one committed (0: none).
    after: u64,
    /// The first record of the first region of a later part that
    /// committed.
    before: Option<u64>,
    /// The last record of the part just before this one, if it finished.
    previous_end: Option<u64>,
    /// The first record of the part just after this one, if the shards of
    /// its first region committed.
    next_start: Option<u64>,
}

impl Neighbours {
    /// From `stored`, every checkpoint of the target: those of the other
    /// parts of `identity`'s input cut into as many parts (none for an
    /// import of the whole input).
    pub(crate) fn of(identity: &ImportIdentity, stored: &[StoredCheckpoint]) -> Neighbours {
        let part = identity.part;
        let others = stored.iter().filter(|c| {
            c.identity.input == identity.input
                && c.identity.part.count == part.count
                && c.identity.part.index != part.index
                && c.last_record > 0
        });
        let mut neighbours = Neighbours::default();
        let mut previous_complete = false;
        for checkpoint in others {
            let (index, last) = (checkpoint.identity.part.index, checkpoint.last_record);
            if index < part.index {
                neighbours.after = neighbours.after.max(last);
            } else if checkpoint.region_start > 0 {
                let start = checkpoint.region_start;
                neighbours.before = Some(neighbours.before.map_or(start, |b| b.min(start)));
            }
            if index + 1 == part.index {
                // A finished part committed every record it read, its
                // last one among them.
                previous_complete |= checkpoint.complete;
                let end = neighbours.previous_end.unwrap_or(0).max(last);
                neighbours.previous_end = Some(end);
            } else if index == part.index + 1 && in_first_region(checkpoint) {
                neighbours.next_start = Some(checkpoint.region_start);
            }
        }
        if !previous_complete {
            neighbours.previous_end = None;
        }
        neighbours
    }
}

/// Whether `checkpoint`'s shard reads the first region of its part, and
/// stored where it starts.
fn in_first_region(checkpoint: &StoredCheckpoint) -> bool {
    let Some((_, layout)) = Layout::split(&checkpoint.identity.mapping) else {
        return false;
    };
    let each = checkpoint.identity.shards as usize / layout.regions.max(1);
    checkpoint.shard < each && checkpoint.region_start > 0
}

/// What one region must respect, given the checkpoints of the run it
/// resumes and of the input's other parts; the default (a fresh import of
/// the whole input) allows everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SplitCheck {
    /// The region's number in this run (for messages).
    region: usize,
    /// Rule 1: where the region started, if its shards committed.
    start: Option<u64>,
    /// Rule 2: the last record an earlier region committed.
    after: u64,
    /// Rule 3: the first record of the nearest later region whose shards
    /// committed.
    before: Option<u64>,
    /// The last record of what comes just before the region, when known
    /// exactly (the part before finished): the region starts right after.
    follows: Option<u64>,
    /// The first record of what comes just after the region, when known
    /// exactly: the region ends right before it.
    next: Option<u64>,
}

impl SplitCheck {
    /// The checks of each of `regions` regions of `each` shards, from the
    /// interrupted run's checkpoints (none: a fresh run): per shard, the
    /// last record committed (0: none) and its region's first record (0:
    /// not known, as stored before region starts were kept); and from
    /// what the input's other parts committed.
    ///
    /// # Errors
    ///
    /// The shards of one region stored different starts.
    pub(crate) fn per_region(
        regions: usize,
        each: usize,
        (last_record, region_start): (&[u64], &[u64]),
        neighbours: Neighbours,
    ) -> Result<Vec<SplitCheck>, ResumeError> {
        let shards = |region: usize| region * each..(region + 1) * each;
        let mut starts = Vec::with_capacity(regions);
        for region in 0..regions {
            let mut known = shards(region)
                .filter(|&shard| last_record.get(shard).is_some_and(|&last| last > 0))
                .filter_map(|shard| region_start.get(shard).copied())
                .filter(|&start| start > 0);
            let start = known.next();
            if let Some(other) = known.find(|&other| Some(other) != start) {
                return Err(ResumeError::Split(format!(
                    "the checkpoints of region {region} disagree on its first record \
                     ({} and {other})",
                    start.unwrap_or_default()
                )));
            }
            starts.push(start);
        }
        Ok((0..regions)
            .map(|region| SplitCheck {
                region,
                start: starts[region],
                after: (0..region)
                    .flat_map(shards)
                    .filter_map(|shard| last_record.get(shard).copied())
                    .fold(neighbours.after, u64::max),
                before: starts[region + 1..]
                    .iter()
                    .flatten()
                    .copied()
                    .next()
                    .or(neighbours.before),
                follows: neighbours.previous_end.filter(|_| region == 0),
                next: match starts.get(region + 1) {
                    Some(next) => *next,
                    None => neighbours.next_start,
                },
            })
            .collect())
    }

    /// Checks the region's first record (rules 1 and 2, and that it
    /// follows a finished part before it) and every record after it
    /// (rule 3), before the record is written or skipped.
    ///
    /// # Errors
    ///
    /// The input is split elsewhere than the checkpoints record.
    pub(crate) fn check(&self, record: u64, first: bool) -> Result<(), ResumeError> {
        let region = self.region;
        if first {
            if let Some(start) = self.start.filter(|&start| start != record) {
                return Err(ResumeError::Split(format!(
                    "region {region} starts at record {record}, \
                     in the interrupted import at record {start}"
                )));
            }
            if let Some(end) = self.follows.filter(|&end| end + 1 != record) {
                return Err(ResumeError::Split(format!(
                    "region {region} starts at record {record}, but the part before it \
                     ended at record {end}"
                )));
            }
            if record <= self.after {
                return Err(ResumeError::Split(format!(
                    "region {region} starts at record {record}, but record {} was committed \
                     in an earlier region or part",
                    self.after
                )));
            }
        }
        match self.before {
            Some(before) if record >= before => Err(ResumeError::Split(format!(
                "region {region} reaches record {record}, where a later region or part \
                 started (record {before})"
            ))),
            _ => Ok(()),
        }
    }

    /// Checks where the region ended: `last`, its last record (`None`
    /// when it read none).
    ///
    /// # Errors
    ///
    /// What follows it starts later: the records between would belong to
    /// no region.
    pub(crate) fn finish(&self, last: Option<u64>) -> Result<(), ResumeError> {
        match (last, self.next) {
            (Some(last), Some(next)) if last + 1 != next => Err(ResumeError::Split(format!(
                "region {} ends at record {last}, but what follows it starts at record \
                 {next}: the records between would belong to no region",
                self.region
            ))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two regions of two shards; the interrupted run split at record 101.
    fn checks(last_record: [u64; 4], region_start: [u64; 4]) -> Vec<SplitCheck> {
        let stored = (&last_record[..], &region_start[..]);
        SplitCheck::per_region(2, 2, stored, Neighbours::default()).unwrap()
    }

    #[test]
    fn the_same_split_passes() {
        let [first, second] = checks([40, 60, 140, 160], [1, 1, 101, 101])[..] else {
            unreachable!()
        };
        assert_eq!(first.check(1, true), Ok(()));
        assert_eq!(first.check(100, false), Ok(()));
        assert_eq!(second.check(101, true), Ok(()));
        assert_eq!(second.check(1_000, false), Ok(()));
    }

    #[test]
    fn a_later_region_that_moved_is_refused() {
        let [_, second] = checks([40, 60, 140, 160], [1, 1, 101, 101])[..] else {
            unreachable!()
        };
        // Moved down: records 91..=100 would be skipped, never committed.
        let error = second.check(91, true).unwrap_err();
        assert!(error.to_string().contains("region 1 starts at record 91"));
        // Moved up: records 101..=110 are region 0's now.
        assert!(second.check(111, true).is_err());
    }

    #[test]
    fn an_earlier_region_may_not_run_into_a_later_one() {
        // The plan stopped early: region 0 reads to the end of the input.
        let [first, _] = checks([40, 60, 140, 160], [1, 1, 101, 101])[..] else {
            unreachable!()
        };
        assert!(first.check(100, false).is_ok());
        assert!(first.check(101, false).is_err());
    }

    #[test]
    fn a_region_that_committed_nothing_starts_after_what_others_committed() {
        // Region 1 committed nothing; region 0 got to record 95.
        let [_, second] = checks([95, 60, 0, 0], [1, 1, 0, 0])[..] else {
            unreachable!()
        };
        assert!(
            second.check(96, true).is_ok(),
            "a split moved up is harmless"
        );
        let error = second.check(90, true).unwrap_err();
        assert!(error.to_string().contains("record 95 was committed"));
    }

    #[test]
    fn starts_not_stored_are_not_checked() {
        let [_, second] = checks([40, 60, 140, 160], [0, 0, 0, 0])[..] else {
            unreachable!()
        };
        assert!(second.check(91, true).is_ok());
    }

    #[test]
    fn shards_of_one_region_must_agree() {
        let stored = (&[1, 1, 5, 6][..], &[1, 1, 3, 4][..]);
        let error = SplitCheck::per_region(2, 2, stored, Neighbours::default()).unwrap_err();
        assert!(error.to_string().contains("disagree"));
    }

    fn checkpoint(part: u32, last_record: u64, region_start: u64) -> StoredCheckpoint {
        StoredCheckpoint {
            identity: ImportIdentity {
                input: "in".into(),
                shards: 1,
                mapping: "m;shard-block=50".into(),
                part: crate::Part::new(part, 3).unwrap(),
            },
            shard: 0,
            last_record,
            region_start,
            rows_crc: None,
            complete: false,
            diverted: 0,
        }
    }

    #[test]
    fn a_part_after_a_finished_one_starts_right_after_it() {
        let mut finished = checkpoint(0, 100, 1);
        finished.complete = true;
        let part_1 = checkpoint(1, 0, 0).identity;
        let neighbours = Neighbours::of(&part_1, &[finished]);
        let [check] = SplitCheck::per_region(1, 1, (&[], &[]), neighbours).unwrap()[..] else {
            unreachable!()
        };
        assert!(check.check(101, true).is_ok());
        let gap = check.check(111, true).unwrap_err();
        assert!(gap.to_string().contains("ended at record 100"), "{gap}");
    }

    #[test]
    fn a_part_stays_between_what_the_parts_around_it_committed() {
        // Parts of 100 records; part 0 committed through 80, part 2 from 201.
        let stored = [checkpoint(0, 80, 1), checkpoint(2, 250, 201)];
        let part_1 = checkpoint(1, 0, 0).identity;
        let neighbours = Neighbours::of(&part_1, &stored);
        let [check] = SplitCheck::per_region(1, 1, (&[], &[]), neighbours).unwrap()[..] else {
            unreachable!()
        };
        assert!(check.check(101, true).is_ok() && check.check(200, false).is_ok());
        assert!(check.check(80, true).is_err(), "part 0 committed 80");
        assert!(check.check(201, false).is_err(), "part 2 starts at 201");
        // Part 1 runs into part 2's start, so it must end right before it.
        assert!(check.finish(Some(200)).is_ok());
        let gap = check.finish(Some(190)).unwrap_err();
        assert!(
            gap.to_string().contains("would belong to no region"),
            "{gap}"
        );
        // Part 0 has not finished: where part 1 starts is not known exactly.
        assert!(check.check(102, true).is_ok());
        // Another cut of the same input is none of its neighbours.
        let mut other_cut = part_1.clone();
        other_cut.part = crate::Part::new(1, 4).unwrap();
        assert_eq!(Neighbours::of(&other_cut, &stored), Neighbours::default());
    }
}
