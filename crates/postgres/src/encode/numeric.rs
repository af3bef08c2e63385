//! `numeric` in its binary form, from the canonical decimal text only.
//!
//! The binary form is what the server's `numeric_send` writes: int16
//! ndigits, int16 weight, uint16 sign, uint16 dscale, then ndigits
//! base-10000 digits (int16 each), the first and last nonzero. `weight` is
//! the power of 10000 of the first digit; `dscale` the decimal places the
//! value displays, taken from the text as `numeric_in` takes it (`1.50`
//! keeps 2). The server's `numeric_recv` applies the column's typmod
//! (rounding to its scale, the precision check) exactly as `numeric_in`
//! does, so that stays the server's job.
//!
//! Only `[+-]?[0-9]+(\.[0-9]+)?` within the server's limits is encoded;
//! anything else (whitespace, exponents, NaN, Infinity, a bare point) is
//! not canonical and goes in text, for the server to read or refuse.

/// Most digits before the point a numeric holds (a weight of at most
/// `i16::MAX` base-10000 digits).
const MAX_INT_DIGITS: usize = 131_072;
/// Most digits after the point a numeric holds (the 14-bit dscale).
const MAX_FRAC_DIGITS: usize = 16_383;
/// The sign word of a negative value.
const NEGATIVE: u16 = 0x4000;

/// Appends the binary form of `text` to `out` when `text` is a canonical
/// decimal number; returns `false` with `out` untouched otherwise.
pub(super) fn encode(text: &str, out: &mut Vec<u8>) -> bool {
    let Some((negative, int, frac)) = split(text.as_bytes()) else {
        return false;
    };
    let dscale = frac.len() as u16; // at most MAX_FRAC_DIGITS
    let int = &int[int.iter().take_while(|&&b| b == b'0').count()..];
    let frac = &frac[..frac.len() - frac.iter().rev().take_while(|&&b| b == b'0').count()];
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    let weight: i16 = if int.is_empty() {
        if frac.is_empty() {
            // Zero: no digits, weight 0, positive (as the server stores it).
            out[start + 6..start + 8].copy_from_slice(&dscale.to_be_bytes());
            return true;
        }
        // Leading zero groups of the fraction are not digits; each lowers
        // the weight below -1.
        let skip = frac.iter().take_while(|&&b| b == b'0').count() / 4;
        push_fraction(&frac[skip * 4..], out);
        -1 - skip as i16 // skip <= MAX_FRAC_DIGITS / 4
    } else {
        let first = match int.len() % 4 {
            0 => 4,
            rest => rest,
        };
        push_group(group(&int[..first]), out);
        for chunk in int[first..].chunks_exact(4) {
            push_group(group(chunk), out);
        }
        push_fraction(frac, out);
        ((int.len() - first) / 4) as i16 // <= i16::MAX by MAX_INT_DIGITS
    };
    // Only an integer can end in zero groups (a fraction ends nonzero).
    while out.len() > start + 8 && out[out.len() - 2..] == [0, 0] {
        out.truncate(out.len() - 2);
    }
    let ndigits = ((out.len() - start - 8) / 2) as u16; // read as uint16 by numeric_recv
    let sign: u16 = if negative { NEGATIVE } else { 0 };
    out[start..start + 2].copy_from_slice(&ndigits.to_be_bytes());
    out[start + 2..start + 4].copy_from_slice(&weight.to_be_bytes());
    out[start + 4..start + 6].copy_from_slice(&sign.to_be_bytes());
    out[start + 6..start + 8].copy_from_slice(&dscale.to_be_bytes());
    true
}

/// The sign, the digits before the point and the digits after it of a
/// canonical number within the limits, or `None`.
fn split(text: &[u8]) -> Option<(bool, &[u8], &[u8])> {
    let (negative, rest) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let (int, frac) = match rest.iter().position(|&b| b == b'.') {
        Some(at) if at + 1 < rest.len() => (&rest[..at], &rest[at + 1..]),
        Some(_) => return None,
        None => (rest, &[][..]),
    };
    let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    let fits = !int.is_empty() && int.len() <= MAX_INT_DIGITS && frac.len() <= MAX_FRAC_DIGITS;
    (fits && digits(int) && digits(frac)).then_some((negative, int, frac))
}

/// The fraction's digits as base-10000 digits, the last one padded with
/// zeros on the right.
fn push_fraction(frac: &[u8], out: &mut Vec<u8>) {
    for chunk in frac.chunks(4) {
        let scale = [1000, 100, 10, 1][chunk.len() - 1];
        push_group(group(chunk) * scale, out);
    }
}

/// The value of up to four ASCII digits.
fn group(digits: &[u8]) -> u16 {
    digits
        .iter()
        .fold(0, |value, digit| value * 10 + u16::from(digit - b'0'))
}

