//! What went wrong, and how far into the current token.
//!
//! The parts of the source (lexer, tags, document, record) find a [`Fault`]
//! and word its message, without knowing where the token lies in the input;
//! the source adds the position (see `XmlSource::fail`).

use crate::error::LimitKind;
use crate::text::RefError;

/// What went wrong, before its position is known.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Not well-formed.
    Syntax(String),
    /// Bad bytes for the encoding.
    Encoding(String),
    /// Bytes that are not UTF-8 in input read as UTF-8.
    BadUtf8,
    /// A character XML forbids (a C0 control, U+FFFE, U+FFFF).
    Forbidden(String),
    /// A refused or undefined reference, as written (`&name;`).
    Entity { reference: String, error: RefError },
    /// A configured limit crossed, with the limit's value.
    Limit(LimitKind, u64),
    /// A field with no column (strict mode).
    UnknownField(String),
    /// A value that does not decode (`--decode`, `xsi:type`).
    BadValue { field: String, message: String },
    /// No record element in the whole document.
    NoRecords(String),
    /// A second value for a column whose policy is `error`.
    Repeated { field: String, column: String },
    /// Reading the input failed.
    Io(std::io::Error),
}

impl Fault {
    /// A syntax fault.
    pub(crate) fn syntax(message: impl Into<String>) -> Self {
        Fault::Syntax(message.into())
    }

    /// A fault for the reference `&name;`.
    pub(crate) fn entity(name: &str, error: RefError) -> Self {
        Fault::Entity {
            reference: format!("&{name};"),
            error,
        }
    }
}

/// A fault and how many bytes into the current event it lies.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) fault: Fault,
    /// Bytes from the token's first byte (its `<`, or the first byte of a
    /// text run) to the fault.
    pub(crate) offset: usize,
}

impl From<Fault> for Located {
    fn from(fault: Fault) -> Self {
        Located { fault, offset: 0 }
    }
}

/// The fault of a bad reference at byte `offset` of the raw value `raw`,
/// which starts at `at` in the token.
pub(crate) fn ref_fault(raw: &str, offset: usize, at: usize, error: RefError) -> Located {
    let after = &raw[offset + 1..];
    let name = after.find(';').map_or(after, |end| &after[..end]);
    let fault = match error {
        RefError::Unterminated => Fault::syntax(error.to_string()),
        _ => Fault::entity(name, error),
    };
    Located {
        fault,
        offset: at + offset,
    }
}
