//! Opening a connection and reading the session facts the encoders need.

use std::fmt;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};

use crate::config::{BulkClient, SinkConfig};
use crate::error::codes;
use crate::link::{Link, TextQueries};
use crate::wire::WireConn;
use crate::MysqlError;

/// Makes data errors errors, not warnings, keeping the server's other modes.
/// Without it a bad value can silently become 0, '' or a truncated string.
const STRICT: &str = "SET SESSION sql_mode = IF(FIND_IN_SET('STRICT_TRANS_TABLES', \
     @@SESSION.sql_mode), @@SESSION.sql_mode, \
     CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_TRANS_TABLES'))";

/// Bytes kept free below `max_allowed_packet` for the packet header and
/// anything the driver adds.
const PACKET_HEADROOM: usize = 1024;

/// A live connection and what the sink must know about its session.
/// `Debug` leaves the connection out: the driver's shows its options,
/// password included.
pub(crate) struct Session {
    /// The connection.
    pub(crate) conn: Link,
    /// `sql_mode` has `NO_BACKSLASH_ESCAPES`: escape by doubling quotes only.
    pub(crate) no_backslash_escapes: bool,
    /// Largest statement the server accepts, minus headroom.
    pub(crate) max_statement_bytes: usize,
    /// Whether the server allows `LOAD DATA LOCAL`.
    pub(crate) local_infile: bool,
    /// MariaDB (bulk protocol available) rather than MySQL.
    pub(crate) mariadb: bool,
    /// `CONNECTION_ID()`, for `KILL` in tests and for logs.
    pub(crate) connection_id: u64,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let client = match self.conn {
            Link::Wire(_) => "wire",
            Link::Driver(_) => "driver",
        };
        f.debug_struct("Session")
            .field("client", &client)
            .field("connection_id", &self.connection_id)
            .field("no_backslash_escapes", &self.no_backslash_escapes)
            .field("max_statement_bytes", &self.max_statement_bytes)
            .field("local_infile", &self.local_infile)
            .field("mariadb", &self.mariadb)
            .finish()
    }
}

/// Connects through the `mysql` crate and prepares the session: strict
/// `sql_mode`, `utf8mb4`, and room for every warning of a batch in `SHOW
/// WARNINGS`.
///
/// # Errors
///
/// Connection or server errors (retryable when the server is unreachable).
pub(crate) fn open(opts: &Opts) -> Result<Session, MysqlError> {
    open_with(opts, BulkClient::Driver)
}

/// Connects with `client` (the wire client falls back to the driver where
/// it cannot serve the connection) and prepares the session as [`open`].
///
/// # Errors
///
/// Connection or server errors (retryable when the server is unreachable).
pub(crate) fn open_with(opts: &Opts, client: BulkClient) -> Result<Session, MysqlError> {
    let context = "connect";
    let wire = match client {
        BulkClient::Wire => WireConn::connect(opts)?,
        BulkClient::Driver => None,
    };
    let mut conn = match wire {
        Some(wire) => Link::Wire(wire),
        None => Link::Driver(driver_conn(opts)?),
    };
    for sql in [
        STRICT,
        "SET NAMES utf8mb4",
        "SET SESSION max_error_count = 65535",
    ] {
        conn.query_drop(sql, context)?;
    }
    let facts = conn.query_rows(
        "SELECT @@SESSION.sql_mode, @@SESSION.max_allowed_packet, @@GLOBAL.local_infile, \
         VERSION(), CONNECTION_ID()",
        context,
    )?;
    let unreadable = || MysqlError::Config("the session query returned no readable row".into());
    let [sql_mode, max_packet, local_infile, version, connection_id] = facts
        .into_iter()
        .next()
        .and_then(|row| <[Option<String>; 5]>::try_from(row).ok())
        .ok_or_else(unreadable)?
        .map(Option::unwrap_or_default);
    let number = |text: &str| text.parse::<u64>().map_err(|_| unreadable());
    Ok(Session {
        no_backslash_escapes: has_mode(&sql_mode, "NO_BACKSLASH_ESCAPES"),
        max_statement_bytes: (number(&max_packet)? as usize).saturating_sub(PACKET_HEADROOM),
        local_infile: number(&local_infile)? != 0,
        mariadb: version.contains("MariaDB"),
        connection_id: number(&connection_id)?,
        conn,
    })
}

