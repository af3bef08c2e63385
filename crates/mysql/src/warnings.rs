//! Turning the server's warnings into errors where they would hide bad data.
//!
//! `LOAD DATA LOCAL` and `INSERT IGNORE` downgrade data errors to warnings
//! and store 0, '' or NULL instead; strict `sql_mode` does not change that.
//! So after every statement that reports warnings the sink reads `SHOW
//! WARNINGS` and fails on any that is not a `Note` or an expected duplicate,
//! and on the note that a value was truncated.

use crate::error::codes;
use crate::link::TextQueries;
use crate::MysqlError;

/// Fails if the last statement left a warning other than a `Note`, a
/// deprecation (MySQL's `VALUES()` in upserts) or, when `allow_duplicates`,
/// a duplicate key. A note that a value was truncated (1265: a decimal
/// rounded to its column's scale, a date's time of day dropped) fails too:
/// the value was stored altered.
///
/// # Errors
///
/// [`MysqlError::Warning`] for the first offending warning; connection errors.
pub(crate) fn check(conn: &mut impl TextQueries, allow_duplicates: bool) -> Result<(), MysqlError> {
    let count = conn.warnings();
    if count == 0 {
        return Ok(());
    }
    let shown: Vec<(String, u16, String)> = conn
        .query_rows("SHOW WARNINGS", "reading warnings")?
        .into_iter()
        .map(|row| match <[Option<String>; 3]>::try_from(row) {
            Ok([level, code, message]) => (
                level.unwrap_or_default(),
                code.and_then(|c| c.parse().ok()).unwrap_or(0),
                message.unwrap_or_default(),
            ),
            Err(_) => (
                String::from("Warning"),
                0,
                String::from("an unreadable warning"),
            ),
        })
        .collect();
    for (level, code, message) in &shown {
        let expected = (level == "Note" && *code != codes::DATA_TRUNCATED)
            || *code == codes::WARN_DEPRECATED_SYNTAX
            || (allow_duplicates && *code == codes::DUP_ENTRY);
        if !expected {
            return Err(MysqlError::Warning {
                level: level.clone(),
                code: *code,
                message: message.clone(),
            });
        }
    }
    if shown.len() < usize::from(count) {
        // More warnings than max_error_count keeps: some were never seen.
        return Err(MysqlError::Warning {
            level: "Warning".into(),
            code: codes::DATA_TRUNCATED,
            message: format!("{count} warnings, only {} readable", shown.len()),
        });
    }
    Ok(())
}
