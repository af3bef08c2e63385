//! [`JsonlSource`]: one JSON object per line, through `serde_json`.

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, Read};
use std::path::Path;

use ringpipe_pipeline::{RecordPosition, Row, Source, SourceProgress};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::input::{self, NotUtf8};
use crate::place::{self, Begin, Place};
use crate::region::{Boundary, Text};
use crate::{TextConfig, TextError};

/// JSON Lines records as rows: each line that is not blank (only spaces,
/// tabs and a carriage return) is one object whose keys name fields; a key
/// given twice is an error. `null` is `NULL`; a string is its unescaped
/// text; numbers, booleans, arrays and objects are their JSON text as
/// written (so a number keeps every digit). A column no key names is
/// `NULL`.
pub struct JsonlSource {
    reader: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    config: TextConfig,
    place: Place,
    /// Lines of the whole input read so far.
    lines: u64,
    /// Offset of the next unread byte.
    bytes: u64,
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
        let mut sources = vec![Self::build(head, place, config.clone())];
        for place in later {
            sources.push(Self::build(
                Box::new(std::io::empty()),
                place,
                config.clone(),
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
        Self::build(input::checked(reader, 0), place, config)
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
            self.fill(row)?;
            row.set_position(RecordPosition {
                record: self.place.records,
                line: self.lines,
                column: 1,
                byte_offset: start,
            });
            return Ok(true);
        }
    }

    fn build(reader: Text, place: Place, config: TextConfig) -> Self {
        JsonlSource {
            reader,
            line: Vec::new(),
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
                Some(fault) => self.error(fault.offset - start + 1, fault.to_string()),
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
                0,
                format!("a line of at most {max} bytes (TextConfig::max_value_bytes)"),
            ));
        }
        Ok(true)
    }

    /// Fills `row` from the object on the current line.
    fn fill(&self, row: &mut Row) -> Result<(), TextError> {
        let text = input::text(&self.line).map_err(|at| {
            let byte = self.line[at];
            self.error(at as u64 + 1, format!("UTF-8 text, found byte {byte:#04x}"))
        })?;
        let object: Object<'_> = serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or_default();
            self.error(e.column() as u64, format!("a JSON object ({message})"))
        })?;
        for (key, value) in object.0 {
            let Some(column) = self.config.column(&key) else {
                if self.config.strict {
                    let why = format!("{key:?}, which is not a column");
                    return Err(self.error(0, format!("no key {why}")));
                }
                continue;
            };
            let raw = value.get();
            match raw.as_bytes()[0] {
                b'n' => row.set_null(column),
                // Without escapes a string is its text between the quotes
                // (the parse above refused control characters in it).
                b'"' if memchr::memchr(b'\\', raw.as_bytes()).is_none() => {
                    row.set(column, &raw[1..raw.len() - 1]);
                }
                b'"' => {
                    let text: Cow<'_, str> = serde_json::from_str::<Key<'_>>(raw)
                        .map_err(|e| self.error(0, format!("a JSON string: {e}")))?
                        .0;
                    row.set(column, &text);
                }
                _ => row.set(column, raw),
            }
        }
        Ok(())
    }
}

/// Whether a line holds nothing but JSON whitespace.
fn blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The entries of one JSON object, in order, each key once.
struct Object<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Object<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
        // One allocation for the objects of a usual table's width.
        let mut entries: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::with_capacity(16);
        // Small objects are searched; large ones keep a set of their keys,
        // so no line costs more than linear time.
        let mut seen = std::collections::HashSet::new();
        while let Some(Key(key)) = map.next_key()? {
            let twice = match entries.len() < 16 {
                true => entries.iter().any(|(k, _)| *k == key),
                false => {
                    if seen.is_empty() {
                        seen.extend(entries.iter().map(|(k, _)| k.clone()));
                    }
                    !seen.insert(key.clone())
                }
            };
            if twice {
                return Err(de::Error::custom(format!("the key {key:?} twice")));
            }
            entries.push((key, map.next_value()?));
        }
        Ok(Object(entries))
    }
}

/// A JSON string, borrowed when it holds no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
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
