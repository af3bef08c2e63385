//! Splitting a plain file into regions that parse in parallel.
//!
//! A region starts at a record's first byte. Where records start is found
//! by a scan of the file on a thread of its own (JSON Lines: after a
//! newline, which no JSON value holds raw; CSV: by the rules the parser
//! splits records by, so a quoted field's newline is never taken for a
//! record's end). The scan also counts the records and lines
//! before each split point, so every region numbers its records and lines
//! in the whole file: errors, checkpoints and resumption see one file.
//!
//! The scan runs on a thread of its own while the first region parses
//! (see [`SplitPlan`]).

use std::fs::File;
use std::io::{self, BufRead, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringpipe_pipeline::{RegionReader, SplitPlan, SplitPoint};

use crate::input;

/// A region's text, checked UTF-8.
pub(crate) type Text = Box<dyn BufRead + Send>;

/// Where a region starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boundary {
    /// Offset of the record's first byte.
    pub(crate) offset: u64,
    /// Its 1-based line.
    pub(crate) line: u64,
    /// Records (data rows) before it.
    pub(crate) records_before: u64,
}

impl SplitPoint for Boundary {
    fn offset(&self) -> u64 {
        self.offset
    }
}

/// Finds the boundaries: reads the text from the offset it is given, and
/// hands on the first record boundary at or after each target in turn.
pub(crate) type Scan =
    Box<dyn FnOnce(&mut dyn BufRead, u64, &[u64], &mut dyn FnMut(Boundary)) + Send>;

/// The split points of one file.
pub(crate) type Plan = SplitPlan<Boundary>;

/// A region that has not started yet: it starts at boundary `index - 1`
/// once the plan has found it.
pub(crate) struct Pending {
    pub(crate) path: PathBuf,
    pub(crate) plan: Arc<Plan>,
    /// The region's index (at least 1).
    pub(crate) index: usize,
    /// The number of regions.
    pub(crate) regions: usize,
}

impl Pending {
    /// Waits for the region's start; its text (checked UTF-8) and where it
    /// starts, or `None` when the plan found fewer regions (this one is
    /// then empty).
    ///
    /// # Errors
    ///
    /// The file cannot be opened again, or the scan for the region's
    /// start failed.
    pub(crate) fn start(self) -> io::Result<Option<(Text, Boundary)>> {
        let Some(boundary) = self.plan.point(self.index - 1)? else {
            return Ok(None);
        };
        let next = (self.index + 1 < self.regions).then_some((self.plan, self.index));
        let reader = RegionReader::new(&self.path, boundary.offset, next)?;
        Ok(Some((input::checked(reader, boundary.offset), boundary)))
    }
}

/// The plan of `regions` regions of `opened` (at `path`), and the first
/// region's text, or `None` when the input cannot be split (stdin, a pipe,
/// gzip) or one region is asked for.
///
/// # Errors
///
/// The file cannot be opened again.
pub(crate) fn plan(
    path: &Path,
    opened: &input::Opened,
    regions: usize,
    scan: Scan,
) -> io::Result<Option<(Text, Vec<Pending>)>> {
    let Some(size) = opened.total.filter(|_| opened.splittable && regions > 1) else {
        return Ok(None);
    };
    let mut file = File::open(path)?;
    let start = opened.start;
    file.seek(SeekFrom::Start(start))?;
    let plan = Plan::start(file, size, start, regions, move |input, targets, found| {
        scan(
            &mut input::checked(input, start),
            start,
            targets,
            &mut |boundary| {
                log::debug!(
                    "split plan: a region starts at byte {} (record {})",
                    boundary.offset,
                    boundary.records_before + 1
                );
                found(boundary);
            },
        );
    })?;
    let head = RegionReader::new(path, opened.start, Some((Arc::clone(&plan), 0)))?;
    let pending = (1..regions)
        .map(|index| Pending {
            path: path.to_owned(),
            plan: Arc::clone(&plan),
            index,
            regions,
        })
        .collect();
    Ok(Some((input::checked(head, opened.start), pending)))
}