/// Connects to `url` (password from the URL or `MYSQL_PWD`) for one-off
/// queries such as schema checks, statistics and the doctor.
pub(crate) fn open_url(url: &str) -> Result<Conn, MysqlError> {
    let opts = SinkConfig::new(url, "", &[]).opts()?;
    driver_conn(&opts)
}

/// The server's identity as seen on a connection: socket path, port and
/// data directory.
type Identity = (Option<String>, Option<String>, Option<String>);

/// A driver connection as `opts` says, moved to the server's Unix socket
/// like the wire client's: only for a loopback host with `prefer_socket`
/// (the default), and only when the socket's server reports the same
/// socket, port and data directory as the TCP one (a socket path seen from
/// a container may name another server on this machine). The driver's own
/// move checks none of that, so it is turned off.
fn driver_conn(opts: &Opts) -> Result<Conn, MysqlError> {
    let mut tcp = connect(
        OptsBuilder::from_opts(opts.clone())
            .prefer_socket(false)
            .into(),
    )?;
    if opts.get_socket().is_some() || !opts.get_prefer_socket() || !opts.addr_is_loopback() {
        return Ok(tcp);
    }
    let here = identity(&mut tcp)?;
    let Some(path) = here.0.clone().filter(|p| !p.is_empty()) else {
        return Ok(tcp);
    };
    let there = OptsBuilder::from_opts(opts.clone())
        .socket(Some(path))
        .into();
    match connect(there).and_then(|mut moved| Ok((identity(&mut moved)?, moved))) {
        Ok((seen, moved)) if seen == here => Ok(moved),
        _ => Ok(tcp),
    }
}

/// A driver connection. A login the server refuses is tried once more:
/// the `mysql` crate signs an `ed25519` nonce without its last byte when
/// that byte is 0 (see `wire::handshake::ed25519_nonce`), so one login in
/// 256 of an ed25519 user is refused although the password is right; the
/// second login gets a fresh nonce. A wrong password costs one more
/// refused login.
fn connect(opts: Opts) -> Result<Conn, MysqlError> {
    match connect_once(opts.clone()) {
        Err(e) if e.code() == Some(codes::ACCESS_DENIED) => connect_once(opts),
        other => other,
    }
}

/// One driver login. The `mysql` crate indexes into replies during the
/// handshake without checking their length (an empty packet panics it): a
/// panic there is a protocol error, and the half-made connection is
/// dropped.
fn connect_once(opts: Opts) -> Result<Conn, MysqlError> {
    // AssertUnwindSafe: nothing the closure touches survives a panic.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Conn::new(opts))) {
        Ok(conn) => conn.map_err(|e| MysqlError::driver(e, "connect")),
        Err(_) => Err(MysqlError::Protocol {
            what: "a handshake reply the mysql crate could not read".into(),
            context: "connect",
        }),
    }
}

/// `@@socket`, `@@port` and `@@datadir` of the server `conn` reaches.
fn identity(conn: &mut Conn) -> Result<Identity, MysqlError> {
    conn.query_first("SELECT @@socket, @@port, @@datadir")
        .map_err(|e| MysqlError::driver(e, "connect"))
        .map(Option::unwrap_or_default)
}

/// Whether the comma-separated `sql_mode` holds `mode`.
fn has_mode(sql_mode: &str, mode: &str) -> bool {
    sql_mode.split(',').any(|m| m.eq_ignore_ascii_case(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_match_whole_names_only() {
        assert!(has_mode(
            "STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES",
            "NO_BACKSLASH_ESCAPES"
        ));
        assert!(!has_mode("XNO_BACKSLASH_ESCAPES", "NO_BACKSLASH_ESCAPES"));
        assert!(!has_mode("", "NO_BACKSLASH_ESCAPES"));
    }
}
