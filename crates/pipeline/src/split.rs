//! Reading one file as several regions at once: the machinery every
//! source that splits a file shares. What a split point is (and how to
//! find one) is the source's; when it is known and where each region's
//! bytes end is here.
//!
//! The split points are found by a scan on a thread of its own while the
//! first region already parses: a region reads freely up to its share of
//! the bytes (its end lies at or after that) and waits for the scan only
//! past it; a later region starts once its first byte is known.
//!
//! A scan that ends early because the records ran out, or at malformed
//! input, leaves the regions to read to the end of the file: the region
//! that meets the malformed input reports it in full. A scan that ends at
//! a read fault (or panics) fails the plan instead: a region then cannot
//! know where it ends, and reading on could take records that belong to a
//! later region or to another part of the input.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

/// Where a region starts: what a source needs to read from there as if it
/// had read the file from its start (counts, lines, open elements …).
pub trait SplitPoint: Clone + Send + 'static {
    /// Offset of the region's first byte in the file.
    fn offset(&self) -> u64;
}

/// The split points of one file, found by a scan on a thread of its own.
pub struct SplitPlan<B> {
    /// Split point `k` lies at or after `targets[k]`.
    targets: Vec<u64>,
    found: Mutex<Found<B>>,
    changed: Condvar,
}

struct Found<B> {
    points: Vec<B>,
    /// The scan ended: no more split points will come.
    done: bool,
    /// Why the scan failed, if it did: a read fault's kind and message.
    failed: Option<(io::ErrorKind, String)>,
}

impl<B: SplitPoint> SplitPlan<B> {
    /// Plans `regions` regions of a file of `size` bytes whose content
    /// starts at `start`: `scan` runs on a thread of its own, reads the
    /// file from `input`, gets the targets (split point `k` should be the
    /// first at or after `(k + 1) / regions` of the bytes) and hands each
    /// split point it finds, in order, to its callback. Fewer may come (the
    /// records ran out, the input is malformed: the region that reads it
    /// reports that in full). A read of `input` that fails, even if the
    /// scan then carries on, or a scan that panics, fails the plan: the
    /// regions waiting for a split point get the error.
    ///
    /// # Errors
    ///
    /// The thread cannot be started.
    pub fn start<F>(
        input: impl Read + Send + 'static,
        size: u64,
        start: u64,
        regions: usize,
        scan: F,
    ) -> io::Result<Arc<Self>>
    where
        F: FnOnce(Box<dyn Read + Send>, &[u64], &mut dyn FnMut(B)) + Send + 'static,
    {
        let regions = regions.max(1) as u64;
        let plan = Arc::new(SplitPlan {
            targets: (1..regions)
                .map(|k| (size / regions * k).max(start))
                .collect(),
            found: Mutex::new(Found {
                points: Vec::new(),
                done: false,
                failed: None,
            }),
            changed: Condvar::new(),
        });
        let planner = Arc::clone(&plan);
        std::thread::Builder::new()
            .name("ringpipe-plan".into())
            .spawn(move || {
                // Whatever ends the scan, even a panic, must wake the
                // regions waiting for a split point.
                let done = FinishOnDrop {
                    plan: &planner,
                    fault: Arc::default(),
                };
                let input = FaultNoting {
                    inner: input,
                    fault: Arc::clone(&done.fault),
                };
                scan(Box::new(input), &planner.targets, &mut |point| {
                    planner.found.lock().points.push(point);
                    planner.changed.notify_all();
                });
            })?;
        Ok(plan)
    }

    /// Offset at or after which split point `k` lies.
    pub fn target(&self, k: usize) -> u64 {
        self.targets[k]
    }

    /// Split point `k`, waiting for the scan to find it; `None` when the
    /// scan ended without it.
    ///
    /// # Errors
    ///
    /// The scan failed (a read fault, a panic) before finding it.
    pub fn point(&self, k: usize) -> io::Result<Option<B>> {
        let mut found = self.found.lock();
        self.changed
            .wait_while(&mut found, |f| f.points.len() <= k && !f.done);
        match (found.points.get(k), &found.failed) {
            (Some(point), _) => Ok(Some(point.clone())),
            (None, None) => Ok(None),
            (None, Some((kind, message))) => Err(io::Error::new(
                *kind,
                format!(
                    "the scan for where region {} starts failed: {message}",
                    k + 1
                ),
            )),
        }
    }
}

/// Marks the plan done when the scan ends, and failed if its input
/// failed or it panicked.
struct FinishOnDrop<'a, B> {
    plan: &'a SplitPlan<B>,
    fault: Arc<Mutex<Option<(io::ErrorKind, String)>>>,
}

impl<B> Drop for FinishOnDrop<'_, B> {
    fn drop(&mut self) {
        let mut found = self.plan.found.lock();
        found.done = true;
        found.failed = self.fault.lock().take();
        if std::thread::panicking() {
            let panicked = (io::ErrorKind::Other, "the scan panicked".to_owned());
            found.failed.get_or_insert(panicked);
        }
        drop(found);
        self.plan.changed.notify_all();
    }
}

