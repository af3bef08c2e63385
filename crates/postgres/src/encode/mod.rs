//! Rows as `COPY … FROM STDIN` data, in binary or text format.
//!
//! Binary `COPY` sends each value in its type's binary form, so the server
//! parses nothing (the figures are in `docs/benchmarks.md`). This module
//! encodes the types whose text it can turn into that form exactly as the
//! server's own input function would ([`Encoder`]): text types, json,
//! jsonb, bytea, integers, floats and bool in the decimal and word
//! spellings their input functions take (white space around them being
//! ASCII, as theirs), and `numeric`, `timestamp` (without time zone) and
//! `date` from their canonical text only (`-12.50`, `2024-02-29
//! 12:00:00.5`, `2024-02-29`; see the `numeric` and `datetime` modules). A
//! table with any other column type (timestamptz, whose text depends on the
//! session's TimeZone, arrays, domains, enums, ...) is written in text
//! format, where the server parses every value itself.
//!
//! COPY's format is per statement, so each row is encoded in one format
//! ([`RowFormat`]): binary when every value has its binary form, text when
//! a numeric, timestamp or date value is not canonical (`1e5`, ` 12`,
//! `NaN`, `2023-06-01T10:00:00`, `infinity`, `24:00:00`, ...) or another
//! value is in a spelling not read here (a hexadecimal float, a no-break
//! space around a number, `maybe` for a bool). Such a row
//! is then read by the server's own parser, which stores it or refuses it
//! with its message exactly as a text COPY of the whole table would. The
//! sink sends each run of rows of one format as its own COPY, in order.
//!
//! Values for a `bytea` column are stored as their bytes, text or binary
//! alike (as MySQL stores text in a BLOB). Text goes as it is in either
//! format: a NUL character, which PostgreSQL's text types cannot hold, is
//! refused by the server as its own text COPY refuses it, and the sink's
//! bisection sets that record aside with the server's message. (Scanning
//! every value for one here would cost about 4% of the client's CPU:
//! `docs/benchmarks.md`.)

mod datetime;
mod numeric;
mod scalar;
mod text;

use ringpipe_pipeline::{Row, Value};

use self::scalar::{boolean, float, number};
use self::text::text_row;
use crate::check::Check;
use crate::PgError;

/// The 19-byte header of binary COPY data (signature, flags, extension length).
const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The end of binary COPY data: a field count of -1.
const BINARY_TRAILER: &[u8] = b"\xff\xff";

/// The COPY format one encoded row is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// `FORMAT binary`.
    Binary,
    /// `FORMAT text`.
    Text,
}

impl RowFormat {
    /// What the COPY data of rows in this format starts with (the binary
    /// header, or nothing).
    pub fn header(self) -> &'static [u8] {
        match self {
            RowFormat::Binary => BINARY_HEADER,
            RowFormat::Text => b"",
        }
    }

    /// What the COPY data of rows in this format ends with (the binary
    /// trailer, or nothing).
    pub fn trailer(self) -> &'static [u8] {
        match self {
            RowFormat::Binary => BINARY_TRAILER,
            RowFormat::Text => b"",
        }
    }
}

/// How one column's values are encoded in binary COPY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoder {
    /// text, varchar, bpchar, json: the UTF-8 bytes.
    Text,
    /// jsonb: a version byte (1), then the text.
    Jsonb,
    /// bytea: the bytes.
    Bytea,
    /// int2.
    Int2,
    /// int4.
    Int4,
    /// int8.
    Int8,
    /// float4.
    Float4,
    /// float8.
    Float8,
    /// bool.
    Bool,
    /// numeric, from canonical decimal text.
    Numeric,
    /// timestamp without time zone, from canonical ISO text.
    Timestamp,
    /// date, from canonical ISO text.
    Date,
}

/// Why a value was not encoded in binary.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// Not in the strict form the encoder reads: its row goes in text
    /// format, for the server to read or refuse.
    NotCanonical,
    /// A value its column cannot take in either format, and why.
    Bad(String),
}

