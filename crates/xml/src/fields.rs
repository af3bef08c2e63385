//! Field name → column index, tuned for records whose fields come in the
//! same order every time.

use crate::names::split_qname;
use crate::namespaces::Namespaces;
use crate::qname::NameTest;

/// Maps the names of a record's fields to output column indexes.
///
/// Names match by local name, and by namespace where the mapping names
/// one (see [`NameTest`]). A handful of columns is the common case, so the
/// map is a flat list scanned linearly; it first tries the entry after the
/// previous hit, which in a regular file is almost always the next field.
#[derive(Debug, Clone)]
pub(crate) struct FieldMap {
    entries: Vec<(NameTest, usize)>,
    /// Entry index to try first on the next lookup.
    next: usize,
}

impl FieldMap {
    /// A map over `(field name, column index)` pairs.
    pub(crate) fn new(pairs: Vec<(NameTest, usize)>) -> Self {
        FieldMap {
            entries: pairs,
            next: 0,
        }
    }

    /// The column for the field `qname` (an attribute's name when
    /// `attribute`), if it is a known field.
    #[inline]
    pub(crate) fn lookup(
        &mut self,
        qname: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> Option<usize> {
        let (prefix, local) = split_qname(qname);
        let hit = |(test, _): &(NameTest, usize)| {
            test.local == local && test.matches_ns(prefix, attribute, scope)
        };
        if let Some(entry) = self.entries.get(self.next) {
            if hit(entry) {
                self.next += 1;
                return Some(entry.1);
            }
        }
        let found = self.entries.iter().position(hit)?;
        self.next = found + 1;
        Some(self.entries[found].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(name: &str) -> NameTest {
        NameTest::parse(name).unwrap()
    }

    #[test]
    fn finds_fields_in_any_order_and_namespace() {
        let scope = Namespaces::default();
        let mut map = FieldMap::new(vec![(test("a"), 2), (test("b"), 0), (test("c"), 1)]);
        for (name, want) in [("a", 2), ("b", 0), ("c", 1), ("b", 0), ("a", 2), ("c", 1)] {
            assert_eq!(map.lookup(name, false, &scope), Some(want), "{name}");
        }
        assert_eq!(map.lookup("zz", false, &scope), None);
        assert_eq!(map.lookup("xml:c", true, &scope), Some(1), "local name");
        let mut exact = FieldMap::new(vec![(test("{u}a"), 0), (test("a"), 1)]);
        assert_eq!(exact.lookup("a", true, &scope), Some(1));
    }
}
