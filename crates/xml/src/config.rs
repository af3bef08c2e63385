//! What to read: the record element, the output columns, and the limits.

use crate::binary::Decode;
use crate::path::Path;
use crate::qname::NameTest;

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

/// What to do when one record gives a column a value more than once (the
/// same field twice, or two fields that map to one column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Repeated {
    /// Stop with [`XmlError::RepeatedField`](crate::XmlError::RepeatedField),
    /// naming the record, the field and where it occurs the second time.
    #[default]
    Error,
    /// Keep the first value, skip the later ones.
    First,
    /// Keep the last value.
    Last,
    /// Join the values with [`XmlConfig::join_with`]'s separator.
    Join,
}

impl std::str::FromStr for Repeated {
    type Err = String;

    /// `error`, `first`, `last` or `join`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "error" => Ok(Repeated::Error),
            "first" => Ok(Repeated::First),
            "last" => Ok(Repeated::Last),
            "join" => Ok(Repeated::Join),
            _ => Err(format!(
                "unknown policy {text:?} for repeated fields (error, first, last or join)"
            )),
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
    allow_empty: bool,
    repeated: Repeated,
    /// `(column, policy)` overriding `repeated` for one column.
    repeated_columns: Vec<(String, Repeated)>,
    join_with: String,
    /// `(column, path)` from [`XmlConfig::field`].
    paths: Vec<(String, String)>,
    /// `(column, decoding)` from [`XmlConfig::decode`].
    decodes: Vec<(String, Decode)>,
    limits: Limits,
}

impl XmlConfig {
    /// Records are `row_tag` elements; rows have `columns`, in this order.
    ///
    /// `row_tag` may be written as in LOAD XML's `ROWS IDENTIFIED BY
    /// '<product>'`: surrounding angle brackets are dropped. Names match
    /// by local name in any namespace; `prefix:name` matches the namespace
    /// the document binds `prefix` to, `{uri}name` exactly that namespace
    /// (the same holds for field names).
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
            allow_empty: false,
            repeated: Repeated::Error,
            repeated_columns: Vec::new(),
            join_with: "\n".into(),
            paths: Vec::new(),
            decodes: Vec::new(),
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

    /// Fills `column` with what the field path `path` selects (see the
    /// grammar in `docs/xml-mapping.md`): `child`, `@attr`, `child/@attr`,
    /// `a/b/c`, `../@attr`, predicates `[@attr='v']` and `[not(@attr)]`,
    /// `text()`. The column then takes nothing by its own name.
    pub fn field(mut self, column: impl Into<String>, path: impl Into<String>) -> Self {
        let column = column.into();
        self.paths.retain(|(c, _)| *c != column);
        self.paths.push((column, path.into()));
        self
    }

    /// Decodes `column`'s text (hex or base64) into the bytes it encodes,
    /// for producers that do not mark binary fields with `xsi:type`
    /// (a field with `xsi:type="xs:hexBinary"` or `"xs:base64Binary"` is
    /// decoded without this).
    pub fn decode(mut self, column: impl Into<String>, decode: Decode) -> Self {
        let column = column.into();
        self.decodes.retain(|(c, _)| *c != column);
        self.decodes.push((column, decode));
        self
    }

    /// How each column's text is decoded, in column order.
    pub(crate) fn column_decodes(&self) -> Vec<Option<Decode>> {
        let decode = |column: &String| {
            self.decodes
                .iter()
                .find(|(c, _)| c == column)
                .map(|(_, d)| *d)
        };
        self.columns.iter().map(decode).collect()
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

    /// With `true`, a well-formed document without any record element
    /// (an empty export) gives no rows; by default that is
    /// [`XmlError::NoRecords`](crate::XmlError::NoRecords), since a
    /// wrong record name would otherwise import nothing and succeed.
    pub fn allow_empty(mut self, allow: bool) -> Self {
        self.allow_empty = allow;
        self
    }

    /// Whether a document without records is accepted.
    pub fn allows_empty(&self) -> bool {
        self.allow_empty
    }

    /// What a column given a value twice in one record gets (default
    /// [`Repeated::Error`]).
    pub fn repeated(mut self, policy: Repeated) -> Self {
        self.repeated = policy;
        self
    }

    /// [`XmlConfig::repeated`] for one column only.
    pub fn repeated_for(mut self, column: impl Into<String>, policy: Repeated) -> Self {
        let column = column.into();
        self.repeated_columns.retain(|(c, _)| *c != column);
        self.repeated_columns.push((column, policy));
        self
    }

    /// The separator [`Repeated::Join`] puts between values (default `\n`).
    pub fn join_with(mut self, separator: impl Into<String>) -> Self {
        self.join_with = separator.into();
        self
    }

    /// The separator of [`Repeated::Join`].
    pub fn join_separator(&self) -> &str {
        &self.join_with
    }

    /// The policy for repeated values of each column, in column order.
    pub fn repeated_policies(&self) -> Vec<Repeated> {
        let policy = |column: &String| {
            self.repeated_columns
                .iter()
                .find(|(c, _)| c == column)
                .map_or(self.repeated, |(_, p)| *p)
        };
        self.columns.iter().map(policy).collect()
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
