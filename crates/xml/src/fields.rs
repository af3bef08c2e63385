//! Field name → column index, tuned for records whose fields come in the
//! same order every time.

use crate::names::split_qname;
use crate::namespaces::Namespaces;
use crate::qname::{NameTest, NsTest};

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
        self.lookup_split(prefix, local, attribute, scope)
    }

    /// [`FieldMap::lookup`] for a name already split into prefix and local
    /// part.
    #[inline]
    pub(crate) fn lookup_split(
        &mut self,
        prefix: &str,
        local: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> Option<usize> {
        if self.hit(self.next, prefix, local, attribute, scope) {
            let column = self.entries[self.next].1;
            self.next += 1;
            return Some(column);
        }
        let found =
            (0..self.entries.len()).find(|&i| self.hit(i, prefix, local, attribute, scope))?;
        self.next = found + 1;
        Some(self.entries[found].1)
    }

    /// Whether entry `index` (if any) matches the name.
    #[inline(always)]
    fn hit(
        &self,
        index: usize,
        prefix: &str,
        local: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> bool {
        let Some((test, _)) = self.entries.get(index) else {
            return false;
        };
        test.local.as_bytes() == local.as_bytes()
            && (test.ns == NsTest::Any || test.matches_ns(prefix, attribute, scope))
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
