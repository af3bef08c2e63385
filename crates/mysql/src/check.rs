//! Values the server would store altered without an error, refused here
//! with their record and column instead.
//!
//! In strict mode MariaDB and MySQL refuse a value out of a column's range
//! or too long for it, but still round some values quietly: an integer
//! column stores `1.5` as 2 without a warning, a `DECIMAL(p,s)` rounds to
//! `s` places with only a note, a `DATETIME(n)`, `TIMESTAMP(n)` or
//! `TIME(n)` drops fractional digits beyond `n` without a word, a `FLOAT`
//! or `DOUBLE` stores a number too small for it as 0, and one declared
//! with decimals (`FLOAT(7,2)`) rounds to them without a warning. Text
//! columns change values too: an `ENUM` or `SET` takes a member in another
//! case (`a` for `A`, stored as `A`) or a number as a member's position, a
//! `YEAR` reads `99` as 1999 and `0` as 2000, a `CHAR` drops trailing
//! spaces when read, and a `BINARY(n)` pads a shorter value with zero
//! bytes. Each [`Check`] refuses a value that would change that way; the
//! numeric rules are [`ringpipe_pipeline::exact`]'s, shared with the
//! PostgreSQL sink.

use std::sync::Arc;

use ringpipe_pipeline::exact::{is_nonzero_number, within_fraction, within_scale};
use ringpipe_pipeline::Value;

use crate::wire::ColumnType;

/// A check of one column's values, from its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// An integer or `DECIMAL` column: no nonzero digit beyond this many
    /// decimal places (0 for integers).
    Scale(i32),
    /// A temporal column keeping this many fractional digits of a second.
    Fraction(usize),
    /// `FLOAT` (`single`) or `DOUBLE`: a nonzero number must not become 0
    /// in its precision, nor have more decimal places than `scale`, when
    /// the column was declared with some.
    Float {
        /// Single precision.
        single: bool,
        /// Decimal places kept (`FLOAT(M,D)`), if declared.
        scale: Option<i32>,
    },
    /// `ENUM`: exactly one of its members, as declared.
    Enum(Arc<[String]>),
    /// `SET`: members as declared, comma-separated (in any order, and a
    /// member twice: the same set).
    Set(Arc<[String]>),
    /// `YEAR`: four digits.
    Year,
    /// `CHAR`: no trailing space.
    Char,
    /// `BINARY(n)`: no fewer than `n` bytes (more is the server's to refuse).
    Binary(u64),
}

impl Check {
    /// The check of `column`'s values, if the server can alter them.
    pub(crate) fn for_column(column: &ColumnType) -> Option<Check> {
        Some(match column.data_type.as_str() {
            "tinyint" | "smallint" | "mediumint" | "int" | "bigint" => Check::Scale(0),
            "decimal" => Check::Scale(i32::try_from(column.numeric_scale?).ok()?),
            "datetime" | "timestamp" | "time" => {
                Check::Fraction(usize::from(column.datetime_precision.unwrap_or(0)))
            }
            "float" | "double" => Check::Float {
                single: column.data_type == "float",
                scale: column.numeric_scale.and_then(|s| i32::try_from(s).ok()),
            },
            "enum" if !column.members.is_empty() => Check::Enum(column.members.clone().into()),
            "set" if !column.members.is_empty() => Check::Set(column.members.clone().into()),
            "year" => Check::Year,
            "char" => Check::Char,
            "binary" => Check::Binary(column.octet_length?),
            _ => return None,
        })
    }

