//! Text columns that change what they are given: `BINARY(n)` padding,
//! `BIT` storing characters' bytes, `ENUM`/`SET` members, `YEAR` digits.

use super::temporal::is_space;

/// `Err` when a value of `len` bytes is shorter than a `BINARY(n)`.
pub(super) fn padded(len: u64, n: u64) -> Result<(), String> {
    match len < n {
        true => Err(format!(
            "{len} bytes, fewer than the column's {n}: BINARY({n}) would pad them with zero bytes"
        )),
        false => Ok(()),
    }
}

/// Whether `text` spells a number, in decimal or as a bit or hex literal,
/// or a boolean: what a `BIT` column is meant to hold, but would store as
/// the characters' bytes.
pub(super) fn spells_number(text: &str) -> bool {
    let text = text.trim_matches(is_space);
    let all =
        |digits: &str, f: fn(&u8) -> bool| !digits.is_empty() && digits.bytes().all(|b| f(&b));
    let decimal = text.strip_prefix(['+', '-']).unwrap_or(text);
    let lower = text.to_ascii_lowercase();
    all(decimal, u8::is_ascii_digit)
        || lower == "true"
        || lower == "false"
        || lower
            .strip_prefix("0x")
            .is_some_and(|hex| all(hex, u8::is_ascii_hexdigit))
        || lower
            .strip_prefix("0b")
            .is_some_and(|bits| all(bits, |b| matches!(b, b'0' | b'1')))
        || lower
            .strip_prefix("b'")
            .and_then(|l| l.strip_suffix('\''))
            .is_some_and(|bits| bits.bytes().all(|b| matches!(b, b'0' | b'1')))
}

/// `members` for a message: the first few, quoted.
pub(super) fn listed(members: &[String]) -> String {
    let mut shown: Vec<String> = members.iter().take(5).map(|m| format!("{m:?}")).collect();
    if members.len() > 5 {
        shown.push(format!("… {} in all", members.len()));
    }
    shown.join(", ")
}

/// Whether `text`, spaces around it aside, is four ASCII digits.
pub(super) fn is_four_digits(text: &str) -> bool {
    let year = text.trim_matches(' ');
    year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit())
}
