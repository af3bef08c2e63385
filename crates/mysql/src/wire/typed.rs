//! Values a bulk packet may carry in their binary form instead of as text.
//!
//! The server converts a text parameter into an integer or datetime column
//! with its string parsers (`Field_longlong::store(const char*)`,
//! `str_to_datetime`); a binary `LONGLONG` or `DATETIME` parameter is stored
//! as it stands. Only text whose meaning no server setting can change goes
//! binary: a canonical decimal integer that fits an `i64`
//! (`-?(0|[1-9][0-9]*)`), and `YYYY-MM-DD[ HH:MM:SS[.f…]]` naming a real
//! day of years 1000–9999 and a real time of day, with no more fractional
//! digits than the column keeps (so neither path rounds). Such a value is
//! stored identically either way, and a value out of the column's range
//! fails the same way (strict mode's out-of-range error). Any other text
//! (`+1`, `007`, `1e3`, `2024-02-30`, `24:00:00`, a zero date, a fraction
//! the column would round) makes the whole column of that packet go as
//! text, for the server's own parser to judge. The date and time spellings
//! are [`ringpipe_pipeline::canonical`]'s, narrowed to `DATETIME`'s years.

use ringpipe_pipeline::canonical::{self, CivilDate, CivilDateTime};

/// `MYSQL_TYPE_LONGLONG`.
pub(super) const LONGLONG: u8 = 8;
/// `MYSQL_TYPE_DATE`.
pub(super) const DATE: u8 = 10;
/// `MYSQL_TYPE_DATETIME`.
pub(super) const DATETIME: u8 = 12;

/// How a column's values may travel in a bulk packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// Always as text, with this parameter type (`MYSQL_TYPE_BLOB` or
    /// `MYSQL_TYPE_VAR_STRING`).
    Text(u8),
    /// An integer column (`TINYINT` … `BIGINT`): canonical integers as
    /// `LONGLONG`.
    Integer,
    /// A `DATETIME` column keeping `precision` fractional digits:
    /// canonical datetimes as `DATETIME`.
    DateTime {
        /// Fractional digits of seconds the column keeps (0–6).
        precision: u8,
    },
    /// A `DATE` column: canonical dates as `DATE`.
    Date,
}

impl ParamKind {
    /// The binary parameter type of a typed kind (`None` for text).
    pub(super) fn binary_type(self) -> Option<u8> {
        match self {
            ParamKind::Text(_) => None,
            ParamKind::Integer => Some(LONGLONG),
            ParamKind::DateTime { .. } => Some(DATETIME),
            ParamKind::Date => Some(DATE),
        }
    }

    /// Appends `text`'s binary form to `out` when `text` is canonical for
    /// this kind (see the module docs); `false`, with `out` unchanged,
    /// otherwise.
    pub(super) fn push_binary(self, text: &[u8], out: &mut Vec<u8>) -> bool {
        match self {
            ParamKind::Text(_) => false,
            ParamKind::Integer => match canonical_integer(text) {
                Some(n) => {
                    out.extend_from_slice(&n.to_le_bytes());
                    true
                }
                None => false,
            },
            ParamKind::DateTime { precision } => match canonical_datetime(text, precision) {
                Some(t) => {
                    push_time(out, &t);
                    true
                }
                None => false,
            },
            ParamKind::Date => match canonical_date(text) {
                Some(date) => {
                    out.push(4);
                    push_date_fields(out, &date);
                    true
                }
                None => false,
            },
        }
    }
}

/// The integer `text` spells canonically, if it fits an `i64`.
fn canonical_integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    match digits {
        [] | [b'0', _, ..] => return None,
        [b'0'] if negative => return None,
        _ if digits.len() > 19 => return None,
        _ => {}
    }
    // Accumulate negatively, so that i64::MIN fits.
    let mut n: i64 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_sub(i64::from(digit))?;
    }
    if negative {
        Some(n)
    } else {
        n.checked_neg()
    }
}

/// A `DATETIME` of years 1000–9999 (the type's range) that `text` spells
/// canonically, with no more fractional digits than the column keeps
/// (`precision`), so that neither path rounds.
fn canonical_datetime(text: &[u8], precision: u8) -> Option<CivilDateTime> {
    let t = canonical::datetime(text)?;
    (t.date.year >= 1000 && t.fraction_digits <= precision).then_some(t)
}

/// A `DATE` of years 1000–9999 that `text` spells canonically.
fn canonical_date(text: &[u8]) -> Option<CivilDate> {
    canonical::date(text).filter(|d| d.year >= 1000)
}

/// Appends `t` as a binary `DATETIME`: its length (7, or 11 with
/// microseconds), then the fields little-endian.
fn push_time(out: &mut Vec<u8>, t: &CivilDateTime) {
    out.push(if t.micros == 0 { 7 } else { 11 });
    push_date_fields(out, &t.date);
    out.extend_from_slice(&[t.hour, t.minute, t.second]);
    if t.micros != 0 {
        out.extend_from_slice(&t.micros.to_le_bytes());
    }
}

