//! `timestamp` (without time zone) and `date` in their binary forms, from
//! the canonical ISO text only.
//!
//! A timestamp is sent as int64 microseconds since 2000-01-01 00:00:00, a
//! date as int32 days since 2000-01-01 (PostgreSQL's epoch), both in the
//! proleptic Gregorian calendar the server counts in. The server's
//! `timestamp_recv` applies the column's precision (rounding the fraction)
//! as `timestamp_in` does.
//!
//! Only `YYYY-MM-DD HH:MM:SS[.f]` (1 to 6 fractional digits) and
//! `YYYY-MM-DD` are encoded, years 0001 to 9999, real calendar dates,
//! times up to 23:59:59. Everything else the server reads (a `T`
//! separator, a zone, `24:00:00`, a leap second, `infinity`, `epoch`, BC,
//! more fractional digits, other styles) is not canonical and goes in text,
//! where the server's own parser decides. The spellings are
//! [`ringpipe_pipeline::canonical`]'s.

use ringpipe_pipeline::canonical::{self, CivilDate};

/// Days from 1970-01-01 to 2000-01-01.
const EPOCH_2000: i64 = 10_957;
/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

/// Appends the binary timestamp of canonical `text` to `out`; returns
/// `false` with `out` untouched otherwise.
pub(super) fn encode_timestamp(text: &str, out: &mut Vec<u8>) -> bool {
    let Some(micros) = timestamp_micros(text.as_bytes()) else {
        return false;
    };
    out.extend_from_slice(&micros.to_be_bytes());
    true
}

/// Appends the binary date of canonical `text` to `out`; returns `false`
/// with `out` untouched otherwise.
pub(super) fn encode_date(text: &str, out: &mut Vec<u8>) -> bool {
    let Some(days) = date_days(text.as_bytes()) else {
        return false;
    };
    // Years 1..=9999 are within ±3.7 million days of 2000.
    out.extend_from_slice(&(days as i32).to_be_bytes());
    true
}

/// Microseconds since 2000-01-01 of `YYYY-MM-DD HH:MM:SS[.f{1,6}]`.
fn timestamp_micros(text: &[u8]) -> Option<i64> {
    let t = canonical::datetime(text)?;
    let seconds = (i64::from(t.hour) * 60 + i64::from(t.minute)) * 60 + i64::from(t.second);
    Some(days_since_2000(t.date) * DAY_MICROS + seconds * 1_000_000 + i64::from(t.micros))
}

/// Days since 2000-01-01 of `YYYY-MM-DD`.
fn date_days(text: &[u8]) -> Option<i64> {
    canonical::date(text).map(days_since_2000)
}

/// Days from 2000-01-01 to `date`.
fn days_since_2000(date: CivilDate) -> i64 {
    let CivilDate { year, month, day } = date;
    days_from_civil(i64::from(year), i64::from(month), i64::from(day)) - EPOCH_2000
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`), for years from 1 on.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The microseconds `text` encodes to, if canonical.
    fn timestamp(text: &str) -> Option<i64> {
        let mut out = Vec::new();
        match encode_timestamp(text, &mut out) {
            true => Some(i64::from_be_bytes(out.try_into().unwrap())),
            false => {
                assert!(out.is_empty());
                None
            }
        }
    }

    /// The days `text` encodes to, if canonical.
    fn date(text: &str) -> Option<i32> {
        let mut out = Vec::new();
        match encode_date(text, &mut out) {
            true => Some(i32::from_be_bytes(out.try_into().unwrap())),
            false => {
                assert!(out.is_empty());
                None
            }
        }
    }

    #[test]
    fn days_match_a_day_by_day_count() {
        // Every day from 0001-01-01 to 9999-12-31, counted one by one.
        let mut expected = days_from_civil(1, 1, 1);
        assert_eq!(expected - EPOCH_2000, -730_119); // date_send('0001-01-01')
        for year in 1..=9999 {
            for month in 1..=12 {
                for day in 1..=i64::from(canonical::days_in_month(year as u16, month as u8)) {
                    assert_eq!(days_from_civil(year, month, day), expected);
                    expected += 1;
                }
            }
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), EPOCH_2000);
        assert_eq!(expected, days_from_civil(10_000, 1, 1));
    }

    #[test]
    fn canonical_values_encode_as_the_server_sends_them() {
        assert_eq!(timestamp("2000-01-01 00:00:00"), Some(0));
        // `timestamp_send('1999-12-31 23:59:59.999999')` is \xffffffffffffffff.
        assert_eq!(timestamp("1999-12-31 23:59:59.999999"), Some(-1));
        assert_eq!(
            timestamp("2000-01-02 00:00:01.5"),
            Some(DAY_MICROS + 1_500_000)
        );
        assert_eq!(timestamp("2000-01-01 00:00:00.000001"), Some(1));
        assert_eq!(timestamp("2000-01-01 00:00:00.12"), Some(120_000));
        assert_eq!(
            timestamp("0001-01-01 00:00:00"),
            Some(-730_119 * DAY_MICROS)
        );
        assert_eq!(
            timestamp("9999-12-31 23:59:59.5"),
            Some(2_921_939 * DAY_MICROS + 86_399_500_000)
        );
        assert_eq!(date("2000-01-01"), Some(0));
        assert_eq!(date("2000-02-29"), Some(59));
        assert_eq!(date("1999-12-31"), Some(-1));
        assert_eq!(date("0001-01-01"), Some(-730_119)); // date_send: \xfff4dbf9
        assert_eq!(date("9999-12-31"), Some(2_921_939));
        assert_eq!(date("2024-02-29"), Some(8825));
    }

    #[test]
    fn other_spellings_are_not_canonical() {
        for text in [
            "",
            "2023-06-01",
            "2023-06-01 24:00:00",
            "2023-06-01 23:60:00",
            "2023-06-01 23:59:60",
            "2023-06-01T10:00:00",
            "2023-06-01 10:00:00+02",
            "2023-06-01 10:00:00 UTC",
            "2023-06-01 10:00:00Z",
            "2023-06-01 10:00:00.",
            "2023-06-01 10:00:00.1234567",
            "2023-06-01 10:00",
            "2023-06-01 1:00:00",
            " 2023-06-01 10:00:00",
            "2023-06-01 10:00:00 ",
            "2023-06-01  10:00:00",
            "2023-02-29 12:00:00",
            "1900-02-29 00:00:00",
            "0000-01-01 00:00:00",
            "2023-06-01 10:00:00 BC",
            "infinity",
            "-infinity",
            "epoch",
            "now",
            "+2023-06-01 10:00:00",
            "2023-06-01 10:00:0a",
            "2023-06-01 10:00:00.-1",
            "20230601 100000",
        ] {
            assert_eq!(timestamp(text), None, "{text:?}");
        }
        for text in [
            "",
            "2023-02-29",
            "1900-02-29",
            "2023-04-31",
            "2023-13-01",
            "2023-00-10",
            "2023-01-00",
            "0000-12-31",
            "10000-01-01",
            "2023-6-1",
            "2023/06/01",
            "06/01/2023",
            "2023-06-01 00:00:00",
            "2023-06-01 ",
            "2023-06-01 BC",
            "infinity",
            "epoch",
            "+023-06-01",
            "-023-06-01",
        ] {
            assert_eq!(date(text), None, "{text:?}");
        }
    }
}
