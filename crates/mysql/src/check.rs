//! Values the server would store altered without an error, refused here
//! with their record and column instead.
//!
//! In strict mode MariaDB and MySQL refuse a value out of a column's range
//! or too long for it, but still round some values quietly: an integer
//! column stores `1.5` as 2 without a warning, a `DECIMAL(p,s)` rounds to
//! `s` places with only a note, a `DATETIME(n)`, `TIMESTAMP(n)` or
//! `TIME(n)` drops fractional digits beyond `n` without a word, a `FLOAT`
//! or `DOUBLE` stores a number too small for it as 0, and one declared
//! with decimals (`FLOAT(7,2)`) rounds to them without a warning. Each
//! [`Check`] refuses a value that would lose something that way; the rules
//! are [`ringpipe_pipeline::exact`]'s, shared with the PostgreSQL sink.

use ringpipe_pipeline::exact::{is_nonzero_number, within_fraction, within_scale};

use crate::wire::ColumnType;

/// A check of one column's values, from its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
            _ => return None,
        })
    }

    /// `Err` with the reason when the server would alter `text`.
    pub(crate) fn check(self, text: &str) -> Result<(), String> {
        match self {
            Check::Scale(0) if !within_scale(text, 0) => Err(format!(
                "{text:?} is not a whole number: an integer column would round it"
            )),
            Check::Scale(scale) if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
            Check::Fraction(digits) if !within_fraction(text, digits) => Err(format!(
                "{text:?} has more fractional digits than the column's {digits}: they would be dropped"
            )),
            Check::Float { single, .. } if underflows(text, single) => Err(format!(
                "{text:?} is too close to zero for the column's {}: it would be stored as 0",
                if single { "FLOAT" } else { "DOUBLE" }
            )),
            Check::Float {
                scale: Some(scale), ..
            } if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn column(data_type: &str, scale: Option<u64>, precision: Option<u8>) -> ColumnType {
        ColumnType {
            data_type: data_type.into(),
            charset: None,
            datetime_precision: precision,
            numeric_scale: scale,
        }
    }

    #[test]
    fn integers_refuse_fractions() {
        let check = Check::for_column(&column("int", Some(0), None)).unwrap();
        for ok in ["1", "-7", "1.0", "1e3", "x", ""] {
            assert_eq!(check.check(ok), Ok(()), "{ok}");
        }
        for bad in ["1.5", "1.4", "-0.5", "15e-1"] {
            assert!(check.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn decimals_refuse_what_would_round() {
        let check = Check::for_column(&column("decimal", Some(2), None)).unwrap();
        assert_eq!(check, Check::Scale(2));
        assert!(check.check("1.50").is_ok() && check.check("1.500").is_ok());
        assert!(check.check("1.005").is_err() && check.check("-0.001").is_err());
        assert_eq!(Check::for_column(&column("decimal", None, None)), None);
    }

    #[test]
    fn times_refuse_dropped_digits() {
        let check = Check::for_column(&column("datetime", None, Some(0))).unwrap();
        assert!(check.check("2024-01-01 00:00:00").is_ok());
        assert!(check.check("2024-01-01 00:00:00.000").is_ok());
        assert!(check.check("2024-01-01 00:00:00.5").is_err());
        let six = Check::for_column(&column("timestamp", None, Some(6))).unwrap();
        assert!(six.check("2024-01-01 00:00:00.123456").is_ok());
        assert!(six.check("2024-01-01 00:00:00.1234567").is_err());
    }

    #[test]
    fn floats_refuse_what_would_become_zero() {
        let float = Check::for_column(&column("float", None, None)).unwrap();
        let double = Check::for_column(&column("double", None, None)).unwrap();
        assert!(float.check("1e-50").is_err());
        assert!(double.check("1e-50").is_ok());
        assert!(double.check("1e-400").is_err());
        for ok in ["0", "-0.0", "1.5", "nan", "1e400", "abc"] {
            assert!(float.check(ok).is_ok() && double.check(ok).is_ok(), "{ok}");
        }
        assert_eq!(Check::for_column(&column("varchar", None, None)), None);
        // FLOAT(7,2) rounds to two decimals without a warning.
        let float2 = Check::for_column(&column("float", Some(2), None)).unwrap();
        assert!(float2.check("1.25").is_ok());
        assert!(float2.check("1.005").is_err());
        assert!(float2.check("1e-50").is_err());
    }
}
