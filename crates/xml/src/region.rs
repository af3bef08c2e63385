//! Splitting a plain file into regions that parse in parallel.
//!
//! A region starts at a record's start tag. A byte search for `<product`
//! could land inside a comment, a CDATA section or a record's own content,
//! so the split points are found by the crate's own lexer and the same
//! document bookkeeping the parser keeps; only a record's content, which
//! cannot hold another record's start, is passed over without tokens
//! ([`skim`](crate::skim)), and so is the start tag of a record that
//! follows the one before it with only white space between (it changes
//! nothing the bookkeeping holds). That yields the exact parser state at
//! each split point: the open elements, the entities the DOCTYPE
//! declared, the line and column, and the number of records before it.
//! Every region but the last checks at its end that the elements open
//! there are the ones the plan found, and that it read the records the
//! plan counted before the next region (whose record numbers, and so
//! its checkpoints, start from that count).
//!
//! The plan is made on a thread of its own while the first region already
//! parses: a region may read freely up to its share of the bytes (its end
//! lies at or after that), and waits for the plan only past it, which it
//! reaches long after the plan is done. A later region starts once its
//! boundary is known. Per byte the scan costs about a third of the
//! parse (CPU samples of a dry run of the generated catalogue in two
//! regions: 0.16 s for the half the plan scans, 0.44 s for a region's
//! parse of it), so the second of two regions starts that much later.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringpipe_pipeline::{SplitPlan, SplitPoint};

use crate::config::{XmlConfig, TOKEN_SLACK};
use crate::document::Document;
use crate::encoding::Charset;
use crate::input;
use crate::lexer::{Lexer, Token};
use crate::namespaces::{self, Namespaces};
use crate::position::LineCounter;
use crate::qname::NameTest;
use crate::skim;
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

impl SplitPoint for Boundary {
    fn offset(&self) -> u64 {
        self.at.offset()
    }
}

/// The split points of one file, found on a thread of their own.
pub(crate) type Plan = SplitPlan<Boundary>;

/// The bytes of one region.
pub(crate) type RegionReader = ringpipe_pipeline::RegionReader<Boundary>;

/// Starts planning `regions` regions of the plain UTF-8 file at `path` of
/// `size` bytes: boundary `k` is the first record that starts at or after
/// `(k + 1) / regions` of its bytes. Fewer are found when the records run
/// out first, or when the markup before a target is malformed (the region
/// that reads it reports that in full); a read fault fails the plan.
///
/// # Errors
///
/// The file cannot be opened.
pub(crate) fn plan(
    path: &Path,
    size: u64,
    config: &XmlConfig,
    regions: usize,
) -> io::Result<Arc<Plan>> {
    let file = File::open(path)?;
    let config = config.clone();
    Plan::start(file, size, 0, regions, move |input, targets, found| {
        let Ok(prepared) = input::prepare(input, false) else {
            return;
        };
        let limits = config.limits();
        let window = Window::new(
            prepared.reader,
            prepared.start,
            limits.max_value_bytes + TOKEN_SLACK,
            limits.max_value_bytes as u64,
        );
        let planner = Planner::new(window, &config);
        let started = std::time::Instant::now();
        planner.find(targets.iter().copied(), |boundary| {
            log::debug!(
                "split plan: a region starts at byte {} (record {}), found in {:?}",
                boundary.at.offset(),
                boundary.records_before + 1,
                started.elapsed()
            );
            found(boundary);
        });
    })
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
    /// Whether a record's start tag was read last, its content still to be
    /// passed over.
    in_record: bool,
    /// Whether that start tag was read as a token, so that the record is
    /// open in `document` (one [`skim::record_start`] read is not: a
    /// sibling of the record before it, it changes nothing there).
    in_document: bool,
    /// Length of a start tag [`skim::record_start`] read, still in the
    /// window.
    tag_len: usize,
    /// Whether the record's start tag declared no namespace: then whether
    /// a sibling of the same name is a record does not depend on its own
    /// attributes either, and [`skim::record_start`] may read it.
    plain_start: bool,
    /// That record element's name.
    record_name: String,
    records: u64,
    /// Every record read by tokens and [`skim::skip_element`], for the
    /// test that compares the two ways.
    #[cfg(test)]
    tokens_only: bool,
}

