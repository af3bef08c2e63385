//! [`XmlSource`]: the pull loop that turns parser events into rows.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringpipe_pipeline::{RecordPosition, Row, Source, SourceProgress};

mod fail;
mod regions;
mod step;

use crate::config::{XmlConfig, TOKEN_SLACK};
use crate::diagnose::Fault;
use crate::document::Document;
use crate::encoding::Charset;
use crate::error::{ErrorPosition, XmlError};
use crate::input::{self, Counting, PrepareError};
use crate::lexer::Lexer;
use crate::record::RecordReader;
use crate::region::PendingRegion;
use crate::window::Window;
use ringpipe_pipeline::ColumnUsage;
use step::{step, RegionEnd, Step};

/// A streaming [`Source`] of rows from an XML document.
///
/// Memory stays bounded by the largest single token (tag, text run,
/// comment), itself bounded by [`Limits::max_value_bytes`](crate::Limits),
/// whatever the size of the file.
///
/// # Examples
///
/// ```
/// use ringpipe_pipeline::{Row, Source};
/// use ringpipe_xml::{XmlConfig, XmlSource};
///
/// let xml = r#"<rows xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><row><field name="id">1</field><field name="note" xsi:nil="true"/></row></rows>"#;
/// let config = XmlConfig::new("row", ["id", "note"]);
/// let mut source = XmlSource::from_reader("dump.xml", xml.as_bytes(), config)?;
/// let mut row = Row::with_columns(2);
/// assert!(source.next_row(&mut row)?);
/// assert_eq!((row.text(0), row.text(1)), (Some("1"), None));
/// assert!(!source.next_row(&mut row)?);
/// # Ok::<(), ringpipe_xml::XmlError>(())
/// ```
pub struct XmlSource {
    name: String,
    columns: Vec<String>,
    lexer: Lexer,
    document: Document,
    record: RecordReader,
    charset: Charset,
    /// Records emitted, counting from the start of the input (a region's
    /// source starts at its first record's number).
    records: u64,
    /// Records before this source's first (non-zero for a later region).
    first_record: u64,
    /// Where this source's region ends (see [`XmlSource::open_regions`]).
    region_end: RegionEnd,
    /// A later region waiting for the split plan; started on first read.
    pending: Option<PendingRegion>,
    /// For one region of several: the input and configuration to read it
    /// whole again with, so that a fault is reported as one source would
    /// (see `XmlSource::fault_as_one_source`).
    whole: Option<Box<(PathBuf, XmlConfig)>>,
    /// Set once EOF or an error was returned; later calls return `Ok(false)`.
    finished: bool,
    /// A document without records is fine ([`XmlConfig::allow_empty`]).
    allow_empty: bool,
    /// Which columns received values, shared by all regions of the input.
    usage: ColumnUsage,
    /// Raw bytes read from the input (compressed bytes for gzip).
    raw_bytes: Arc<AtomicU64>,
    total_bytes: Option<u64>,
}

