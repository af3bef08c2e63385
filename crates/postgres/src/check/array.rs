//! Arrays: each element by its type's check, and the nesting of every
//! array.
//!
//! PostgreSQL 15 and 16 read some arrays whose elements are not all nested
//! equally deep without an error, and store them altered: `{{{a}},{b}}`
//! as `{}`, `{{a},{{b}}}` as `{{{a}},{{b}}}` (PostgreSQL 17 refuses
//! them). Such an array is refused here, whatever its element type.

use super::Check;

/// Each element of an array's text by `inner` (`None`: its nesting
/// alone); text that is not an array literal is the server's to judge.
pub(super) fn elements(text: &str, inner: Option<&Check>) -> Result<(), String> {
    let Some((values, even)) = split(text) else {
        return Ok(());
    };
    if !even {
        return Err(format!(
            "{text:?} has elements nested at different depths, which PostgreSQL before 17 \
             stores altered (as an empty array, or with a dimension added)"
        ));
    }
    let Some(inner) = inner else {
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
    split(text).map(|(values, _)| values)
}

/// [`array_elements`], and whether every element is nested equally deep.
fn split(text: &str) -> Option<(Vec<Option<String>>, bool)> {
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
    // The depth of the first element, and whether every other's is the same.
    let (mut first, mut even) = (None, true);
    while at < bytes.len() {
        match bytes[at] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return rest[at + 1..].trim().is_empty().then_some((values, even));
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
                even &= *first.get_or_insert(depth) == depth;
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
                even &= *first.get_or_insert(depth) == depth;
                continue;
            }
        }
        at += 1;
    }
    None
}
