//! [`CsvSource`]: CSV with a header row.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use ringpipe_pipeline::{ColumnUsage, Decode, RecordPosition, Row, Source, SourceProgress};

use crate::csv_fields::{self, FieldError, Fields, Malformed};
use crate::csv_header::map_header;
use crate::input::{self, NotUtf8};
use crate::place::{self, Begin, Place};
use crate::region::{self, Text};
use crate::{TextConfig, TextError};

/// The most fields a header may have: more than any table has columns
/// (MySQL allows 4096, PostgreSQL 1600), so no header a table can take is
/// refused, and a header of endless delimiters is refused before it takes
/// more memory than this many fields.
const MAX_HEADER_FIELDS: usize = 4096;

/// CSV records as rows: the header row names the fields (at most 4096),
/// quoting is RFC 4180's (a quoted field may hold the delimiter, `""` and
/// newlines), every record has the header's field count, and every field
/// is UTF-8. Only an unquoted field equal to the null string is `NULL` (as
/// in PostgreSQL's CSV format). Empty lines are skipped, except in a file
/// of one field: there an empty line is a record whose field is empty (as
/// PostgreSQL's `COPY … CSV` reads it), so `NULL` for an empty null string.
/// `\n`, `\r` and `\r\n` each end a line. An input without even a header
/// (empty, or only line ends) is an error unless
/// [`TextConfig::allow_empty`] accepts it as one without records.
///
/// Records are split as `csv-core` (the `csv` crate's parser) splits them,
/// keeping what the `csv` crate does not say: whether a field was quoted,
/// which decides `NULL`, and where each field starts. Text after a closing
/// quote and an input that ends inside a quoted field, which `csv-core`
/// reads leniently, are errors.
pub struct CsvSource {
    fields: Fields<Text>,
    /// Header fields per record.
    width: usize,
    /// Per header field, the column it fills.
    fill: Arc<[Option<usize>]>,
    /// The header fields that fill no column.
    ignored: Arc<[String]>,
    /// Every column filled by each record (the header names them all),
    /// the ignored fields counted, over every region.
    usage: ColumnUsage,
    /// Whether this region marked the columns filled.
    marked: bool,
    /// Per column, the decoding of its text into bytes, if any.
    decodes: Arc<[Option<Decode>]>,
    /// A decoded value's bytes.
    bytes: Vec<u8>,
    config: TextConfig,
    place: Place,
}

impl CsvSource {
    /// Reads the file at `path` (`-`: stdin; gzip is decompressed).
    ///
    /// # Errors
    ///
    /// When the file cannot be read or its header does not fit `config`.
    pub fn open(path: &Path, config: TextConfig) -> Result<Self, TextError> {
        let mut regions = Self::open_regions(path, config, 1)?;
        Ok(regions.remove(0))
    }

    /// The file at `path` as `regions` regions that parse in parallel, in
    /// order, their records numbered in the whole file (one region when
    /// it cannot be split: stdin, a pipe, gzip). A split point is a record
    /// boundary found by the parser's own state machine, so quoted
    /// newlines are never split.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or its header does not fit `config`.
    pub fn open_regions(
        path: &Path,
        config: TextConfig,
        regions: usize,
    ) -> Result<Vec<Self>, TextError> {
        check_delimiter(&input::name(path), &config)?;
        let delimiter = config.delimiter;
        let scan: region::Scan = Box::new(move |reader, start, targets, found| {
            csv_fields::scan(delimiter, reader, start, targets, found)
        });
        let (head, place, later) = place::open(path, regions, scan)?;
        let first = Self::build(head, place, config)?;
        let mut sources = Vec::with_capacity(later.len() + 1);
        for place in later {
            sources.push(CsvSource {
                fields: Fields::new(Box::new(std::io::empty()), delimiter, 0, 1, 0),
                width: first.width,
                fill: Arc::clone(&first.fill),
                ignored: Arc::clone(&first.ignored),
                usage: first.usage.clone(),
                marked: false,
                decodes: Arc::clone(&first.decodes),
                bytes: Vec::new(),
                config: first.config.clone(),
                place,
            });
        }
        sources.insert(0, first);
        Ok(sources)
    }

    /// Reads `reader`, called `input` in messages.
    ///
    /// # Errors
    ///
    /// When the header cannot be read or does not fit `config`.
    pub fn from_reader(
        reader: impl BufRead + Send + 'static,
        input: impl Into<String>,
        config: TextConfig,
    ) -> Result<Self, TextError> {
        let input = input.into();
        check_delimiter(&input, &config)?;
        let place = Place::new(input, 0);
        Self::build(input::checked(reader, 0), place, config)
    }

