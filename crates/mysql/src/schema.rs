//! Table checks before any write: the table and every mapped column must
//! exist; optionally the table is created from declared column types.

use mysql::prelude::Queryable;
use mysql::Conn;

use crate::connect::open_url;
use crate::encode::boolean::BooleanColumn;
use crate::ident::Ident;
use crate::wire::ColumnType;
use crate::MysqlError;

/// The table's columns, in table order.
///
/// # Errors
///
/// Connection failures; [`MysqlError::Schema`] when the table does not
/// exist in the URL's database.
pub fn table_columns(url: &str, table: &str) -> Result<Vec<String>, MysqlError> {
    let mut conn = open_url(url)?;
    let columns = columns_of(&mut conn, table)?;
    if columns.is_empty() {
        return Err(missing_table(table));
    }
    Ok(columns)
}

/// Runs one statement (typically DDL) on a fresh connection.
///
/// For set-up steps around an import, such as creating the target table;
/// the sinks never use it.
///
/// # Errors
///
/// Connection failures and the server's error for the statement.
pub fn execute(url: &str, sql: &str) -> Result<(), MysqlError> {
    open_url(url)?
        .query_drop(sql)
        .map_err(|e| MysqlError::driver(e, "running a set-up statement"))
}

/// The columns of the table's primary key, or of its first unique key when
/// it has no primary key; empty when it has neither.
///
/// # Errors
///
/// Connection failures.
pub fn key_columns(url: &str, table: &str) -> Result<Vec<String>, MysqlError> {
    keys_of(&mut open_url(url)?, table)
}

/// Columns of `table` in the connection's database (empty if no such table).
pub(crate) fn columns_of(conn: &mut Conn, table: &str) -> Result<Vec<String>, MysqlError> {
    conn.exec(
        "SELECT column_name FROM information_schema.columns \
         WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position",
        (table,),
    )
    .map_err(|e| MysqlError::driver(e, "reading the table's columns"))
}

/// The type of each of `columns` of `table`, in their order, as the bulk
/// path chooses its parameter types and the sink its checks from it (a
/// column the query does not find counts as a text column without a
/// character set).
pub(crate) fn column_types_of(
    conn: &mut Conn,
    table: &str,
    columns: &[String],
) -> Result<Vec<ColumnType>, MysqlError> {
    type Described = (
        String,
        String,
        Option<String>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        String,
    );
    let rows: Vec<Described> = conn
        .exec(
            "SELECT column_name, data_type, character_set_name, datetime_precision, \
             numeric_scale, character_octet_length, column_type \
             FROM information_schema.columns \
             WHERE table_schema = DATABASE() AND table_name = ?",
            (table,),
        )
        .map_err(|e| MysqlError::driver(e, "reading the table's column types"))?;
    Ok(columns
        .iter()
        .map(|column| {
            let found = rows
                .iter()
                .find(|(name, ..)| name.eq_ignore_ascii_case(column));
            match found {
                Some((_, data_type, charset, precision, scale, octets, column_type)) => {
                    ColumnType {
                        data_type: data_type.to_ascii_lowercase(),
                        charset: charset.clone(),
                        datetime_precision: precision.map(|p| p.min(6) as u8),
                        numeric_scale: *scale,
                        octet_length: *octets,
                        members: members(column_type).unwrap_or_default(),
                        boolean: BooleanColumn::of(column_type),
                    }
                }
                None => ColumnType {
                    data_type: String::new(),
                    charset: None,
                    datetime_precision: None,
                    numeric_scale: None,
                    octet_length: None,
                    members: Vec::new(),
                    boolean: None,
                },
            }
        })
        .collect())
}

/// The members of an `ENUM` or `SET` from its `column_type`
/// (`enum('a','it''s','back\\slash')`: quotes doubled, backslashes
/// escaped); `None` for another type or a declaration it cannot read.
fn members(column_type: &str) -> Option<Vec<String>> {
    let lower = column_type.to_ascii_lowercase();
    let start = ["enum('", "set('"]
        .iter()
        .find(|head| lower.starts_with(*head))?
        .len();
    let list = column_type.get(start..)?;
    let mut members = Vec::new();
    let mut member = String::new();
    let mut chars = list.chars();
    loop {
        match chars.next()? {
            '\'' => match chars.next()? {
                '\'' => member.push('\''),
                ',' => {
                    members.push(std::mem::take(&mut member));
                    chars.next().filter(|&c| c == '\'')?;
                }
                ')' => {
                    members.push(member);
                    return chars.next().is_none().then_some(members);
                }
                _ => return None,
            },
            '\\' => match chars.next()? {
                c @ ('\\' | '\'') => member.push(c),
                _ => return None,
            },
            c => member.push(c),
        }
    }
}

