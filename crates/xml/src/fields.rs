//! Field name → column index, tuned for records whose fields come in the
//! same order every time.

use crate::names::split_qname;
use crate::namespaces::Namespaces;
use crate::qname::{NameTest, NsTest};
use crate::same::same;

/// Maps the names of a record's fields to output column indexes.
///
/// Names match by local name, and by namespace where the mapping names
/// one (see [`NameTest`]). When several entries match a field, the most
/// specific wins: one that pins the namespace (`p:id`, `{uri}id`) before
/// one that does not (`id`), and among those alike the first given. So
/// `--map id=x --map a:id=y` sends `<a:id>` to `y` and every other `id`
/// to `x`, whatever the order of the flags or of the fields in the file.
///
/// A handful of columns is the common case, so the map is a flat list
/// scanned linearly, pinned entries first. It first tries the entry that
/// followed the previous hit the last time that entry was hit: in a
/// regular file, fields come in the same order in every record (whatever
/// order the columns are in), so the guess is almost always right. An
/// entry that shares its local name with another is never guessed, so
/// the guess cannot bypass the order above.
#[derive(Debug, Clone)]
pub(crate) struct FieldMap {
    entries: Vec<(NameTest, usize)>,
    /// `after[i]`: the entry hit after entry `i` the last time;
    /// `after[entries.len()]` is the guess before any hit. [`NO_GUESS`]
    /// where that entry must not be guessed.
    after: Vec<usize>,
    /// Whether entry `i` may be guessed (see above).
    guessable: Vec<bool>,
    /// The entry hit last (`entries.len()` before any).
    last: usize,
}

/// An `after` slot that makes the lookup search.
const NO_GUESS: usize = usize::MAX;

impl FieldMap {
    /// A map over `(field name, column index)` pairs, in the order given.
    pub(crate) fn new(mut pairs: Vec<(NameTest, usize)>) -> Self {
        let pinned = |test: &NameTest| !matches!(test.ns, NsTest::Any);
        // Stable: pinned entries first, each group in the order given.
        pairs.sort_by_key(|(test, _)| !pinned(test));
        // Only an entry alone with its local name is guessed: where several
        // share one, the search's order must decide.
        let guessable: Vec<bool> = pairs
            .iter()
            .map(|(test, _)| {
                pairs
                    .iter()
                    .filter(|(other, _)| other.local == test.local)
                    .count()
                    == 1
            })
            .collect();
        let len = pairs.len();
        let guess = |i: usize| match guessable.get(i) {
            Some(true) => i,
            _ => NO_GUESS,
        };
        let mut after: Vec<usize> = (1..=len).map(guess).collect();
        after.push(guess(0));
        FieldMap {
            entries: pairs,
            after,
            guessable,
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
        let guess = self.after.get(self.last).copied().unwrap_or(NO_GUESS);
        if self.hit(guess, prefix, local, attribute, scope) {
            self.last = guess;
            return Some(self.entries[guess].1);
        }
        self.search(guess, prefix, local, attribute, scope)
    }

    /// The lookup when the guess is wrong. First the entry that follows
    /// the guess (the guessed field is optional and absent here: the
    /// learnt order stays, so the records that have it still hit at
    /// once); then every entry in turn (kept out of line, so that the
    /// common case above stays small where it is inlined), and that hit
    /// becomes the next guess after the previous one.
    #[inline(never)]
    fn search(
        &mut self,
        guess: usize,
        prefix: &str,
        local: &str,
        attribute: bool,
        scope: &Namespaces,
    ) -> Option<usize> {
        let skip = self.after.get(guess).copied().unwrap_or(NO_GUESS);
        if self.hit(skip, prefix, local, attribute, scope) {
            self.last = skip;
            return Some(self.entries[skip].1);
        }
        let found =
            (0..self.entries.len()).find(|&i| self.hit(i, prefix, local, attribute, scope))?;
        Some(self.learn(found))
    }

    /// Records that entry `found`, which a search found, followed the
    /// previous hit (the next guess after it, if `found` may be guessed),
    /// and returns its column.
    fn learn(&mut self, found: usize) -> usize {
        if let Some(slot) = self.after.get_mut(self.last) {
            *slot = if self.guessable[found] {
                found
            } else {
                NO_GUESS
            };
        }
        self.last = found;
        self.entries[found].1
    }

    /// The column for a field whose name is written as a value, not as a
    /// qualified name (the mysqldump form's `<field name="…">`): an entry
    /// matches the name it is spelled as (`id` the name `id`, `p:id` the
    /// name `p:id`, `{}id` the name `id`), so that a colon is part of the
    /// name. The guess is tried first, as in [`FieldMap::lookup_split`].
    pub(crate) fn lookup_spelled(&mut self, name: &str) -> Option<usize> {
        let spelled = |index: usize| {
            self.entries
                .get(index)
                .is_some_and(|(test, _)| test.is_spelled(name))
        };
        let guess = self.after.get(self.last).copied().unwrap_or(NO_GUESS);
        if spelled(guess) {
            self.last = guess;
            return Some(self.entries[guess].1);
        }
        let found = (0..self.entries.len()).find(|&i| spelled(i))?;
        Some(self.learn(found))
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
        same(test.local.as_bytes(), local.as_bytes())
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
        // An optional field (b) absent from some records: both orders hit.
        for _ in 0..3 {
            for (name, want) in [("a", 2), ("c", 1), ("a", 2), ("b", 0), ("c", 1)] {
                assert_eq!(map.lookup(name, false, &scope), Some(want), "{name}");
            }
        }
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

    #[test]
    fn a_pinned_namespace_wins_over_a_plain_name_in_any_order() {
        let mut scope = Namespaces::default();
        let tag = crate::tag::Tag::parse("r xmlns:a='urn:a' xmlns:b='urn:b'").unwrap();
        scope
            .open(&tag, 1, 9, &crate::text::DeclaredEntities::default())
            .unwrap();
        for pairs in [
            vec![(test("id"), 0), (test("a:id"), 1), (test("{urn:b}id"), 2)],
            vec![(test("{urn:b}id"), 2), (test("a:id"), 1), (test("id"), 0)],
        ] {
            let mut map = FieldMap::new(pairs);
            // Twice, so that the learnt guesses are exercised too.
            for _ in 0..2 {
                for (name, want) in [("id", 0), ("a:id", 1), ("b:id", 2), ("id", 0), ("c", 9)] {
                    let got = map.lookup(name, false, &scope).unwrap_or(9);
                    assert_eq!(got, want, "{name}");
                }
            }
        }
        // Two pins of one namespace: the first given, also on a repeat.
        let mut map = FieldMap::new(vec![(test("a:id"), 1), (test("{urn:a}id"), 2)]);
        for _ in 0..3 {
            assert_eq!(map.lookup("a:id", false, &scope), Some(1));
        }
    }
}
