//! Binary values written as text: hex (XML Schema's `hexBinary`, and
//! PostgreSQL's `bytea` output with its `\\x` prefix) and base64, decoded
//! for a column a source is told holds bytes.

use std::fmt;

/// How a column's text becomes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decode {
    /// Two hex digits per byte (either case), as `xs:hexBinary`.
    Hex,
    /// Base64 (RFC 4648, `+/`, `=` padding, the bits past the last byte
    /// zero; whitespace ignored), as `xs:base64Binary`.
    Base64,
}

impl std::str::FromStr for Decode {
    type Err = String;

    /// `hex` or `base64`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "hex" => Ok(Decode::Hex),
            "base64" => Ok(Decode::Base64),
            _ => Err(format!("unknown decoding {text:?} (hex or base64)")),
        }
    }
}

impl Decode {
    /// Appends the bytes `text` encodes to `out`. Hex takes white space
    /// around the digits and PostgreSQL's `\\x` prefix (as `bytea` is
    /// written in its text and CSV output); base64 white space anywhere.
    ///
    /// # Errors
    ///
    /// Where in `text` the value stops being a valid encoding, and why.
    pub fn decode(self, text: &str, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let error = |(at, why)| DecodeError { at, why };
        match self {
            Decode::Hex => {
                let digits = text.trim_matches(is_space);
                let leading = text.len() - text.trim_start_matches(is_space).len();
                let (skipped, digits) = match digits.strip_prefix("\\x") {
                    Some(rest) => (leading + 2, rest),
                    None => (leading, digits),
                };
                hex(digits, out).map_err(|(at, why)| error((at + skipped, why)))
            }
            Decode::Base64 => base64(text, out).map_err(error),
        }
    }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn hex(text: &str, out: &mut Vec<u8>) -> Result<(), (usize, String)> {
    let digit = |at: usize, c: u8| -> Result<u8, (usize, String)> {
        (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
            (
                at,
                format!(
                    "{:?} is not a hex digit",
                    text[at..].chars().next().unwrap_or_default()
                ),
            )
        })
    };
    let bytes = text.as_bytes();
    if bytes.len() % 2 == 1 {
        return Err((bytes.len(), "odd number of hex digits".into()));
    }
    out.reserve(bytes.len() / 2);
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out.push(digit(2 * i, pair[0])? << 4 | digit(2 * i + 1, pair[1])?);
    }
    Ok(())
}

fn base64(text: &str, out: &mut Vec<u8>) -> Result<(), (usize, String)> {
    let mut group = 0u32;
    let mut count = 0;
    let mut padding = 0;
    for (at, c) in text.char_indices() {
        let value = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '+' => 62,
            '/' => 63,
            '=' if count >= 2 => {
                padding += 1;
                0
            }
            c if is_space(c) => continue,
            c => return Err((at, format!("{c:?} is not a base64 digit"))),
        };
        if padding > 0 && c != '=' {
            return Err((at, "base64 digit after `=` padding".into()));
        }
        group = group << 6 | value;
        count += 1;
        if count == 4 {
            let three = group.to_be_bytes();
            // The bits of the last digit that no byte takes must be zero
            // (`AB==` is not `AA==`): else the value holds bits the
            // bytes would drop.
            if three[4 - padding..].iter().any(|&b| b != 0) {
                return Err((at, "base64 value has bits beyond its last byte".into()));
            }
            out.extend_from_slice(&three[1..4 - padding]);
            if padding > 0 {
                // Only padding (and whitespace) may follow.
                count = 5;
                continue;
            }
            group = 0;
            count = 0;
        }
    }
    match count {
        0 | 5 => Ok(()),
        _ => Err((
            text.len(),
            "base64 value ends inside a 4-digit group".into(),
        )),
    }
}

impl fmt::Display for Decode {
    /// `hex` or `base64`, as [`FromStr`](std::str::FromStr) reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decode::Hex => "hex",
            Decode::Base64 => "base64",
        })
    }
}

/// Why a value is not the encoding its column was said to hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The byte offset in the value where it stops being valid.
    pub at: usize,
    /// What is wrong there.
    pub why: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {} of the value)", self.why, self.at)
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(mode: Decode, text: &str) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        mode.decode(text, &mut out).map(|()| out)
    }

    #[test]
    fn hex_values() {
        assert_eq!(decode(Decode::Hex, "5C30").unwrap(), b"\\0");
        assert_eq!(decode(Decode::Hex, " 00ffA0\n").unwrap(), [0, 255, 0xA0]);
        assert_eq!(decode(Decode::Hex, "").unwrap(), b"");
        assert_eq!(decode(Decode::Hex, " \\x5C30").unwrap(), b"\\0");
        assert_eq!(decode(Decode::Hex, "\\x0g").unwrap_err().at, 3);
        assert!(
            "base64".parse::<Decode>() == Ok(Decode::Base64) && "b64".parse::<Decode>().is_err()
        );
        assert_eq!(decode(Decode::Hex, "0g").unwrap_err().at, 1);
        assert_eq!(decode(Decode::Hex, " 0g").unwrap_err().at, 2);
        assert_eq!(
            decode(Decode::Hex, "abc").unwrap_err().why,
            "odd number of hex digits"
        );
        assert_eq!(
            decode(Decode::Hex, "0é0").unwrap_err().why,
            "'é' is not a hex digit"
        );
    }

    #[test]
    fn base64_values() {
        let all: Vec<u8> = (0..=255).collect();
        for (text, want) in [
            ("", &b""[..]),
            ("AA==", &[0][..]),
            ("AAE=", &[0, 1][..]),
            ("AAEC", &[0, 1, 2][..]),
            ("aGVs\nbG8=\n", &b"hello"[..]),
        ] {
            assert_eq!(decode(Decode::Base64, text).unwrap(), want, "{text:?}");
        }
        let long = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==";
        assert_eq!(decode(Decode::Base64, long).unwrap(), all);
        assert_eq!(
            decode(Decode::Base64, "AA=A").unwrap_err().why,
            "base64 digit after `=` padding"
        );
        assert_eq!(decode(Decode::Base64, "AAA").unwrap_err().at, 3);
        assert_eq!(decode(Decode::Base64, "A*AA").unwrap_err().at, 1);
        assert_eq!(decode(Decode::Base64, "=AAA").unwrap_err().at, 0);
        assert_eq!(
            decode(Decode::Base64, "AB==").unwrap_err().why,
            "base64 value has bits beyond its last byte"
        );
        assert!(decode(Decode::Base64, "AAF=").is_err());
    }

    /// Every short text over an alphabet of digits, padding, white space
    /// and a stray character: accepted exactly when the `base64` crate's
    /// standard engine accepts it without its white space, with the same
    /// bytes.
    #[test]
    fn base64_agrees_with_the_base64_crate() {
        use base64::Engine;
        const ALPHABET: &[u8] = b"AQgwB/+9z= \n*";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            // xorshift64*: a fixed sequence, so a failure repeats.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        for _ in 0..200_000 {
            let len = (next() % 13) as usize;
            let text: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
                .collect();
            let ours = decode(Decode::Base64, &text).ok();
            let compact: String = text.chars().filter(|&c| !is_space(c)).collect();
            let reference = base64::engine::general_purpose::STANDARD
                .decode(&compact)
                .ok();
            assert_eq!(ours, reference, "{text:?}");
        }
    }
}
