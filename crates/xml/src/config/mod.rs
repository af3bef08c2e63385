//! What to read: the record element, the output columns, and the limits.

use ringpipe_pipeline::Decode;

mod limits;
mod repeated;
mod resolve;

pub use limits::Limits;
pub(crate) use limits::TOKEN_SLACK;
pub use repeated::Repeated;

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

    /// With `true`, a field that maps to no column (or an element inside a
    /// field, whose text the field does not take) stops the source with
    /// [`XmlError::UnknownField`](crate::XmlError::UnknownField); by default
    /// such fields are skipped and counted
    /// ([`ColumnUsage::ignored`](crate::ColumnUsage::ignored)).
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_brackets_around_the_row_tag_are_dropped() {
        assert_eq!(XmlConfig::new("<product>", ["id"]).row_tag(), "product");
        assert_eq!(XmlConfig::new(" row ", ["id"]).row_tag(), "row");
    }
}
