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
    let (mut first, mut uneven) = (None, false);
    let mut refused = None;
    let walked = walk(text, inner.is_some(), |depth, value| {
        uneven |= *first.get_or_insert(depth) != depth;
        if let (Some(inner), Some(value), None) = (inner, value, &refused) {
            refused = inner.check(std::str::from_utf8(value).ok()?).err();
        }
        Some(())
    });
    match walked {
        None => Ok(()),
        Some(()) if uneven => Err(format!(
            "{text:?} has elements nested at different depths, which PostgreSQL before 17 \
             stores altered (as an empty array, or with a dimension added)"
        )),
        Some(()) => match refused {
            Some(why) => Err(format!("in the array {text:?}: {why}")),
            None => Ok(()),
        },
    }
}

/// The elements of an array literal (`{1,"a b",NULL}`, nested, after
/// `[1:2]=` bounds), unquoted and unescaped, `None` for NULL; `None` for
/// text that is not one.
pub(super) fn array_elements(text: &str) -> Option<Vec<Option<String>>> {
    let mut values = Vec::new();
    walk(text, true, |_, value| {
        values.push(match value {
            Some(value) => Some(String::from_utf8(value.to_vec()).ok()?),
            None => None,
        });
        Some(())
    })?;
    Some(values)
}

/// Hands each element of an array literal, in order, to `element` with
/// its depth (1 in a flat array) and, when `values`, its bytes unquoted
/// and unescaped (`None` for NULL; else empty); `None` for text that is
/// not one, or when `element` gives up.
fn walk(
    text: &str,
    values: bool,
    mut element: impl FnMut(usize, Option<&[u8]>) -> Option<()>,
) -> Option<()> {
    let mut rest = text.trim_start();
    if rest.starts_with('[') {
        rest = rest[rest.find('=')? + 1..].trim_start();
    }
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut value = Vec::new();
    let (mut at, mut depth) = (0, 0usize);
    while at < bytes.len() {
        match bytes[at] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return rest[at + 1..].trim().is_empty().then_some(());
                }
            }
            b',' => {}
            b if b.is_ascii_whitespace() => {}
            b'"' => {
                value.clear();
                at += 1;
                loop {
                    match *bytes.get(at)? {
                        b'"' => break,
                        b'\\' => {
                            at += 1;
                            let escaped = *bytes.get(at)?;
                            if values {
                                value.push(escaped);
                            }
                        }
                        b if values => value.push(b),
                        _ => {}
                    }
                    at += 1;
                }
                element(depth, Some(&value))?;
            }
            _ => {
                value.clear();
                let (mut kept, mut escaped) = (0, false);
                while at < bytes.len() && !matches!(bytes[at], b',' | b'}' | b'{' | b'"') {
                    // An escaped byte is kept even if it is white space.
                    let escape = bytes[at] == b'\\';
                    if escape {
                        at += 1;
                        escaped = true;
                    }
                    let byte = *bytes.get(at)?;
                    if values {
                        value.push(byte);
                        if escape || !byte.is_ascii_whitespace() {
                            kept = value.len();
                        }
                    }
                    at += 1;
                }
                value.truncate(kept);
                let null = !escaped && value.eq_ignore_ascii_case(b"null");
                element(depth, (!null).then_some(&value[..]))?;
                continue;
            }
        }
        at += 1;
    }
    None
}
