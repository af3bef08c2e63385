//! [`JsonlSource`]: one JSON object per line, through `serde_json`.

use std::cell::Cell;
use std::io::{BufRead, Read};
use std::path::Path;

use ringpipe_pipeline::{ColumnUsage, Decode, RecordPosition, Row, Source, SourceProgress};
use serde::de::DeserializeSeed;
use serde_json::error::Category;

use crate::input::{self, NotUtf8};
use crate::json_object::{self, ObjectSeed, Refusal};
use crate::names::Names;
use crate::place::{self, Begin, Place};
use crate::region::{Boundary, Text};
use crate::{TextConfig, TextError};

/// JSON Lines records as rows: each line that is not blank (only spaces,
/// tabs and a carriage return) is one object whose keys name fields; a key
/// given twice is an error. `null` is `NULL`; a string is its unescaped
/// text; numbers, booleans, arrays and objects are their JSON text as
/// written (so a number keeps every digit). A column no key names is
/// `NULL`, but an object must name one column at least (`{}`, or keys in
/// another case, would land a row of `NULL`s). A key that names a column
/// only when case is ignored (`ID` for `id`) is an error. Faults name the
/// line and the character column of the key or value at fault.
pub struct JsonlSource {
    reader: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    config: TextConfig,
    names: Names,
    /// Which columns some record filled, shared with the other regions.
    usage: ColumnUsage,
    place: Place,
    /// Lines of the whole input read so far.
    lines: u64,
    /// Offset of the next unread byte.
    bytes: u64,
    /// Per column, the decoding of its text into bytes, if any.
    decodes: Vec<Option<Decode>>,
    /// Why the configuration's decodings cannot be used (reported by the
    /// first read).
    misconfigured: Option<String>,
    /// A decoded value's bytes.
    decoded: Vec<u8>,
}

impl JsonlSource {
    /// Reads the file at `path` (`-`: stdin; gzip is decompressed).
    ///
    /// # Errors
    ///
    /// When the file cannot be opened.
    pub fn open(path: &Path, config: TextConfig) -> Result<Self, TextError> {
        let mut regions = Self::open_regions(path, config, 1)?;
        Ok(regions.remove(0))
    }

    /// The file at `path` as `regions` regions that parse in parallel, in
    /// order, split after newlines (which no JSON value holds raw), their
    /// records and lines numbered in the whole file (one region when it
    /// cannot be split: stdin, a pipe, gzip).
    ///
    /// # Errors
    ///
    /// When the file cannot be opened.
    pub fn open_regions(
        path: &Path,
        config: TextConfig,
        regions: usize,
    ) -> Result<Vec<Self>, TextError> {
        let (head, place, later) = place::open(path, regions, Box::new(scan))?;
        let usage = ColumnUsage::new(&config.columns);
        let mut sources = vec![Self::build(head, place, config.clone(), usage.clone())];
        for place in later {
            sources.push(Self::build(
                Box::new(std::io::empty()),
                place,
                config.clone(),
                usage.clone(),
            ));
        }
        Ok(sources)
    }

    /// Reads `reader`, called `input` in messages.
    pub fn from_reader(
        reader: impl BufRead + Send + 'static,
        input: impl Into<String>,
        config: TextConfig,
    ) -> Self {
        let place = Place::new(input.into(), 0);
        let usage = ColumnUsage::new(&config.columns);
        Self::build(input::checked(reader, 0), place, config, usage)
    }

    /// Which columns a record filled (a `null` counts: the key was there),
    /// over every region of the input.
    pub fn column_usage(&self) -> ColumnUsage {
        self.usage.clone()
    }

    /// Starts a later region when it is its turn, then reads a record.
    fn next(&mut self, row: &mut Row) -> Result<bool, TextError> {
        match self.place.begin()? {
            Begin::Going => {}
            Begin::Empty => return Ok(false),
            Begin::Started(text, at) => {
                self.reader = text;
                (self.bytes, self.lines) = (at.offset, at.line - 1);
            }
        }
        loop {
            let start = self.bytes;
            if !self.read_line()? {
                return self.place.end(self.config.allow_empty);
            }
            if blank(&self.line) {
                continue;
            }
            self.place.records += 1;
            row.clear();
            // Lent out while the object fills `row` and marks its columns.
            let line = std::mem::take(&mut self.line);
            let filled = self.fill(&line, row);
            self.line = line;
            filled?;
            row.set_position(RecordPosition {
                record: self.place.records,
                line: self.lines,
                column: 1,
                byte_offset: start,
            });
            return Ok(true);
        }
    }

