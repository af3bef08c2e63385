//! A MariaDB client of our own for the bulk path: statements sent ahead of
//! their replies, and bulk packets built straight from a batch's text.
//!
//! The `mysql` crate waits for every reply before it sends the next
//! statement and binds each value as an owned `Value`, so the server idles
//! between statements and the client spends its time in allocation and
//! copies. This client keeps one statement in flight while the next is
//! encoded, on `mysql_common`'s packet types (greeting,
//! handshake response, OK, ERR, authentication switch).
//!
//! It speaks just enough: plain TCP or a Unix socket, MariaDB with bulk
//! operations, `mysql_native_password` (or a switch to `client_ed25519`).
//! It trusts nothing it reads: lengths, counts and sequence numbers are
//! checked against limits before use (`framing`, `reply`), and a violation
//! is a [`MysqlError::Protocol`], never a panic or a huge allocation. [`WireConn::connect`] answers
//! `None` for anything else, and the sink uses the driver. The session runs
//! with `autocommit=0` (see [`WireConn::connect`]), so that a statement sent
//! ahead of a failure can never commit on its own.

pub(crate) mod bulk;
#[cfg(all(test, unix))]
mod fake_auth;
mod framing;
#[cfg(all(unix, any(test, feature = "fuzzing")))]
pub mod fuzz;
mod handshake;
#[cfg(all(test, unix))]
mod hostile;
mod reply;
mod socket;
mod typed;

use mysql::consts::CapabilityFlags;
use mysql::Opts;

pub(crate) use bulk::{BulkEncoder, ColumnType};
pub(crate) use reply::Done;
pub(crate) use typed::ParamKind;

use crate::MysqlError;
use framing::{Framed, Stream};
use handshake::{Greeting, Login};
use socket::{tcp_stream, unix_stream};

/// `COM_QUERY`.
const COM_QUERY: u8 = 0x03;
/// `COM_STMT_PREPARE`.
const COM_STMT_PREPARE: u8 = 0x16;

/// One authenticated connection.
#[derive(Debug)]
pub(crate) struct WireConn {
    /// Packets to and from the server.
    framed: Framed,
    /// The capabilities both sides agreed on (they shape OK and ERR).
    capabilities: CapabilityFlags,
    /// What the last statement whose reply was read reported.
    last: Done,
    /// Commands sent whose replies are still unread, oldest first.
    pending: usize,
    /// Set when the stream is out of step (an I/O or protocol error): every
    /// later call fails as a lost connection, so that the sink reconnects.
    broken: bool,
    /// Statements prepared on this connection: SQL and id.
    prepared: Vec<(String, u32)>,
    /// The reply being read, reused.
    payload: Vec<u8>,
    /// The command being sent, reused.
    command: Vec<u8>,
}

impl WireConn {
    /// Connects as `opts` says, then runs its init commands and
    /// `SET autocommit = 0`. `None` when this client cannot serve the
    /// connection (TLS, compression, MySQL, another authentication plugin):
    /// the caller then uses the driver.
    ///
    /// Like the driver, it moves to the server's Unix socket when the host
    /// is this machine and `prefer_socket` is on (the default).
    ///
    /// # Errors
    ///
    /// Connection failures (retryable) and the server's refusals.
    pub(crate) fn connect(opts: &Opts) -> Result<Option<WireConn>, MysqlError> {
        if opts.get_ssl_opts().is_some() {
            return Ok(needs_driver("TLS"));
        }
        if opts.get_compress().is_some() {
            return Ok(needs_driver("compression"));
        }
        let stream = match opts.get_socket() {
            Some(path) => unix_stream(path, opts)?,
            None => tcp_stream(opts)?,
        };
        let Some(mut conn) = WireConn::handshake(stream, opts)? else {
            return Ok(None);
        };
        if opts.get_socket().is_none() && opts.get_prefer_socket() && opts.addr_is_loopback() {
            conn = conn.moved_to_socket(opts)?;
        }
        for sql in opts.get_init() {
            conn.query_drop(&sql, "an init command")?;
        }
        conn.query_drop("SET autocommit = 0", "connect")?;
        Ok(Some(conn))
    }

    /// Authenticates on `stream`.
    fn handshake(stream: Stream, opts: &Opts) -> Result<Option<WireConn>, MysqlError> {
        let mut framed = Framed::new(stream);
        let login = Login {
            user: opts.get_user().unwrap_or_default(),
            password: opts.get_pass().unwrap_or_default().as_bytes(),
            database: opts.get_db_name(),
        };
        match handshake::run(&mut framed, &login)? {
            Greeting::NeedsDriver(why) => Ok(needs_driver(why)),
            Greeting::Ready { capabilities } => Ok(Some(WireConn {
                framed,
                capabilities,
                last: Done::default(),
                pending: 0,
                broken: false,
                prepared: Vec::new(),
                payload: Vec::new(),
                command: Vec::new(),
            })),
        }
    }