    /// Which columns a record filled (all of them, once a record was read)
    /// and which header fields fed none, over every region of the input.
    pub fn column_usage(&self) -> ColumnUsage {
        self.usage.clone()
    }

    /// Reads the header of `reader` (checked UTF-8 from the place's start).
    fn build(reader: Text, place: Place, config: TextConfig) -> Result<Self, TextError> {
        let offset = place.start();
        let fields = Fields::new(reader, config.delimiter, offset, 1, config.max_value_bytes);
        let usage = ColumnUsage::new(&config.columns);
        let decodes = config.column_decodes().map_err(|why| TextError::Config {
            input: place.input.clone(),
            why,
        })?;
        let mut source = CsvSource {
            fields,
            width: 0,
            fill: Arc::new([]),
            ignored: Arc::new([]),
            usage,
            marked: false,
            decodes: decodes.into(),
            bytes: Vec::new(),
            config,
            place,
        };
        // Record 0 is the header, whose fields are all kept: so many at most.
        let read = source.fields.next_record_at_most(MAX_HEADER_FIELDS);
        let read = read.map_err(|e| match source.field_error(e) {
            TextError::Syntax {
                record: _,
                input,
                line,
                column,
                expected,
            } => TextError::Syntax {
                input,
                line,
                column,
                record: 0,
                expected,
            },
            other => other,
        });
        if !read? {
            // Without a header the file holds no record either; allowed, the
            // source ends at once (its width 0 reads nothing more).
            return match source.config.allow_empty {
                true => Ok(source),
                false => Err(TextError::Empty {
                    input: source.place.input.clone(),
                }),
            };
        }
        let text = source.record_text(0)?;
        let mut header = Vec::with_capacity(source.fields.kept());
        for index in 0..source.fields.kept() {
            let (name, _) = source.field(text, index, 0)?;
            header.push(name.to_owned());
        }
        let fill = map_header(&header, &source.config, &source.place.input)?;
        let ignored = header.iter().zip(&fill).filter(|(_, c)| c.is_none());
        source.ignored = ignored.map(|(name, _)| name.clone()).collect();
        source.fill = fill.into();
        source.width = header.len();
        source.fields.keep_empty_lines(source.width == 1);
        Ok(source)
    }

    /// The current record's kept fields, back to back, as text. They are
    /// UTF-8 (the input is checked, and fields start and end at ASCII
    /// bytes); this checks them all the same, once per record, which is
    /// cheaper than field by field.
    fn record_text(&self, record: u64) -> Result<&str, TextError> {
        input::text(self.fields.text()).map_err(|at| self.not_utf8(at, record))
    }

