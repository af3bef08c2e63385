//! Why a text source stopped.

/// A CSV or JSON Lines source's error: where, which record, what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// The input cannot be read.
    #[error("{input}: {source}")]
    Io {
        /// The input's name.
        input: String,
        /// The error.
        source: std::io::Error,
    },
    /// The input is not what its format allows.
    #[error("{input}:{line}:{column}: record {record}: {expected}")]
    Syntax {
        /// The input's name.
        input: String,
        /// 1-based line.
        line: u64,
        /// 1-based column (CSV: the field's number; JSON: the character).
        column: u64,
        /// 1-based record number (0: the header).
        record: u64,
        /// What was expected, and what was found.
        expected: String,
    },
    /// The configuration cannot read this format.
    #[error("{input}: {why}")]
    Config {
        /// The input's name.
        input: String,
        /// What cannot be used.
        why: String,
    },
    /// The input holds no record (see
    /// [`TextConfig::allow_empty`](crate::TextConfig::allow_empty)).
    #[error(
        "{input}: no record in the input (a CSV header alone, or no JSON object); \
         if an empty input is expected, --allow-empty (TextConfig::allow_empty) accepts it"
    )]
    NoRecords {
        /// The input's name.
        input: String,
    },
    /// The CSV input is empty (or holds only line ends): not even a header
    /// (see [`TextConfig::allow_empty`](crate::TextConfig::allow_empty)).
    #[error(
        "{input}: the input is empty (no CSV header, no record); \
         if an empty input is expected, --allow-empty (TextConfig::allow_empty) accepts it"
    )]
    Empty {
        /// The input's name.
        input: String,
    },
    /// The header or the fields do not fit the columns.
    #[error("{input}: {why}")]
    Mapping {
        /// The input's name.
        input: String,
        /// What does not fit.
        why: String,
    },
}
