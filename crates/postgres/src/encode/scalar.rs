//! Integers, floats and booleans read from text as the server's own input
//! functions read them, for their binary forms.

use std::num::{IntErrorKind, ParseIntError};

use super::Refusal;

/// `text` without the white space the server's input functions skip
/// around a number or a boolean: the ASCII characters C's `isspace` takes,
/// and no others (the server refuses a value with a no-break space).
fn trim_space(text: &str) -> &str {
    text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'))
}

/// An integer as the server's `int4in` reads it: surrounding white space
/// allowed. A number out of the column's range is refused here, as the
/// server refuses it; any other spelling goes to the server to read (a
/// newer server also reads `0x1F` and `1_000`).
pub(super) fn number<N>(text: &str) -> Result<N, Refusal>
where
    N: std::str::FromStr<Err = ParseIntError>,
{
    trim_space(text)
        .parse()
        .map_err(|error: ParseIntError| match error.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
                Refusal::Bad(format!("{text:?} is not an integer of the column's size"))
            }
            _ => Refusal::NotCanonical,
        })
}

/// A float as `float8in` / `float4in` read it: a value that overflows to
/// infinity or underflows to zero is out of range (as the server says),
/// not stored as infinity or 0. A spelling not read here (a hexadecimal
/// float, which the server's `strtod` reads) goes to the server to read.
pub(super) fn float<F: std::str::FromStr + Into<f64> + Copy>(text: &str) -> Result<F, Refusal> {
    let trimmed = trim_space(text);
    let value: F = trimmed.parse().map_err(|_| Refusal::NotCanonical)?;
    let value64: f64 = value.into();
    let overflow = value64.is_infinite() && !trimmed.to_ascii_lowercase().contains("inf");
    let underflow = value64 == 0.0 && nonzero_mantissa(trimmed);
    match overflow || underflow {
        true => Err(Refusal::Bad(format!(
            "{text:?} is out of range for the column's type"
        ))),
        false => Ok(value),
    }
}

/// Whether a number's digits before its exponent hold a nonzero one.
fn nonzero_mantissa(text: &str) -> bool {
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// A boolean as `boolin` reads it (`t`, `yes`, `on`, `1`, unique prefixes,
/// ...); any other spelling goes to the server to read (and refuse).
pub(super) fn boolean(text: &str) -> Result<bool, Refusal> {
    let lower = trim_space(text).to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| lower.len() >= min && word.starts_with(&lower);
    if prefix_of("true", 1) || prefix_of("yes", 1) || lower == "on" || lower == "1" {
        Ok(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || lower == "0" {
        Ok(false)
    } else {
        Err(Refusal::NotCanonical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_server() {
        assert_eq!(boolean("T"), Ok(true));
        assert_eq!(boolean("of"), Ok(false));
        assert_eq!(boolean(" on\t"), Ok(true));
        assert_eq!(boolean("o"), Err(Refusal::NotCanonical));
        assert_eq!(boolean("\u{a0}true"), Err(Refusal::NotCanonical));
        assert_eq!(number::<i32>(" -7\n"), Ok(-7));
        assert_eq!(number::<i32>("\u{a0}5"), Err(Refusal::NotCanonical));
        assert_eq!(number::<i32>("0x1F"), Err(Refusal::NotCanonical));
        assert!(matches!(number::<i16>("70000"), Err(Refusal::Bad(_))));
        assert!(matches!(float::<f64>("1e400"), Err(Refusal::Bad(_))));
        assert!(matches!(float::<f64>("1e-400"), Err(Refusal::Bad(_))));
        assert!(matches!(float::<f32>("-1e-50"), Err(Refusal::Bad(_))));
        assert_eq!(float::<f32>("1e-40"), Ok(1e-40)); // subnormal, as strtof
        assert_eq!(float::<f64>("-0.0e-999"), Ok(-0.0));
        assert_eq!(float::<f64>("-Infinity"), Ok(f64::NEG_INFINITY));
        assert_eq!(float::<f32>(" 1.5"), Ok(1.5));
        assert_eq!(float::<f64>("0x1p3"), Err(Refusal::NotCanonical));
        assert_eq!(float::<f64>("2.5\u{3000}"), Err(Refusal::NotCanonical));
    }
}