    /// The same login over the server's Unix socket, if it has one that
    /// answers and is the same server (same port and data directory: a
    /// socket path seen from a container may name another server here);
    /// otherwise `self`.
    fn moved_to_socket(mut self, opts: &Opts) -> Result<WireConn, MysqlError> {
        const IDENTITY: &str = "SELECT @@socket, @@port, @@datadir";
        let here = self.query_rows(IDENTITY, "connect")?;
        let Some(Some(path)) = here.first().and_then(|row| row.first()).cloned() else {
            return Ok(self);
        };
        if path.is_empty() {
            return Ok(self);
        }
        let moved = unix_stream(&path, opts).and_then(|s| WireConn::handshake(s, opts));
        let Ok(Some(mut moved)) = moved else {
            return Ok(self);
        };
        match moved.query_rows(IDENTITY, "connect") {
            Ok(there) if there == here => Ok(moved),
            _ => Ok(self),
        }
    }

    /// What the last statement reported.
    pub(crate) fn last(&self) -> Done {
        self.last
    }

    /// Runs `sql` and waits for its OK.
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    pub(crate) fn query_drop(
        &mut self,
        sql: &str,
        context: &'static str,
    ) -> Result<Done, MysqlError> {
        self.send_text(COM_QUERY, sql, context)?;
        self.finish(context)
    }

    /// Runs `sql` and reads its text result set (no rows for a statement
    /// that returns none).
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    pub(crate) fn query_rows(
        &mut self,
        sql: &str,
        context: &'static str,
    ) -> Result<Vec<Vec<Option<String>>>, MysqlError> {
        self.send_text(COM_QUERY, sql, context)?;
        self.pending -= 1;
        let result = self.read_rows(context);
        self.settle(result)
    }

    /// Prepares `sql` once per connection; its statement id.
    ///
    /// # Errors
    ///
    /// The server's error; connection failures.
    pub(crate) fn prepare(&mut self, sql: &str, context: &'static str) -> Result<u32, MysqlError> {
        if let Some((_, id)) = self.prepared.iter().find(|(s, _)| s == sql) {
            return Ok(*id);
        }
        self.send_text(COM_STMT_PREPARE, sql, context)?;
        self.pending -= 1;
        let result = self.read_prepare_ok(context);
        let id = self.settle(result)?;
        self.prepared.push((sql.to_owned(), id));
        Ok(id)
    }

    /// Sends `sql` without waiting for its reply, which must be an OK or
    /// ERR; [`finish`](Self::finish) reads the replies in order.
    ///
    /// # Errors
    ///
    /// Connection failures.
    pub(crate) fn send_query(
        &mut self,
        sql: &str,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        self.send_with_text(COM_QUERY, sql, context)
    }

    /// Sends a command packet built behind [`HEADER_ROOM`](framing::HEADER_ROOM) free bytes, as
    /// [`BulkEncoder`] builds them, without waiting for its reply (OK or
    /// ERR) and, for a payload under 16 MiB, without copying it.
    ///
    /// # Errors
    ///
    /// Connection failures.
    pub(crate) fn send_packet(
        &mut self,
        packet: &mut [u8],
        context: &'static str,
    ) -> Result<(), MysqlError> {
        self.usable(context)?;
        let sent = self.framed.command_in_place(packet);
        self.count_sent(sent, context)
    }

    /// Sends a command whose reply is an OK or ERR, without waiting for it.
    fn send(&mut self, body: &[u8], context: &'static str) -> Result<(), MysqlError> {
        self.usable(context)?;
        let sent = self.framed.command(body);
        self.count_sent(sent, context)
    }

    /// Counts a command as awaiting its reply once it was written.
    fn count_sent(
        &mut self,
        sent: std::io::Result<()>,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        self.settle(sent.map_err(|e| reply::io_error(e, context)))?;
        self.pending += 1;
        Ok(())
    }

    /// Commands sent whose replies are unread.
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Reads the reply to the oldest command sent.
    ///
    /// # Errors
    ///
    /// The server's error for that command; connection failures.
    pub(crate) fn finish(&mut self, context: &'static str) -> Result<Done, MysqlError> {
        self.usable(context)?;
        if self.pending == 0 {
            return Err(reply::protocol("a reply awaited for no command", context));
        }
        self.pending -= 1;
        let result = self.read_ok(context);
        let done = self.settle(result)?;
        self.last = done;
        Ok(done)
    }