    fn build(reader: Text, place: Place, config: TextConfig, usage: ColumnUsage) -> Self {
        let (decodes, misconfigured) = match config.column_decodes() {
            Ok(decodes) => (decodes, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        JsonlSource {
            decodes,
            misconfigured,
            decoded: Vec::new(),
            reader,
            line: Vec::new(),
            names: Names::new(&config.columns),
            usage,
            config,
            lines: 0,
            bytes: place.start(),
            place,
        }
    }

    fn error(&self, column: u64, expected: String) -> TextError {
        TextError::Syntax {
            input: self.place.input.clone(),
            line: self.lines,
            column,
            record: self.place.records,
            expected,
        }
    }

    /// Reads the next line into `self.line`; `Ok(false)` at the end.
    fn read_line(&mut self) -> Result<bool, TextError> {
        self.line.clear();
        let limit = self.config.max_value_bytes as u64 + 1;
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.line);
        let read = read.map_err(|e| {
            let start = self.bytes;
            (self.lines, self.place.records) = (self.lines + 1, self.place.records + 1);
            match NotUtf8::of(&e) {
                // The line's bytes before the fault are read, and UTF-8.
                Some(fault) => {
                    let at =
                        usize::try_from(fault.offset.saturating_sub(start)).unwrap_or(usize::MAX);
                    let before = &self.line[..at.min(self.line.len())];
                    let column = input::text(before).map_or(before.len(), |t| t.chars().count());
                    self.error(column as u64 + 1, fault.to_string())
                }
                None => TextError::Io {
                    input: self.place.input.clone(),
                    source: e,
                },
            }
        })?;
        if read == 0 {
            return Ok(false);
        }
        self.bytes += read as u64;
        self.lines += 1;
        if read as u64 == limit && self.line.last() != Some(&b'\n') {
            self.place.records += 1;
            let max = self.config.max_value_bytes;
            return Err(self.error(
                1,
                format!("a line of at most {max} bytes (TextConfig::max_value_bytes)"),
            ));
        }
        Ok(true)
    }

    /// Fills `row` from the object on `line`, the current line.
    fn fill(&mut self, line: &[u8], row: &mut Row) -> Result<(), TextError> {
        let text = input::text(line).map_err(|at| {
            let byte = line[at];
            // The bytes before the first fault are UTF-8.
            let before = input::text(&line[..at]).unwrap_or_default();
            let at = column(before, before.len());
            self.error(at, format!("UTF-8 text, found byte {byte:#04x}"))
        })?;
        let refusal = Cell::new(None);
        let seed = ObjectSeed {
            names: &self.names,
            strict: self.config.strict,
            refusal: &refusal,
        };
        let mut json = serde_json::Deserializer::from_str(text);
        let object = seed
            .deserialize(&mut json)
            .and_then(|object| json.end().map(|()| object))
            .map_err(|e| self.json_error(text, &e, refusal.take()))?;
        if object.filled == 0 {
            let found = match object.unknown.first() {
                None => "no key".to_owned(),
                Some(key) => format!("only keys that name none, as {key:?}"),
            };
            let columns = self.names.listed();
            return Err(self.error(
                column(text, value_start(text)),
                format!("a key naming a column ({columns}), found {found}"),
            ));
        }
        for key in &object.unknown {
            self.usage.ignore(key);
        }
        for (index, value) in object.values.iter().enumerate() {
            let Some(value) = value else { continue };
            self.usage.mark(index);
            let raw = value.get();
            let value = match raw.as_bytes()[0] {
                b'n' => {
                    row.set_null(index);
                    continue;
                }
                b'"' => json_object::string_text(raw).map_err(|e| {
                    let why = json_object::message(&e);
                    let at = column(text, offset(text, raw));
                    self.error(at, format!("a JSON string ({why})"))
                })?,
                _ => raw.into(),
            };
            let Some(mode) = self.decodes.get(index).copied().flatten() else {
                row.set(index, &value);
                continue;
            };
            self.decoded.clear();
            if let Err(e) = mode.decode(&value, &mut self.decoded) {
                let name = &self.config.columns[index];
                let at = column(text, offset(text, raw));
                return Err(self.error(
                    at,
                    format!(
                        "{mode} for column `{name}` ({}, at byte {} of the value)",
                        e.why, e.at
                    ),
                ));
            }
            row.set_bytes(index, &self.decoded);
        }
        Ok(())
    }

    /// The error of the line `text` that did not parse as an object: at
    /// the key of the object's own fault, else where `serde_json` stopped.
    fn json_error(
        &self,
        text: &str,
        error: &serde_json::Error,
        refusal: Option<Refusal<'_>>,
    ) -> TextError {
        if let Some(Refusal { at, expected }) = refusal {
            return self.error(column(text, offset(text, at)), expected);
        }
        let at = match error.classify() {
            // The line ends too early: where more was expected.
            Category::Eof => text.trim_end_matches(['\n', '\r']).len(),
            // Not an object (the only fault of this kind but the object's
            // own): the value that is not.
            Category::Data => value_start(text),
            // At the byte `serde_json` names by its 1-based column; the
            // text is one line but for its line end, after which only the
            // end can be.
            _ if error.line() == 1 => error.column().saturating_sub(1),
            _ => text.trim_end_matches(['\n', '\r']).len(),
        };
        let why = json_object::message(error);
        self.error(column(text, at), format!("a JSON object ({why})"))
    }
}

/// The 1-based character column of byte `at` of the line `text` (of the
/// character it is in).
fn column(text: &str, at: usize) -> u64 {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].chars().count() as u64 + 1
}

