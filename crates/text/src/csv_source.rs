//! [`CsvSource`]: CSV with a header row, through the `csv` crate.

use std::io::BufRead;
use std::path::Path;

use csv::{ByteRecord, ErrorKind, ReaderBuilder};
use ringpipe_pipeline::{RecordPosition, Row, Source, SourceProgress};

use crate::{input, TextConfig, TextError};

/// CSV records as rows: the header row names the fields, quoting is RFC
/// 4180's (a quoted field may hold the delimiter, `""` and newlines), every
/// record has the header's field count, and every field is UTF-8.
pub struct CsvSource {
    reader: csv::Reader<Box<dyn BufRead + Send>>,
    record: ByteRecord,
    /// Per header field, the column it fills.
    fill: Vec<Option<usize>>,
    config: TextConfig,
    input: String,
    total: Option<u64>,
    records: u64,
}

impl CsvSource {
    /// Reads the file at `path` (`-`: stdin; gzip is decompressed).
    ///
    /// # Errors
    ///
    /// When the file cannot be read or its header does not fit `config`.
    pub fn open(path: &Path, config: TextConfig) -> Result<Self, TextError> {
        let name = input::name(path);
        let (reader, total) = input::open(path).map_err(|source| TextError::Io {
            input: name.clone(),
            source,
        })?;
        let mut source = CsvSource::from_reader(reader, name, config)?;
        source.total = total;
        Ok(source)
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
        let reader: Box<dyn BufRead + Send> = Box::new(reader);
        let mut reader = ReaderBuilder::new()
            .delimiter(config.delimiter)
            .has_headers(true)
            .from_reader(reader);
        let header = reader
            .byte_headers()
            .map_err(|e| syntax(&input, e, 0))?
            .clone();
        let fill = map_header(&header, &config, &input)?;
        Ok(CsvSource {
            reader,
            record: ByteRecord::new(),
            fill,
            config,
            input,
            total: None,
            records: 0,
        })
    }

    /// Fills `row` from the record just read.
    fn fill(&self, row: &mut Row) -> Result<(), TextError> {
        for (field, (value, column)) in self.record.iter().zip(&self.fill).enumerate() {
            let Some(column) = *column else { continue };
            let text = std::str::from_utf8(value).map_err(|e| {
                let line = self.record.position().map_or(0, |p| p.line());
                TextError::Syntax {
                    input: self.input.clone(),
                    line,
                    column: field as u64 + 1,
                    record: self.records,
                    expected: format!("UTF-8 text, found byte {:#04x}", value[e.valid_up_to()]),
                }
            })?;
            if self.config.null_string.as_deref() != Some(text) {
                row.set(column, text);
            }
        }
        Ok(())
    }
}

/// Which column each header field fills.
fn map_header(
    header: &ByteRecord,
    config: &TextConfig,
    input: &str,
) -> Result<Vec<Option<usize>>, TextError> {
    let mapping = |why: String| TextError::Mapping {
        input: input.to_owned(),
        why,
    };
    let mut fill = Vec::with_capacity(header.len());
    for name in header {
        let name =
            std::str::from_utf8(name).map_err(|_| mapping("the header row is not UTF-8".into()))?;
        let column = config.column(name);
        if column.is_some() && fill.contains(&column) {
            return Err(mapping(format!("the header names {name:?} twice")));
        }
        if column.is_none() && config.strict {
            return Err(mapping(format!("the header's {name:?} is not a column")));
        }
        fill.push(column);
    }
    if fill.iter().all(Option::is_none) {
        return Err(mapping(format!(
            "no header field names a column of {:?}",
            config.columns
        )));
    }
    Ok(fill)
}

/// A `csv` error as a [`TextError`].
fn syntax(input: &str, error: csv::Error, record: u64) -> TextError {
    let (line, column, expected) = match error.kind() {
        ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => (
            pos.as_ref().map_or(0, |p| p.line()),
            expected_len.min(len) + 1,
            format!("{expected_len} fields as in the header, found {len}"),
        ),
        ErrorKind::Io(e) => (0, 0, format!("readable input: {e}")),
        ErrorKind::Utf8 { pos, err } => (
            pos.as_ref().map_or(0, |p| p.line()),
            err.field() as u64 + 1,
            "UTF-8 text".into(),
        ),
        _ => (0, 0, error.to_string()),
    };
    TextError::Syntax {
        input: input.to_owned(),
        line,
        column,
        record,
        expected,
    }
}

impl Source for CsvSource {
    type Error = TextError;

    fn columns(&self) -> &[String] {
        &self.config.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, TextError> {
        let next = self.records + 1;
        let more = self
            .reader
            .read_byte_record(&mut self.record)
            .map_err(|e| syntax(&self.input, e, next))?;
        if !more {
            return Ok(false);
        }
        self.records = next;
        row.clear();
        self.fill(row)?;
        let position = self.record.position();
        row.set_position(RecordPosition {
            record: next,
            line: position.map_or(0, |p| p.line()),
            column: 1,
            byte_offset: position.map_or(0, |p| p.byte()),
        });
        Ok(true)
    }

    fn progress(&self) -> SourceProgress {
        SourceProgress {
            bytes_read: self.reader.position().byte(),
            bytes_total: self.total,
            records: self.records,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read(csv: &str, config: TextConfig) -> Result<Vec<Vec<Option<String>>>, TextError> {
        let columns = config.columns.len();
        let mut source =
            CsvSource::from_reader(Cursor::new(csv.as_bytes().to_vec()), "t.csv", config)?;
        let mut row = Row::with_columns(columns);
        let mut rows = Vec::new();
        while source.next_row(&mut row)? {
            rows.push(
                (0..columns)
                    .map(|i| row.text(i).map(str::to_owned))
                    .collect(),
            );
        }
        Ok(rows)
    }

    #[test]
    fn quoting_delimiters_and_nulls() {
        let csv = "b;a;skip\n\"x;\"\"y\"\"\nz\";NULL;1\n;\"\";2\n";
        let config = TextConfig::new(["a", "b"])
            .delimiter(b';')
            .null_string("NULL");
        let rows = read(csv, config).unwrap();
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            rows,
            vec![vec![None, some("x;\"y\"\nz")], vec![some(""), some("")]]
        );
    }

    #[test]
    fn errors_name_line_field_and_record() {
        let error = read("a,b\n1,2\n3\n", TextConfig::new(["a", "b"])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.csv:3:2: record 2: 2 fields as in the header, found 1"
        );
        let bad = b"a,b\n1,\xff\n".to_vec();
        let mut source =
            CsvSource::from_reader(Cursor::new(bad), "t.csv", TextConfig::new(["a", "b"])).unwrap();
        let error = source.next_row(&mut Row::with_columns(2)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("t.csv:2:2: record 1: UTF-8 text"),
            "{error}"
        );
    }

    #[test]
    fn header_must_fit() {
        let strict = TextConfig::new(["a"]).strict(true);
        assert!(read("a,x\n", strict).is_err());
        assert!(read("x,y\n", TextConfig::new(["a"])).is_err());
        assert!(read("a,a\n", TextConfig::new(["a"])).is_err());
    }
}
