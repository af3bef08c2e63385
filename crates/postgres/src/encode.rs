//! Rows as `COPY … FROM STDIN` data, in binary or text format.
//!
//! Binary `COPY` sends each value in its type's binary form, so the server
//! parses nothing; this module encodes the types whose text it can turn
//! into that form exactly as the server's own input function would
//! ([`Encoder`]). A table with any other column type (numeric, dates,
//! arrays, ...) is written in text format, where the server parses every
//! value itself.
//!
//! Values for a `bytea` column are stored as their bytes, text or binary
//! alike (as MySQL stores text in a BLOB); PostgreSQL text cannot hold a
//! NUL character, so a NUL in text is refused here with the record's number.

use memchr::{memchr2, memchr3};
use ringpipe_pipeline::{Row, Value};

use crate::check::Check;
use crate::PgError;

/// The 19-byte header of binary COPY data (signature, flags, extension length).
const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The end of binary COPY data: a field count of -1.
const BINARY_TRAILER: &[u8] = b"\xff\xff";

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
            _ => return None,
        })
    }

    /// Appends `value`'s binary form to `out` (without its length).
    fn encode(self, value: Value<'_>, out: &mut Vec<u8>) -> Result<(), String> {
        let text = || match value {
            Value::Text(text) => Ok(text),
            Value::Bytes(bytes) => std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned()),
        };
        match self {
            Encoder::Bytea => out.extend_from_slice(value.as_bytes()),
            Encoder::Text => out.extend_from_slice(no_nul(text()?)?.as_bytes()),
            Encoder::Jsonb => {
                out.push(1);
                out.extend_from_slice(no_nul(text()?)?.as_bytes());
            }
            Encoder::Int2 => out.extend_from_slice(&number::<i16>(text()?)?.to_be_bytes()),
            Encoder::Int4 => out.extend_from_slice(&number::<i32>(text()?)?.to_be_bytes()),
            Encoder::Int8 => out.extend_from_slice(&number::<i64>(text()?)?.to_be_bytes()),
            Encoder::Float4 => out.extend_from_slice(&float::<f32>(text()?)?.to_be_bytes()),
            Encoder::Float8 => out.extend_from_slice(&float::<f64>(text()?)?.to_be_bytes()),
            Encoder::Bool => out.push(u8::from(boolean(text()?)?)),
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

/// `text`, if it has no NUL (which PostgreSQL text cannot hold).
fn no_nul(text: &str) -> Result<&str, String> {
    match text.contains('\0') {
        true => Err("PostgreSQL text cannot hold a NUL character".into()),
        false => Ok(text),
    }
}

/// An integer as the server's `int4in` reads it: surrounding whitespace allowed.
fn number<N: std::str::FromStr>(text: &str) -> Result<N, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{text:?} is not an integer of the column's size"))
}

/// A float as `float8in` / `float4in` read it: a value that overflows to
/// infinity or underflows to zero is out of range (as the server says),
/// not stored as infinity or 0.
fn float<F: std::str::FromStr + Into<f64> + Copy>(text: &str) -> Result<F, String> {
    let trimmed = text.trim();
    let value: F = trimmed
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    let value64: f64 = value.into();
    let overflow = value64.is_infinite() && !trimmed.to_ascii_lowercase().contains("inf");
    let underflow = value64 == 0.0 && nonzero_mantissa(trimmed);
    match overflow || underflow {
        true => Err(format!("{text:?} is out of range for the column's type")),
        false => Ok(value),
    }
}

