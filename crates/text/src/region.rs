//! Splitting a plain file into regions that parse in parallel.
//!
//! A region starts at a record's first byte. Where records start is found
//! by a scan of the file on a thread of its own (JSON Lines: after a
//! newline, which no JSON value holds raw; CSV: by the same state machine
//! the parser runs, `csv-core`'s, so a quoted field's newline is never
//! taken for a record's end). The scan also counts the records and lines
//! before each split point, so every region numbers its records and lines
//! in the whole file: errors, checkpoints and resumption see one file.
//!
//! A region may read freely up to its share of the bytes (its end lies at
//! or after that) while the scan runs, and waits for the scan only past
//! it; a later region starts once its first byte is known.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

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

/// Finds the boundaries: reads the text from the offset it is given, and
/// hands on the first record boundary at or after each target in turn.
pub(crate) type Scan =
    Box<dyn FnOnce(&mut dyn BufRead, u64, &[u64], &mut dyn FnMut(Boundary)) + Send>;

/// The split points of one file, found on a thread of their own.
pub(crate) struct Plan {
    /// Boundary `k` lies at or after `targets[k]`.
    targets: Vec<u64>,
    found: Mutex<Found>,
    changed: Condvar,
}

#[derive(Default)]
struct Found {
    boundaries: Vec<Boundary>,
    /// The scan ended: no more boundaries will come.
    done: bool,
}

impl Plan {
    /// Starts planning `regions` regions of the plain file at `path` of
    /// `size` bytes whose text starts at `start`: boundary `k` is the first
    /// record that starts at or after `(k + 1) / regions` of its bytes.
    /// Fewer are found when the records run out first.
    ///
    /// # Errors
    ///
    /// The file cannot be opened.
    pub(crate) fn start(
        path: &Path,
        start: u64,
        size: u64,
        regions: usize,
        scan: Scan,
    ) -> io::Result<Arc<Plan>> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(start))?;
        let plan = Arc::new(Plan {
            targets: (1..regions as u64)
                .map(|k| (size / regions as u64 * k).max(start))
                .collect(),
            found: Mutex::new(Found::default()),
            changed: Condvar::new(),
        });
        let planner = Arc::clone(&plan);
        std::thread::Builder::new()
            .name("ringpipe-plan".into())
            .spawn(move || {
                // Whatever ends the scan, even a panic or a fault of the
                // input, must wake the regions waiting for a boundary; the
                // region that reads a fault reports it in full.
                let _done = FinishOnDrop(&planner);
                let mut text = input::checked(file, start);
                scan(&mut text, start, &planner.targets, &mut |boundary| {
                    log::debug!(
                        "split plan: a region starts at byte {} (record {})",
                        boundary.offset,
                        boundary.records_before + 1
                    );
                    let mut found = planner.found.lock().unwrap_or_else(|e| e.into_inner());
                    found.boundaries.push(boundary);
                    planner.changed.notify_all();
                });
            })?;
        Ok(plan)
    }

    /// Boundary `k`, waiting for the scan to find it; `None` when the scan
    /// ended without it.
    pub(crate) fn boundary(&self, k: usize) -> Option<Boundary> {
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        let found = self
            .changed
            .wait_while(found, |f| f.boundaries.len() <= k && !f.done)
            .unwrap_or_else(|e| e.into_inner());
        found.boundaries.get(k).copied()
    }
}

/// Marks the plan done when the scan ends.
struct FinishOnDrop<'a>(&'a Plan);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        let mut found = self.0.found.lock().unwrap_or_else(|e| e.into_inner());
        found.done = true;
        self.0.changed.notify_all();
    }
}

/// The bytes of one region: from its start up to the next region's
/// boundary, which may not be known yet when reading starts.
pub(crate) struct RegionReader {
    file: File,
    /// Offset of the next byte `file` reads.
    at: u64,
    end: End,
}

enum End {
    /// Read to this offset, or to the end of the file.
    Known(Option<u64>),
    /// Read freely up to the plan's target for boundary `k`; past it, wait
    /// for the boundary.
    Planned(Arc<Plan>, usize),
}

impl RegionReader {
    /// The file at `path` from offset `from`, up to boundary `next` of
    /// `plan` (or to its end).
    pub(crate) fn new(
        path: &Path,
        from: u64,
        next: Option<(Arc<Plan>, usize)>,
    ) -> io::Result<Self> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(from))?;
        let end = match next {
            Some((plan, k)) => End::Planned(plan, k),
            None => End::Known(None),
        };
        Ok(RegionReader {
            file,
            at: from,
            end,
        })
    }
}

impl Read for RegionReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut len = buf.len() as u64;
        if let End::Planned(plan, k) = &self.end {
            let target = plan.targets[*k];
            if self.at < target {
                len = len.min(target - self.at);
            } else {
                self.end = End::Known(plan.boundary(*k).map(|b| b.offset));
            }
        }
        if let End::Known(Some(end)) = self.end {
            len = len.min(end.saturating_sub(self.at));
        }
        let n = self.file.read(&mut buf[..len as usize])?;
        self.at += n as u64;
        Ok(n)
    }
}

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
    /// The file cannot be opened again.
    pub(crate) fn start(self) -> io::Result<Option<(Text, Boundary)>> {
        let Some(boundary) = self.plan.boundary(self.index - 1) else {
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
    let plan = Plan::start(path, opened.start, size, regions, scan)?;
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
