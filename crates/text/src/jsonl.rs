//! [`JsonlSource`]: one JSON object per line, through `serde_json`.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use ringpipe_pipeline::{RecordPosition, Row, Source, SourceProgress};
use serde_json::value::RawValue;

use crate::{input, TextConfig, TextError};

/// JSON Lines records as rows: each non-blank line is one object whose keys
/// name fields. `null` is `NULL`; a string is its unescaped text; numbers,
/// booleans, arrays and objects are their JSON text as written (so a
/// number keeps every digit). Of a key given twice, the last counts.
pub struct JsonlSource {
    reader: Box<dyn BufRead + Send>,
    line: String,
    config: TextConfig,
    input: String,
    total: Option<u64>,
    /// Lines read so far.
    lines: u64,
    bytes: u64,
    records: u64,
}

impl JsonlSource {
    /// Reads the file at `path` (`-`: stdin; gzip is decompressed).
    ///
    /// # Errors
    ///
    /// When the file cannot be opened.
    pub fn open(path: &Path, config: TextConfig) -> Result<Self, TextError> {
        let name = input::name(path);
        let (reader, total) = input::open(path).map_err(|source| TextError::Io {
            input: name.clone(),
            source,
        })?;
        let mut source = JsonlSource::from_reader(reader, name, config);
        source.total = total;
        Ok(source)
    }

    /// Reads `reader`, called `input` in messages.
    pub fn from_reader(
        reader: impl BufRead + Send + 'static,
        input: impl Into<String>,
        config: TextConfig,
    ) -> Self {
        JsonlSource {
            reader: Box::new(reader),
            line: String::new(),
            config,
            input: input.into(),
            total: None,
            lines: 0,
            bytes: 0,
            records: 0,
        }
    }

    fn error(&self, column: u64, expected: String) -> TextError {
        TextError::Syntax {
            input: self.input.clone(),
            line: self.lines,
            column,
            record: self.records,
            expected,
        }
    }

    /// Fills `row` from the object on the current line.
    fn fill(&self, row: &mut Row) -> Result<(), TextError> {
        let object: HashMap<String, &RawValue> = serde_json::from_str(&self.line).map_err(|e| {
            let found = match e.classify() {
                serde_json::error::Category::Data => "a JSON object".to_owned(),
                _ => {
                    let message = e.to_string();
                    let message = message.split(" at line ").next().unwrap_or_default();
                    format!("a JSON object ({message})")
                }
            };
            self.error(e.column() as u64, found)
        })?;
        for (key, value) in object {
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
                b'"' => {
                    let text: String = serde_json::from_str(raw)
                        .map_err(|e| self.error(0, format!("a JSON string: {e}")))?;
                    row.set(column, &text);
                }
                _ => row.set(column, raw),
            }
        }
        Ok(())
    }
}

impl Source for JsonlSource {
    type Error = TextError;

    fn columns(&self) -> &[String] {
        &self.config.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, TextError> {
        loop {
            self.line.clear();
            let read = self.reader.read_line(&mut self.line);
            let read = read.map_err(|e| self.error(0, format!("readable UTF-8 input: {e}")))?;
            if read == 0 {
                return Ok(false);
            }
            let start = self.bytes;
            self.bytes += read as u64;
            self.lines += 1;
            if self.line.trim().is_empty() {
                continue;
            }
            self.records += 1;
            row.clear();
            self.fill(row)?;
            row.set_position(RecordPosition {
                record: self.records,
                line: self.lines,
                column: 1,
                byte_offset: start,
            });
            return Ok(true);
        }
    }

    fn progress(&self) -> SourceProgress {
        SourceProgress {
            bytes_read: self.bytes,
            bytes_total: self.total,
            records: self.records,
        }
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