impl From<String> for Refusal {
    /// A reason is a bad value's.
    fn from(why: String) -> Refusal {
        Refusal::Bad(why)
    }
}

impl Encoder {
    /// The encoder of a column of base type `typname`, if binary COPY can
    /// carry it here.
    pub fn for_type(typname: &str) -> Option<Encoder> {
        Some(match typname {
            "text" | "varchar" | "bpchar" | "json" => Encoder::Text,
            "jsonb" => Encoder::Jsonb,
            "bytea" => Encoder::Bytea,
            "int2" => Encoder::Int2,
            "int4" => Encoder::Int4,
            "int8" => Encoder::Int8,
            "float4" => Encoder::Float4,
            "float8" => Encoder::Float8,
            "bool" => Encoder::Bool,
            "numeric" => Encoder::Numeric,
            "timestamp" => Encoder::Timestamp,
            "date" => Encoder::Date,
            _ => return None,
        })
    }

    /// Appends `value`'s binary form to `out` (without its length); on
    /// `Err`, `out` may hold part of it.
    fn encode(self, value: Value<'_>, out: &mut Vec<u8>) -> Result<(), Refusal> {
        let text = || text_of(value).ok_or_else(|| Refusal::Bad("not UTF-8".to_owned()));
        let canonical = |encoded: bool| match encoded {
            true => Ok(()),
            false => Err(Refusal::NotCanonical),
        };
        match self {
            Encoder::Bytea => out.extend_from_slice(value.as_bytes()),
            Encoder::Text => out.extend_from_slice(text()?.as_bytes()),
            Encoder::Jsonb => {
                out.push(1);
                out.extend_from_slice(text()?.as_bytes());
            }
            Encoder::Int2 => out.extend_from_slice(&number::<i16>(text()?)?.to_be_bytes()),
            Encoder::Int4 => out.extend_from_slice(&number::<i32>(text()?)?.to_be_bytes()),
            Encoder::Int8 => out.extend_from_slice(&number::<i64>(text()?)?.to_be_bytes()),
            Encoder::Float4 => out.extend_from_slice(&float::<f32>(text()?)?.to_be_bytes()),
            Encoder::Float8 => out.extend_from_slice(&float::<f64>(text()?)?.to_be_bytes()),
            Encoder::Bool => out.push(u8::from(boolean(text()?)?)),
            Encoder::Numeric => canonical(numeric::encode(text()?, out))?,
            Encoder::Timestamp => canonical(datetime::encode_timestamp(text()?, out))?,
            Encoder::Date => canonical(datetime::encode_date(text()?, out))?,
        }
        Ok(())
    }
}

/// A value's text: a binary value's too when it is UTF-8 (the server
/// parses it as text all the same).
fn text_of(value: Value<'_>) -> Option<&str> {
    match value {
        Value::Text(text) => Some(text),
        Value::Bytes(bytes) => std::str::from_utf8(bytes).ok(),
    }
}

/// Encodes rows into one batch's COPY data.
#[derive(Debug)]
pub struct CopyEncoder {
    /// Binary encoders per column, or `None` for text format only.
    binary: Option<Vec<Encoder>>,
    /// Which columns are bytea (text format hex-encodes them).
    bytea: Vec<bool>,
    /// The column names, for errors.
    names: Vec<String>,
    /// Per column, the check of values the server would alter.
    checks: Vec<Option<Check>>,
}

impl CopyEncoder {
    /// An encoder writing rows in binary format with those encoders
    /// (each row that has a value they do not take in text format), or
    /// every row in text format.
    pub fn new(binary: Option<Vec<Encoder>>, bytea: Vec<bool>, names: Vec<String>) -> Self {
        CopyEncoder {
            checks: vec![None; bytea.len()],
            binary,
            bytea,
            names,
        }
    }

    /// Refuses the values that `checks` (one per column) say the server
    /// would alter.
    pub fn with_checks(mut self, checks: Vec<Option<Check>>) -> Self {
        self.checks = checks;
        self
    }