impl Planner {
    fn new(window: Window, config: &XmlConfig) -> Self {
        let limits = config.limits();
        Planner {
            lexer: Lexer::new(window),
            document: Document::new(limits.max_depth, limits.max_attributes),
            row_test: config.row_test(),
            in_record: false,
            in_document: false,
            tag_len: 0,
            plain_start: false,
            record_name: String::new(),
            records: 0,
            #[cfg(test)]
            tokens_only: false,
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
                        if still_open && self.in_document {
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

    /// Whether records may be read without tokens where they allow it.
    fn quick(&self) -> bool {
        #[cfg(test)]
        return !self.tokens_only;
        #[cfg(not(test))]
        true
    }

    /// Reads up to the next record's start tag; returns whether its element
    /// is still open (`<row>`, not `<row/>`), or `None` at the end of input
    /// or a fault.
    fn next_record(&mut self) -> Option<bool> {
        if std::mem::take(&mut self.in_record) {
            // A record's content holds no record start: pass over it.
            let quick = self.quick();
            let window = self.lexer.window_after_token();
            window.consume(std::mem::take(&mut self.tag_len));
            let name = self.record_name.as_bytes();
            if !(quick && skim::skip_record(window, name)) {
                skim::skip_element(window)?;
            }
            if std::mem::take(&mut self.in_document) {
                self.document.close(&self.record_name).ok()?;
            }
            // Most often the next record follows at once.
            let sibling = quick && self.plain_start;
            if let Some(len) = sibling.then(|| skim::record_start(window, name)).flatten() {
                self.tag_len = len;
                self.in_record = true;
                self.records += 1;
                return Some(true);
            }
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
                        self.in_document = true;
                        self.plain_start = tag.plain_names()
                            || !namespaces::may_declare(tag.attributes_raw().as_bytes());
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
                Token::Text { raw, .. } => {
                    document.text(raw, "text").ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::SplitMix64;
    use crate::window::tests::trickle;

    /// What may stand between records, inside the root.
    const BETWEEN: &[&str] = &[
        "\n  ",
        "\n",
        "",
        " <!-- <row> --> ",
        "<?pi <row>?>",
        "text",
        "<g><row><a>1</a></row></g>",
        "<g/>",
    ];

    /// Record start tags, some of which the lexer must read.
    const STARTS: &[&str] = &[
        "<row>",
        "<row id=\"1\">",
        "<row a='x>y' b=\"/>\">",
        "<row\n  id=\"2\">",
        "<row xmlns=\"urn:d\">",
        "<row xmlns:p=\"urn:p\" p:a=\"1\">",
        "<p:row>",
        "<row/>",
        "<row id=\"3\" />",
        "<rowx>",
    ];

    /// Record content.
    const CONTENT: &[&str] = &[
        "<a>t</a>",
        "<a><![CDATA[</row> <row>]]></a>",
        "<!-- </row> -->",
        "<?pi </row>?>",
        "<b x=\"&lt;/row&gt;\"/>",
        "<row>nested</row>",
        "<rowx>y</rowx>",
        "\u{e9}\u{1f389} &amp; text",
        "\n    ",
        "<c>]]</c>",
    ];

    /// Record end tags (for `STARTS` that are not empty).
    const ENDS: &[&str] = &["</row>", "</row>", "</row >", "</row\n>"];

    fn document(random: &mut SplitMix64) -> String {
        let mut xml = String::from("<?xml version=\"1.0\"?>\n<r xmlns:p=\"urn:p\">\n");
        for _ in 0..random.below(40) {
            xml.push_str(random.pick(BETWEEN));
            let start = random.pick(STARTS);
            xml.push_str(start);
            if start.ends_with("/>") {
                continue;
            }
            for _ in 0..random.below(4) {
                xml.push_str(random.pick(CONTENT));
            }
            xml.push_str(match start {
                "<p:row>" => "</p:row>",
                "<rowx>" => "</rowx>",
                _ => random.pick(ENDS),
            });
        }
        xml.push_str("\n</r>\n");
        xml
    }

    /// The boundaries the plan finds at or after each of `targets`, the
    /// input read `step` bytes at a time.
    fn boundaries(
        xml: &str,
        (row, targets): (&str, &[u64]),
        step: usize,
        tokens_only: bool,
    ) -> Vec<String> {
        let config = XmlConfig::new(row, ["a"]);
        let window = Window::new(trickle(xml.as_bytes(), step), 0, 1 << 20, 1 << 20);
        let mut planner = Planner::new(window, &config);
        planner.tokens_only = tokens_only;
        let mut found = Vec::new();
        planner.find(targets.iter().copied(), |boundary| {
            found.push(format!("{boundary:?}"));
        });
        found
    }

    #[test]
    fn records_read_without_tokens_split_where_tokens_do() {
        // A longer hunt: RINGPIPE_SPLIT_FUZZ_SECS=600 RINGPIPE_SPLIT_FUZZ_SEED=7.
        let hunt = ringpipe_hunt::Hunt::from_env("RINGPIPE_SPLIT_FUZZ", 600, 0x5eed_2026);
        let mut random = SplitMix64::new(hunt.seed(), 0);
        for done in 0.. {
            if !hunt.more(done) {
                hunt.report(done, "documents split both ways alike");
                break;
            }
            let xml = document(&mut random);
            let len = xml.len() as u64;
            let targets: Vec<u64> = (1..len).step_by(1 + random.below(29) as usize).collect();
            let step = random.pick(&[1, 3, 7, 64, 1 << 16]);
            let row = random.pick(&["row", "p:row", "{urn:d}row", "{urn:p}row"]);
            let want = boundaries(&xml, (row, &targets), step, true);
            assert_eq!(
                boundaries(&xml, (row, &targets), step, false),
                want,
                "{row}: {xml}"
            );
        }
    }
}