    /// Kept field `index` of the current record, whose fields' text is
    /// `text`, and whether it was quoted.
    fn field<'t>(
        &self,
        text: &'t str,
        index: usize,
        record: u64,
    ) -> Result<(&'t str, bool), TextError> {
        let (range, quoted, _) = self.fields.field_at(index);
        let start = range.start;
        match text.get(range) {
            Some(value) => Ok((value, quoted)),
            None => Err(self.not_utf8(start, record)),
        }
    }

    /// The error for the byte at `at` of the current record's text, which
    /// does not start a UTF-8 character.
    fn not_utf8(&self, at: usize, record: u64) -> TextError {
        let kept = self.fields.kept();
        let field = (0..kept)
            .find(|&i| self.fields.field_at(i).0.end > at)
            .unwrap_or(kept.saturating_sub(1));
        let line = self.fields.field_at(field).2;
        let byte = self.fields.text()[at];
        let expected = format!("UTF-8 text, found byte {byte:#04x}");
        self.error(line, field as u64 + 1, record, expected)
    }

    fn error(&self, line: u64, column: u64, record: u64, expected: String) -> TextError {
        TextError::Syntax {
            input: self.place.input.clone(),
            line,
            column,
            record,
            expected,
        }
    }

    /// The error of the current record's field that could not be read.
    fn field_error(&self, error: FieldError) -> TextError {
        // The record being read is the one after the last counted.
        let record = self.place.records + 1;
        let column = self.fields.count() as u64 + 1;
        match error {
            FieldError::Io(e) => match NotUtf8::of(&e) {
                Some(fault) => self.error(self.fields.line(), column, record, fault.to_string()),
                None => TextError::Io {
                    input: self.place.input.clone(),
                    source: e,
                },
            },
            FieldError::Malformed(Malformed::AfterQuote) => self.error(
                self.fields.line(),
                column,
                record,
                "the delimiter or the record's end after a field's closing quote \
                 (a quote inside a quoted field is written twice: \"\")"
                    .into(),
            ),
            FieldError::Malformed(Malformed::OpenQuote) => self.error(
                self.fields.field_line(),
                column,
                record,
                "a closing quote for this field before the input ends".into(),
            ),
            FieldError::TooLong => self.error(
                self.fields.field_line(),
                column,
                record,
                format!(
                    "a field of at most {} bytes (TextConfig::max_value_bytes)",
                    self.config.max_value_bytes
                ),
            ),
            // Only the header is read with a limit on its fields.
            FieldError::TooManyFields => self.error(
                self.fields.line(),
                column,
                0,
                format!(
                    "a header of at most {MAX_HEADER_FIELDS} fields (no table has more \
                     columns: MySQL allows 4096, PostgreSQL 1600)"
                ),
            ),
        }
    }

    /// Starts a later region when it is its turn, then reads a record.
    fn next(&mut self, row: &mut Row) -> Result<bool, TextError> {
        match self.place.begin()? {
            Begin::Going => {}
            Begin::Empty => return Ok(false),
            Begin::Started(text, at) => {
                let (delimiter, max) = (self.config.delimiter, self.config.max_value_bytes);
                self.fields = Fields::new(text, delimiter, at.offset, at.line, max);
                self.fields.keep_empty_lines(self.width == 1);
            }
        }
        self.read(row)
    }

    /// Reads the next record into `row`; `Ok(false)` at the end of input.
    fn read(&mut self, row: &mut Row) -> Result<bool, TextError> {
        row.clear();
        let read = self.fields.next_record(self.width);
        if !read.map_err(|e| self.field_error(e))? {
            return self.place.end(self.config.allow_empty);
        }
        self.place.records += 1;
        let record = self.place.records;
        let (offset, line) = self.fields.record_at();
        let found = self.fields.count();
        if found != self.width {
            return Err(self.error(
                line,
                found.min(self.width) as u64 + 1,
                record,
                format!("{} fields as in the header, found {found}", self.width),
            ));
        }
        // The record's text borrows the source: decoded bytes go to a
        // buffer taken out of it meanwhile.
        let mut bytes = std::mem::take(&mut self.bytes);
        let text = self.record_text(record)?;
        for (index, column) in self.fill.iter().enumerate() {
            let Some(column) = *column else { continue };
            let (value, quoted) = self.field(text, index, record)?;
            if !quoted && self.config.null_string.as_deref() == Some(value) {
                continue;
            }
            match self.decodes[column] {
                None => row.set(column, value),
                Some(mode) => {
                    bytes.clear();
                    if let Err(e) = mode.decode(value, &mut bytes) {
                        let line = self.fields.field_at(index).2;
                        let name = &self.config.columns[column];
                        let expected = format!(
                            "{mode} for column `{name}` ({}, at byte {} of the value)",
                            e.why, e.at
                        );
                        return Err(self.error(line, index as u64 + 1, record, expected));
                    }
                    row.set_bytes(column, &bytes);
                }
            }
        }
        self.bytes = bytes;
        if !self.marked {
            (0..self.config.columns.len()).for_each(|column| self.usage.mark(column));
            self.marked = true;
        }
        for name in self.ignored.iter() {
            self.usage.ignore(name);
        }
        row.set_position(RecordPosition {
            record: self.place.records,
            line,
            column: 1,
            byte_offset: offset,
        });
        Ok(true)
    }
}

/// Refuses a delimiter that quotes fields or ends records.
fn check_delimiter(input: &str, config: &TextConfig) -> Result<(), TextError> {
    TextConfig::check_delimiter(config.delimiter).map_err(|why| TextError::Config {
        input: input.to_owned(),
        why,
    })
}

impl Source for CsvSource {
    type Error = TextError;

    fn columns(&self) -> &[String] {
        &self.config.columns
    }

    /// Fills `row` with the next record. After `Ok(false)` or an error,
    /// further calls return `Ok(false)`.
    fn next_row(&mut self, row: &mut Row) -> Result<bool, TextError> {
        if self.place.finished() {
            return Ok(false);
        }
        let read = self.next(row);
        self.place.after(&read);
        read
    }

    fn records_before(&self) -> u64 {
        self.place.first_record
    }

    fn progress(&self) -> SourceProgress {
        self.place.progress(self.fields.offset())
    }
}
