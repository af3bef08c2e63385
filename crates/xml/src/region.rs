//! Splitting a plain file into regions that parse in parallel.
//!
//! A region starts at a record's start tag. A byte search for `<product`
//! could land inside a comment, a CDATA section or a record's own content,
//! so the split points are found by the crate's own lexer and the same
//! document bookkeeping the parser keeps; only a record's content, which
//! cannot hold another record's start, is passed over without tokens
//! ([`skim`](crate::skim)). That yields the exact parser state at each split point: the open
//! elements, the entities the DOCTYPE declared, the line and column, and
//! the number of records before it. Every region but the last checks at its
//! end that the elements open there are the ones the plan found.
//!
//! The plan is made on a thread of its own while the first region already
//! parses: a region may read freely up to its share of the bytes (its end
//! lies at or after that), and waits for the plan only past it, which it
//! reaches long after the plan is done. A later region starts once its
//! boundary is known. Per byte the scan costs about a fifth of the parse's
//! instructions (callgrind, the generated catalogue: 175 M for the first
//! half of 100k records, whose parse takes ~820 M), so the second of two
//! regions starts that much later.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use crate::config::{XmlConfig, TOKEN_SLACK};
use crate::document::Document;
use crate::encoding::Charset;
use crate::input;
use crate::lexer::{Lexer, Token};
use crate::namespaces::Namespaces;
use crate::position::LineCounter;
use crate::qname::NameTest;
use crate::text::DeclaredEntities;
use crate::window::Window;

/// The parser's state at the first byte of a region.
#[derive(Debug, Clone)]
pub(crate) struct Boundary {
    /// Offset, line and column of the record's `<`.
    pub(crate) at: LineCounter,
    /// Records that start before it.
    pub(crate) records_before: u64,
    /// Elements open there, root first.
    pub(crate) open: Vec<String>,
    /// Entities the DOCTYPE declared (to word their refusal).
    pub(crate) declared: DeclaredEntities,
    /// Namespace bindings in scope.
    pub(crate) namespaces: Namespaces,
}

