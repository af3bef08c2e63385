//! The error an [`XmlSource`](crate::XmlSource) stops with, and where it happened.

use std::fmt;

/// Where in the input an error was found.
///
/// `Display` renders `input:line:column: record N` (parts that are unknown
/// are left out), the prefix of every [`XmlError`] message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorPosition {
    /// The input's name: its path, `-` for stdin, or the name given to
    /// [`XmlSource::from_reader`](crate::XmlSource::from_reader).
    pub input: String,
    /// 1-based line, 0 when the error is not tied to a place in the text
    /// (opening the file failed, for example).
    pub line: u64,
    /// 1-based column in characters, 0 when `line` is 0.
    pub column: u64,
    /// Byte offset in the decompressed input (in UTF-8 bytes when the input
    /// was transcoded from another encoding).
    pub byte_offset: u64,
    /// Records emitted before the error.
    pub records_emitted: u64,
    /// Whether the error lies inside a record, which is then record number
    /// `records_emitted + 1`.
    pub inside_record: bool,
}

impl ErrorPosition {
    /// A position that names only the input (used before parsing starts).
    pub fn input_only(input: impl Into<String>) -> Self {
        ErrorPosition {
            input: input.into(),
            ..ErrorPosition::default()
        }
    }
}

impl fmt::Display for ErrorPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.input)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if self.inside_record {
            write!(f, ": record {}", self.records_emitted + 1)?;
        } else if self.records_emitted > 0 {
            write!(f, ": after record {}", self.records_emitted)?;
        }
        Ok(())
    }
}

/// Which configured limit an input exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitKind {
    /// Elements nested deeper than [`Limits::max_depth`](crate::Limits::max_depth).
    Depth,
    /// More attributes on one element than [`Limits::max_attributes`](crate::Limits::max_attributes).
    Attributes,
    /// A field value, or a single piece of markup or text, longer than
    /// [`Limits::max_value_bytes`](crate::Limits::max_value_bytes).
    ValueBytes,
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitKind::Depth => "element nesting depth",
            LimitKind::Attributes => "attribute count of one element",
            LimitKind::ValueBytes => "size in bytes of one value",
        })
    }
}

/// Why an [`XmlSource`](crate::XmlSource) stopped.
///
/// Every variant carries an [`ErrorPosition`]; `Display` reads like
/// `products.xml:120:7: record 42: expected </name>, found </price>`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum XmlError {
    /// The configuration cannot work (for example duplicate column names).
    #[error("{position}: invalid configuration: {message}")]
    Config {
        /// Names the input the configuration was for.
        position: ErrorPosition,
        /// What is wrong.
        message: String,
    },
    /// Reading the input failed (including a corrupt gzip stream).
    #[error("{position}: I/O error: {source}")]
    Io {
        /// Where reading stopped.
        position: ErrorPosition,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The input is not well-formed XML.
    #[error("{position}: {message}")]
    Syntax {
        /// Where the offending construct starts.
        position: ErrorPosition,
        /// What was expected and what was found.
        message: String,
    },
    /// The bytes are not valid in the input's encoding, or the encoding is
    /// not supported.
    #[error("{position}: {message}")]
    Encoding {
        /// Where the first bad byte is.
        position: ErrorPosition,
        /// What is wrong.
        message: String,
    },
    /// An entity or character reference that is refused or undefined.
    #[error("{position}: {message}")]
    Entity {
        /// Where the reference starts.
        position: ErrorPosition,
        /// The reference as written, e.g. `&foo;`.
        reference: String,
        /// Why it is refused.
        message: String,
    },
    /// A configured limit was exceeded.
    #[error("{position}: {kind} exceeds the limit of {limit}")]
    Limit {
        /// Where the limit was crossed.
        position: ErrorPosition,
        /// Which limit.
        kind: LimitKind,
        /// The configured maximum.
        limit: u64,
    },
    /// A record gives a column a second value and the column's
    /// [`Repeated`](crate::Repeated) policy is `Error`.
    #[error(
        "{position}: field `{field}` gives column `{column}` a second value in this record \
         (use --repeated first|last|join, or map the fields apart)"
    )]
    RepeatedField {
        /// Where the second occurrence starts.
        position: ErrorPosition,
        /// The field's name as written.
        field: String,
        /// The column.
        column: String,
    },
    /// A binary field (`xsi:type="xs:hexBinary"`, `--decode`) whose text
    /// does not decode.
    #[error("{position}: field `{field}`: bad value: {message}")]
    BadValue {
        /// Where the field ends.
        position: ErrorPosition,
        /// The field's name.
        field: String,
        /// The column, the bad digit and where it is in the value.
        message: String,
    },
    /// The document is well-formed but has no record element (and
    /// [`XmlConfig::allow_empty`](crate::XmlConfig::allow_empty) is off).
    #[error("{position}: {message}")]
    NoRecords {
        /// The end of the input.
        position: ErrorPosition,
        /// Names the record element looked for and what the file's
        /// records look like.
        message: String,
    },
    /// A field that maps to no column, with [`XmlConfig::strict`](crate::XmlConfig::strict) on.
    #[error("{position}: unknown field `{field}` (no column takes it)")]
    UnknownField {
        /// Where the field starts.
        position: ErrorPosition,
        /// The field's name as written (`field/child` for an element
        /// inside a field, whose text the field does not take).
        field: String,
    },
}

impl XmlError {
    /// Where the error happened.
    pub fn position(&self) -> &ErrorPosition {
        match self {
            XmlError::Config { position, .. }
            | XmlError::Io { position, .. }
            | XmlError::Syntax { position, .. }
            | XmlError::Encoding { position, .. }
            | XmlError::Entity { position, .. }
            | XmlError::Limit { position, .. }
            | XmlError::NoRecords { position, .. }
            | XmlError::RepeatedField { position, .. }
            | XmlError::BadValue { position, .. }
            | XmlError::UnknownField { position, .. } => position,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64, records_emitted: u64, inside_record: bool) -> ErrorPosition {
        ErrorPosition {
            input: "products.xml".into(),
            line,
            column: 7,
            byte_offset: 0,
            records_emitted,
            inside_record,
        }
    }

    #[test]
    fn display_names_file_line_column_and_record() {
        let err = XmlError::Syntax {
            position: at(120, 41, true),
            message: "expected </name>, found </price>".into(),
        };
        assert_eq!(
            err.to_string(),
            "products.xml:120:7: record 42: expected </name>, found </price>"
        );
    }

    #[test]
    fn display_between_records_and_before_any_text() {
        assert_eq!(
            at(3, 2, false).to_string(),
            "products.xml:3:7: after record 2"
        );
        assert_eq!(ErrorPosition::input_only("-").to_string(), "-");
    }

    #[test]
    fn limit_message_names_the_limit() {
        let err = XmlError::Limit {
            position: at(1, 0, false),
            kind: LimitKind::Depth,
            limit: 256,
        };
        assert_eq!(
            err.to_string(),
            "products.xml:1:7: element nesting depth exceeds the limit of 256"
        );
    }
}