    /// `Err` with the reason when the server would alter `value` (text,
    /// or the bytes `--decode` made of it).
    pub(crate) fn check(&self, value: Value<'_>) -> Result<(), String> {
        let text = match (self, value) {
            (&Check::Binary(n), value) => return padded(value.as_bytes().len() as u64, n),
            (_, Value::Text(text)) => text,
            // The server reads these columns' bytes as text; bytes that
            // are not text are its to refuse.
            (_, Value::Bytes(bytes)) => match std::str::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => return Ok(()),
            },
        };
        match self {
            Check::Enum(members) if !members.iter().any(|m| m == text) => Err(format!(
                "{text:?} is not one of the ENUM's values as declared ({}): the server would \
                 take another spelling or a position",
                listed(members)
            )),
            Check::Set(members) => match text.split(',').find(|t| !members.iter().any(|m| m == t)) {
                Some(part) if !text.is_empty() => Err(format!(
                    "{part:?} is not one of the SET's values as declared ({}): the server \
                     would take another spelling or a position",
                    listed(members)
                )),
                _ => Ok(()),
            },
            Check::Year if !is_four_digits(text) => Err(format!(
                "{text:?} is not a four-digit year: a YEAR column reads one or two digits \
                 as 1970–2069"
            )),
            Check::Char if text.ends_with(' ') => Err(format!(
                "{text:?} ends in spaces, which a CHAR column drops"
            )),
            &Check::Scale(0) if !within_scale(text, 0) => Err(format!(
                "{text:?} is not a whole number: an integer column would round it"
            )),
            &Check::Scale(scale) if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
            &Check::Fraction(digits) if !within_fraction(text, digits) => Err(format!(
                "{text:?} has more fractional digits than the column's {digits}: they would be dropped"
            )),
            &Check::Float { single, .. } if underflows(text, single) => Err(format!(
                "{text:?} is too close to zero for the column's {}: it would be stored as 0",
                if single { "FLOAT" } else { "DOUBLE" }
            )),
            &Check::Float {
                scale: Some(scale), ..
            } if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
            _ => Ok(()),
        }
    }
}

/// `Err` when a value of `len` bytes is shorter than a `BINARY(n)`.
fn padded(len: u64, n: u64) -> Result<(), String> {
    match len < n {
        true => Err(format!(
            "{len} bytes, fewer than the column's {n}: BINARY({n}) would pad them with zero bytes"
        )),
        false => Ok(()),
    }
}

/// `members` for a message: the first few, quoted.
fn listed(members: &[String]) -> String {
    let mut shown: Vec<String> = members.iter().take(5).map(|m| format!("{m:?}")).collect();
    if members.len() > 5 {
        shown.push(format!("… {} in all", members.len()));
    }
    shown.join(", ")
}

