//! What the records of a file look like, for the error when the configured
//! record element matches nothing: the shallowest element name that
//! repeats among its siblings is the likeliest record (`<product>` under
//! `<catalogue>`, `<row>` under mysqldump's `<table_data>`).
//!
//! Only elements read before the first record are noted, at most
//! [`MAX_NAMES`] names, so the cost ends with the first matching record.

use crate::names::split_qname;

/// Distinct `(depth, name)` pairs remembered.
const MAX_NAMES: usize = 64;
/// Deepest level looked at.
const MAX_DEPTH: usize = 8;

/// Counts of element names by depth.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    /// `(depth, name, occurrences)`, in order of first appearance.
    seen: Vec<(usize, String, u64)>,
}

impl Shape {
    /// An element `name` opened at `depth` (the root is 1).
    #[inline]
    pub(crate) fn note(&mut self, name: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        if let Some((_, _, count)) = self
            .seen
            .iter_mut()
            .find(|(d, n, _)| *d == depth && n == name)
        {
            *count += 1;
        } else if self.seen.len() < MAX_NAMES {
            self.seen.push((depth, name.to_owned(), 1));
        }
    }

    /// The likeliest record element and its depth: the shallowest depth
    /// (below the root) where a name repeats, its most frequent name; else
    /// the first child of the root; else the root.
    pub(crate) fn guess(&self) -> Option<(&str, usize)> {
        let repeated = (2..=MAX_DEPTH).find_map(|depth| {
            self.seen
                .iter()
                .filter(|(d, _, count)| *d == depth && *count > 1)
                .max_by_key(|(_, _, count)| *count)
        });
        let first_child = || self.seen.iter().find(|(d, _, _)| *d == 2);
        let root = || self.seen.iter().find(|(d, _, _)| *d == 1);
        repeated
            .or_else(first_child)
            .or_else(root)
            .map(|(depth, name, _)| (name.as_str(), *depth))
    }

    /// The message for a file where no `row_tag` element was found.
    pub(crate) fn no_records_message(&self, row_tag: &str) -> String {
        match self.guess() {
            Some((name, depth)) => {
                let (_, local) = split_qname(name);
                format!(
                    "no <{row_tag}> element; the file's records look like <{name}> \
                     (at depth {depth}); use --row {local}"
                )
            }
            None => format!("no <{row_tag}> element"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(elements: &[(&str, usize)]) -> Shape {
        let mut shape = Shape::default();
        for (name, depth) in elements {
            shape.note(name, *depth);
        }
        shape
    }

    #[test]
    fn the_shallowest_repeated_name_is_the_guess() {
        let catalogue = shape(&[
            ("catalogue", 1),
            ("product", 2),
            ("name", 3),
            ("product", 2),
            ("name", 3),
        ]);
        assert_eq!(
            catalogue.no_records_message("row"),
            "no <row> element; the file's records look like <product> (at depth 2); \
             use --row product"
        );
        let dump = shape(&[
            ("mysqldump", 1),
            ("database", 2),
            ("table_data", 3),
            ("x:row", 4),
            ("field", 5),
            ("field", 5),
            ("x:row", 4),
        ]);
        assert_eq!(dump.guess(), Some(("x:row", 4)));
        assert_eq!(shape(&[("a", 1), ("b", 2)]).guess(), Some(("b", 2)));
        assert_eq!(shape(&[("a", 1)]).guess(), Some(("a", 1)));
        assert_eq!(
            Shape::default().no_records_message("row"),
            "no <row> element"
        );
    }
}