/// Appends a date's year (little-endian), month and day.
fn push_date_fields(out: &mut Vec<u8>, d: &CivilDate) {
    out.extend_from_slice(&d.year.to_le_bytes());
    out.extend_from_slice(&[d.month, d.day]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(kind: ParamKind, text: &str) -> Option<Vec<u8>> {
        let mut out = vec![0xAA];
        let pushed = kind.push_binary(text.as_bytes(), &mut out);
        assert_eq!(
            pushed,
            out.len() > 1,
            "{text:?}: out changed only when pushed"
        );
        pushed.then(|| out[1..].to_vec())
    }

    #[test]
    fn canonical_integers_go_binary_and_every_other_spelling_as_text() {
        for (text, n) in [
            ("0", 0i64),
            ("7", 7),
            ("-53948", -53948),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(
                binary(ParamKind::Integer, text),
                Some(n.to_le_bytes().to_vec()),
                "{text}"
            );
        }
        for text in [
            "",
            "-",
            "-0",
            "00",
            "007",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "0x1F",
            "١",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "12345678901234567890123",
        ] {
            assert_eq!(binary(ParamKind::Integer, text), None, "{text:?}");
        }
    }

    #[test]
    fn integers_agree_with_the_standard_parser_wherever_they_go_binary() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 22) as usize;
            let text: String = (0..len)
                .map(|i| b"-0123456789+ "[((state >> (i * 3)) % 13) as usize] as char)
                .collect();
            if let Some(n) = canonical_integer(text.as_bytes()) {
                assert_eq!(text.parse::<i64>().ok(), Some(n), "{text:?}");
                assert_eq!(n.to_string(), text, "canonical means the shortest spelling");
            }
        }
    }

    #[test]
    fn datetimes_go_binary_only_when_real_and_kept_whole() {
        let kind = ParamKind::DateTime { precision: 0 };
        let mut expected = vec![7, 0xE5, 0x07, 8, 24, 11, 14, 3];
        assert_eq!(binary(kind, "2021-08-24 11:14:03"), Some(expected.clone()));
        assert_eq!(
            binary(kind, "2024-02-29 23:59:59").map(|v| v[3..5].to_vec()),
            Some(vec![2, 29])
        );
        for text in [
            "2023-02-29 00:00:00", // not a leap year
            "1900-02-29 00:00:00",
            "2021-04-31 00:00:00",
            "2021-13-01 00:00:00",
            "2021-00-10 00:00:00",
            "0000-00-00 00:00:00",
            "0999-12-31 23:59:59",
            "2021-08-24 24:00:00",
            "2021-08-24 23:60:00",
            "2021-08-24 23:59:60",
            "2021-08-24T11:14:03",
            "2021-08-24 11:14:03.5", // the column keeps no fraction
            "2021-8-24 11:14:03",
            "2021-08-24 11:14",
            "2021-08-24",
            " 2021-08-24 11:14:03",
            "2021-08-24 11:14:03 ",
        ] {
            assert_eq!(binary(kind, text), None, "{text:?}");
        }
        let kind = ParamKind::DateTime { precision: 3 };
        expected[0] = 11;
        expected.extend_from_slice(&500_000u32.to_le_bytes());
        assert_eq!(binary(kind, "2021-08-24 11:14:03.5"), Some(expected));
        assert_eq!(
            binary(kind, "2021-08-24 11:14:03.123").map(|v| v[8..].to_vec()),
            Some(123_000u32.to_le_bytes().to_vec())
        );
        assert_eq!(
            binary(kind, "2021-08-24 11:14:03.1234"),
            None,
            "would round"
        );
        assert_eq!(binary(kind, "2021-08-24 11:14:03."), None);
        // A zero fraction is the whole second.
        assert_eq!(
            binary(kind, "2021-08-24 11:14:03.000").map(|v| v[0]),
            Some(7)
        );
    }

    #[test]
    fn dates_go_binary_only_when_real() {
        assert_eq!(
            binary(ParamKind::Date, "2000-02-29"),
            Some(vec![4, 0xD0, 0x07, 2, 29])
        );
        assert_eq!(
            binary(ParamKind::Date, "9999-12-31"),
            Some(vec![4, 0x0F, 0x27, 12, 31])
        );
        for text in [
            "2100-02-29",
            "2021-06-31",
            "2021-06-01 00:00:00",
            "20210601",
            "0000-00-00",
        ] {
            assert_eq!(binary(ParamKind::Date, text), None, "{text:?}");
        }
    }

    #[test]
    fn text_kinds_never_go_binary() {
        assert_eq!(binary(ParamKind::Text(252), "1"), None);
    }
}