impl XmlSource {
    /// Reads the file at `path`; `-` reads stdin. Gzip input (a `.gz` name,
    /// or the gzip magic number) is decompressed.
    ///
    /// # Errors
    ///
    /// [`XmlError::Config`] for an unusable configuration, [`XmlError::Io`]
    /// when the file cannot be opened or read, [`XmlError::Encoding`] when
    /// its encoding is not supported.
    pub fn open(path: impl AsRef<Path>, config: XmlConfig) -> Result<Self, XmlError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        check_config(&name, &config)?;
        let (raw, total) = input::open_path(path).map_err(|source| XmlError::Io {
            position: ErrorPosition::input_only(&name),
            source,
        })?;
        let gzip = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        let usage = ColumnUsage::new(config.columns());
        Self::build(name, raw, gzip, total, config, usage)
    }

    /// Reads `reader`, calling it `name` in messages. Gzip input (starting
    /// with the gzip magic number) is decompressed.
    ///
    /// # Errors
    ///
    /// As for [`XmlSource::open`].
    pub fn from_reader(
        name: impl Into<String>,
        reader: impl Read + Send + 'static,
        config: XmlConfig,
    ) -> Result<Self, XmlError> {
        let name = name.into();
        check_config(&name, &config)?;
        let usage = ColumnUsage::new(config.columns());
        Self::build(name, Box::new(reader), false, None, config, usage)
    }

    fn build(
        name: String,
        raw: Box<dyn Read + Send>,
        gzip: bool,
        total_bytes: Option<u64>,
        config: XmlConfig,
        usage: ColumnUsage,
    ) -> Result<Self, XmlError> {
        let raw_bytes = Arc::new(AtomicU64::new(0));
        let counted = Box::new(Counting::new(raw, Arc::clone(&raw_bytes)));
        let prepared = input::prepare(counted, gzip).map_err(|e| match e {
            PrepareError::Io(source) => XmlError::Io {
                position: ErrorPosition::input_only(&name),
                source,
            },
            PrepareError::Encoding(message) => XmlError::Encoding {
                position: ErrorPosition::input_only(&name),
                message,
            },
        })?;
        if prepared.charset != Charset::Utf8 {
            log::debug!("{name}: transcoding from {}", prepared.charset.name());
        }
        let limits = config.limits();
        let window = Window::new(
            prepared.reader,
            prepared.start,
            limits.max_value_bytes + TOKEN_SLACK,
            limits.max_value_bytes as u64,
        );
        Ok(XmlSource {
            name,
            columns: config.columns().to_vec(),
            lexer: Lexer::new(window),
            document: Document::new(limits.max_depth, limits.max_attributes),
            record: RecordReader::new(&config, usage.clone()),
            allow_empty: config.allows_empty(),
            usage,
            charset: prepared.charset,
            records: 0,
            first_record: 0,
            region_end: RegionEnd::Input,
            pending: None,
            whole: None,
            finished: false,
            raw_bytes,
            total_bytes,
        })
    }

    /// Which columns have received a value so far; the handle is shared
    /// by all regions of one input and stays valid after the sources are
    /// dropped, for the import's summary.
    pub fn column_usage(&self) -> ColumnUsage {
        self.usage.clone()
    }

    /// The input's name as used in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of the encoding the input is read in (`UTF-8` unless the
    /// input declared or marked another).
    pub fn encoding(&self) -> &'static str {
        self.charset.name()
    }

    /// Reads tokens until a record is complete (`Ok(true)`) or the input ends.
    fn fill(&mut self, row: &mut Row) -> Result<bool, XmlError> {
        loop {
            // Indentation inside the root element that no field takes is
            // passed over without a token (outside the root, white space
            // still counts: nothing may come before the XML declaration),
            // and a plain field element (`lexer/plain.rs`) inside a record
            // is applied in one step instead of three tokens.
            let depth = self.document.depth();
            if depth > 0 && self.record.ignores_text(depth) {
                self.lexer.skip_blank();
                if self.record.in_record() && self.document.has_room() {
                    if let Some(element) = self.lexer.plain_element() {
                        let len = element.len;
                        if self.record.plain_field(element, depth, row, &self.document) {
                            self.lexer.consume_plain(len);
                            continue;
                        }
                    }
                }
            }
            let step = self.lexer.next_token().and_then(|token| {
                step(
                    token,
                    &mut self.document,
                    &mut self.record,
                    row,
                    &self.region_end,
                )
            });
            match step {
                Ok(Step::Continue) => {}
                Ok(Step::RecordStart) => self.set_position(row),
                Ok(Step::WholeRecord) => {
                    self.set_position(row);
                    self.records += 1;
                    return Ok(true);
                }
                Ok(Step::RecordEnd) => {
                    self.records += 1;
                    return Ok(true);
                }
                Ok(Step::End) => return self.end(),
                Err(located) => return Err(self.fail(located)),
            }
        }
    }

    /// The end of the input or region: `Ok(false)`, unless a document
    /// held no record, or a region read another number of records than
    /// the split plan counted before the next region's start (whose record
    /// numbers, and so the checkpoints, count from there).
    fn end(&mut self) -> Result<bool, XmlError> {
        let fault = match self.region_end.next_start() {
            Some(next) if next.records_before != self.records => Fault::syntax(format!(
                "the region holds records {} to {}, but the split plan counted {} \
                 before the next region; read the file as one region to see why",
                self.first_record + 1,
                self.records,
                next.records_before
            )),
            // A region that ends where the next starts has a record after it.
            None if self.records == 0 && !self.allow_empty => {
                Fault::NoRecords(self.record.no_records_message())
            }
            _ => return Ok(false),
        };
        Err(self.fail(fault.into()))
    }

    /// Records where the record that just started begins.
    fn set_position(&mut self, row: &mut Row) {
        let at = self.lexer.window().position();
        row.set_position(RecordPosition {
            record: self.records + 1,
            line: at.line(),
            column: at.column(),
            byte_offset: at.offset(),
        });
    }
}

fn check_config(name: &str, config: &XmlConfig) -> Result<(), XmlError> {
    config.validate().map_err(|message| XmlError::Config {
        position: ErrorPosition::input_only(name),
        message,
    })
}

impl Source for XmlSource {
    type Error = XmlError;

    fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Fills `row` with the next record.
    ///
    /// After `Ok(false)` or an error, further calls return `Ok(false)`.
    fn next_row(&mut self, row: &mut Row) -> Result<bool, XmlError> {
        if self.finished {
            return Ok(false);
        }
        if let Some(pending) = self.pending.take() {
            let started = self.start_region(pending);
            if !matches!(started, Ok(true)) {
                self.finished = true;
                return started;
            }
        }
        row.clear();
        let result = self.fill(row);
        self.finished = !matches!(result, Ok(true));
        result.map_err(|error| self.fault_as_one_source(error))
    }

    fn records_before(&self) -> u64 {
        self.first_record
    }

    fn progress(&self) -> SourceProgress {
        SourceProgress {
            // Relaxed: a statistic written by this same thread (see `Counting`).
            bytes_read: self.raw_bytes.load(Ordering::Relaxed),
            bytes_total: self.total_bytes,
            records: self.records - self.first_record,
        }
    }
}

#[cfg(test)]
mod tests;