/// The scan's input, noting its first read fault: a scan may take a
/// fault for the end of its input, which only a deterministic end is.
struct FaultNoting<R> {
    inner: R,
    fault: Arc<Mutex<Option<(io::ErrorKind, String)>>>,
}

impl<R: Read> Read for FaultNoting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf);
        if let Err(error) = &read {
            if error.kind() != io::ErrorKind::Interrupted {
                let mut fault = self.fault.lock();
                fault.get_or_insert_with(|| (error.kind(), error.to_string()));
            }
        }
        read
    }
}

/// The bytes of one region: from its start up to the next region's split
/// point, which may not be known yet when reading starts.
pub struct RegionReader<B> {
    file: File,
    /// Offset of the next byte `file` reads.
    at: u64,
    end: End<B>,
}

enum End<B> {
    /// Read to this offset, or to the end of the file.
    Known(Option<u64>),
    /// Read freely up to the plan's target for split point `k`; past it,
    /// wait for the split point.
    Planned(Arc<SplitPlan<B>>, usize),
}

impl<B: SplitPoint> RegionReader<B> {
    /// The file at `path` from offset `from`, up to split point `next` of
    /// its plan (`None`: to the end of the file).
    ///
    /// # Errors
    ///
    /// The file cannot be opened or sought.
    pub fn new(
        path: &Path,
        from: u64,
        next: Option<(Arc<SplitPlan<B>>, usize)>,
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

impl<B: SplitPoint> Read for RegionReader<B> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut len = buf.len() as u64;
        if let End::Planned(plan, k) = &self.end {
            let target = plan.target(*k);
            if self.at < target {
                len = len.min(target - self.at);
            } else {
                self.end = End::Known(plan.point(*k)?.map(|b| b.offset()));
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

/// Counts the raw bytes that pass through, for progress reports (an
/// atomic only because the reader is boxed away inside a parser; it is
/// read on the same thread).
pub struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> CountingReader<R> {
    /// Wraps `inner`, adding every byte read to `count`.
    pub fn new(inner: R, count: Arc<AtomicU64>) -> Self {
        CountingReader { inner, count }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        // Relaxed: a statistic; nothing else is published through it.
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[derive(Debug, Clone)]
    struct At(u64);
    impl SplitPoint for At {
        fn offset(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn regions_read_up_to_the_split_points_the_scan_finds() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"aaaa|bbbb|cccc|dd").unwrap();
        // Three regions of 17 bytes: split points at or after 5 and 10.
        let plan = SplitPlan::start(io::empty(), 17, 0, 3, |_, targets, found| {
            assert_eq!(targets, [5, 10]);
            found(At(10));
            found(At(15));
        })
        .unwrap();
        let read = |from, next| {
            let mut text = String::new();
            RegionReader::new(file.path(), from, next)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        };
        assert_eq!(read(0, Some((Arc::clone(&plan), 0))), "aaaa|bbbb|");
        assert_eq!(read(10, Some((Arc::clone(&plan), 1))), "cccc|");
        assert_eq!(read(15, None), "dd");
        assert!(plan.point(2).unwrap().is_none());
    }

    #[test]
    fn a_scan_that_finds_nothing_ends_the_first_region_at_the_end() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"0123456789").unwrap();
        let plan = SplitPlan::start(io::empty(), 10, 0, 2, |_, _, _: &mut dyn FnMut(At)| {});
        let mut text = String::new();
        let mut reader = RegionReader::new(file.path(), 0, Some((plan.unwrap(), 0))).unwrap();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "0123456789");
    }

    /// Fails every read, as a file on a failing disk or share does.
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::TimedOut, "the share is gone"))
        }
    }

    #[test]
    fn a_scan_that_failed_to_read_fails_the_region_waiting_for_it() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"0123456789").unwrap();
        // The scan takes the fault for the end of its input, as a parser
        // that stops at any fault would.
        let plan = SplitPlan::start(Failing, 10, 0, 2, |mut input, _, _: &mut dyn FnMut(At)| {
            assert!(input.read(&mut [0; 4]).is_err());
        });
        let mut reader = RegionReader::new(file.path(), 0, Some((plan.unwrap(), 0))).unwrap();
        let error = reader.read_to_string(&mut String::new()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(error.to_string().contains("the share is gone"), "{error}");
    }

    #[test]
    fn a_scan_that_panicked_fails_the_plan() {
        let plan = SplitPlan::start(io::empty(), 10, 0, 2, |_, _, _: &mut dyn FnMut(At)| {
            panic!("a bug in the scan");
        })
        .unwrap();
        let error = plan.point(0).unwrap_err();
        assert!(error.to_string().contains("panicked"), "{error}");
    }

    #[test]
    fn counting_adds_up_the_bytes_read() {
        let count = Arc::new(AtomicU64::new(0));
        let mut reader = CountingReader::new(&b"12345"[..], Arc::clone(&count));
        io::copy(&mut reader, &mut io::sink()).unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 5);
    }
}
