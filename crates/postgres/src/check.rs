//! Values the server would store altered without a word, refused here
//! with their record and column instead.
//!
//! PostgreSQL's input functions round or drop parts of some values rather
//! than failing: `numeric(p,s)` rounds to `s` decimal places, `varchar(n)`
//! cuts excess trailing spaces, times keep at most their precision's
//! fractional digits (6 by default), `timestamp` and `time` (without time
//! zone) ignore a zone written in the value, `date` drops a time of day,
//! and `jsonb` keeps the last of a key repeated in an object. Each
//! [`Check`] refuses a value that would lose something that way; what the
//! server refuses itself (out of range, bad syntax, a value too long) is
//! left to it. Domains over these types, and intervals, are not checked.

use ringpipe_pipeline::canonical;
use ringpipe_pipeline::exact::{find_time, within_fraction, within_scale};

/// A check of one column's values, from its type and type modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `varchar(n)`: at most `n` characters (excess spaces would be cut).
    Chars(usize),
    /// `char(n)`: at most `n` characters before trailing spaces (which
    /// char(n) ignores).
    PaddedChars(usize),
    /// `numeric(p,s)`: no nonzero digit beyond `s` decimal places.
    Scale(i32),
    /// A time type without a zone: at most `digits` fractional digits of a
    /// second, no zone written in the value.
    Time {
        /// Fractional digits the column keeps.
        digits: usize,
        /// Whether the column keeps a zone (timestamptz, timetz).
        zone: bool,
    },
    /// `date`: no time of day other than midnight.
    Date,
    /// `jsonb`: no object with a key twice (jsonb keeps the last).
    UniqueKeys,
}

impl Check {
    /// The check of a column of type `typname` with modifier `typmod`
    /// (`atttypmod`, -1 for none), if its values can be altered.
    pub fn for_type(typname: &str, typmod: i32) -> Option<Check> {
        let modifier = (typmod >= 4).then(|| typmod - 4);
        let precision = |default: usize| match typmod {
            0..=6 => typmod as usize,
            _ => default,
        };
        Some(match typname {
            "varchar" => Check::Chars(modifier? as usize),
            "bpchar" => Check::PaddedChars(modifier? as usize),
            // The scale is the low 11 bits, signed (PostgreSQL 15 allows
            // -1000..=1000).
            "numeric" => Check::Scale(((modifier? & 0x7ff) ^ 1024) - 1024),
            "timestamp" | "time" => Check::Time {
                digits: precision(6),
                zone: false,
            },
            "timestamptz" | "timetz" => Check::Time {
                digits: precision(6),
                zone: true,
            },
            "date" => Check::Date,
            "jsonb" => Check::UniqueKeys,
            _ => return None,
        })
    }

    /// `Err` with the reason when the server would alter `text`.
    pub fn check(self, text: &str) -> Result<(), String> {
        match self {
            // n bytes are at most n characters: no count needed.
            Check::Chars(n) if text.len() > n && text.chars().count() > n => {
                Err(format!("longer than the column's {n} characters"))
            }
            Check::PaddedChars(n)
                if text.len() > n && text.trim_end_matches(' ').chars().count() > n =>
            {
                Err(format!("longer than the column's {n} characters"))
            }
            Check::Scale(scale) if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
            // A canonical datetime has no zone, and no more fractional
            // digits written than kept: nothing to refuse.
            Check::Time { digits, .. }
                if canonical::datetime(text.as_bytes())
                    .is_some_and(|t| usize::from(t.fraction_digits) <= digits) =>
            {
                Ok(())
            }
            Check::Time { digits, zone } => time(text, digits, zone),
            Check::Date => match find_time(text.as_bytes()) {
                Some((start, end))
                    if text[start..end]
                        .bytes()
                        .any(|b| b.is_ascii_digit() && b != b'0') =>
                {
                    Err(format!(
                        "{text:?} has a time of day, which a date column drops"
                    ))
                }
                _ => Ok(()),
            },
            Check::UniqueKeys => crate::json::unique_keys(text),
            _ => Ok(()),
        }
    }
}

