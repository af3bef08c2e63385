//! The sink's connection: the `mysql` crate's, or, for the bulk path, the
//! wire client's (see [`crate::wire`]).
//!
//! Both run the text statements every path needs (transactions, the
//! checkpoint, `SHOW WARNINGS`, the INSERT text that bisection sends), so
//! recovery works the same on either; only the LOAD DATA and prepared paths
//! need the driver itself.

use mysql::prelude::Queryable;
use mysql::{Conn, Value};

use crate::wire::WireConn;
use crate::MysqlError;

/// A live connection of one of the two clients.
#[derive(Debug)]
pub(crate) enum Link {
    /// The `mysql` crate's connection.
    Driver(Conn),
    /// Our wire client's.
    Wire(WireConn),
}

/// Rows of a text result: each value as text, `None` for NULL.
pub(crate) type TextRows = Vec<Vec<Option<String>>>;

/// What reading a statement's warnings takes, on either client.
pub(crate) trait TextQueries {
    /// Warnings the last statement left.
    fn warnings(&self) -> u16;

    /// Runs `sql` and returns its rows as text.
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    fn query_rows(&mut self, sql: &str, context: &'static str) -> Result<TextRows, MysqlError>;
}

impl TextQueries for Link {
    fn warnings(&self) -> u16 {
        match self {
            Link::Driver(conn) => conn.warnings(),
            Link::Wire(wire) => wire.last().warnings,
        }
    }

    fn query_rows(&mut self, sql: &str, context: &'static str) -> Result<TextRows, MysqlError> {
        match self {
            Link::Driver(conn) => {
                let rows: Vec<mysql::Row> = conn
                    .query(sql)
                    .map_err(|e| MysqlError::driver(e, context))?;
                Ok(rows
                    .into_iter()
                    .map(|row| row.unwrap().into_iter().map(text).collect())
                    .collect())
            }
            Link::Wire(wire) => wire.query_rows(sql, context),
        }
    }
}

impl TextQueries for WireConn {
    fn warnings(&self) -> u16 {
        self.last().warnings
    }

    fn query_rows(&mut self, sql: &str, context: &'static str) -> Result<TextRows, MysqlError> {
        WireConn::query_rows(self, sql, context)
    }
}

impl Link {
    /// Runs `sql`, which returns no rows.
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    pub(crate) fn query_drop(
        &mut self,
        sql: &str,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        match self {
            Link::Driver(conn) => conn
                .query_drop(sql)
                .map_err(|e| MysqlError::driver(e, context)),
            Link::Wire(wire) => wire.query_drop(sql, context).map(drop),
        }
    }

    /// Ends the open transaction with `ROLLBACK`.
    ///
    /// A Galera node that aborts a session's transaction for a conflicting
    /// write set from another node (a brute-force abort) while the session
    /// is between commands answers the session's next command, whatever it
    /// is, with the deadlock error, without running it. When that command is
    /// this `ROLLBACK`, the error says only that the server rolled back
    /// already, so the `ROLLBACK` is sent once more and its answer is the
    /// answer.
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    pub(crate) fn rollback(&mut self, context: &'static str) -> Result<(), MysqlError> {
        match self.query_drop("ROLLBACK", context) {
            Err(e) if e.is_conflict() => {
                log::debug!("ROLLBACK answered that the transaction was rolled back already: {e}");
                self.query_drop("ROLLBACK", context)
            }
            other => other,
        }
    }

    /// Rows the last statement affected.
    pub(crate) fn affected_rows(&self) -> u64 {
        match self {
            Link::Driver(conn) => conn.affected_rows(),
            Link::Wire(wire) => wire.last().affected_rows,
        }
    }

    /// The driver's connection, for the paths only it serves.
    ///
    /// # Errors
    ///
    /// [`MysqlError::Config`] on a wire connection, which is opened for the
    /// bulk path alone.
    pub(crate) fn driver(&mut self) -> Result<&mut Conn, MysqlError> {
        match self {
            Link::Driver(conn) => Ok(conn),
            Link::Wire(_) => Err(MysqlError::Config(
                "this write path needs the mysql crate's connection".into(),
            )),
        }
    }
}

/// A text-protocol value as text (the text protocol sends only bytes and
/// NULL).
fn text(value: Value) -> Option<String> {
    match value {
        Value::NULL => None,
        Value::Bytes(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        other => Some(other.as_sql(false).trim_matches('\'').to_owned()),
    }
}
