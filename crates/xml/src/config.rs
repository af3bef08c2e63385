//! What to read: the record element, the output columns, and the limits.

/// Slack over [`Limits::max_value_bytes`] for the markup around a value
/// (CDATA brackets, a tag's name) before a token is refused.
pub(crate) const TOKEN_SLACK: usize = 64 * 1024;

/// Bounds that keep a hostile or broken input from exhausting memory.
///
/// Each is checked while streaming; crossing one stops the source with
/// [`XmlError::Limit`](crate::XmlError::Limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest element nesting allowed (the root element is depth 1).
    pub max_depth: usize,
    /// Most attributes allowed on any one element.
    pub max_attributes: usize,
    /// Largest field value, in UTF-8 bytes. Also bounds any single piece of
    /// text or markup (a tag, comment, DOCTYPE) so that a huge text node
    /// outside a field cannot fill memory either.
    pub max_value_bytes: usize,
}

impl Default for Limits {
    /// 256 levels, 256 attributes, 64 MiB per value.
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_attributes: 256,
            max_value_bytes: 64 << 20,
        }
    }
}

/// How to turn an XML document into rows.
///
/// # Examples
///
/// ```
/// use ringpipe_xml::XmlConfig;
///
/// let config = XmlConfig::new("product", ["id", "title"])
///     .rename("name", "title")
///     .strict(true)
///     .max_depth(64);
/// assert_eq!(config.row_tag(), "product");
/// assert_eq!(config.column_for("name"), Some("title"));
/// assert_eq!(config.column_for("id"), Some("id"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlConfig {
    row_tag: String,
    columns: Vec<String>,
    /// `(field, column)` pairs; few enough that a linear scan beats hashing.
    renames: Vec<(String, String)>,
    strict: bool,
    keep_line_ends: bool,
    limits: Limits,
}

impl XmlConfig {
    /// Records are `row_tag` elements; rows have `columns`, in this order.
    ///
    /// `row_tag` may be written as in LOAD XML's `ROWS IDENTIFIED BY
    /// '<product>'`: surrounding angle brackets are dropped. Names are
    /// matched exactly as written in the document, prefix included.
    pub fn new<I, S>(row_tag: impl Into<String>, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let row_tag: String = row_tag.into();
        let bare = row_tag.trim().trim_start_matches('<').trim_end_matches('>');
        XmlConfig {
            row_tag: bare.trim().to_owned(),
            columns: columns.into_iter().map(Into::into).collect(),
            renames: Vec::new(),
            strict: false,
            keep_line_ends: false,
            limits: Limits::default(),
        }
    }

    /// Loads field `field` (element, attribute or `<field name=…>`) into
    /// column `column`. Fields not renamed map to the column of the same name.
    pub fn rename(mut self, field: impl Into<String>, column: impl Into<String>) -> Self {
        let field = field.into();
        self.renames.retain(|(f, _)| *f != field);
        self.renames.push((field, column.into()));
        self
    }

    /// With `true`, a field that maps to no column stops the source with
    /// [`XmlError::UnknownField`](crate::XmlError::UnknownField); by default
    /// such fields are skipped.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Keeps carriage returns in text content as written, instead of XML's
    /// line-end normalisation (`\r\n` and a lone `\r` become `\n`).
    ///
    /// `mysqldump --xml` / `mariadb-dump --xml` write a stored CR as a raw
    /// byte, not as `&#13;`; a conforming parser turns it into LF, so a dump
    /// of values holding CRs round-trips exactly only with this on. The
    /// source turns it on by itself when the root element is `mysqldump`.
    pub fn keep_line_ends(mut self, keep: bool) -> Self {
        self.keep_line_ends = keep;
        self
    }

    /// Whether carriage returns in text are kept ([`XmlConfig::keep_line_ends`]).
    pub fn keeps_line_ends(&self) -> bool {
        self.keep_line_ends
    }

    /// Sets [`Limits::max_depth`].
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.limits.max_depth = depth;
        self
    }

    /// Sets [`Limits::max_attributes`].
    pub fn max_attributes(mut self, attributes: usize) -> Self {
        self.limits.max_attributes = attributes;
        self
    }

    /// Sets [`Limits::max_value_bytes`].
    pub fn max_value_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_value_bytes = bytes;
        self
    }

    /// Replaces all limits at once.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The record element's name.
    pub fn row_tag(&self) -> &str {
        &self.row_tag
    }

    /// The output columns, in row order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Whether unknown fields are errors.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The column a field named `field` loads into, if any.
    pub fn column_for<'a>(&'a self, field: &'a str) -> Option<&'a str> {
        let column = self
            .renames
            .iter()
            .find(|(f, _)| f == field)
            .map_or(field, |(_, c)| c.as_str());
        self.columns.iter().any(|c| c == column).then_some(column)
    }

    /// Checks that the configuration can work; returns what is wrong.
    pub(crate) fn validate(&self) -> Result<(), String> {
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
            // A column keeps its own name as a field name unless that name is
            // itself renamed to some other column.
            if !self.renames.iter().any(|(f, _)| f == column) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_brackets_around_the_row_tag_are_dropped() {
        assert_eq!(XmlConfig::new("<product>", ["id"]).row_tag(), "product");
        assert_eq!(XmlConfig::new(" row ", ["id"]).row_tag(), "row");
    }

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