/// A time (or timestamp) value: its fraction within `digits`, and no zone
/// after the time unless the column keeps it.
fn time(text: &str, digits: usize, zone: bool) -> Result<(), String> {
    let Some((_, end)) = find_time(text.as_bytes()) else {
        return Ok(());
    };
    if !within_fraction(text, digits) {
        return Err(format!(
            "{text:?} has more fractional digits than the column's {digits}: it would be rounded"
        ));
    }
    let rest = text[end..].trim();
    let words_ok = rest.split_whitespace().all(|w| {
        matches!(
            w.to_ascii_uppercase().as_str(),
            "AM" | "PM" | "A.M." | "P.M." | "BC" | "AD"
        )
    });
    let first = rest.bytes().next();
    let is_zone = !words_ok
        && match first {
            Some(b'+' | b'-') => rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit),
            Some(b) => b.is_ascii_alphabetic(),
            None => false,
        };
    if is_zone && !zone {
        return Err(format!(
            "{text:?} names a time zone, which a column without time zone ignores"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_scale_refuses_what_would_round() {
        let check = Check::for_type("numeric", (5 << 16 | 2) + 4).unwrap();
        assert_eq!(check, Check::Scale(2));
        for ok in ["1.23", "1.2300", "-12", " 1.5e-1 ", "0.000", "NaN", "x"] {
            assert_eq!(check.check(ok), Ok(()), "{ok}");
        }
        for bad in ["1.239", "0.001", "1e-3", "-0.125"] {
            assert!(check.check(bad).is_err(), "{bad}");
        }
        let negative = Check::for_type("numeric", (5 << 16 | (-2i32 & 0x7ff)) + 4).unwrap();
        assert_eq!(negative, Check::Scale(-2));
        assert!(negative.check("1200").is_ok());
        assert!(negative.check("1250").is_err());
        assert_eq!(Check::for_type("numeric", -1), None);
    }

    #[test]
    fn character_lengths_count_characters() {
        let varchar = Check::for_type("varchar", 3 + 4).unwrap();
        assert!(varchar.check("zoë").is_ok());
        assert!(varchar.check("ab  ").is_err());
        let char3 = Check::for_type("bpchar", 3 + 4).unwrap();
        assert!(char3.check("ab    ").is_ok());
        assert!(char3.check("abcd").is_err());
    }

    #[test]
    fn times_keep_their_digits_and_zones() {
        let timestamp = Check::for_type("timestamp", -1).unwrap();
        for ok in [
            "2020-01-01 00:00:00.123456",
            "2020-01-01 10:00 PM",
            "2020-01-01",
            "infinity",
            "2020-01-01 10:00:00.1230000",
        ] {
            assert_eq!(timestamp.check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "2020-01-01 00:00:00.1234567",
            "2020-01-01T10:00:00Z",
            "2020-01-01 10:00:00+02",
            "2020-01-01 10:00 Europe/Paris",
        ] {
            assert!(timestamp.check(bad).is_err(), "{bad}");
        }
        // The canonical-datetime shortcut agrees with the full reading.
        for check in [timestamp, Check::for_type("timestamp", 0).unwrap()] {
            for value in [
                "2021-08-24 11:14:03",
                "2021-08-24 11:14:03.5",
                "2021-08-24 11:14:03.500000",
                "2021-08-24 11:14:3x",
                "2021-08-24T11:14:03",
            ] {
                let Check::Time { digits, zone } = check else {
                    unreachable!()
                };
                assert_eq!(check.check(value), time(value, digits, zone), "{value}");
            }
        }
        let tz2 = Check::for_type("timestamptz", 2).unwrap();
        assert!(tz2.check("2020-01-01 10:00:00.12+02").is_ok());
        assert!(tz2.check("2020-01-01 10:00:00.129+02").is_err());
        let date = Check::for_type("date", -1).unwrap();
        assert!(date.check("2020-01-01 00:00:00").is_ok());
        assert!(date.check("2020-01-01 12:34").is_err());
    }
}
