//! The servers the workspace's integration tests talk to, and the one rule
//! by which a test owns the tables it makes: a guard that, when the test
//! ends, passed or panicked, drops the table and forgets the checkpoint
//! rows an import kept for it, so that a run leaves nothing behind.
//!
//! ```no_run
//! use mysql::prelude::Queryable;
//! use ringpipe_testdb::{mysql_conn, MysqlTable};
//!
//! let table = MysqlTable::fresh("my_test_table");
//! let sql = format!("CREATE TABLE `{}` (id INT PRIMARY KEY)", &*table);
//! mysql_conn().query_drop(sql).unwrap();
//! // … import into it and check it; it is dropped when `table` is.
//! ```
//!
//! The servers are named by `RINGPIPE_TEST_MYSQL_URL` (default the local
//! MariaDB, `mysql://root@127.0.0.1:3306/test`) and `RINGPIPE_TEST_PG_URL`
//! (default the local PostgreSQL, `postgres://postgres@127.0.0.1:5432/test`).

use std::ops::Deref;

use mysql::prelude::Queryable;

/// The test MariaDB or MySQL server.
pub fn mysql_url() -> String {
    std::env::var("RINGPIPE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// The test PostgreSQL server.
pub fn pg_url() -> String {
    std::env::var("RINGPIPE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A new connection to the test MariaDB.
///
/// # Panics
///
/// When the server does not answer: a test that needs it fails.
pub fn mysql_conn() -> mysql::Conn {
    mysql::Conn::new(mysql::Opts::from_url(&mysql_url()).expect("a MySQL URL"))
        .expect("MariaDB at RINGPIPE_TEST_MYSQL_URL")
}

/// A new connection to the test PostgreSQL.
///
/// # Panics
///
/// When the server does not answer.
pub fn pg_client() -> postgres::Client {
    postgres::Client::connect(&pg_url(), postgres::NoTls)
        .expect("PostgreSQL at RINGPIPE_TEST_PG_URL")
}

/// A MariaDB table a test made, dropped with its checkpoint rows when the
/// guard goes. Dereferences to the table's name.
#[must_use = "the table is dropped when this guard is"]
#[derive(Debug)]
pub struct MysqlTable {
    /// The table's name.
    name: String,
    /// The server that holds it.
    url: String,
}

impl MysqlTable {
    /// Takes charge of dropping `name` (a table of the test database).
    pub fn new(name: &str) -> Self {
        MysqlTable {
            name: name.to_owned(),
            url: mysql_url(),
        }
    }

    /// As [`new`](MysqlTable::new), after dropping what an earlier run
    /// may have left of `name`: the table and its checkpoint rows.
    pub fn fresh(name: &str) -> Self {
        MysqlTable::fresh_at(&mysql_url(), name)
    }

    /// As [`fresh`](MysqlTable::fresh), for a table of the server at `url`
    /// (a node of a cluster, say).
    pub fn fresh_at(url: &str, name: &str) -> Self {
        let table = MysqlTable {
            name: name.to_owned(),
            url: url.to_owned(),
        };
        table.forget();
        table
    }

    /// Drops the table and its checkpoint rows, ignoring errors: a test
    /// that failed may have left no table, or no checkpoint table.
    fn forget(&self) {
        let Ok(opts) = mysql::Opts::from_url(&self.url) else {
            return;
        };
        let Ok(mut conn) = mysql::Conn::new(opts) else {
            return;
        };
        let quoted = self.name.replace('`', "``");
        let _ = conn.query_drop(format!("DROP TABLE IF EXISTS `{quoted}`"));
        let _ = conn.exec_drop(
            "DELETE FROM ringpipe_checkpoint WHERE target_table = ?",
            (&self.name,),
        );
    }
}

impl Deref for MysqlTable {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

impl Drop for MysqlTable {
    fn drop(&mut self) {
        self.forget();
    }
}

/// A PostgreSQL table a test made (a plain name in the connection's
/// schema), dropped with its checkpoint rows when the guard goes.
/// Dereferences to the table's name.
#[must_use = "the table is dropped when this guard is"]
#[derive(Debug)]
pub struct PgTable(String);

impl PgTable {
    /// Takes charge of dropping `name`.
    pub fn new(name: &str) -> Self {
        PgTable(name.to_owned())
    }

    /// As [`new`](PgTable::new), after dropping what an earlier run may
    /// have left of `name`: the table and its checkpoint rows.
    pub fn fresh(name: &str) -> Self {
        let table = PgTable::new(name);
        table.forget();
        table
    }

    /// Drops the table and its checkpoint rows, ignoring errors, as for
    /// [`MysqlTable`].
    fn forget(&self) {
        let Ok(mut client) = postgres::Client::connect(&pg_url(), postgres::NoTls) else {
            return;
        };
        let quoted = self.0.replace('"', "\"\"");
        let _ = client.batch_execute(&format!("DROP TABLE IF EXISTS \"{quoted}\""));
        let _ = client.execute(
            "DELETE FROM ringpipe_checkpoint WHERE target_table = $1",
            &[&self.0],
        );
    }
}

impl Deref for PgTable {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for PgTable {
    fn drop(&mut self) {
        self.forget();
    }
}
