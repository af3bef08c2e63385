//! The canonical ISO spellings of dates and times, for sinks that send
//! such values in a binary form instead of as text.
//!
//! A sink may encode a value itself only where its reading cannot differ
//! from the server's own parser. These readers accept exactly one spelling
//! per instant, `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS[.f]` (one to six
//! fractional digits), naming a real day of years 0001–9999 in the
//! proleptic Gregorian calendar and a time of day up to 23:59:59; any
//! other text (`2023-02-29`, `24:00:00`, a leap second, a `T` separator, a
//! zone, surrounding space, seven fractional digits) is `None`, and the
//! sink sends it as text for the server to judge. Each sink narrows these
//! further to what its server stores unchanged.

/// A calendar day read from canonical text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilDate {
    /// 1–9999.
    pub year: u16,
    /// 1–12.
    pub month: u8,
    /// 1 to the days of the month.
    pub day: u8,
}

/// A date and time of day read from canonical text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilDateTime {
    /// The day.
    pub date: CivilDate,
    /// 0–23.
    pub hour: u8,
    /// 0–59.
    pub minute: u8,
    /// 0–59.
    pub second: u8,
    /// 0–999,999.
    pub micros: u32,
    /// How many fractional digits the text spelled (0–6), zeros included.
    pub fraction_digits: u8,
}

/// `YYYY-MM-DD` naming a real day of years 0001–9999.
pub fn date(text: &[u8]) -> Option<CivilDate> {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *text else {
        return None;
    };
    let year = u16::try_from(digits(&[y0, y1, y2, y3])?).ok()?;
    let month = u8::try_from(digits(&[m0, m1])?).ok()?;
    let day = u8::try_from(digits(&[d0, d1])?).ok()?;
    let real =
        year >= 1 && (1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day);
    real.then_some(CivilDate { year, month, day })
}

/// `YYYY-MM-DD HH:MM:SS` with an optional `.` and one to six fractional
/// digits, naming a real day of years 0001–9999 and a time up to 23:59:59.
pub fn datetime(text: &[u8]) -> Option<CivilDateTime> {
    if text.len() < 19 {
        return None;
    }
    let (day, rest) = text.split_at(10);
    let date = date(day)?;
    let [b' ', h0, h1, b':', n0, n1, b':', s0, s1] = rest[..9] else {
        return None;
    };
    let hour = u8::try_from(digits(&[h0, h1])?).ok()?;
    let minute = u8::try_from(digits(&[n0, n1])?).ok()?;
    let second = u8::try_from(digits(&[s0, s1])?).ok()?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let (micros, fraction_digits) = match &rest[9..] {
        [] => (0, 0),
        [b'.', fraction @ ..] if (1..=6).contains(&fraction.len()) => {
            let scale = [100_000, 10_000, 1000, 100, 10, 1][fraction.len() - 1];
            (digits(fraction)? * scale, fraction.len() as u8)
        }
        _ => return None,
    };
    Some(CivilDateTime {
        date,
        hour,
        minute,
        second,
        micros,
        fraction_digits,
    })
}

/// The days of `month` (1–12) in `year`, proleptic Gregorian.
pub fn days_in_month(year: u16, month: u8) -> u8 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The value of one to six ASCII decimal digits.
fn digits(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 6 {
        return None;
    }
    text.iter().try_fold(0u32, |value, &b| {
        b.is_ascii_digit().then(|| value * 10 + u32::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_days_only() {
        for (text, (year, month, day)) in [
            ("2000-02-29", (2000, 2, 29)),
            ("0001-01-01", (1, 1, 1)),
            ("9999-12-31", (9999, 12, 31)),
        ] {
            assert_eq!(date(text.as_bytes()), Some(CivilDate { year, month, day }));
        }
        for text in [
            "",
            "2023-02-29",
            "1900-02-29",
            "2100-02-29",
            "2023-04-31",
            "2023-13-01",
            "2023-00-10",
            "2023-01-00",
            "0000-12-31",
            "10000-01-01",
            "2023-6-1",
            "2023/06/01",
            "2023-06-01 ",
            " 2023-06-01",
            "+023-06-01",
            "-023-06-01",
            "2023-06-01 00:00:00",
        ] {
            assert_eq!(date(text.as_bytes()), None, "{text:?}");
        }
    }

    #[test]
    fn one_spelling_per_instant() {
        let t = datetime(b"2021-08-24 11:14:03.120").unwrap();
        assert_eq!((t.date.year, t.date.month, t.date.day), (2021, 8, 24));
        assert_eq!((t.hour, t.minute, t.second), (11, 14, 3));
        assert_eq!((t.micros, t.fraction_digits), (120_000, 3));
        assert_eq!(datetime(b"2021-08-24 11:14:03").unwrap().fraction_digits, 0);
        assert_eq!(datetime(b"2000-01-01 00:00:00.000001").unwrap().micros, 1);
        for text in [
            "2023-06-01 24:00:00",
            "2023-06-01 23:60:00",
            "2023-06-01 23:59:60",
            "2023-06-01T10:00:00",
            "2023-06-01 10:00:00+02",
            "2023-06-01 10:00:00Z",
            "2023-06-01 10:00:00.",
            "2023-06-01 10:00:00.1234567",
            "2023-06-01 10:00",
            "2023-06-01 1:00:00",
            "2023-06-01  10:00:00",
            "2023-06-01 10:00:00 ",
            "2023-02-29 12:00:00",
            "0000-01-01 00:00:00",
            "2023-06-01 10:00:0a",
            "2023-06-01 10:00:00.-1",
            "2023-06-01",
        ] {
            assert_eq!(datetime(text.as_bytes()), None, "{text:?}");
        }
    }
}
