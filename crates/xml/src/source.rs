//! [`XmlSource`]: the pull loop that turns parser events into rows.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringpipe_ring::pipeline::{RecordPosition, Row, Source, SourceProgress};

use crate::config::XmlConfig;
use crate::diagnose::{Fault, Located};
use crate::document::Document;
use crate::encoding::Charset;
use crate::error::{ErrorPosition, XmlError};
use crate::input::{self, Counting, PrepareError};
use crate::lexer::{Lexer, Token};
use crate::position::LineCounter;
use crate::record::{Opened, RecordReader};
use crate::window::Window;

/// Slack over [`Limits::max_value_bytes`](crate::Limits) for the markup
/// around a value (CDATA brackets, a tag's name) before a token is refused.
const TOKEN_SLACK: usize = 64 * 1024;

/// A streaming [`Source`] of rows from an XML document.
///
/// Memory stays bounded by the largest single token (tag, text run,
/// comment), itself bounded by [`Limits::max_value_bytes`](crate::Limits),
/// whatever the size of the file.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::pipeline::{Row, Source};
/// use ringpipe_xml::{XmlConfig, XmlSource};
///
/// let xml = r#"<rows><row><field name="id">1</field><field name="note" xsi:nil="true"/></row></rows>"#;
/// let config = XmlConfig::new("row", ["id", "note"]);
/// let mut source = XmlSource::from_reader("dump.xml", xml.as_bytes(), config)?;
/// let mut row = Row::with_columns(2);
/// assert!(source.next_row(&mut row)?);
/// assert_eq!((row.get(0), row.get(1)), (Some("1"), None));
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
    /// Records emitted.
    records: u64,
    /// Set once EOF or an error was returned; later calls return `Ok(false)`.
    finished: bool,
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
        Self::build(name, raw, gzip, total, config)
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
        Self::build(name, Box::new(reader), false, None, config)
    }

    fn build(
        name: String,
        raw: Box<dyn Read + Send>,
        gzip: bool,
        total_bytes: Option<u64>,
        config: XmlConfig,
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
            document: Document::new(limits.max_depth),
            record: RecordReader::new(&config),
            charset: prepared.charset,
            records: 0,
            finished: false,
            raw_bytes,
            total_bytes,
        })
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
            let step = self
                .lexer
                .next_token()
                .and_then(|token| step(token, &mut self.document, &mut self.record, row));
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
                Ok(Step::End) => return Ok(false),
                Err(located) => return Err(self.fail(located)),
            }
        }
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

    /// Attaches the position to a fault found in the current token.
    fn fail(&mut self, located: Located) -> XmlError {
        let window = self.lexer.window();
        let start = window.position();
        let token = window.data();
        let at: LineCounter = start.advanced(&token[..located.offset.min(token.len())]);
        let position = ErrorPosition {
            input: self.name.clone(),
            line: at.line(),
            column: at.column(),
            byte_offset: at.offset(),
            records_emitted: self.records,
            inside_record: self.record.in_record(),
        };
        match located.fault {
            Fault::Syntax(message) => XmlError::Syntax { position, message },
            Fault::Encoding(message) => XmlError::Encoding { position, message },
            Fault::Entity { reference, error } => XmlError::Entity {
                position,
                message: format!("{error}: {reference}"),
                reference,
            },
            Fault::Limit(kind, limit) => XmlError::Limit {
                position,
                kind,
                limit,
            },
            Fault::UnknownField(field) => XmlError::UnknownField { position, field },
            Fault::Io(source) => XmlError::Io { position, source },
        }
    }
}

/// What one token meant for the caller's loop.
enum Step {
    /// Nothing for the caller.
    Continue,
    /// A record's start tag: its position is the current token's.
    RecordStart,
    /// A record's end tag: the row is complete.
    RecordEnd,
    /// A record in one empty-element tag `<row a="1"/>`.
    WholeRecord,
    /// End of input.
    End,
}

/// Applies one token to the document and record state.
#[inline]
fn step(
    token: Token<'_>,
    document: &mut Document,
    record: &mut RecordReader,
    row: &mut Row,
) -> Result<Step, Located> {
    let result = match token {
        Token::Start(tag) => {
            document.open(tag.name())?;
            match record.open(&tag, document.depth(), row, &document.declared)? {
                Opened::Record => Step::RecordStart,
                Opened::Other => Step::Continue,
            }
        }
        Token::Empty(tag) => {
            document.open(tag.name())?;
            let opened = record.open(&tag, document.depth(), row, &document.declared)?;
            let ended = record.close(document.depth());
            document.close(tag.name())?;
            debug_assert_eq!(ended, opened == Opened::Record);
            match opened {
                Opened::Record => Step::WholeRecord,
                Opened::Other => Step::Continue,
            }
        }
        Token::End(name) => {
            let depth = document.depth();
            document.close(name)?;
            if record.close(depth) {
                Step::RecordEnd
            } else {
                Step::Continue
            }
        }
        Token::Text(raw) => {
            document.text(raw, "text")?;
            record.content(raw, document.depth(), row, &document.declared)?;
            Step::Continue
        }
        Token::CData(cdata) => {
            document.text(cdata, "CDATA")?;
            record.text(cdata, document.depth(), row)?;
            Step::Continue
        }
        Token::Decl => {
            document.declaration()?;
            Step::Continue
        }
        Token::DocType(doctype) => {
            document.doctype(doctype)?;
            Step::Continue
        }
        Token::Ignored => Step::Continue,
        Token::Eof => {
            document.end()?;
            Step::End
        }
    };
    document.event();
    Ok(result)
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
        row.clear();
        let result = self.fill(row);
        self.finished = !matches!(result, Ok(true));
        result
    }

    fn progress(&self) -> SourceProgress {
        SourceProgress {
            // Relaxed: a statistic written by this same thread (see `Counting`).
            bytes_read: self.raw_bytes.load(Ordering::Relaxed),
            bytes_total: self.total_bytes,
            records: self.records,
        }
    }
}
