//! Values the server would store altered without an error, refused here
//! with their record and column instead.
//!
//! In strict mode MariaDB and MySQL refuse a value out of a column's range
//! or too long for it, but still round some values quietly: an integer
//! column stores `1.5` as 2 without a warning, a `DECIMAL(p,s)` rounds to
//! `s` places with only a note, a `DATETIME(n)`, `TIMESTAMP(n)` or
//! `TIME(n)` drops fractional digits beyond `n` without a word, a `FLOAT`
//! or `DOUBLE` keeps the nearest float (`16777217` in a `FLOAT` is
//! 16777216) and stores a number too small for it as 0, and one declared
//! with decimals (`FLOAT(7,2)`) rounds to them without a warning. Text
//! columns change values too: an `ENUM` or `SET` takes a member in another
//! case (`a` for `A`, stored as `A`) or a number as a member's position, a
//! `YEAR` reads `99` as 1999 and `0` as 2000, a `CHAR` drops trailing
//! spaces when read, and a `BINARY(n)` pads a shorter value with zero
//! bytes. Dates guess a century the same way: a `DATE`, `DATETIME` or
//! `TIMESTAMP` reads `24-01-05`, `240105` and `240105103000` with the year
//! 2024 (`70`–`99` as 19xx), and a time of day alone (`10:00:00`) as such
//! a date (2010-00-00). Fractional digits hide in numeric spellings too:
//! `TIME` drops them from `10.5` (10 seconds) or `10:00.5`, `DATETIME`
//! from `20240105103000.5`. A `BIT` column stores text as its characters'
//! bytes, so `1` becomes 0x31 (49) and empty text 0. Each [`Check`]
//! refuses a value that would change that way; the numeric rules are
//! [`ringpipe_pipeline::exact`]'s, shared with the PostgreSQL sink.

mod temporal;
#[cfg(test)]
mod tests;
mod text;

use std::sync::Arc;

use ringpipe_pipeline::exact::{
    float_rounds, is_nonzero_number, time_fraction_within, within_fraction, within_scale,
};
use ringpipe_pipeline::Value;

use self::temporal::{compact_within, dropped_digits, first_delimiter, two_digit_year};
use self::text::{is_four_digits, listed, padded, spells_number};
use crate::encode::boolean::truth;
use crate::wire::ColumnType;

/// A check of one column's values, from its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// An integer or `DECIMAL` column: no nonzero digit beyond this many
    /// decimal places (0 for integers).
    Scale(i32),
    /// `DATE` (`fraction`: `None`), or `DATETIME` or `TIMESTAMP` keeping
    /// `fraction` digits of a second: the year in four digits (or a zero
    /// date), no more fractional digits than kept.
    Date {
        /// Fractional digits of a second kept, `None` for `DATE`.
        fraction: Option<usize>,
    },
    /// `TIME` keeping this many fractional digits of a second, in every
    /// spelling (`10:00:00.5`, `10:00.5`, `10.5`).
    Time(usize),
    /// `FLOAT` (`single`) or `DOUBLE`: a nonzero number must not become 0
    /// in its precision, nor have more decimal places than `scale`, when
    /// the column was declared with some, nor more significant digits than
    /// the nearest float keeps.
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
    /// `BIT`: bytes, not text that is empty or spells a number or a
    /// boolean (the server would store the characters' bytes), except
    /// that a `BIT(1)` (`words`) takes the words `true` and `false`, which
    /// the sink sends as bits ([`crate::encode::boolean`]).
    Bit {
        /// It takes the words.
        words: bool,
    },
}

impl Check {
    /// The check of `column`'s values, if the server can alter them.
    pub(crate) fn for_column(column: &ColumnType) -> Option<Check> {
        Some(match column.data_type.as_str() {
            "tinyint" | "smallint" | "mediumint" | "int" | "bigint" => Check::Scale(0),
            "decimal" => Check::Scale(i32::try_from(column.numeric_scale?).ok()?),
            "date" => Check::Date { fraction: None },
            "datetime" | "timestamp" => Check::Date {
                fraction: Some(usize::from(column.datetime_precision.unwrap_or(0))),
            },
            "time" => Check::Time(usize::from(column.datetime_precision.unwrap_or(0))),
            "float" | "double" => Check::Float {
                single: column.data_type == "float",
                scale: column.numeric_scale.and_then(|s| i32::try_from(s).ok()),
            },
            "enum" if !column.members.is_empty() => Check::Enum(column.members.clone().into()),
            "set" if !column.members.is_empty() => Check::Set(column.members.clone().into()),
            "year" => Check::Year,
            "char" => Check::Char,
            "binary" => Check::Binary(column.octet_length?),
            "bit" => Check::Bit {
                words: column.boolean.is_some(),
            },
            _ => return None,
        })
    }

    /// `Err` with the reason when the server would alter `value` (text,
    /// or the bytes `--decode` made of it).
    pub(crate) fn check(&self, value: Value<'_>) -> Result<(), String> {
        let text = match (self, value) {
            (&Check::Binary(n), value) => return padded(value.as_bytes().len() as u64, n),
            // Bytes are a BIT value's own form.
            (Check::Bit { .. }, Value::Bytes(_)) => return Ok(()),
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
            Check::Set(members) => {
                match text.split(',').find(|t| !members.iter().any(|m| m == t)) {
                    Some(part) if !text.is_empty() => Err(format!(
                        "{part:?} is not one of the SET's values as declared ({}): the \
                         server would take another spelling or a position",
                        listed(members)
                    )),
                    _ => Ok(()),
                }
            }
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
            Check::Date { .. } if two_digit_year(text) => Err(match first_delimiter(text) {
                Some(':') => format!(
                    "{text:?} is a time of day: a date column would read its hour as a \
                     two-digit year (10:00:00 as 2010-00-00)"
                ),
                _ => format!(
                    "{text:?} has a two-digit year, which the server would read as \
                     1970–2069: write the year in four digits"
                ),
            }),
            &Check::Date {
                fraction: Some(digits),
            } if !within_fraction(text, digits) || !compact_within(text, digits, false) => {
                Err(dropped_digits(text, digits))
            }
            &Check::Time(digits)
                if !time_fraction_within(text, digits) || !compact_within(text, digits, true) =>
            {
                Err(dropped_digits(text, digits))
            }
            Check::Bit { words: true } if truth(text).is_some() => Ok(()),
            Check::Bit { .. } if text.is_empty() => {
                Err("empty text, which a BIT column would store as 0".to_owned())
            }
            Check::Bit { .. } if spells_number(text) => Err(format!(
                "{text:?} would be stored as its characters' bytes, not as the number: a \
                 BIT column reads text as bits ('1' becomes 0x31, 49)"
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
            &Check::Float { single, .. } => match float_rounds(text, single) {
                Some(shown) => Err(format!(
                    "{text:?} has more significant digits than a {} keeps: it would be stored \
                     as {shown}",
                    if single { "FLOAT" } else { "DOUBLE" }
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
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
