//! Opening a connection and reading the session facts the encoders need.

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};

use crate::config::SinkConfig;
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
#[derive(Debug)]
pub(crate) struct Session {
    /// The connection.
    pub(crate) conn: Conn,
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

/// Connects and prepares the session: strict `sql_mode`, `utf8mb4`, and
/// room for every warning of a batch in `SHOW WARNINGS`.
///
/// # Errors
///
/// Connection or server errors (retryable when the server is unreachable).
pub(crate) fn open(opts: &Opts) -> Result<Session, MysqlError> {
    let context = "connect";
    let mut conn = Conn::new(opts.clone()).map_err(|e| MysqlError::driver(e, context))?;
    for sql in [
        STRICT,
        "SET NAMES utf8mb4",
        "SET SESSION max_error_count = 65535",
    ] {
        conn.query_drop(sql)
            .map_err(|e| MysqlError::driver(e, context))?;
    }
    let facts: Option<(String, usize, i64, String, u64)> = conn
        .query_first(
            "SELECT @@SESSION.sql_mode, @@SESSION.max_allowed_packet, @@GLOBAL.local_infile, \
             VERSION(), CONNECTION_ID()",
        )
        .map_err(|e| MysqlError::driver(e, context))?;
    let (sql_mode, max_packet, local_infile, version, connection_id) =
        facts.ok_or_else(|| MysqlError::Config("session query returned no row".into()))?;
    Ok(Session {
        no_backslash_escapes: has_mode(&sql_mode, "NO_BACKSLASH_ESCAPES"),
        max_statement_bytes: max_packet.saturating_sub(PACKET_HEADROOM),
        local_infile: local_infile != 0,
        mariadb: version.contains("MariaDB"),
        connection_id,
        conn,
    })
}

/// Connects to `url` (password from the URL or `MYSQL_PWD`) for one-off
/// queries such as schema checks, statistics and the doctor.
pub(crate) fn open_url(url: &str) -> Result<Conn, MysqlError> {
    let opts = SinkConfig::new(url, "", &[]).opts()?;
    Conn::new(opts).map_err(|e| MysqlError::driver(e, "connect"))
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