/// Whether `text`, spaces around it aside, is four ASCII digits.
fn is_four_digits(text: &str) -> bool {
    let year = text.trim_matches(' ');
    year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `text` is a nonzero number that becomes 0 in double precision
/// (or, with `single`, in single precision).
fn underflows(text: &str, single: bool) -> bool {
    if is_nonzero_number(text) != Some(true) {
        return false;
    }
    match text.trim().parse::<f64>() {
        Ok(value) if single => (value as f32) == 0.0,
        Ok(value) => value == 0.0,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(data_type: &str, scale: Option<u64>, precision: Option<u8>) -> ColumnType {
        ColumnType {
            data_type: data_type.into(),
            charset: None,
            datetime_precision: precision,
            numeric_scale: scale,
            octet_length: None,
            members: Vec::new(),
        }
    }

    #[test]
    fn integers_refuse_fractions() {
        let check = Check::for_column(&column("int", Some(0), None)).unwrap();
        for ok in ["1", "-7", "1.0", "1e3", "x", ""] {
            assert_eq!(check.check(Value::Text(ok)), Ok(()), "{ok}");
        }
        for bad in ["1.5", "1.4", "-0.5", "15e-1"] {
            assert!(check.check(Value::Text(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn decimals_refuse_what_would_round() {
        let check = Check::for_column(&column("decimal", Some(2), None)).unwrap();
        assert_eq!(check, Check::Scale(2));
        assert!(
            check.check(Value::Text("1.50")).is_ok() && check.check(Value::Text("1.500")).is_ok()
        );
        assert!(
            check.check(Value::Text("1.005")).is_err()
                && check.check(Value::Text("-0.001")).is_err()
        );
        assert_eq!(Check::for_column(&column("decimal", None, None)), None);
    }

    #[test]
    fn times_refuse_dropped_digits() {
        let check = Check::for_column(&column("datetime", None, Some(0))).unwrap();
        assert!(check.check(Value::Text("2024-01-01 00:00:00")).is_ok());
        assert!(check.check(Value::Text("2024-01-01 00:00:00.000")).is_ok());
        assert!(check.check(Value::Text("2024-01-01 00:00:00.5")).is_err());
        let six = Check::for_column(&column("timestamp", None, Some(6))).unwrap();
        assert!(six.check(Value::Text("2024-01-01 00:00:00.123456")).is_ok());
        assert!(six
            .check(Value::Text("2024-01-01 00:00:00.1234567"))
            .is_err());
    }

    #[test]
    fn floats_refuse_what_would_become_zero() {
        let float = Check::for_column(&column("float", None, None)).unwrap();
        let double = Check::for_column(&column("double", None, None)).unwrap();
        assert!(float.check(Value::Text("1e-50")).is_err());
        assert!(double.check(Value::Text("1e-50")).is_ok());
        assert!(double.check(Value::Text("1e-400")).is_err());
        for ok in ["0", "-0.0", "1.5", "nan", "1e400", "abc"] {
            assert!(
                float.check(Value::Text(ok)).is_ok() && double.check(Value::Text(ok)).is_ok(),
                "{ok}"
            );
        }
        assert_eq!(Check::for_column(&column("varchar", None, None)), None);
        // FLOAT(7,2) rounds to two decimals without a warning.
        let float2 = Check::for_column(&column("float", Some(2), None)).unwrap();
        assert!(float2.check(Value::Text("1.25")).is_ok());
        assert!(float2.check(Value::Text("1.005")).is_err());
        assert!(float2.check(Value::Text("1e-50")).is_err());
    }

    #[test]
    fn text_columns_refuse_what_the_server_would_change() {
        let with_members = |data_type: &str, members: &[&str]| ColumnType {
            members: members.iter().map(|m| m.to_string()).collect(),
            ..column(data_type, None, None)
        };
        let refused = |check: &Check, value: &str| check.check(Value::Text(value)).is_err();
        let enumerated = Check::for_column(&with_members("enum", &["A", "b c"])).unwrap();
        assert!(!refused(&enumerated, "A") && !refused(&enumerated, "b c"));
        for bad in ["a", "A ", "1", "", "B C"] {
            assert!(refused(&enumerated, bad), "{bad}");
        }
        let set = Check::for_column(&with_members("set", &["x", "y"])).unwrap();
        for ok in ["", "x", "y,x", "x,x"] {
            assert!(!refused(&set, ok), "{ok}");
        }
        for bad in ["X", "x,", "3", "x, y"] {
            assert!(refused(&set, bad), "{bad}");
        }
        // A declaration that could not be read checks nothing.
        assert_eq!(Check::for_column(&with_members("enum", &[])), None);
        let year = Check::for_column(&column("year", None, None)).unwrap();
        assert!(!refused(&year, "2024") && !refused(&year, "0000") && !refused(&year, " 1999"));
        for bad in ["99", "0", "05", "20245", "2024.0"] {
            assert!(refused(&year, bad), "{bad}");
        }
        let char5 = Check::for_column(&column("char", None, None)).unwrap();
        assert!(!refused(&char5, " ab") && refused(&char5, "ab "));
        let binary = Check::for_column(&ColumnType {
            octet_length: Some(4),
            ..column("binary", None, None)
        })
        .unwrap();
        assert!(binary.check(Value::Bytes(&[0xff, 0, 1, 2])).is_ok());
        assert!(binary.check(Value::Text("abcde")).is_ok());
        assert!(binary.check(Value::Bytes(&[0xff])).is_err());
    }
}
