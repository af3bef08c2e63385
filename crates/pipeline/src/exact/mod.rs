//! Whether a number or a time written as text survives a column that keeps
//! fewer digits: the rules every database sink applies before it sends a
//! value its server would round or cut without a word.
//!
//! Servers round a decimal to the column's scale, an integer column's value
//! to a whole number and a time's fraction to the column's precision,
//! mostly without an error and often without a warning. A sink refuses
//! such a value with its record and column instead. Text that is not a
//! number or a time at all is not judged here: the server refuses it
//! itself.

mod float;

pub use self::float::float_rounds;

/// Whether `text`, a decimal number (`-1.25`, `1.5e3`, surrounding space
/// allowed), has no nonzero digit beyond `scale` decimal places (a negative
/// scale counts places left of the point), so that a column of that scale
/// stores it unrounded. Text that is not a plain decimal number (NaN,
/// Infinity, garbage) passes: it is the server's to judge.
#[inline]
pub fn within_scale(text: &str, scale: i32) -> bool {
    if plain_decimal_within(text, scale) {
        return true;
    }
    !matches!(last_digit_power(text.trim()), Some(power) if power < -i64::from(scale))
}

/// Whether `text` has a nonzero digit: a number that is not zero.
/// `None` for text that is not a plain decimal number.
pub fn is_nonzero_number(text: &str) -> Option<bool> {
    let number = Decimal::read(text.trim())?;
    Some(number.digits().any(|b| b != b'0'))
}

/// Whether the first time of day in `text` (see [`find_time`]) has at most
/// `digits` fractional digits of a second other than trailing zeros; text
/// without a time of day passes.
#[inline]
pub fn within_fraction(text: &str, digits: usize) -> bool {
    let bytes = text.as_bytes();
    let Some((start, end)) = find_time(bytes) else {
        return true;
    };
    let time = &bytes[start..end];
    let Some(point) = time.iter().position(|&b| b == b'.') else {
        return true;
    };
    let fraction = &time[point + 1..];
    let kept = fraction
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1);
    kept <= digits
}

/// Where the first time of day (`h:m`, hours of one or two digits,
/// minutes of one or two, with `:s` and a fraction of a second) is in
/// `text`: its start and end.
#[inline]
pub fn find_time(text: &[u8]) -> Option<(usize, usize)> {
    let digit = |i: usize| text.get(i).is_some_and(u8::is_ascii_digit);
    // A field after a colon, of one or two digits: where it ends.
    let field = |at: usize| digit(at).then(|| if digit(at + 1) { at + 2 } else { at + 1 });
    let colon = (1..text.len()).find(|&i| text[i] == b':' && digit(i - 1) && digit(i + 1))?;
    let start = if colon >= 2 && digit(colon - 2) {
        colon - 2
    } else {
        colon - 1
    };
    let mut end = field(colon + 1)?;
    if let Some(seconds) = (text.get(end) == Some(&b':'))
        .then(|| field(end + 1))
        .flatten()
    {
        end = seconds;
        if text.get(end) == Some(&b'.') {
            end += 1;
            while digit(end) {
                end += 1;
            }
        }
    }
    Some((start, end))
}

/// [`within_fraction`], also for a time of day written as hours and
/// minutes with a fraction (`10:00.5`): PostgreSQL reads such a time as
/// minutes and seconds, MariaDB's `TIME` as `10:00:00.5`, a fraction of a
/// second either way. (MariaDB's `DATETIME` reads the point as a
/// separator, 10:00:05: it takes [`within_fraction`] alone.)
#[inline]
pub fn time_fraction_within(text: &str, digits: usize) -> bool {
    within_fraction(text, digits) && minutes_within(text, digits)
}

/// Whether a time of day written as hours and minutes with a fraction
/// has at most `digits` fractional digits, trailing zeros aside; other
/// text passes.
fn minutes_within(text: &str, digits: usize) -> bool {
    let Some((start, end)) = find_time(text.as_bytes()) else {
        return true;
    };
    if text[start..end].matches(':').count() > 1 {
        return true;
    }
    match text[end..].strip_prefix('.') {
        Some(rest) => {
            let fraction = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
            fraction.trim_end_matches('0').len() <= digits
        }
        None => true,
    }
}

/// Whether `text` is a plain decimal (`-?digits[.digits]`) with at most
/// `scale` decimal places, so that no digit of it can be rounded away: the
/// common case, answered without [`last_digit_power`].
#[inline]
fn plain_decimal_within(text: &str, scale: i32) -> bool {
    let bytes = text.as_bytes();
    let unsigned = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let (int, frac) = match unsigned.iter().position(|&b| b == b'.') {
        Some(dot) => (&unsigned[..dot], &unsigned[dot + 1..]),
        None => (unsigned, &unsigned[..0]),
    };
    !int.is_empty()
        && usize::try_from(scale).is_ok_and(|scale| frac.len() <= scale)
        && int.iter().chain(frac).all(u8::is_ascii_digit)
}