    /// Reads and drops the replies of commands sent earlier (after an
    /// error cut a pipeline short), so that the next reply read is the
    /// next command's. Server errors among them are dropped too: the
    /// caller is already handling the first one.
    fn drain(&mut self, context: &'static str) -> Result<(), MysqlError> {
        while self.pending > 0 {
            match self.finish(context) {
                Err(e) if self.broken => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Sends `command` followed by `text`, after the replies still due.
    fn send_text(
        &mut self,
        command: u8,
        text: &str,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        self.drain(context)?;
        self.send_with_text(command, text, context)
    }

    /// Sends `command` followed by `text`, without waiting for its reply.
    fn send_with_text(
        &mut self,
        command: u8,
        text: &str,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        let mut body = std::mem::take(&mut self.command);
        body.clear();
        body.push(command);
        body.extend_from_slice(text.as_bytes());
        let result = self.send(&body, context);
        self.command = body;
        result
    }

    /// Fails at once on a connection that is out of step.
    fn usable(&self, context: &'static str) -> Result<(), MysqlError> {
        if self.broken {
            return Err(MysqlError::Connection {
                message: "the connection was closed after an earlier failure".into(),
                context,
            });
        }
        Ok(())
    }

    /// Marks the stream out of step on any error but the server's own.
    fn settle<T>(&mut self, result: Result<T, MysqlError>) -> Result<T, MysqlError> {
        if let Err(e) = &result {
            if !matches!(e, MysqlError::Server { .. }) {
                self.broken = true;
            }
        }
        result
    }

    /// One reply that must be OK (or ERR).
    fn read_ok(&mut self, context: &'static str) -> Result<Done, MysqlError> {
        self.read_first(context)?;
        match reply::parse(&self.payload, self.capabilities, context)? {
            reply::Reply::Ok(done) => Ok(done),
            reply::Reply::Other => Err(reply::protocol("a reply that is not OK", context)),
        }
    }

    /// A text result set: column count, column definitions, EOF, rows, EOF.
    /// The column count is bounded ([`reply::MAX_COLUMNS`]) and so are the
    /// rows' memory all together ([`framing::MAX_REPLY`]).
    fn read_rows(&mut self, context: &'static str) -> Result<Vec<Vec<Option<String>>>, MysqlError> {
        self.read_first(context)?;
        if let reply::Reply::Ok(done) = reply::parse(&self.payload, self.capabilities, context)? {
            self.last = done;
            return Ok(Vec::new());
        }
        let columns = reply::column_count(&self.payload, context)?;
        self.skip_through_eof(columns, context)?;
        let mut rows = Vec::new();
        let mut total = 0usize;
        loop {
            self.read_payload(context)?;
            self.server_error(context)?;
            if reply::is_eof(&self.payload) {
                self.last = Done {
                    affected_rows: 0,
                    warnings: reply::eof_warnings(&self.payload),
                };
                return Ok(rows);
            }
            // What the rows will hold: their text and a slot per value.
            total += self.payload.len() + columns * std::mem::size_of::<Option<String>>();
            if total > framing::MAX_REPLY {
                let what = format!("a result set of more than {} bytes", framing::MAX_REPLY);
                return Err(reply::protocol(what, context));
            }
            rows.push(reply::text_row(&self.payload, columns, context)?);
        }
    }

    /// `COM_STMT_PREPARE`'s OK: status, id, columns, parameters, then
    /// their definitions, each list closed by an EOF.
    fn read_prepare_ok(&mut self, context: &'static str) -> Result<u32, MysqlError> {
        self.read_first(context)?;
        self.server_error(context)?;
        let p = &self.payload;
        if p.len() < 9 || p[0] != 0 {
            return Err(reply::protocol("an unreadable prepare reply", context));
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let columns = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        for count in [params, columns] {
            if count > 0 {
                self.skip_through_eof(usize::from(count), context)?;
            }
        }
        Ok(id)
    }

    /// Skips `count` definitions and the EOF packet that closes them; an
    /// ERR packet among them is the server's error, and a list longer than
    /// announced a protocol error.
    fn skip_through_eof(&mut self, count: usize, context: &'static str) -> Result<(), MysqlError> {
        for _ in 0..=count {
            self.read_payload(context)?;
            self.server_error(context)?;
            if reply::is_eof(&self.payload) {
                return Ok(());
            }
        }
        let what = format!("more than {count} definitions announced, or no EOF after them");
        Err(reply::protocol(what, context))
    }

    /// The server's error when the payload read is an ERR packet.
    fn server_error(&self, context: &'static str) -> Result<(), MysqlError> {
        if self.payload.first() == Some(&0xFF) {
            reply::parse(&self.payload, self.capabilities, context)?;
        }
        Ok(())
    }

    /// Reads the first payload of the oldest command's reply.
    fn read_first(&mut self, context: &'static str) -> Result<(), MysqlError> {
        self.framed.expect_reply();
        self.read_payload(context)
    }

    /// Reads the next payload into `self.payload`.
    fn read_payload(&mut self, context: &'static str) -> Result<(), MysqlError> {
        self.framed.read(&mut self.payload, context)
    }
}

/// Logs why the driver serves this connection.
fn needs_driver(why: &str) -> Option<WireConn> {
    log::debug!("bulk path through the mysql crate: this connection needs {why}");
    None
}
