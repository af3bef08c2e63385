//! One item of a range or row literal, as the server reads it
//! (`range_parse_bound`, `record_in`): up to a delimiter outside double
//! quotes, a backslash taking the next character as it is, `""` within
//! quotes one quote; an item left out is infinite (a range's bound) or
//! NULL (a row's field).

/// The item starting at `at`, up to the first of `ends` outside quotes
/// (where `at` is left): `Some(None)` when left out, `None` when the text
/// ends first.
pub(super) fn item(bytes: &[u8], at: &mut usize, ends: &[u8]) -> Option<Option<Vec<u8>>> {
    if ends.contains(bytes.get(*at)?) {
        return Some(None);
    }
    let mut out = Vec::new();
    let mut quoted = false;
    loop {
        let byte = *bytes.get(*at)?;
        if !quoted && ends.contains(&byte) {
            return Some(Some(out));
        }
        *at += 1;
        match byte {
            b'\\' => {
                out.push(*bytes.get(*at)?);
                *at += 1;
            }
            b'"' if quoted && bytes.get(*at) == Some(&b'"') => {
                out.push(b'"');
                *at += 1;
            }
            b'"' => quoted = !quoted,
            byte => out.push(byte),
        }
    }
}

/// The white space the server skips around a literal (`isspace`).
pub(super) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}
