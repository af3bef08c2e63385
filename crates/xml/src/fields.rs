//! Field name → column index, tuned for records whose fields come in the
//! same order every time.

/// Maps the names of a record's fields to output column indexes.
///
/// A handful of columns is the common case, so the map is a flat list
/// scanned linearly; it first tries the entry after the previous hit,
/// which in a regular file is almost always the next field.
#[derive(Debug, Clone)]
pub(crate) struct FieldMap {
    entries: Vec<(Box<str>, usize)>,
    /// Entry index to try first on the next lookup.
    next: usize,
}

impl FieldMap {
    /// A map over `(field name, column index)` pairs.
    pub(crate) fn new(pairs: Vec<(String, usize)>) -> Self {
        FieldMap {
            entries: pairs
                .into_iter()
                .map(|(name, index)| (name.into_boxed_str(), index))
                .collect(),
            next: 0,
        }
    }

    /// The column for `name`, if it is a known field.
    pub(crate) fn lookup(&mut self, name: &str) -> Option<usize> {
        if let Some((field, column)) = self.entries.get(self.next) {
            if **field == *name {
                self.next += 1;
                return Some(*column);
            }
        }
        let found = self
            .entries
            .iter()
            .position(|(field, _)| **field == *name)?;
        self.next = found + 1;
        Some(self.entries[found].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_fields_in_any_order() {
        let mut map = FieldMap::new(vec![("a".into(), 2), ("b".into(), 0), ("c".into(), 1)]);
        assert_eq!(map.lookup("a"), Some(2));
        assert_eq!(map.lookup("b"), Some(0));
        assert_eq!(map.lookup("c"), Some(1));
        assert_eq!(map.lookup("b"), Some(0));
        assert_eq!(map.lookup("zz"), None);
        assert_eq!(map.lookup("a"), Some(2));
        assert_eq!(map.lookup("c"), Some(1));
    }
}
