//! Arrays: each element by its type's check.

use super::Check;

/// Each element of an array's text by `inner`; text that is not an array
/// literal is the server's to judge.
pub(super) fn elements(text: &str, inner: &Check) -> Result<(), String> {
    let Some(values) = array_elements(text) else {
        return Ok(());
    };
    values
        .iter()
        .flatten()
        .try_for_each(|value| inner.check(value))
        .map_err(|why| format!("in the array {text:?}: {why}"))
}

/// The elements of an array literal (`{1,"a b",NULL}`, nested, after
/// `[1:2]=` bounds), unquoted and unescaped, `None` for NULL; `None` for
/// text that is not one.
pub(super) fn array_elements(text: &str) -> Option<Vec<Option<String>>> {
    let mut rest = text.trim_start();
    if rest.starts_with('[') {
        rest = rest[rest.find('=')? + 1..].trim_start();
    }
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut values = Vec::new();
    let (mut at, mut depth) = (0, 0usize);
    while at < bytes.len() {
        match bytes[at] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return rest[at + 1..].trim().is_empty().then_some(values);
                }
            }
            b',' => {}
            b if b.is_ascii_whitespace() => {}
            b'"' => {
                let mut value = Vec::new();
                at += 1;
                loop {
                    match *bytes.get(at)? {
                        b'"' => break,
                        b'\\' => {
                            at += 1;
                            value.push(*bytes.get(at)?);
                        }
                        b => value.push(b),
                    }
                    at += 1;
                }
                values.push(Some(String::from_utf8(value).ok()?));
            }
            _ => {
                let (mut value, mut kept, mut escaped) = (Vec::new(), 0, false);
                while at < bytes.len() && !matches!(bytes[at], b',' | b'}' | b'{' | b'"') {
                    if bytes[at] == b'\\' {
                        at += 1;
                        escaped = true;
                        value.push(*bytes.get(at)?);
                        kept = value.len();
                    } else {
                        value.push(bytes[at]);
                        if !bytes[at].is_ascii_whitespace() {
                            kept = value.len();
                        }
                    }
                    at += 1;
                }
                value.truncate(kept);
                let null = !escaped && value.eq_ignore_ascii_case(b"null");
                values.push(match null {
                    true => None,
                    false => Some(String::from_utf8(value).ok()?),
                });
                continue;
            }
        }
        at += 1;
    }
    None
}
