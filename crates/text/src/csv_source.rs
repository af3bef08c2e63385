//! [`CsvSource`]: CSV with a header row, through `csv-core`.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use ringpipe_pipeline::{RecordPosition, Row, Source, SourceProgress};

use crate::csv_fields::{self, FieldError, Fields};
use crate::input::{self, NotUtf8};
use crate::place::{self, Begin, Place};
use crate::region::{self, Text};
use crate::{TextConfig, TextError};

/// CSV records as rows: the header row names the fields, quoting is RFC
/// 4180's (a quoted field may hold the delimiter, `""` and newlines), every
/// record has the header's field count, and every field is UTF-8. Only an
/// unquoted field equal to the null string is `NULL` (as in PostgreSQL's
/// CSV format); empty lines are skipped.
///
/// The parser is `csv-core`, the state machine under the `csv` crate: the
/// `csv` crate does not say whether a field was quoted, which decides
/// `NULL`, nor where each field starts.
pub struct CsvSource {
    fields: Fields,
    /// Header fields per record.
    width: usize,
    /// Per header field, the column it fills.
    fill: Arc<[Option<usize>]>,
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
        let place = Place::new(input.into(), 0);
        Self::build(input::checked(reader, 0), place, config)
    }

    /// Reads the header of `reader` (checked UTF-8 from the place's start).
    fn build(reader: Text, place: Place, config: TextConfig) -> Result<Self, TextError> {
        let offset = place.start();
        let fields = Fields::new(reader, config.delimiter, offset, 1, config.max_value_bytes);
        let mut source = CsvSource {
            fields,
            width: 0,
            fill: Arc::new([]),
            config,
            place,
        };
        let mut header = Vec::new();
        loop {
            let next = source.fields.next();
            // Record 0 is the header.
            let next = next.map_err(|e| match source.field_error(e, header.len()) {
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
            match next? {
                None => break,
                Some(end) => {
                    let name = source.text(0, header.len())?.to_owned();
                    header.push(name);
                    if end {
                        break;
                    }
                }
            }
        }
        source.fill = map_header(&header, &source.config, &source.place.input)?.into();
        source.width = header.len();
        Ok(source)
    }

    /// The last field's text (always UTF-8: the input is checked, and
    /// unquoting removes only ASCII).
    fn text(&self, record: u64, field: usize) -> Result<&str, TextError> {
        std::str::from_utf8(self.fields.value()).map_err(|e| {
            let line = self.fields.field_line();
            let byte = self.fields.value()[e.valid_up_to()];
            self.error(
                line,
                field as u64 + 1,
                record,
                format!("UTF-8 text, found byte {byte:#04x}"),
            )
        })
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

    /// The error of field `field` (0-based) of the current record, which
    /// could not be read.
    fn field_error(&self, error: FieldError, field: usize) -> TextError {
        // Before a record's first field, the record is the next one.
        let record = self.place.records + u64::from(field == 0);
        let (line, column) = (self.fields.line(), field as u64 + 1);
        match error {
            FieldError::Io(e) => match NotUtf8::of(&e) {
                Some(fault) => self.error(line, column, record, fault.to_string()),
                None => TextError::Io {
                    input: self.place.input.clone(),
                    source: e,
                },
            },
            FieldError::TooLong => self.error(
                self.fields.field_line(),
                column,
                record,
                format!(
                    "a field of at most {} bytes (TextConfig::max_value_bytes)",
                    self.config.max_value_bytes
                ),
            ),
        }
    }

    /// Reads the next record into `row`; `Ok(false)` at the end of input.
    fn read(&mut self, row: &mut Row) -> Result<bool, TextError> {
        row.clear();
        let mut field = 0;
        loop {
            let end = match self.fields.next().map_err(|e| self.field_error(e, field))? {
                Some(end) => end,
                None if field == 0 => return Ok(false),
                // csv-core ends a record before the input; were it not to,
                // the record ends here.
                None => break,
            };
            if field == 0 {
                self.place.records += 1;
            }
            if let Some(&Some(column)) = self.fill.get(field) {
                let text = self.text(self.place.records, field)?;
                let null =
                    !self.fields.quoted() && self.config.null_string.as_deref() == Some(text);
                if !null {
                    row.set(column, text);
                }
            }
            field += 1;
            if end {
                break;
            }
        }
        let (offset, line) = self.fields.record_at();
        if field != self.width {
            return Err(self.error(
                line,
                field.min(self.width) as u64 + 1,
                self.place.records,
                format!("{} fields as in the header, found {field}", self.width),
            ));
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

/// Which column each header field fills; every column must be named.
fn map_header(
    header: &[String],
    config: &TextConfig,
    input: &str,
) -> Result<Vec<Option<usize>>, TextError> {
    let mapping = |why: String| TextError::Mapping {
        input: input.to_owned(),
        why,
    };
    let mut fill = Vec::with_capacity(header.len());
    for name in header {
        let column = config.column(name);
        if column.is_some() && fill.contains(&column) {
            return Err(mapping(format!("the header names {name:?} twice")));
        }
        if column.is_none() && config.strict {
            return Err(mapping(format!("the header's {name:?} is not a column")));
        }
        fill.push(column);
    }
    let missing: Vec<&String> = (config.columns.iter().enumerate())
        .filter(|(i, _)| !fill.contains(&Some(*i)))
        .map(|(_, c)| c)
        .collect();
    if !missing.is_empty() {
        return Err(mapping(format!(
            "the header names no field for the column(s) {missing:?}; its fields are \
             {header:?} (choose the columns with --columns / TextConfig::new)"
        )));
    }
    Ok(fill)
}

impl Source for CsvSource {
    type Error = TextError;

    fn columns(&self) -> &[String] {
        &self.config.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, TextError> {
        match self.place.begin()? {
            Begin::Going => {}
            Begin::Empty => return Ok(false),
            Begin::Started(text, at) => {
                let (delimiter, max) = (self.config.delimiter, self.config.max_value_bytes);
                self.fields = Fields::new(text, delimiter, at.offset, at.line, max);
            }
        }
        self.read(row)
    }

    fn records_before(&self) -> u64 {
        self.place.first_record
    }

    fn progress(&self) -> SourceProgress {
        self.place.progress(self.fields.offset())
    }
}
