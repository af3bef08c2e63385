//! Field name → column index, tuned for records whose fields come in the
//! same order every time.

use crate::names::split_qname;
use crate::namespaces::Namespaces;
use crate::qname::{NameTest, NsTest};

/// Maps the names of a record's fields to output column indexes.
///
/// Names match by local name, and by namespace where the mapping names
/// one (see [`NameTest`]). A handful of columns is the common case, so the
/// map is a flat list scanned linearly. It first tries the entry that
/// followed the previous hit the last time that entry was hit: in a
/// regular file, fields come in the same order in every record (whatever
/// order the columns are in), so the guess is almost always right.
#[derive(Debug, Clone)]
pub(crate) struct FieldMap {
    entries: Vec<(NameTest, usize)>,
    /// `after[i]`: the entry hit after entry `i` the last time;
    /// `after[entries.len()]` is the guess before any hit.
    after: Vec<usize>,
    /// The entry hit last (`entries.len()` before any).
    last: usize,
}

impl FieldMap {
    /// A map over `(field name, column index)` pairs.
    pub(crate) fn new(pairs: Vec<(NameTest, usize)>) -> Self {
        let len = pairs.len();
        let mut after: Vec<usize> = (1..=len).collect();
        after.push(0);
        FieldMap {
            entries: pairs,
            after,
            last: len,
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
    /// part. Always inlined: the callers pass constants that decide most of
    /// the namespace test, and it runs once per field.
    #[inline(always)]
    pub(crate) fn lookup_split(
        &mut self,
        prefix: &str,
        local: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> Option<usize> {
        let guess = self.after.get(self.last).copied().unwrap_or(0);
        if self.hit(guess, prefix, local, attribute, scope) {
            self.last = guess;
            return Some(self.entries[guess].1);
        }
        self.search(prefix, local, attribute, scope)
    }

    /// The lookup when the guess is wrong: every entry in turn (kept out
    /// of line, so that the common case above stays small where it is
    /// inlined); a hit becomes the next guess after the previous one.
    #[inline(never)]
    fn search(
        &mut self,
        prefix: &str,
        local: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> Option<usize> {
        let found =
            (0..self.entries.len()).find(|&i| self.hit(i, prefix, local, attribute, scope))?;
        if let Some(slot) = self.after.get_mut(self.last) {
            *slot = found;
        }
        self.last = found;
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
            && (matches!(test.ns, NsTest::Any) || test.matches_ns(prefix, attribute, scope))
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
        // The order learnt (a, b, c) gives way to another one.
        for _ in 0..3 {
            for (name, want) in [("c", 1), ("a", 2), ("b", 0)] {
                assert_eq!(map.lookup(name, false, &scope), Some(want), "{name}");
            }
        }
        assert_eq!(map.lookup("xml:c", true, &scope), Some(1), "local name");
        let mut exact = FieldMap::new(vec![(test("{u}a"), 0), (test("a"), 1)]);
        assert_eq!(exact.lookup("a", true, &scope), Some(1));
    }
}
