//! How a configuration resolves: which field feeds which column, the
//! names and paths as the record reader matches them, and the check that
//! it can work at all.

use crate::path::Path;
use crate::qname::NameTest;

use super::XmlConfig;

impl XmlConfig {
    /// The column a field named `field` loads into, if any.
    pub fn column_for<'a>(&'a self, field: &'a str) -> Option<&'a str> {
        let column = self
            .renames
            .iter()
            .find(|(f, _)| f == field)
            .map_or(field, |(_, c)| c.as_str());
        self.columns.iter().any(|c| c == column).then_some(column)
    }

    /// Checks that the configuration can work (names, paths, columns);
    /// returns what is wrong. Opening a source does the same check.
    ///
    /// # Errors
    ///
    /// What is wrong, in one line.
    pub fn validate(&self) -> Result<(), String> {
        if self.row_tag.is_empty() {
            return Err("the record element name is empty".into());
        }
        if self.columns.is_empty() {
            return Err("no columns".into());
        }
        for (i, column) in self.columns.iter().enumerate() {
            if self.columns[..i].contains(column) {
                return Err(format!("column `{column}` is listed twice"));
            }
        }
        NameTest::parse(&self.row_tag).map_err(|m| format!("the record element {m}"))?;
        for (field, _) in &self.renames {
            NameTest::parse(field).map_err(|m| format!("field {m}"))?;
        }
        if let Some((column, _)) = self.decodes.iter().find(|(c, _)| !self.columns.contains(c)) {
            return Err(format!(
                "a decoding names `{column}`, which is not a column"
            ));
        }
        for (column, path) in &self.paths {
            if !self.columns.contains(column) {
                return Err(format!("field path for `{column}`, which is not a column"));
            }
            if self.renames.iter().any(|(_, c)| c == column) {
                return Err(format!(
                    "column `{column}` is given both a field name (--map) and a path (--field)"
                ));
            }
            Path::parse(path).map_err(|e| format!("field path {path:?} for `{column}`: {e}"))?;
        }
        if let Some((column, _)) = self
            .repeated_columns
            .iter()
            .find(|(c, _)| !self.columns.contains(c))
        {
            return Err(format!(
                "a policy for repeated values names `{column}`, which is not a column"
            ));
        }
        match self.renames.iter().find(|(_, c)| !self.columns.contains(c)) {
            Some((f, c)) => Err(format!(
                "field `{f}` is renamed to `{c}`, which is not a column"
            )),
            None => Ok(()),
        }
    }

    /// Every `(field name, column index)` pair the mapping accepts.
    pub(crate) fn field_pairs(&self) -> Vec<(String, usize)> {
        let mut pairs: Vec<(String, usize)> = Vec::new();
        for (index, column) in self.columns.iter().enumerate() {
            // A column keeps its own name as a field name unless a mapping
            // names a field of that local name (`id`, `a:id`, `{uri}id`),
            // which then decides where such fields go.
            let local = |field: &str| NameTest::parse(field).map(|t| t.local);
            let has_path = self.paths.iter().any(|(c, _)| c == column);
            if !has_path
                && !self
                    .renames
                    .iter()
                    .any(|(f, _)| f == column || local(f).is_ok_and(|l| l == *column))
            {
                pairs.push((column.clone(), index));
            }
        }
        for (field, column) in &self.renames {
            if let Some(index) = self.columns.iter().position(|c| c == column) {
                pairs.push((field.clone(), index));
            }
        }
        pairs
    }

    /// [`XmlConfig::field_pairs`] as name tests; a column name that is no
    /// XML name (`my col`) can match no field and is left out.
    pub(crate) fn field_tests(&self) -> Vec<(NameTest, usize)> {
        self.field_pairs()
            .into_iter()
            .filter_map(|(name, index)| Some((NameTest::parse(&name).ok()?, index)))
            .collect()
    }

    /// The field paths with their column indexes (checked by `validate`).
    pub(crate) fn field_paths(&self) -> Vec<(Path, usize)> {
        self.paths
            .iter()
            .filter_map(|(column, path)| {
                let index = self.columns.iter().position(|c| c == column)?;
                Some((Path::parse(path).ok()?, index))
            })
            .collect()
    }

    /// The record element as a name test (checked by `validate`).
    pub(crate) fn row_test(&self) -> NameTest {
        NameTest::parse(&self.row_tag).unwrap_or(NameTest {
            local: self.row_tag.clone(),
            ns: crate::qname::NsTest::Any,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_maps_and_identity_is_the_default() {
        let config = XmlConfig::new("p", ["id", "title"]).rename("name", "title");
        assert_eq!(config.column_for("name"), Some("title"));
        assert_eq!(config.column_for("title"), Some("title"));
        assert_eq!(config.column_for("price"), None);
        let mut pairs = config.field_pairs();
        pairs.sort();
        assert_eq!(
            pairs,
            [("id".into(), 0), ("name".into(), 1), ("title".into(), 1)]
        );
    }

    #[test]
    fn renaming_a_column_name_away_frees_that_name() {
        // `id` in the document goes to `legacy_id`; the `id` column is fed by `key`.
        let config = XmlConfig::new("p", ["id", "legacy_id"])
            .rename("id", "legacy_id")
            .rename("key", "id");
        let mut pairs = config.field_pairs();
        pairs.sort();
        assert_eq!(
            pairs,
            [("id".into(), 1), ("key".into(), 0), ("legacy_id".into(), 1)]
        );
    }

    #[test]
    fn validate_rejects_unusable_configurations() {
        assert!(XmlConfig::new("", ["a"]).validate().is_err());
        assert!(XmlConfig::new("p", Vec::<String>::new())
            .validate()
            .is_err());
        assert_eq!(
            XmlConfig::new("p", ["a", "a"]).validate(),
            Err("column `a` is listed twice".into())
        );
        assert_eq!(
            XmlConfig::new("p", ["a"]).rename("x", "b").validate(),
            Err("field `x` is renamed to `b`, which is not a column".into())
        );
        assert_eq!(XmlConfig::new("p", ["a"]).validate(), Ok(()));
    }
}