/// Whether a number's digits before its exponent hold a nonzero one.
fn nonzero_mantissa(text: &str) -> bool {
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// A boolean as `boolin` reads it (`t`, `yes`, `on`, `1`, unique prefixes, ...).
fn boolean(text: &str) -> Result<bool, String> {
    let lower = text.trim().to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| lower.len() >= min && word.starts_with(&lower);
    if prefix_of("true", 1) || prefix_of("yes", 1) || lower == "on" || lower == "1" {
        Ok(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || lower == "0" {
        Ok(false)
    } else {
        Err(format!("{text:?} is not a boolean"))
    }
}

/// Encodes rows into one batch's COPY data.
#[derive(Debug)]
pub struct CopyEncoder {
    /// Binary encoders per column, or `None` for text format.
    binary: Option<Vec<Encoder>>,
    /// Which columns are bytea (text format hex-encodes them).
    bytea: Vec<bool>,
    /// The column names, for errors.
    names: Vec<String>,
    /// Per column, the check of values the server would alter.
    checks: Vec<Option<Check>>,
}

impl CopyEncoder {
    /// An encoder writing `binary` format with those encoders, or text.
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

    /// What a COPY's data starts with (the binary header, or nothing).
    pub fn header(&self) -> &'static [u8] {
        match self.binary {
            Some(_) => BINARY_HEADER,
            None => b"",
        }
    }

    /// What a COPY's data ends with (the binary trailer, or nothing).
    pub fn trailer(&self) -> &'static [u8] {
        match self.binary {
            Some(_) => BINARY_TRAILER,
            None => b"",
        }
    }

    /// Appends `row` to `out`; on error `out` is as before.
    ///
    /// # Errors
    ///
    /// [`PgError::BadValue`] for a value its column cannot take.
    pub fn row(&self, row: &Row, out: &mut Vec<u8>) -> Result<(), PgError> {
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
            Some(encoders) => binary_row(encoders, row, out),
            None => text_row(&self.bytea, row, out),
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

fn binary_row(encoders: &[Encoder], row: &Row, out: &mut Vec<u8>) -> Result<(), (usize, String)> {
    out.extend_from_slice(&(encoders.len() as i16).to_be_bytes());
    for (index, (encoder, value)) in encoders.iter().zip(row.values()).enumerate() {
        let Some(value) = value else {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        };
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        encoder.encode(value, out).map_err(|why| (index, why))?;
        let len = i32::try_from(out.len() - at - 4)
            .map_err(|_| (index, "a value over 2 GiB".to_owned()))?;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(())
}

fn text_row(bytea: &[bool], row: &Row, out: &mut Vec<u8>) -> Result<(), (usize, String)> {
    for (index, value) in row.values().enumerate() {
        if index > 0 {
            out.push(b'\t');
        }
        match value {
            None => out.extend_from_slice(b"\\N"),
            Some(value) if bytea[index] => hex(value.as_bytes(), out),
            Some(value) => {
                let bytes = value.as_bytes();
                // Most values need no escape: two vectorised scans, one copy.
                match needs_escape(bytes) {
                    false => out.extend_from_slice(bytes),
                    true if bytes.contains(&0) => {
                        return Err((index, "PostgreSQL text cannot hold a NUL character".into()))
                    }
                    _ => escape(bytes, out),
                }
            }
        }
    }
    out.push(b'\n');
    Ok(())
}

/// A bytea value in text COPY: `\\x` and hex digits (the backslash doubled
/// for COPY's own escaping).
fn hex(bytes: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\\\x");
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 15)]);
    }
}

/// Whether `bytes` holds a byte text COPY escapes (or refuses: NUL), by
/// memchr's vectorised scans (fewer instructions than a byte loop over
/// the catalogue's values, measured with callgrind).
fn needs_escape(bytes: &[u8]) -> bool {
    memchr3(b'\\', b'\t', b'\n', bytes).is_some() || memchr2(b'\r', 0, bytes).is_some()
}

/// Text COPY escaping: backslash, tab, newline and carriage return.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for (at, byte) in bytes.iter().enumerate() {
        let escaped: &[u8] = match byte {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..at]);
        out.extend_from_slice(escaped);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

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
        encoder
            .row(
                &row(&[Some("a\tb\\c\nd\re"), None, Some("\u{1}")]),
                &mut out,
            )
            .unwrap();
        assert_eq!(out, b"a\\tb\\\\c\\nd\\re\t\\N\t\\\\x01\n");
    }

    #[test]
    fn only_values_with_special_bytes_are_escaped() {
        assert!(!needs_escape(
            b"plain text \xc3\xa9 long enough to span a vector of bytes"
        ));
        for special in [0u8, b'\t', b'\n', b'\r', b'\\'] {
            let mut value = vec![b'x'; 40];
            value[37] = special;
            assert!(needs_escape(&value), "{special}");
        }
    }

    #[test]
    fn binary_format_encodes_numbers_and_null() {
        let names = vec!["a".into(), "b".into(), "c".into()];
        let encoders = vec![Encoder::Int4, Encoder::Text, Encoder::Bool];
        let encoder = CopyEncoder::new(Some(encoders), vec![false; 3], names);
        let mut out = Vec::new();
        encoder
            .row(&row(&[Some(" -7 "), None, Some("yes")]), &mut out)
            .unwrap();
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
    fn bad_values_name_their_column_and_leave_the_buffer() {
        let encoder = CopyEncoder::new(Some(vec![Encoder::Int2]), vec![false], vec!["n".into()]);
        let mut out = vec![9];
        let error = encoder.row(&row(&[Some("70000")]), &mut out).unwrap_err();
        assert!(error.to_string().contains("\"n\""), "{error}");
        assert_eq!(out, [9]);
        let nul = CopyEncoder::new(None, vec![false], vec!["t".into()]);
        assert!(nul.row(&row(&[Some("a\0b")]), &mut out).is_err());
    }

    #[test]
    fn parses_like_the_server() {
        assert_eq!(boolean("T"), Ok(true));
        assert_eq!(boolean("of"), Ok(false));
        assert!(boolean("o").is_err());
        assert!(float::<f64>("1e400").is_err());
        assert!(float::<f64>("1e-400").is_err());
        assert!(float::<f32>("-1e-50").is_err());
        assert_eq!(float::<f32>("1e-40"), Ok(1e-40)); // subnormal, as strtof
        assert_eq!(float::<f64>("-0.0e-999"), Ok(-0.0));
        assert_eq!(float::<f64>("-Infinity"), Ok(f64::NEG_INFINITY));
        assert_eq!(float::<f32>(" 1.5"), Ok(1.5));
    }
}
