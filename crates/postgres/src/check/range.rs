//! Ranges and multiranges: each bound by its subtype's check (a range of
//! timestamps reads `now` or `UTC+2` inside it as a timestamp column does).
//!
//! The text is split as the server splits it (`range_parse` and
//! `multirange_in`): `empty`, or `[` or `(`, a lower bound, `,`, an upper
//! bound, `]` or `)`; a bound left out is infinite; inside a bound a
//! backslash takes the next character as it is, double quotes group
//! characters and `""` within them is one quote. A multirange is `{`,
//! ranges separated by commas, `}`. Text that does not split that way is
//! the server's to refuse.

use super::item::{is_space, item};
use super::Check;

/// Each bound of a range's (`multi`: a multirange's) text by `inner`.
pub(super) fn bounds(text: &str, inner: &Check, multi: bool) -> Result<(), String> {
    let Some(bounds) = finite_bounds(text, multi) else {
        return Ok(());
    };
    bounds
        .iter()
        .try_for_each(|bound| inner.check(bound))
        .map_err(|why| format!("in the range {text:?}: {why}"))
}

/// The finite bounds of a range's (`multi`: a multirange's) text,
/// unquoted and unescaped, in order; `None` for text that is not one.
pub(super) fn finite_bounds(text: &str, multi: bool) -> Option<Vec<String>> {
    let ranges = match multi {
        true => ranges(text)?,
        false => vec![text],
    };
    let bounds = ranges
        .into_iter()
        .map(range_bounds)
        .collect::<Option<Vec<Vec<String>>>>()?;
    Some(bounds.into_iter().flatten().collect())
}

/// The finite bounds of a range literal, unquoted and unescaped; `None`
/// for text that is not one.
fn range_bounds(text: &str) -> Option<Vec<String>> {
    let rest = text.trim_start_matches(is_space);
    if is_empty_literal(rest) {
        return rest[5..].trim_matches(is_space).is_empty().then(Vec::new);
    }
    let bytes = rest.as_bytes();
    if !matches!(bytes.first(), Some(b'[' | b'(')) {
        return None;
    }
    let mut at = 1;
    let mut found = Vec::new();
    for end in [b",".as_slice(), b"])"] {
        if let Some(bound) = item(bytes, &mut at, b",])")? {
            found.push(String::from_utf8(bound).ok()?);
        }
        if !end.contains(bytes.get(at)?) {
            return None;
        }
        at += 1;
    }
    rest[at..]
        .trim_matches(is_space)
        .is_empty()
        .then_some(found)
}

/// The ranges of a multirange literal; `None` for text that is not one.
fn ranges(text: &str) -> Option<Vec<&str>> {
    let rest = text.trim_matches(is_space);
    let inner = rest.strip_prefix('{')?.strip_suffix('}')?;
    let bytes = inner.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    loop {
        while bytes.get(at).is_some_and(|&b| is_space(b as char)) {
            at += 1;
        }
        if at == bytes.len() {
            // `{}`, or nothing after a comma (which the server refuses).
            return (found.is_empty() || bytes.is_empty()).then_some(found);
        }
        let start = at;
        if is_empty_literal(&inner[at..]) {
            at += 5;
        } else {
            // Up to the closing `]` or `)` outside quotes.
            let mut quoted = false;
            loop {
                let byte = *bytes.get(at)?;
                at += 1;
                match byte {
                    b'\\' => at += 1,
                    b'"' => quoted = !quoted,
                    b']' | b')' if !quoted => break,
                    _ => {}
                }
            }
        }
        found.push(inner.get(start..at)?);
        while bytes.get(at).is_some_and(|&b| is_space(b as char)) {
            at += 1;
        }
        match bytes.get(at) {
            None => return Some(found),
            Some(b',') => at += 1,
            Some(_) => return None,
        }
    }
}

/// Whether `text` starts with `empty`, in any case.
fn is_empty_literal(text: &str) -> bool {
    text.get(..5)
        .is_some_and(|w| w.eq_ignore_ascii_case("empty"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finite(text: &str) -> Option<Vec<String>> {
        range_bounds(text)
    }

    #[test]
    fn bounds_are_split_as_the_server_splits_them() {
        assert_eq!(
            finite("[2024-01-01, 2024-01-02)"),
            Some(vec!["2024-01-01".into(), " 2024-01-02".into()])
        );
        assert_eq!(finite("(,now]"), Some(vec!["now".into()]));
        assert_eq!(finite("[,)"), Some(vec![]));
        assert_eq!(finite(" EMPTY "), Some(vec![]));
        assert_eq!(
            finite(r#"["a,b","c""d"]"#),
            Some(vec!["a,b".into(), "c\"d".into()])
        );
        assert_eq!(finite(r"[a\,b,c]"), Some(vec!["a,b".into(), "c".into()]));
        for bad in [
            "", "2024", "[1,2", "[1,2,3]", "[1,2] x", "emptyx", "[\"1,2]",
        ] {
            assert_eq!(finite(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn multiranges_are_split_into_ranges() {
        assert_eq!(ranges("{}"), Some(vec![]));
        assert_eq!(
            ranges(" { [1,2) , empty,(\"a)\",b]} "),
            Some(vec!["[1,2)", "empty", "(\"a)\",b]"])
        );
        for bad in ["", "[1,2)", "{[1,2)", "{[1,2) [3,4)}", "{[1,2),}"] {
            assert_eq!(ranges(bad), None, "{bad:?}");
        }
    }
}