/// Appends one base-10000 digit.
fn push_group(digit: u16, out: &mut Vec<u8>) {
    out.extend_from_slice(&digit.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary form of `text`, or `None` when it is not canonical.
    fn bin(text: &str) -> Option<Vec<u8>> {
        let mut out = vec![7];
        let ok = encode(text, &mut out);
        assert_eq!(out[0], 7);
        match ok {
            true => Some(out[1..].to_vec()),
            false => {
                assert_eq!(out.len(), 1, "{text:?} left bytes behind");
                None
            }
        }
    }

    /// The expected bytes of a weight, sign, dscale and digits.
    fn form(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(digits.len() as u16).to_be_bytes());
        out.extend_from_slice(&weight.to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&dscale.to_be_bytes());
        for digit in digits {
            out.extend_from_slice(&digit.to_be_bytes());
        }
        out
    }

    #[test]
    fn canonical_numbers_encode_as_numeric_send_writes_them() {
        // `SELECT numeric_send('123.45')` is \x0002 0000 0000 0002 007b 1194.
        assert_eq!(bin("123.45"), Some(form(0, 0, 2, &[123, 4500])));
        assert_eq!(bin("-123.45"), Some(form(0, NEGATIVE, 2, &[123, 4500])));
        assert_eq!(bin("+7"), Some(form(0, 0, 0, &[7])));
        assert_eq!(bin("1.50"), Some(form(0, 0, 2, &[1, 5000])));
        assert_eq!(bin("007.50"), Some(form(0, 0, 2, &[7, 5000])));
        assert_eq!(bin("10000"), Some(form(1, 0, 0, &[1])));
        assert_eq!(bin("123456789"), Some(form(2, 0, 0, &[1, 2345, 6789])));
        assert_eq!(bin("100000000.0001"), Some(form(2, 0, 4, &[1, 0, 0, 1])));
        assert_eq!(bin("0.0001"), Some(form(-1, 0, 4, &[1])));
        assert_eq!(bin("0.00001"), Some(form(-2, 0, 5, &[1000])));
        assert_eq!(bin("-0.000000012"), Some(form(-2, NEGATIVE, 9, &[1, 2000])));
        assert_eq!(bin("1.00001"), Some(form(0, 0, 5, &[1, 0, 1000])));
    }

    #[test]
    fn zero_has_no_digits_and_keeps_its_scale() {
        assert_eq!(bin("0"), Some(form(0, 0, 0, &[])));
        assert_eq!(bin("-0"), Some(form(0, 0, 0, &[])));
        assert_eq!(bin("-0.000"), Some(form(0, 0, 3, &[])));
        assert_eq!(bin("000.0"), Some(form(0, 0, 1, &[])));
    }

    #[test]
    fn other_spellings_are_not_canonical() {
        for text in [
            "", "-", "+", ".", "1.", ".5", "-.5", " 12", "12 ", "1e5", "1E5", "NaN", "nan",
            "Infinity", "-inf", "1_000", "0x10", "1,5", "--1", "+-1", "1.2.3", "١",
        ] {
            assert_eq!(bin(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_servers_limits_bound_the_digits() {
        let int = "9".repeat(MAX_INT_DIGITS);
        let encoded = bin(&int).unwrap();
        assert_eq!(encoded[..4], [0x80, 0x00, 0x7f, 0xff]); // 32768 digits, weight 32767
        assert_eq!(bin(&format!("{int}9")), None);
        let frac = format!("0.{}1", "0".repeat(MAX_FRAC_DIGITS - 1));
        let encoded = bin(&frac).unwrap();
        assert_eq!(encoded, form(-4096, 0, MAX_FRAC_DIGITS as u16, &[10]));
        assert_eq!(bin(&format!("{frac}1")), None);
    }

    #[test]
    fn digits_round_trip_through_a_decimal_reading() {
        // Decode the form back to a digit string and compare, over many
        // shapes of integer and fraction.
        for int in ["0", "5", "12", "123", "1234", "12345", "10000", "900000001"] {
            for frac in [
                "",
                "0",
                "5",
                "05",
                "0005",
                "00005",
                "1234",
                "12345",
                "000000001",
            ] {
                let text = match frac {
                    "" => int.to_owned(),
                    _ => format!("{int}.{frac}"),
                };
                let bytes = bin(&text).unwrap();
                let word = |i: usize| i16::from_be_bytes([bytes[i], bytes[i + 1]]);
                let (ndigits, weight, dscale) = (word(0), word(2), word(6));
                let mut value = String::new();
                for i in 0..ndigits as usize {
                    value.push_str(&format!("{:04}", word(8 + 2 * i)));
                }
                // value holds digits from 10000^weight down.
                let point = 4 * (i32::from(weight) + 1);
                let digits: String = if point <= 0 {
                    format!("0.{}{value}", "0".repeat((-point) as usize))
                } else if point as usize >= value.len() {
                    format!("{value}{}", "0".repeat(point as usize - value.len()))
                } else {
                    format!("{}.{}", &value[..point as usize], &value[point as usize..])
                };
                let normal = |s: &str| {
                    let s = s.trim_start_matches('0');
                    let s = match s.contains('.') {
                        true => s.trim_end_matches('0').trim_end_matches('.'),
                        false => s,
                    };
                    s.to_owned()
                };
                assert_eq!(normal(&digits), normal(&text), "{text}");
                assert_eq!(dscale as usize, frac.len(), "{text}");
            }
        }
    }
}