    /// Appends `row` to `out` and says in which format; on error `out` is
    /// as before.
    ///
    /// # Errors
    ///
    /// [`PgError::BadValue`] for a value its column cannot take.
    pub fn row(&self, row: &Row, out: &mut Vec<u8>) -> Result<RowFormat, PgError> {
        // One `bytea` flag per mapped column: a row of another width would
        // lose values (binary) or index past the flags (text).
        if row.len() != self.bytea.len() {
            return Err(PgError::Config(format!(
                "record {} has {} values, {} columns are mapped",
                row.position().record,
                row.len(),
                self.bytea.len()
            )));
        }
        let mark = out.len();
        let checked = self
            .checks
            .iter()
            .zip(row.values())
            .enumerate()
            .try_for_each(
                |(index, (check, value))| match (check, value.and_then(text_of)) {
                    (Some(check), Some(text)) => check.check(text).map_err(|why| (index, why)),
                    _ => Ok(()),
                },
            );
        let result = checked.and_then(|()| match &self.binary {
            Some(encoders) => match binary_row(encoders, row, out)? {
                true => Ok(RowFormat::Binary),
                false => {
                    out.truncate(mark);
                    text_row(&self.bytea, row, out);
                    Ok(RowFormat::Text)
                }
            },
            None => {
                text_row(&self.bytea, row, out);
                Ok(RowFormat::Text)
            }
        });
        result.map_err(|(column, why)| {
            out.truncate(mark);
            PgError::BadValue {
                record: row.position().record,
                column: self.names.get(column).cloned().unwrap_or_default(),
                why,
            }
        })
    }
}

