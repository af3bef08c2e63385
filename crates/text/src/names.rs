//! Which column a field name (a CSV header field, a JSON key) fills.
//!
//! Names match exactly. A name that matches a column only when case is
//! ignored is told apart: MySQL's column names ignore case, so `ID` and
//! `id` name one column there, and skipping such a field (or filling the
//! column from it as well as from `id`) would drop or double a value. The
//! sources refuse it, naming the column it resembles.

/// The columns' names, as field names are matched to them.
pub(crate) struct Names {
    exact: Vec<String>,
    /// Each column's name in lowercase.
    folded: Vec<String>,
}

/// What a field name matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    /// The column of exactly this name.
    Column(usize),
    /// No column of this name, but this column when case is ignored.
    Resembles(usize),
    /// No column, whatever the case.
    Nothing,
}

impl Names {
    /// The names of `columns`.
    pub(crate) fn new(columns: &[String]) -> Self {
        Names {
            exact: columns.to_vec(),
            folded: columns.iter().map(|c| c.to_lowercase()).collect(),
        }
    }

    /// The number of columns.
    pub(crate) fn len(&self) -> usize {
        self.exact.len()
    }

    /// Column `index`'s name.
    pub(crate) fn name(&self, index: usize) -> &str {
        &self.exact[index]
    }

    /// What `name` matches. An exact match is searched first, so a table
    /// with columns `id` and `ID` (PostgreSQL's quoted names) fills each
    /// from its own field.
    pub(crate) fn find(&self, name: &str) -> Named {
        if let Some(index) = self.exact.iter().position(|c| c == name) {
            return Named::Column(index);
        }
        // An ASCII name is compared without an allocation.
        let folded = (!name.is_ascii()).then(|| name.to_lowercase());
        let resembles = self.folded.iter().position(|c| match &folded {
            None => c.eq_ignore_ascii_case(name),
            Some(folded) => c == folded,
        });
        resembles.map_or(Named::Nothing, Named::Resembles)
    }

    /// The columns' names for a message: the first few, quoted.
    pub(crate) fn listed(&self) -> String {
        const SHOWN: usize = 8;
        let mut list: Vec<String> = self
            .exact
            .iter()
            .take(SHOWN)
            .map(|c| format!("{c:?}"))
            .collect();
        if self.exact.len() > SHOWN {
            list.push(format!("… {} more", self.exact.len() - SHOWN));
        }
        list.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_first_then_names_that_differ_only_in_case() {
        let names = Names::new(&["id".into(), "Ünit".into(), "ID2".into(), "id2".into()]);
        assert_eq!(names.find("id"), Named::Column(0));
        assert_eq!(names.find("ID"), Named::Resembles(0));
        assert_eq!(names.find("üNIT"), Named::Resembles(1));
        assert_eq!(names.find("ID2"), Named::Column(2));
        assert_eq!(names.find("id2"), Named::Column(3));
        assert_eq!(names.find("Id2"), Named::Resembles(2));
        assert_eq!(names.find("i d"), Named::Nothing);
    }
}
