//! Rows of a composite type: each field by its attribute's check (a
//! `numeric(4,1)` attribute rounds `1.25` as a `numeric(4,1)` column does).
//!
//! The text is split as `record_in` splits it: `(`, one item per
//! attribute separated by commas (an item left out is NULL), `)`.

use super::item::{is_space, item};
use super::Check;

/// Each field of a row literal by its attribute's check (`None`: none).
pub(super) fn fields(text: &str, checks: &[Option<Check>]) -> Result<(), String> {
    let Some(values) = row_fields(text, checks.len()) else {
        return Ok(());
    };
    values
        .iter()
        .zip(checks)
        .filter_map(|(value, check)| Some((value.as_deref()?, check.as_ref()?)))
        .try_for_each(|(value, check)| check.check(value))
        .map_err(|why| format!("in the row {text:?}: {why}"))
}

/// The `count` fields of a row literal, unquoted and unescaped, `None`
/// for NULL; `None` for text that is not one.
pub(super) fn row_fields(text: &str, count: usize) -> Option<Vec<Option<String>>> {
    let rest = text.trim_start_matches(is_space);
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'(') {
        return None;
    }
    let mut at = 1;
    let mut found = Vec::with_capacity(count);
    for index in 0..count {
        if index > 0 {
            (bytes.get(at) == Some(&b',')).then_some(())?;
            at += 1;
        }
        let value = item(bytes, &mut at, b",)")?;
        found.push(match value {
            Some(value) => Some(String::from_utf8(value).ok()?),
            None => None,
        });
    }
    (bytes.get(at) == Some(&b')')).then_some(())?;
    rest[at + 1..]
        .trim_matches(is_space)
        .is_empty()
        .then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(values: &[Option<&str>]) -> Option<Vec<Option<String>>> {
        Some(values.iter().map(|v| v.map(str::to_owned)).collect())
    }

    #[test]
    fn fields_are_split_as_the_server_splits_them() {
        assert_eq!(
            row_fields(" ( 1.2 ,\"2024-01-01 10:00\",) ", 3),
            some(&[Some(" 1.2 "), Some("2024-01-01 10:00"), None])
        );
        assert_eq!(
            row_fields(r#"(,"a""b\\c","")"#, 3),
            some(&[None, Some("a\"b\\c"), Some("")])
        );
        assert_eq!(row_fields("()", 0), some(&[]));
        assert_eq!(row_fields(r"(a\,b)", 1), some(&[Some("a,b")]));
        for bad in ["", "1,2", "(1,2", "(1,2,3)", "(1)", "(1,2) x", "(\"1,2)"] {
            assert_eq!(row_fields(bad, 2), None, "{bad:?}");
        }
    }
}
