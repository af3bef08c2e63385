//! Whether a float column keeps every significant digit a number is
//! written with: the nearest float, read back to as many digits, must give
//! them again.

use super::Decimal;

/// How the nearest float of `text` (single precision with `single`, else
/// double) would be shown, when it loses a significant digit `text` was
/// written with: `16777217` in single precision is 16777216; `0.1`, and a
/// float printer's `0.10000000000000001`, keep theirs. `None` also for
/// text that is not a plain decimal number, zero, or a number out of the
/// type's range: those are the server's to judge.
///
/// ```
/// use ringpipe_pipeline::exact::float_rounds;
///
/// assert_eq!(float_rounds("16777217", true).as_deref(), Some("16777216"));
/// assert_eq!(float_rounds("0.1", true), None);
/// assert_eq!(float_rounds("3.141592653589793238", false).as_deref(), Some("3.141592653589793"));
/// ```
pub fn float_rounds(text: &str, single: bool) -> Option<String> {
    let trimmed = text.trim();
    let number = Significant::read(trimmed)?;
    // Up to FLT_DIG (6) or DBL_DIG (15) digits come back unchanged from a
    // float within the normal range: no need to read it.
    let (safe, normal) = match single {
        true => (6, -37..=37),
        false => (15, -307..=307),
    };
    if number.count <= safe && normal.contains(&number.exponent) {
        return None;
    }
    let (kept, shown) = match single {
        true => match trimmed.parse::<f32>() {
            Ok(value) if value.is_finite() && value != 0.0 => spelled(value.abs(), number.count),
            _ => return None,
        },
        false => match trimmed.parse::<f64>() {
            Ok(value) if value.is_finite() && value != 0.0 => spelled(value.abs(), number.count),
            _ => return None,
        },
    };
    let same = kept.split_once('e').is_some_and(|(mantissa, exponent)| {
        exponent.parse() == Ok(number.exponent)
            && mantissa
                .bytes()
                .filter(u8::is_ascii_digit)
                .eq(number.digits())
    });
    (!same).then_some(shown)
}

/// A float to `count` significant digits (`1.2345e6`), and as the server
/// shows it (its shortest spelling).
fn spelled<F: std::fmt::Display + std::fmt::LowerExp>(value: F, count: usize) -> (String, String) {
    let kept = format!("{:.*e}", count - 1, value);
    let plain = value.to_string();
    let shown = match plain.len() > 20 {
        true => format!("{value:e}"),
        false => plain,
    };
    (kept, shown)
}

/// The significant digits of a plain decimal number's text, from its
/// first nonzero digit to its last.
struct Significant<'a> {
    number: Decimal<'a>,
    /// Where the first nonzero digit is among the number's digits.
    first: usize,
    /// How many digits there are from the first nonzero one to the last.
    count: usize,
    /// The power of ten of the first nonzero digit.
    exponent: i64,
}

impl<'a> Significant<'a> {
    /// `None` for zero or text that is not a plain decimal number.
    fn read(text: &'a str) -> Option<Significant<'a>> {
        let number = Decimal::read(text)?;
        let first = number.digits().position(|b| b != b'0')?;
        let trailing = number.digits().rev().position(|b| b != b'0')?;
        let count = number.int.len() + number.frac.len() - trailing - first;
        let exponent = (number.exponent).checked_add(number.int.len() as i64 - 1 - first as i64)?;
        Some(Significant {
            number,
            first,
            count,
            exponent,
        })
    }

    /// The significant digits, as ASCII.
    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.number.digits().skip(self.first).take(self.count)
    }
}
