//! What the server says about the target table: column types and key.

use crate::conn::Conn;
use crate::ident::{quote, quote_table};
use crate::{PgConfig, PgError};

/// A column of the target table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its base type's name (`int4`, `text`, ...; a domain's or enum's own name).
    pub typname: String,
    /// Its type modifier (`atttypmod`: length, precision, scale; -1 for none).
    pub typmod: i32,
}

/// The target table as the sinks need it.
#[derive(Debug, Clone)]
pub struct Table {
    /// Every column, in table order.
    pub columns: Vec<Column>,
    /// The primary key's columns, in key order (empty without one).
    pub key: Vec<String>,
}

const COLUMNS: &str = "SELECT a.attname::text, t.typname::text, a.atttypmod FROM pg_attribute a \
     JOIN pg_type t ON t.oid = a.atttypid \
     WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attnum";

const KEY: &str = "SELECT a.attname::text FROM pg_index i \
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
     WHERE i.indrelid = $1::text::regclass AND i.indisprimary \
     ORDER BY array_position(i.indkey::int2[], a.attnum)";

/// Reads `table`'s columns and primary key.
///
/// # Errors
///
/// When the table does not exist or the catalogue cannot be read.
pub(crate) fn describe(conn: &mut Conn, table: &str) -> Result<Table, PgError> {
    let quoted = quote_table(table)?;
    let context = format!("reading the columns of {quoted}");
    let columns = conn
        .query(COLUMNS, &[&quoted], &context)?
        .into_iter()
        .map(|row| Column {
            name: row.get(0),
            typname: row.get(1),
            typmod: row.get(2),
        })
        .collect();
    let key = conn
        .query(KEY, &[&quoted], &context)?
        .into_iter()
        .map(|row| row.get(0))
        .collect();
    Ok(Table { columns, key })
}

/// Every column of `table` on the server at `url`, in table order.
///
/// # Errors
///
/// When the server cannot be reached or the table does not exist.
pub fn table_columns(url: &str, table: &str) -> Result<Vec<String>, PgError> {
    let mut conn = Conn::open(&PgConfig::new(url, table, &[]))?;
    let table = describe(&mut conn, table)?;
    Ok(table.columns.into_iter().map(|c| c.name).collect())
}

/// A comma-separated list of quoted identifiers, each with `prefix`.
pub fn quoted_list(names: &[String], prefix: &str) -> Result<String, PgError> {
    let quoted: Result<Vec<String>, PgError> = names
        .iter()
        .map(|name| Ok(format!("{prefix}{}", quote(name)?)))
        .collect();
    Ok(quoted?.join(", "))
}
