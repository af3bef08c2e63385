//! The intervals with a field list inside a column's values, taken out for
//! the server to read ([`crate::interval_fields`]): whichever of an array's
//! elements, a range's bounds or a composite type's fields are such
//! intervals, at any depth, split as the other checks split them.

use super::array::array_elements;
use super::range::finite_bounds;
use super::record::row_fields;
use super::Check;
use crate::interval_fields::IntervalFields;

impl Check {
    /// Whether values of this check's type hold intervals with a field
    /// list (the column itself, or anything inside it).
    pub(crate) fn has_field_lists(&self) -> bool {
        match self {
            Check::Interval { fields, .. } => fields.is_some(),
            Check::Elements(inner) | Check::Bounds { inner, .. } => inner.has_field_lists(),
            Check::Fields(checks) => checks.iter().flatten().any(Check::has_field_lists),
            _ => false,
        }
    }

    /// Adds to `out` each interval with a field list that `text` holds,
    /// unquoted and unescaped, with its field list. Text that does not
    /// split as its type's literal is the server's to refuse, and adds
    /// nothing.
    pub(crate) fn field_list_values(&self, text: &str, out: &mut Vec<(String, IntervalFields)>) {
        match self {
            Check::Interval {
                fields: Some(fields),
                ..
            } => out.push((text.to_owned(), *fields)),
            Check::Elements(inner) if inner.has_field_lists() => {
                for element in array_elements(text).into_iter().flatten().flatten() {
                    inner.field_list_values(&element, out);
                }
            }
            Check::Bounds { inner, multi } if inner.has_field_lists() => {
                for bound in finite_bounds(text, *multi).into_iter().flatten() {
                    inner.field_list_values(&bound, out);
                }
            }
            Check::Fields(checks) if self.has_field_lists() => {
                let fields = row_fields(text, checks.len()).into_iter().flatten();
                for (field, check) in fields.zip(checks) {
                    if let (Some(field), Some(check)) = (field, check) {
                        check.field_list_values(&field, out);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(check: &Check, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        check.field_list_values(text, &mut out);
        out.into_iter().map(|(value, _)| value).collect()
    }

    #[test]
    fn intervals_with_a_field_list_are_found_at_any_depth() {
        // interval HOUR, and a plain interval.
        let hour = Check::for_type("interval", 0x0400_ffff).unwrap();
        let plain = Check::for_type("interval", -1).unwrap();
        assert!(hour.has_field_lists() && !plain.has_field_lists());
        assert_eq!(values(&hour, "1 day 02:30"), ["1 day 02:30"]);
        assert!(values(&plain, "1 day 02:30").is_empty());

        let hours = Check::Elements(Box::new(hour.clone()));
        assert_eq!(
            values(&hours, r#"{"1 day 02:30",NULL,5}"#),
            ["1 day 02:30", "5"]
        );
        // (a int, d interval HOUR, e interval)
        let row = Check::Fields(vec![None, Some(hour.clone()), Some(plain.clone())]);
        assert!(row.has_field_lists());
        assert_eq!(values(&row, r#"(1,"1 day 02:30",2 days)"#), ["1 day 02:30"]);
        assert!(values(&row, "(1,,)").is_empty());
        let rows = Check::Elements(Box::new(row));
        assert_eq!(
            values(&rows, r#"{"(1,\"1 day 02:30\",)","(2,03:00,)"}"#),
            ["1 day 02:30", "03:00"]
        );
        let range = Check::Bounds {
            inner: Box::new(hour),
            multi: true,
        };
        assert_eq!(
            values(&range, "{[1 day 02:30,\"2 days\"), (,5]}"),
            ["1 day 02:30", "2 days", "5"]
        );
        // Not a literal of its type: the server's to refuse.
        assert!(values(&rows, "(1,2)").is_empty());
        let no_lists = Check::Fields(vec![Some(plain), None]);
        assert!(!no_lists.has_field_lists());
    }
}
