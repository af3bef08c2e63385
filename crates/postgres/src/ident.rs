//! SQL identifiers, validated and quoted: never spliced raw.

use crate::PgError;

/// PostgreSQL truncates identifiers beyond this many bytes (NAMEDATALEN - 1).
const MAX_LEN: usize = 63;

/// `name` as a quoted identifier (`"a""b"`), after checking it is one
/// PostgreSQL keeps as given: non-empty, at most 63 bytes, no NUL.
///
/// # Errors
///
/// [`PgError::Config`] when `name` cannot be an identifier.
pub fn quote(name: &str) -> Result<String, PgError> {
    if name.is_empty() || name.len() > MAX_LEN || name.contains('\0') {
        return Err(PgError::Config(format!(
            "{name:?} is not a PostgreSQL identifier (1 to {MAX_LEN} bytes, no NUL)"
        )));
    }
    Ok(format!("\"{}\"", name.replace('"', "\"\"")))
}

/// A table name, `table` or `schema.table` (split at the first dot), as
/// its schema (if given) and its name.
pub fn split_table(table: &str) -> (Option<&str>, &str) {
    match table.split_once('.') {
        Some((schema, name)) => (Some(schema), name),
        None => (None, table),
    }
}

/// A table name, quoted (`"schema"."table"` or `"table"`).
///
/// # Errors
///
/// When a part is not an identifier.
pub fn quote_table(table: &str) -> Result<String, PgError> {
    match split_table(table) {
        (Some(schema), name) => Ok(format!("{}.{}", quote(schema)?, quote(name)?)),
        (None, name) => quote(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_double_their_quote() {
        assert_eq!(quote("a\"b").unwrap(), "\"a\"\"b\"");
        assert_eq!(quote_table("s.t\"x").unwrap(), "\"s\".\"t\"\"x\"");
    }

    #[test]
    fn refuses_what_postgres_would_change() {
        assert!(quote("").is_err());
        assert!(quote("a\0b").is_err());
        assert!(quote(&"x".repeat(64)).is_err());
        assert!(quote(&"x".repeat(63)).is_ok());
    }
}
