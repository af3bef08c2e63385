//! Validated, backtick-quoted SQL identifiers.
//!
//! Table and column names come from user configuration and the input's
//! field names, so they are never trusted: any name the server could hold
//! is accepted, but always spliced quoted.

use std::fmt;

use crate::MysqlError;

/// Longest identifier the server accepts, in characters.
const MAX_CHARS: usize = 64;

/// A table or column name that is safe to splice into SQL.
///
/// # Examples
///
/// ```
/// use ringpipe_mysql::Ident;
///
/// let id = Ident::new("odd`name").unwrap();
/// assert_eq!(id.quoted(), "`odd``name`");
/// assert!(Ident::new("").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The name as the server knows it.
    name: String,
    /// The name in backticks, embedded backticks doubled.
    quoted: String,
}

impl Ident {
    /// Validates `name` and prepares its quoted form.
    ///
    /// # Errors
    ///
    /// [`MysqlError::Identifier`] when the name is empty, longer than 64
    /// characters or contains NUL (the server rejects these).
    pub fn new(name: &str) -> Result<Self, MysqlError> {
        let reason = if name.is_empty() {
            Some("empty")
        } else if name.chars().count() > MAX_CHARS {
            Some("longer than 64 characters")
        } else if name.contains('\0') {
            Some("contains NUL")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(MysqlError::Identifier {
                name: name.to_owned(),
                reason,
            });
        }
        let quoted = format!("`{}`", name.replace('`', "``"));
        Ok(Ident {
            name: name.to_owned(),
            quoted,
        })
    }

    /// The unquoted name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name in backticks, ready to splice into SQL.
    pub fn quoted(&self) -> &str {
        &self.quoted
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.quoted)
    }
}

/// Joins quoted identifiers with commas: `` `a`,`b` ``.
pub(crate) fn join(idents: &[Ident]) -> String {
    idents
        .iter()
        .map(Ident::quoted)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_backticked() {
        assert_eq!(Ident::new("price").unwrap().quoted(), "`price`");
    }

    #[test]
    fn backticks_are_doubled() {
        let id = Ident::new("a`; DROP TABLE t; --").unwrap();
        assert_eq!(id.quoted(), "`a``; DROP TABLE t; --`");
        assert_eq!(id.name(), "a`; DROP TABLE t; --");
    }

    #[test]
    fn limits_are_counted_in_characters() {
        assert!(Ident::new(&"é".repeat(64)).is_ok());
        assert!(Ident::new(&"x".repeat(65)).is_err());
    }

    #[test]
    fn empty_and_nul_are_rejected() {
        assert!(Ident::new("").is_err());
        assert!(Ident::new("a\0b").is_err());
    }

    #[test]
    fn join_separates_with_commas() {
        let ids = [Ident::new("a").unwrap(), Ident::new("b").unwrap()];
        assert_eq!(join(&ids), "`a`,`b`");
    }
}