/// Primary key columns, else the first unique key's.
pub(crate) fn keys_of(conn: &mut Conn, table: &str) -> Result<Vec<String>, MysqlError> {
    let rows: Vec<(String, String)> = conn
        .exec(
            "SELECT index_name, column_name FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name = ? AND non_unique = 0 \
             ORDER BY index_name <> 'PRIMARY', index_name, seq_in_index",
            (table,),
        )
        .map_err(|e| MysqlError::driver(e, "reading the table's keys"))?;
    let first = rows.first().map(|(index, _)| index.clone());
    Ok(rows
        .into_iter()
        .filter(|(index, _)| Some(index) == first.as_ref())
        .map(|(_, column)| column)
        .collect())
}

/// Fails with a clear message unless `table` exists with every column in `mapped`.
pub(crate) fn check(conn: &mut Conn, table: &str, mapped: &[String]) -> Result<(), MysqlError> {
    let existing = columns_of(conn, table)?;
    if existing.is_empty() {
        return Err(missing_table(table));
    }
    // Column names are case-insensitive on every server.
    let missing: Vec<&str> = mapped
        .iter()
        .filter(|m| !existing.iter().any(|e| e.eq_ignore_ascii_case(m)))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(MysqlError::Schema(format!(
        "table `{table}` has no column(s) {missing:?}; it has {existing:?}"
    )))
}

/// `CREATE TABLE IF NOT EXISTS` from `(column, type)` pairs.
pub(crate) fn create(
    conn: &mut Conn,
    table: &Ident,
    columns: &[(String, String)],
) -> Result<(), MysqlError> {
    let mut defs = Vec::with_capacity(columns.len());
    for (name, sql_type) in columns {
        defs.push(format!("{} {}", Ident::new(name)?, checked_type(sql_type)?));
    }
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {table} ({}) DEFAULT CHARSET=utf8mb4",
        defs.join(", ")
    );
    conn.query_drop(sql)
        .map_err(|e| MysqlError::driver(e, "creating the table"))
}

/// Rejects a column type that could end the statement or hide SQL in a comment.
fn checked_type(sql_type: &str) -> Result<&str, MysqlError> {
    let bad = ["; ", ";", "`", "--", "/*", "#"]
        .iter()
        .any(|b| sql_type.contains(b));
    if sql_type.trim().is_empty() || bad {
        return Err(MysqlError::Config(format!(
            "column type {sql_type:?} is empty or holds a statement separator or comment"
        )));
    }
    Ok(sql_type)
}

/// The error for a table that does not exist.
fn missing_table(table: &str) -> MysqlError {
    MysqlError::Schema(format!(
        "table `{table}` does not exist in the connection's database"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_types_pass() {
        for t in [
            "BIGINT NOT NULL PRIMARY KEY",
            "DECIMAL(12,2)",
            "ENUM('a','b')",
        ] {
            assert!(checked_type(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn separators_and_comments_are_rejected() {
        for t in [
            "INT; DROP TABLE x",
            "INT -- x",
            "INT /* x */",
            "INT # x",
            "",
            "`x`",
        ] {
            assert!(checked_type(t).is_err(), "{t}");
        }
    }

    #[test]
    fn enum_and_set_members_are_read_as_declared() {
        let got = members(r"enum('a''b','c,d','x\\y','ü','T')").unwrap();
        assert_eq!(got, ["a'b", "c,d", r"x\y", "ü", "T"]);
        assert_eq!(members("set('p','q')").unwrap(), ["p", "q"]);
        assert_eq!(members("SET('')").unwrap(), [""]);
        for other in [
            "int(11)",
            "enum(",
            "enum('a'",
            "enum('a')x",
            r"enum('a\n')",
            "set",
        ] {
            assert_eq!(members(other), None, "{other}");
        }
    }
}
