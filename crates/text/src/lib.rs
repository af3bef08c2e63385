//! ringpipe-text: CSV and JSON Lines inputs as ringpipe
//! [`Source`](ringpipe_pipeline::Source)s.
//!
//! [`CsvSource`] reads CSV through the `csv` crate: RFC 4180 quoting, a
//! header row naming the fields, a delimiter and a null string of your
//! choice. [`JsonlSource`] reads one JSON object per line through
//! `serde_json`: keys name the fields, `null` is SQL `NULL`, strings are
//! their unescaped text, numbers and booleans their text as written, and
//! nested arrays and objects their JSON text as written. Either fills each
//! row's columns by field name; a column no field names is `NULL`, a
//! field no column names is skipped (an error when strict).
//!
//! Both read a file (`.gz` decompressed) or any reader as one region, and
//! fail with the line (and the CSV field or the JSON column), the record
//! number and what was expected.
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
mod csv_source;
mod error;
mod input;
mod jsonl;
mod write;

pub use config::{Format, TextConfig};
pub use csv_source::CsvSource;
pub use error::TextError;
pub use jsonl::JsonlSource;
pub use write::{write_csv, write_jsonl};
