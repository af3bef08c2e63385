//! Where an import starts, given the checkpoints its target holds: afresh,
//! after them, or not at all (its part already finished).

use crate::{ImportIdentity, Layout, ResumeError, StoredCheckpoint};

/// How a resumed import (`--resume`) starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// No checkpoint of this part: start it as a fresh import would.
    Fresh,
    /// Continue after the checkpoints: per shard, the last record
    /// committed (0: none), its region's first record (0: not known) and
    /// the digest of its rows (`Some(0)`: none committed; `None`: not
    /// known); and the bad records the committed batches set aside, in all.
    After {
        last_record: Vec<u64>,
        region_start: Vec<u64>,
        rows_crc: Vec<Option<u32>>,
        diverted: u64,
    },
    /// The part finished: nothing to do.
    Complete,
}

/// Decides how `identity` resumes from `stored`, every checkpoint of the
/// target.
///
/// The checkpoints that concern it are those of its part index (any input,
/// any part count); for an import of the whole input, every checkpoint of
/// the target. Each must have been committed by the same import (input,
/// part count, shard count, mapping), else the resume is refused: another
/// file, another mapping or another cut of the same file went there.
pub(crate) fn start_point(
    identity: &ImportIdentity,
    stored: &[StoredCheckpoint],
) -> Result<Start, ResumeError> {
    let part = identity.part;
    let mine: Vec<&StoredCheckpoint> = stored
        .iter()
        .filter(|c| part.is_whole() || c.identity.part.index == part.index)
        .collect();
    if mine.is_empty() {
        return Ok(Start::Fresh);
    }
    for checkpoint in &mine {
        same_import(&checkpoint.identity, identity)?;
    }
    if mine.iter().any(|c| c.complete) {
        return Ok(Start::Complete);
    }
    let mut last_record = vec![0; identity.shards as usize];
    let mut region_start = vec![0; identity.shards as usize];
    let mut rows_crc = vec![Some(0); identity.shards as usize];
    let mut diverted = 0u64;
    for checkpoint in mine {
        diverted = diverted.saturating_add(checkpoint.diverted);
        match last_record.get_mut(checkpoint.shard) {
            Some(last) => {
                *last = checkpoint.last_record;
                region_start[checkpoint.shard] = checkpoint.region_start;
                rows_crc[checkpoint.shard] = checkpoint.rows_crc;
            }
            None => {
                return Err(differs(
                    "a checkpoint of shard",
                    &checkpoint.shard,
                    &"fewer",
                ));
            }
        }
    }
    Ok(Start::After {
        last_record,
        region_start,
        rows_crc,
        diverted,
    })
}

/// Refuses to resume `now` from the checkpoints of `was` unless they are
/// the same import.
fn same_import(was: &ImportIdentity, now: &ImportIdentity) -> Result<(), ResumeError> {
    if was.part.count != now.part.count {
        return Err(differs("part count", &was.part.count, &now.part.count));
    }
    if was.input != now.input {
        return Err(differs("input", &was.input, &now.input));
    }
    if was.shards != now.shards {
        return Err(differs("shard count", &was.shards, &now.shards));
    }
    if was.mapping != now.mapping {
        if let (Some((was_rest, was_layout)), Some((now_rest, now_layout))) =
            (Layout::split(&was.mapping), Layout::split(&now.mapping))
        {
            if was_rest == now_rest {
                return Err(ResumeError::Layout {
                    was: was_layout,
                    now: now_layout,
                });
            }
        }
        return Err(differs("mapping", &was.mapping, &now.mapping));
    }
    Ok(())
}

fn differs(what: &'static str, was: &dyn ToString, now: &dyn ToString) -> ResumeError {
    ResumeError::Differs {
        what,
        was: was.to_string(),
        now: now.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Part;

    fn identity(part: Part, input: &str) -> ImportIdentity {
        ImportIdentity {
            input: input.into(),
            shards: 2,
            mapping: "m".into(),
            part,
        }
    }

    fn stored(
        part: Part,
        input: &str,
        shard: usize,
        last: u64,
        complete: bool,
    ) -> StoredCheckpoint {
        StoredCheckpoint {
            identity: identity(part, input),
            shard,
            last_record: last,
            region_start: 1,
            rows_crc: Some(last as u32),
            complete,
            diverted: last / 2,
        }
    }

    #[test]
    fn a_part_sees_only_its_own_checkpoints() {
        let (p0, p1) = (Part::new(0, 2).unwrap(), Part::new(1, 2).unwrap());
        let all = [stored(p0, "a", 0, 10, true), stored(p1, "a", 1, 7, false)];
        let start = |part| start_point(&identity(part, "a"), &all).unwrap();
        assert_eq!(start(p0), Start::Complete);
        assert_eq!(
            start(p1),
            Start::After {
                last_record: vec![0, 7],
                region_start: vec![0, 1],
                rows_crc: vec![Some(0), Some(7)],
                diverted: 3,
            }
        );
        assert_eq!(start_point(&identity(p0, "a"), &[]).unwrap(), Start::Fresh);
    }

    #[test]
    fn another_input_or_cut_is_refused() {
        let p1 = Part::new(1, 2).unwrap();
        let all = [stored(p1, "a", 0, 10, false)];
        let other_input = start_point(&identity(p1, "b"), &all).unwrap_err();
        assert_eq!(
            other_input.to_string(),
            "the interrupted import had input a, this one has b"
        );
        let other_cut = start_point(&identity(Part::new(1, 3).unwrap(), "a"), &all);
        assert!(other_cut.unwrap_err().to_string().contains("part count 2"));
        // The whole input sees every part's checkpoints.
        let whole = start_point(&identity(Part::WHOLE, "a"), &all).unwrap_err();
        assert!(whole.to_string().contains("part count 2, this one has 1"));
    }

    #[test]
    fn another_layout_is_named_as_such() {
        let with = |mapping: &str| ImportIdentity {
            mapping: mapping.into(),
            ..identity(Part::WHOLE, "a")
        };
        let mut all = [stored(Part::WHOLE, "a", 0, 10, false)];
        all[0].identity = with("row=p;shard-block=500;regions=2");
        let layout = |shard_block, regions| Layout {
            shard_block,
            regions,
        };
        assert_eq!(
            start_point(&with("row=p;shard-block=500"), &all).unwrap_err(),
            ResumeError::Layout {
                was: layout(500, 2),
                now: layout(500, 1),
            }
        );
        assert_eq!(
            start_point(&with("row=q;shard-block=500;regions=2"), &all)
                .unwrap_err()
                .to_string(),
            "the interrupted import had mapping row=p;shard-block=500;regions=2, \
             this one has row=q;shard-block=500;regions=2"
        );
    }
}
