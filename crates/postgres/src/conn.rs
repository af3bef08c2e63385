//! An import's connection: the asynchronous driver on a runtime of the
//! connection's own, with a time limit around every call.
//!
//! The synchronous `postgres` client has no read timeout, so a server
//! process that stops answering (while its host's kernel still
//! acknowledges the socket) would hold an import forever. Here each call
//! (the login included) runs under `tokio::time::timeout`; when the limit
//! passes, the connection is dropped and the call fails as a lost
//! connection: a sink replays its batch on a new one, and the import
//! retries its checkpoint bookkeeping.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures_util::SinkExt;
use postgres::types::ToSql;
use postgres::{Row, Statement};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls, ToStatement};

use crate::error::CONNECTING;
use crate::{PgConfig, PgError, DEFAULT_NET_TIMEOUT};

/// One connection of an import (a sink's, or the target's own).
pub(crate) struct Conn {
    client: Client,
    driver: Driver,
}

/// What runs a connection's calls: the runtime, the connection's task on
/// it and the time limit.
struct Driver {
    /// Drives the connection (spawned on it) while a call runs.
    runtime: Runtime,
    /// The task moving bytes between the client and the socket.
    connection: JoinHandle<()>,
    /// How long one call may take.
    limit: Duration,
    /// A call ran out of time: the connection was dropped.
    timed_out: bool,
}

impl Driver {
    /// Runs `call` within the limit; `what` names it in errors.
    fn run<T>(
        &mut self,
        what: &str,
        call: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, PgError> {
        // The timer is made inside `block_on`: it needs the runtime.
        let limit = self.limit;
        match self
            .runtime
            .block_on(async move { tokio::time::timeout(limit, call).await })
        {
            Ok(done) => done.map_err(|e| PgError::server(e, what)),
            Err(_) => {
                self.timed_out = true;
                self.connection.abort();
                Err(timed_out(what, self.limit))
            }
        }
    }
}

impl Conn {
    /// Opens a connection as `config` describes it and runs its init
    /// commands, each step within the net timeout.
    pub(crate) fn open(config: &PgConfig) -> Result<Conn, PgError> {
        let session = config.session_config()?;
        let limit = session
            .get_tcp_user_timeout()
            .copied()
            .unwrap_or(DEFAULT_NET_TIMEOUT);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| PgError::Io {
                context: "starting the connection's runtime",
                source,
                lost: false,
            })?;
        let login =
            runtime.block_on(async { tokio::time::timeout(limit, session.connect(NoTls)).await });
        let (client, connection) = match login {
            Ok(connected) => connected.map_err(|e| PgError::server(e, CONNECTING))?,
            Err(_) => return Err(timed_out(CONNECTING, limit)),
        };
        let connection = runtime.spawn(async move {
            if let Err(e) = connection.await {
                log::debug!("connection ended: {e}");
            }
        });
        let mut conn = Conn {
            client,
            driver: Driver {
                runtime,
                connection,
                limit,
                timed_out: false,
            },
        };
        for sql in &config.init_commands {
            conn.batch_execute(sql, "running an init command")?;
        }
        Ok(conn)
    }

    /// Whether the connection is gone (closed by the server, or dropped
    /// after a call ran out of time).
    pub(crate) fn is_closed(&self) -> bool {
        self.driver.timed_out || self.client.is_closed()
    }

    /// Runs `sql` (one or more statements, without parameters).
    pub(crate) fn batch_execute(&mut self, sql: &str, what: &str) -> Result<(), PgError> {
        self.driver.run(what, self.client.batch_execute(sql))
    }

    /// Prepares `sql`.
    pub(crate) fn prepare(&mut self, sql: &str, what: &str) -> Result<Statement, PgError> {
        self.driver.run(what, self.client.prepare(sql))
    }

    /// Runs a statement (SQL text or prepared); the rows it changed.
    pub(crate) fn execute<S: ?Sized + ToStatement>(
        &mut self,
        statement: &S,
        params: &[&(dyn ToSql + Sync)],
        what: &str,
    ) -> Result<u64, PgError> {
        self.driver
            .run(what, self.client.execute(statement, params))
    }

    /// Runs a query; its rows.
    pub(crate) fn query<S: ?Sized + ToStatement>(
        &mut self,
        statement: &S,
        params: &[&(dyn ToSql + Sync)],
        what: &str,
    ) -> Result<Vec<Row>, PgError> {
        self.driver.run(what, self.client.query(statement, params))
    }

    /// Runs a query of exactly one row.
    pub(crate) fn query_one<S: ?Sized + ToStatement>(
        &mut self,
        statement: &S,
        params: &[&(dyn ToSql + Sync)],
        what: &str,
    ) -> Result<Row, PgError> {
        self.driver
            .run(what, self.client.query_one(statement, params))
    }

    /// Runs a query of at most one row.
    pub(crate) fn query_opt<S: ?Sized + ToStatement>(
        &mut self,
        statement: &S,
        params: &[&(dyn ToSql + Sync)],
        what: &str,
    ) -> Result<Option<Row>, PgError> {
        self.driver
            .run(what, self.client.query_opt(statement, params))
    }

    /// Runs `work` in a transaction: committed when it succeeds, rolled
    /// back when it fails (its error is the one returned).
    pub(crate) fn transaction<T>(
        &mut self,
        what: &str,
        work: impl FnOnce(&mut Conn) -> Result<T, PgError>,
    ) -> Result<T, PgError> {
        self.batch_execute("BEGIN", what)?;
        match work(self) {
            Ok(done) => self.batch_execute("COMMIT", what).map(|()| done),
            Err(error) => {
                if let Err(e) = self.batch_execute("ROLLBACK", what) {
                    log::debug!("rollback after {what} failed: {e}");
                }
                Err(error)
            }
        }
    }

    /// Runs the `COPY … FROM STDIN` statement with `parts` as its data, in
    /// order; the rows it copied. `what` names it in errors.
    pub(crate) fn copy_in(
        &mut self,
        statement: &Statement,
        parts: [&[u8]; 3],
        what: &str,
    ) -> Result<u64, PgError> {
        let client = &self.client;
        let call = async move {
            let sink = client.copy_in::<_, Bytes>(statement).await?;
            futures_util::pin_mut!(sink);
            for part in parts {
                sink.feed(Bytes::copy_from_slice(part)).await?;
            }
            sink.as_mut().finish().await
        };
        self.driver.run(what, call)
    }
}

/// The error of a call that ran out of time: a lost connection.
fn timed_out(what: &str, limit: Duration) -> PgError {
    PgError::TimedOut {
        context: what.to_owned(),
        after: limit,
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Closes the socket now rather than when the runtime goes.
        self.connection.abort();
    }
}