/// Whether the file at `path` can be split: plain UTF-8, whose byte offsets
/// are the parser's (not gzip, not transcoded).
///
/// # Errors
///
/// The file cannot be opened or its first bytes read.
pub(crate) fn splittable(path: &Path) -> io::Result<bool> {
    match input::prepare(Box::new(File::open(path)?), false) {
        Ok(prepared) => Ok(!prepared.compressed && prepared.charset == Charset::Utf8),
        Err(input::PrepareError::Io(error)) => Err(error),
        Err(input::PrepareError::Encoding(_)) => Ok(false),
    }
}

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
    /// Starts planning `regions` regions of the plain UTF-8 file at `path`
    /// of `size` bytes: boundary `k` is the first record that starts at or
    /// after `(k + 1) / regions` of its bytes. Fewer are found when the
    /// records run out first, or when the markup before a target is
    /// malformed (the region that reads it reports that in full).
    ///
    /// # Errors
    ///
    /// The file cannot be opened.
    pub(crate) fn start(
        path: &Path,
        size: u64,
        config: &XmlConfig,
        regions: usize,
    ) -> io::Result<Arc<Plan>> {
        let file = File::open(path)?;
        let plan = Arc::new(Plan {
            targets: (1..regions as u64)
                .map(|k| size / regions as u64 * k)
                .collect(),
            found: Mutex::new(Found::default()),
            changed: Condvar::new(),
        });
        let planner = Arc::clone(&plan);
        let config = config.clone();
        std::thread::Builder::new()
            .name("ringpipe-plan".into())
            .spawn(move || planner.scan(file, &config))?;
        Ok(plan)
    }

    /// Offset at or after which boundary `k` lies.
    pub(crate) fn target(&self, k: usize) -> u64 {
        self.targets[k]
    }

    /// Boundary `k`, waiting for the scan to find it; `None` when the scan
    /// ended without it.
    pub(crate) fn boundary(&self, k: usize) -> Option<Boundary> {
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        let found = self
            .changed
            .wait_while(found, |f| f.boundaries.len() <= k && !f.done)
            .unwrap_or_else(|e| e.into_inner());
        found.boundaries.get(k).cloned()
    }

    fn scan(&self, file: File, config: &XmlConfig) {
        // Whatever ends the scan, even a panic, must wake the regions
        // waiting for a boundary.
        let _done = FinishOnDrop(self);
        let prepared = input::prepare(Box::new(file), false);
        if let Ok(prepared) = prepared {
            let limits = config.limits();
            let window = Window::new(
                prepared.reader,
                prepared.start,
                limits.max_value_bytes + TOKEN_SLACK,
                limits.max_value_bytes as u64,
            );
            let planner = Planner::new(window, config);
            let started = std::time::Instant::now();
            planner.find(self.targets.iter().copied(), |boundary| {
                log::debug!(
                    "split plan: a region starts at byte {} (record {}), found in {:?}",
                    boundary.at.offset(),
                    boundary.records_before + 1,
                    started.elapsed()
                );
                let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
                found.boundaries.push(boundary);
                self.changed.notify_all();
            });
        }
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
            let target = plan.target(*k);
            if self.at < target {
                len = len.min(target - self.at);
            } else {
                self.end = End::Known(plan.boundary(*k).map(|b| b.at.offset()));
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

/// A region that has not started yet: it starts at boundary `k - 1` once
/// the plan has found it.
pub(crate) struct PendingRegion {
    pub(crate) path: PathBuf,
    pub(crate) plan: Arc<Plan>,
    /// The region's index (at least 1).
    pub(crate) index: usize,
    /// The number of regions.
    pub(crate) regions: usize,
    /// The configuration of every region's source.
    pub(crate) config: XmlConfig,
}

/// The lexer and the document bookkeeping of the parser, without rows.
struct Planner {
    lexer: Lexer,
    document: Document,
    row_test: NameTest,
    /// Whether a record's start tag was the last token, its content still
    /// to be passed over.
    in_record: bool,
    /// That record element's name.
    record_name: String,
    records: u64,
}

impl Planner {
    fn new(window: Window, config: &XmlConfig) -> Self {
        let limits = config.limits();
        Planner {
            lexer: Lexer::new(window),
            document: Document::new(limits.max_depth, limits.max_attributes),
            row_test: config.row_test(),
            in_record: false,
            record_name: String::new(),
            records: 0,
        }
    }

    /// Hands `found` the boundary at the first record starting at or after
    /// each target offset (ascending); stops at the end of input or a fault.
    fn find(mut self, targets: impl Iterator<Item = u64>, mut found: impl FnMut(Boundary)) {
        for target in targets {
            loop {
                match self.next_record() {
                    Some(still_open) if self.lexer.window().offset() >= target => {
                        let mut open = self.document.open_elements();
                        if still_open {
                            open.pop();
                        }
                        found(Boundary {
                            at: self.lexer.window().position(),
                            records_before: self.records - 1,
                            open,
                            declared: self.document.declared.clone(),
                            namespaces: self.document.namespaces.clone(),
                        });
                        break;
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        }
    }

    /// Reads up to the next record's start tag; returns whether its element
    /// is still open (`<row>`, not `<row/>`), or `None` at the end of input
    /// or a fault.
    fn next_record(&mut self) -> Option<bool> {
        if std::mem::take(&mut self.in_record) {
            // A record's content holds no record start: pass over it.
            crate::skim::skip_element(self.lexer.window_after_token())?;
            self.document.close(&self.record_name).ok()?;
        }
        loop {
            let document = &mut self.document;
            // Whether a record started, and whether its element is still open.
            let record = match self.lexer.next_token().ok()? {
                Token::Start(tag) => {
                    document.open(&tag).ok()?;
                    let starts = self
                        .row_test
                        .matches(tag.name(), false, &document.namespaces);
                    if starts {
                        self.in_record = true;
                        self.record_name.clear();
                        self.record_name.push_str(tag.name());
                    }
                    starts.then_some(true)
                }
                Token::Empty(tag) => {
                    document.open(&tag).ok()?;
                    let starts = self
                        .row_test
                        .matches(tag.name(), false, &document.namespaces);
                    document.close(tag.name()).ok()?;
                    starts.then_some(false)
                }
                Token::End(name) => {
                    document.close(name).ok()?;
                    None
                }
                Token::Text(text) => {
                    document.text(text, "text").ok()?;
                    None
                }
                Token::CData(text) => {
                    document.text(text, "CDATA").ok()?;
                    None
                }
                Token::Decl(content) => {
                    document.declaration(content).ok()?;
                    None
                }
                Token::DocType(doctype) => {
                    document.doctype(doctype).ok()?;
                    None
                }
                Token::Ignored => None,
                Token::Eof => return None,
            };
            self.document.event();
            if record.is_some() {
                self.records += 1;
                return record;
            }
        }
    }
}