/// Appends `row` in binary format: `Ok(false)` when a value is not
/// canonical (the row then goes in text, and `out` holds a part of it for
/// the caller to cut), `Err` with the column and reason for a value its
/// column cannot take in either format. Every value is encoded even after
/// one that is not canonical, so that a bad value is refused here alike.
fn binary_row(encoders: &[Encoder], row: &Row, out: &mut Vec<u8>) -> Result<bool, (usize, String)> {
    // A table has at most 1600 columns.
    out.extend_from_slice(&(encoders.len() as i16).to_be_bytes());
    let mut canonical = true;
    for (index, (encoder, value)) in encoders.iter().zip(row.values()).enumerate() {
        let Some(value) = value else {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        };
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        match encoder.encode(value, out) {
            Ok(()) => {}
            Err(Refusal::NotCanonical) => {
                canonical = false;
                out.truncate(at);
                continue;
            }
            Err(Refusal::Bad(why)) => return Err((index, why)),
        }
        let len = i32::try_from(out.len() - at - 4)
            .map_err(|_| (index, "a value over 2 GiB".to_owned()))?;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of text values (`None` for NULL).
    fn row(values: &[Option<&str>]) -> Row {
        let mut row = Row::with_columns(values.len());
        for (i, v) in values.iter().enumerate() {
            if let Some(v) = v {
                row.set(i, v);
            }
        }
        row
    }

    #[test]
    fn text_format_escapes_and_marks_null() {
        let encoder = CopyEncoder::new(None, vec![false, false, true], vec![]);
        let mut out = Vec::new();
        let format = encoder
            .row(
                &row(&[Some("a\tb\\c\nd\re"), None, Some("\u{1}")]),
                &mut out,
            )
            .unwrap();
        assert_eq!(format, RowFormat::Text);
        assert_eq!(out, b"a\\tb\\\\c\\nd\\re\t\\N\t\\\\x01\n");
    }

    #[test]
    fn binary_format_encodes_numbers_and_null() {
        let names = vec!["a".into(), "b".into(), "c".into()];
        let encoders = vec![Encoder::Int4, Encoder::Text, Encoder::Bool];
        let encoder = CopyEncoder::new(Some(encoders), vec![false; 3], names);
        let mut out = Vec::new();
        let format = encoder
            .row(&row(&[Some(" -7 "), None, Some("yes")]), &mut out)
            .unwrap();
        assert_eq!(format, RowFormat::Binary);
        let expected = [
            &3i16.to_be_bytes()[..],
            &4i32.to_be_bytes(),
            &(-7i32).to_be_bytes(),
            &(-1i32).to_be_bytes(),
            &1i32.to_be_bytes(),
            &[1],
        ]
        .concat();
        assert_eq!(out, expected);
    }

    #[test]
    fn numeric_timestamp_and_date_values_have_binary_lengths() {
        let encoders = vec![Encoder::Numeric, Encoder::Timestamp, Encoder::Date];
        let encoder = CopyEncoder::new(Some(encoders), vec![false; 3], vec![]);
        let mut out = Vec::new();
        let values = [
            Some("-1.5"),
            Some("2000-01-01 00:00:01"),
            Some("2000-01-02"),
        ];
        assert_eq!(
            encoder.row(&row(&values), &mut out).unwrap(),
            RowFormat::Binary
        );
        let expected = [
            &3i16.to_be_bytes()[..],
            &12i32.to_be_bytes(),
            &[0, 2, 0, 0, 0x40, 0, 0, 1, 0, 1, 0x13, 0x88],
            &8i32.to_be_bytes(),
            &1_000_000i64.to_be_bytes(),
            &4i32.to_be_bytes(),
            &1i32.to_be_bytes(),
        ]
        .concat();
        assert_eq!(out, expected);
    }

    #[test]
    fn a_row_with_a_value_not_canonical_goes_in_text() {
        let names = vec!["n".into(), "t".into(), "b".into()];
        let encoders = vec![Encoder::Numeric, Encoder::Timestamp, Encoder::Bytea];
        let encoder = CopyEncoder::new(Some(encoders), vec![false, false, true], names);
        let mut out = vec![9];
        let values = [Some("1e5"), Some("2023-06-01 10:00:00"), Some("\t")];
        assert_eq!(
            encoder.row(&row(&values), &mut out).unwrap(),
            RowFormat::Text
        );
        assert_eq!(out, b"\x091e5\t2023-06-01 10:00:00\t\\\\x09\n");
        let mut out = Vec::new();
        let values = [Some("12"), Some("2023-06-01T10:00:00"), None];
        assert_eq!(
            encoder.row(&row(&values), &mut out).unwrap(),
            RowFormat::Text
        );
        assert_eq!(out, b"12\t2023-06-01T10:00:00\t\\N\n");
    }

    #[test]
    fn a_bad_value_is_refused_even_beside_one_not_canonical() {
        let names = vec!["n".into(), "i".into()];
        let encoder = CopyEncoder::new(
            Some(vec![Encoder::Numeric, Encoder::Int2]),
            vec![false; 2],
            names,
        );
        let mut out = vec![9];
        let error = encoder
            .row(&row(&[Some("NaN"), Some("70000")]), &mut out)
            .unwrap_err();
        assert!(error.to_string().contains("\"i\""), "{error}");
        assert_eq!(out, [9]);
        // A NUL is the server's to refuse, as in any text COPY.
        let format = encoder.row(&row(&[Some("1\0"), Some("1")]), &mut out);
        assert_eq!(format.unwrap(), RowFormat::Text);
        assert_eq!(out, b"\x091\0\t1\n");
    }

    #[test]
    fn bad_values_name_their_column_and_leave_the_buffer() {
        let encoder = CopyEncoder::new(Some(vec![Encoder::Int2]), vec![false], vec!["n".into()]);
        let mut out = vec![9];
        let error = encoder.row(&row(&[Some("70000")]), &mut out).unwrap_err();
        assert!(error.to_string().contains("\"n\""), "{error}");
        assert_eq!(out, [9]);
        let text = CopyEncoder::new(None, vec![false], vec!["t".into()]);
        assert_eq!(
            text.row(&row(&[Some("a\0b")]), &mut out).unwrap(),
            RowFormat::Text
        );
        assert_eq!(out, b"\x09a\0b\n");
    }
}