/// The power of ten of the last nonzero digit of a decimal number
/// (`1.25` → -2, `1200` → 2, `1.5e3` → 2), `None` for zero or text that
/// is not a plain decimal number.
fn last_digit_power(text: &str) -> Option<i64> {
    let Decimal {
        int,
        frac,
        exponent,
    } = Decimal::read(text)?;
    if let Some(at) = frac.bytes().rposition(|b| b != b'0') {
        return exponent.checked_sub(1 + at as i64);
    }
    let at = int.bytes().rposition(|b| b != b'0')?;
    exponent.checked_add((int.len() - 1 - at) as i64)
}

/// A plain decimal number's text (`-12.50e3`: a sign, digits with a point,
/// an exponent) in its parts: the one reading of such text every rule here
/// shares.
struct Decimal<'a> {
    /// The digits before the point.
    int: &'a str,
    /// The digits after the point.
    frac: &'a str,
    /// The exponent (0 without one).
    exponent: i64,
}

impl<'a> Decimal<'a> {
    /// `None` for text that is not a plain decimal number (no digit, a
    /// character other than the sign, digits, one point and an exponent,
    /// or an exponent out of range).
    fn read(text: &'a str) -> Option<Decimal<'a>> {
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
            None => (unsigned, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
            return None;
        }
        Some(Decimal {
            int,
            frac,
            exponent,
        })
    }

    /// Every digit, before the point and after it.
    fn digits(&self) -> impl DoubleEndedIterator<Item = u8> + 'a {
        self.int.bytes().chain(self.frac.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_refuses_what_would_round() {
        for ok in ["1.23", "1.2300", "-12", " 1.5e-1 ", "0.000", "NaN", "x"] {
            assert!(within_scale(ok, 2), "{ok}");
        }
        for bad in ["1.239", "0.001", "1e-3", "-0.125"] {
            assert!(!within_scale(bad, 2), "{bad}");
        }
        // The plain-decimal shortcut agrees with the full reading.
        for value in [
            "-12.34", "0012.30", "5.", "12.345", "12.340", "-0.005", ".5", "1-2",
        ] {
            let full = match last_digit_power(value.trim()) {
                Some(power) => power >= -2,
                None => true,
            };
            assert_eq!(within_scale(value, 2), full, "{value}");
            if plain_decimal_within(value, 2) {
                assert!(full, "{value}");
            }
        }
        assert!(within_scale("1200", -2));
        assert!(!within_scale("1250", -2));
        // An integer column is scale 0.
        for ok in ["7", "-7", "1.0", "1e3", "1.5e1", "+3"] {
            assert!(within_scale(ok, 0), "{ok}");
        }
        for bad in ["1.5", "-0.4", "15e-1", "1e-9"] {
            assert!(!within_scale(bad, 0), "{bad}");
        }
        // An exponent beyond i64 neither panics nor overflows.
        assert!(within_scale("1e9223372036854775807", 0));
        assert!(within_scale("1.5e-9223372036854775808", 0));
    }

    #[test]
    fn nonzero_numbers() {
        assert_eq!(is_nonzero_number("1e-400"), Some(true));
        assert_eq!(is_nonzero_number("-0.000e5"), Some(false));
        assert_eq!(is_nonzero_number("0"), Some(false));
        assert_eq!(is_nonzero_number("nan"), None);
        assert_eq!(is_nonzero_number(""), None);
    }

    #[test]
    fn fractions_of_a_second() {
        assert!(within_fraction("2020-01-01 00:00:00.123456", 6));
        assert!(within_fraction("2020-01-01 00:00:00.500000", 1));
        assert!(within_fraction("2020-01-01", 0));
        assert!(!within_fraction("2020-01-01 00:00:00.5", 0));
        assert!(!within_fraction("2020-01-01 00:00:00.1234567", 6));
        assert!(within_fraction("10:00:00.", 0), "a point without digits");
        assert!(within_fraction("1:02:03.000", 0) && !within_fraction("1:02:03.010", 1));
        assert_eq!(find_time(b"x 1:02:03.40 y"), Some((2, 12)));
        // Fields of one digit.
        assert_eq!(find_time(b"1:2:3.5 x"), Some((0, 7)));
        assert_eq!(find_time(b"1:2 x"), Some((0, 3)));
        assert_eq!(find_time(b"10:00: x"), Some((0, 5)));
        assert!(!within_fraction("00:00:5.1234567", 6));
        // Hours and minutes with a fraction.
        assert!(within_fraction("2024-01-01 10:00.1234567", 0));
        assert!(!minutes_within("2024-01-01 10:00.1234567", 6));
        assert!(!minutes_within("1 day 16:14.9150", 2));
        assert!(minutes_within("10:00.500", 1) && minutes_within("10:00:00.5", 0));
        assert_eq!(find_time(b"10:00.5"), Some((0, 5)));
    }
}