/// The offset in `text` of `part`, a slice of it.
fn offset(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// The offset of the line's value: its first byte that is not whitespace.
fn value_start(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t', '\r', '\n']).len()
}

/// Whether a line holds nothing but JSON whitespace.
fn blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Hands `found` the first line start at or after each of `targets`
/// (ascending) of the JSON Lines text `reader` whose first byte is at
/// `start`: the scan of a region plan.
fn scan(reader: &mut dyn BufRead, start: u64, targets: &[u64], found: &mut dyn FnMut(Boundary)) {
    let (mut offset, mut lines, mut records) = (start, 0u64, 0u64);
    // Whether the line read so far holds more than whitespace.
    let mut filled = false;
    let mut targets = targets.iter().copied().peekable();
    while let Some(&target) = targets.peek() {
        let Ok(chunk) = reader.fill_buf() else { return };
        if chunk.is_empty() {
            return;
        }
        let (taken, newline) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        filled |= !blank(&chunk[..taken]);
        reader.consume(taken);
        offset += taken as u64;
        if newline {
            lines += 1;
            records += u64::from(filled);
            filled = false;
            if offset >= target {
                targets.next();
                found(Boundary {
                    offset,
                    line: lines + 1,
                    records_before: records,
                });
            }
        }
    }
}

impl Source for JsonlSource {
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
        if let Some(why) = self.misconfigured.take() {
            let read = Err(TextError::Config {
                input: self.place.input.clone(),
                why,
            });
            self.place.after(&read);
            return read;
        }
        let read = self.next(row);
        self.place.after(&read);
        read
    }

    fn records_before(&self) -> u64 {
        self.place.first_record
    }

    fn progress(&self) -> SourceProgress {
        self.place.progress(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn source(text: &str, config: TextConfig) -> JsonlSource {
        JsonlSource::from_reader(Cursor::new(text.as_bytes().to_vec()), "t.jsonl", config)
    }

    #[test]
    fn values_keep_their_text() {
        let text = "{\"b\": \"x\\ty\\u00e9\", \"a\": 12345678901234567890.10, \"c\": {\"k\": [1, null]}}\n\n{\"a\": null, \"d\": true}\n";
        let mut source = source(text, TextConfig::new(["a", "b", "c", "d"]));
        let mut row = Row::with_columns(4);
        assert!(source.next_row(&mut row).unwrap());
        assert_eq!(row.text(0), Some("12345678901234567890.10"));
        assert_eq!(row.text(1), Some("x\ty\u{e9}"));
        assert_eq!(row.text(2), Some("{\"k\": [1, null]}"));
        assert_eq!(row.get(3), None);
        assert!(source.next_row(&mut row).unwrap());
        assert_eq!((row.get(0), row.text(3)), (None, Some("true")));
        assert_eq!(row.position().line, 3);
        assert!(!source.next_row(&mut row).unwrap());
    }

    #[test]
    fn errors_name_line_column_and_record() {
        let mut source = source("{\"a\": 1}\n[1]\n", TextConfig::new(["a"]));
        let mut row = Row::with_columns(1);
        assert!(source.next_row(&mut row).unwrap());
        let error = source.next_row(&mut row).unwrap_err();
        assert!(error.to_string().starts_with("t.jsonl:2:"), "{error}");
        assert!(
            error.to_string().contains("record 2: a JSON object"),
            "{error}"
        );
        let mut broken = self::source("{\"a\": 1,,}\n", TextConfig::new(["a"]));
        let error = broken.next_row(&mut row).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("t.jsonl:1:9: record 1: a JSON object (key must be a string)"),
            "{error}"
        );
        let mut strict = self::source("{\"x\": 1}\n", TextConfig::new(["a"]).strict(true));
        assert!(strict.next_row(&mut row).is_err());
    }
}
