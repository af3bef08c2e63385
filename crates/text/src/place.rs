//! [`Place`]: what a CSV and a JSON Lines source count alike about their
//! region: its input, where it starts and ends, the records before and in
//! it, a later region's wait for its start, and whether the source has
//! ended.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringpipe_pipeline::SourceProgress;

use crate::input;
use crate::region::{self, Boundary, Pending, Plan, Scan, Text};
use crate::TextError;

/// A source's place in its input.
pub(crate) struct Place {
    /// The input's name in messages.
    pub(crate) input: String,
    /// The file's size, known to the first region only.
    total: Option<u64>,
    /// Raw bytes read, when one region reads the whole input (gzip counts
    /// compressed bytes); else progress is the offset in the region.
    raw_bytes: Option<Arc<AtomicU64>>,
    /// Offset of the region's first byte.
    start: u64,
    /// Records of the whole input read so far.
    pub(crate) records: u64,
    /// Records before the region.
    pub(crate) first_record: u64,
    /// A later region that waits for its start.
    pending: Option<Pending>,
    /// Where the region ends: at split point `k` of the plan (or at the
    /// end of the input, if the plan found no such point); `None`: at the
    /// end of the input.
    end: Option<(Arc<Plan>, usize)>,
    /// The source returned its end or an error: later reads return
    /// `Ok(false)`, so nothing after a fault is ever emitted.
    finished: bool,
}

/// What [`Place::begin`] found.
pub(crate) enum Begin {
    /// The region is under way (or the first).
    Going,
    /// A later region starts: its text, and where it starts.
    Started(Text, Boundary),
    /// The plan found fewer regions: this one is empty.
    Empty,
}

impl Place {
    /// The place of a region reading `input` from offset `start`.
    pub(crate) fn new(input: String, start: u64) -> Self {
        Place {
            input,
            total: None,
            raw_bytes: None,
            start,
            records: 0,
            first_record: 0,
            pending: None,
            end: None,
            finished: false,
        }
    }

    /// Offset of the region's first byte (known once it began).
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// The error of an input that cannot be read.
    pub(crate) fn io(&self, source: std::io::Error) -> TextError {
        TextError::Io {
            input: self.input.clone(),
            source,
        }
    }

    /// Whether the source has returned its end or an error.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// Notes what a read returned: after the end or an error, the source
    /// has finished.
    pub(crate) fn after(&mut self, read: &Result<bool, TextError>) {
        self.finished |= !matches!(read, Ok(true));
    }

    /// At the end of the region's text: `Ok(false)`, or the error of an
    /// input without any record when the region ends where the input does
    /// (records are counted in the whole input) and `allow_empty` is off,
    /// or of a region that read another number of records than the split
    /// plan counted before the next region (whose record numbers, and so
    /// its checkpoints, start from that count).
    pub(crate) fn end(&self, allow_empty: bool) -> Result<bool, TextError> {
        let next = match &self.end {
            None => Ok(None),
            Some((plan, k)) => plan.point(*k),
        };
        match next {
            Ok(Some(next)) if next.records_before != self.records => Err(TextError::Syntax {
                input: self.input.clone(),
                line: next.line,
                column: 1,
                record: self.records,
                expected: format!(
                    "the split plan counted {} records before this line, where the \
                     region read {}; read the file as one region to see why",
                    next.records_before, self.records
                ),
            }),
            Ok(None) if self.records == 0 && !allow_empty => Err(TextError::NoRecords {
                input: self.input.clone(),
            }),
            // A failed plan failed this region's reads before its end.
            _ => Ok(false),
        }
    }

    /// Starts a later region once its start is known.
    ///
    /// # Errors
    ///
    /// The file cannot be opened again.
    pub(crate) fn begin(&mut self) -> Result<Begin, TextError> {
        let Some(pending) = self.pending.take() else {
            return Ok(Begin::Going);
        };
        self.end = (pending.index + 1 < pending.regions)
            .then(|| (Arc::clone(&pending.plan), pending.index));
        match pending.start().map_err(|e| self.io(e))? {
            None => Ok(Begin::Empty),
            Some((text, at)) => {
                self.start = at.offset;
                (self.records, self.first_record) = (at.records_before, at.records_before);
                Ok(Begin::Started(text, at))
            }
        }
    }

    /// The progress of a source whose next unread byte is at `offset`.
    pub(crate) fn progress(&self, offset: u64) -> SourceProgress {
        SourceProgress {
            bytes_read: match &self.raw_bytes {
                // Relaxed: a statistic written by this same thread.
                Some(raw) => raw.load(Ordering::Relaxed),
                None => offset - self.start,
            },
            bytes_total: self.total,
            records: self.records - self.first_record,
        }
    }
}

/// Opens the file at `path` as `regions` regions found by `scan` (one when
/// it cannot be split: stdin, a pipe, gzip): the first region's text and
/// place, and the places of the later regions, which start once the scan
/// has found where.
///
/// # Errors
///
/// The file cannot be read.
pub(crate) fn open(
    path: &Path,
    regions: usize,
    scan: Scan,
) -> Result<(Text, Place, Vec<Place>), TextError> {
    let mut first = Place::new(input::name(path), 0);
    let opened = input::open(path).map_err(|e| first.io(e))?;
    (first.start, first.total) = (opened.start, opened.total);
    let planned = region::plan(path, &opened, regions, scan).map_err(|e| first.io(e))?;
    let Some((head, pending)) = planned else {
        first.raw_bytes = Some(opened.raw_bytes);
        return Ok((opened.reader, first, Vec::new()));
    };
    first.end = pending.first().map(|p| (Arc::clone(&p.plan), 0));
    let later = pending
        .into_iter()
        .map(|pending| Place {
            pending: Some(pending),
            ..Place::new(first.input.clone(), 0)
        })
        .collect();
    Ok((head, first, later))
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    /// A region that read `records` records, ending where a plan's split
    /// point says `records_before` come before the next region.
    fn ending(records: u64, records_before: u64) -> Result<bool, TextError> {
        let boundary = Boundary {
            offset: 100,
            line: 11,
            records_before,
        };
        let plan = Plan::start(io::empty(), 200, 0, 2, move |_, _, found| found(boundary)).unwrap();
        let mut place = Place::new("t.csv".into(), 0);
        place.end = Some((plan, 0));
        place.records = records;
        place.end(false)
    }

    #[test]
    fn a_region_must_end_after_the_records_the_plan_counted_before_the_next() {
        assert!(matches!(ending(10, 10), Ok(false)));
        for records in [9, 11] {
            let error = ending(records, 10).unwrap_err().to_string();
            assert!(
                error.starts_with("t.csv:11:1: ")
                    && error.contains("the split plan counted 10 records before this line"),
                "{error}"
            );
        }
    }
}
