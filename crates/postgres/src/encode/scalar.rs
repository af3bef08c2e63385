//! Integers, floats and booleans read from text as the server's own input
//! functions read them, for their binary forms.

/// `text`, if it has no NUL (which PostgreSQL text cannot hold).
pub(super) fn no_nul(text: &str) -> Result<&str, String> {
    match memchr::memchr(0, text.as_bytes()).is_some() {
        true => Err("PostgreSQL text cannot hold a NUL character".into()),
        false => Ok(text),
    }
}

/// An integer as the server's `int4in` reads it: surrounding whitespace allowed.
pub(super) fn number<N: std::str::FromStr>(text: &str) -> Result<N, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{text:?} is not an integer of the column's size"))
}

/// A float as `float8in` / `float4in` read it: a value that overflows to
/// infinity or underflows to zero is out of range (as the server says),
/// not stored as infinity or 0.
pub(super) fn float<F: std::str::FromStr + Into<f64> + Copy>(text: &str) -> Result<F, String> {
    let trimmed = text.trim();
    let value: F = trimmed
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    let value64: f64 = value.into();
    let overflow = value64.is_infinite() && !trimmed.to_ascii_lowercase().contains("inf");
    let underflow = value64 == 0.0 && nonzero_mantissa(trimmed);
    match overflow || underflow {
        true => Err(format!("{text:?} is out of range for the column's type")),
        false => Ok(value),
    }
}

/// Whether a number's digits before its exponent hold a nonzero one.
fn nonzero_mantissa(text: &str) -> bool {
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// A boolean as `boolin` reads it (`t`, `yes`, `on`, `1`, unique prefixes, ...).
pub(super) fn boolean(text: &str) -> Result<bool, String> {
    let lower = text.trim().to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| lower.len() >= min && word.starts_with(&lower);
    if prefix_of("true", 1) || prefix_of("yes", 1) || lower == "on" || lower == "1" {
        Ok(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || lower == "0" {
        Ok(false)
    } else {
        Err(format!("{text:?} is not a boolean"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_server() {
        assert_eq!(boolean("T"), Ok(true));
        assert_eq!(boolean("of"), Ok(false));
        assert!(boolean("o").is_err());
        assert!(float::<f64>("1e400").is_err());
        assert!(float::<f64>("1e-400").is_err());
        assert!(float::<f32>("-1e-50").is_err());
        assert_eq!(float::<f32>("1e-40"), Ok(1e-40)); // subnormal, as strtof
        assert_eq!(float::<f64>("-0.0e-999"), Ok(-0.0));
        assert_eq!(float::<f64>("-Infinity"), Ok(f64::NEG_INFINITY));
        assert_eq!(float::<f32>(" 1.5"), Ok(1.5));
    }
}
