//! ringpipe-text: CSV and JSON Lines inputs as ringpipe
//! [`Source`](ringpipe_pipeline::Source)s.
//!
//! [`CsvSource`] reads CSV by the rules of `csv-core` (the `csv` crate's
//! parser), with a splitter of its own that finds fields with `memchr`:
//! RFC 4180 quoting, a header row naming the fields, a delimiter and a
//! null string of your choice (only an unquoted field equal to it is
//! `NULL`, as in PostgreSQL's CSV). [`JsonlSource`] reads one JSON object
//! per line through `serde_json`: keys name the fields (each once), `null`
//! is SQL `NULL`, strings are their unescaped text, numbers and booleans
//! their text as written, and nested arrays and objects their JSON text
//! as written. Either fills each row's columns by field name, matched
//! exactly; a CSV header must name every column, a JSON object may leave
//! one out (it is `NULL`) but must name one; a field no column names is
//! skipped (an error when strict), and one that names a column only when
//! case is ignored (`ID` for `id`, one column to MySQL) is an error.
//!
//! Both read a file (`.gz` decompressed, a UTF-8 byte-order mark skipped,
//! UTF-16 refused, every byte checked to be UTF-8) or any reader, as one
//! region or, for a plain file, as several that parse in parallel
//! (`open_regions`), split at record boundaries and numbering records and
//! lines in the whole file. They fail with the line (and the CSV field or
//! the JSON character column), the record number and what was expected.
//!
//! ```
//! use ringpipe_pipeline::{Row, Source};
//! use ringpipe_text::{CsvSource, TextConfig};
//!
//! let csv = "id,name\n1,\"caf\u{e9}, \"\"quoted\"\"\"\n2,\\N\n";
//! let config = TextConfig::new(["id", "name"]).null_string("\\N");
//! let mut source = CsvSource::from_reader(csv.as_bytes(), "inline", config)?;
//! let mut row = Row::with_columns(2);
//! assert!(source.next_row(&mut row)?);
//! assert_eq!(row.text(1), Some("caf\u{e9}, \"quoted\""));
//! assert!(source.next_row(&mut row)?);
//! assert_eq!(row.get(1), None);
//! assert!(!source.next_row(&mut row)?);
//! # Ok::<(), ringpipe_text::TextError>(())
//! ```

mod config;
mod csv_fields;
mod csv_header;
mod csv_source;
mod error;
mod input;
mod json_object;
mod jsonl;
mod names;
mod place;
mod region;
mod write;

pub use config::{Format, TextConfig};
pub use csv_source::CsvSource;
pub use error::TextError;
pub use jsonl::JsonlSource;
pub use write::{write_csv, write_jsonl};
