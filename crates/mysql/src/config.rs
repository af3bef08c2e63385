//! What the user configures: where, which table and columns, how to write.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mysql::{Opts, OptsBuilder};
use ringpipe_pipeline::Keepalive;
pub use ringpipe_pipeline::{Mode, DEFAULT_CONNECT_TIMEOUT, DEFAULT_NET_TIMEOUT};

use crate::redact::redact_url;
use crate::MysqlError;

/// How rows travel to the server. All paths produce identical tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WritePath {
    /// Multi-row `INSERT ... VALUES (...),(...)` text statements.
    Insert,
    /// Prepared multi-row statements on the binary protocol.
    Prepared,
    /// `LOAD DATA LOCAL INFILE` streaming the batch as TSV; falls back to
    /// `Insert` for upserts and when the server disables `local_infile`.
    LoadData,
    /// MariaDB's bulk binary protocol (`COM_STMT_BULK_EXECUTE`); falls back
    /// to `Prepared` on MySQL.
    Bulk,
}

impl Default for WritePath {
    /// `Bulk`: the fastest path on one connection in `benches/write_paths.rs`
    /// and close to `LoadData` on two (see the crate docs), without needing
    /// `local_infile`; falls back to `Prepared` on MySQL.
    fn default() -> Self {
        WritePath::Bulk
    }
}

/// Which client sends the bulk path's statements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum BulkClient {
    /// Our own MariaDB wire client: statements sent one ahead of their
    /// replies, bulk packets built straight from the batch's text. Where it
    /// cannot serve a connection (TLS, compression, an authentication
    /// plugin other than `mysql_native_password` and `client_ed25519`) the
    /// sink uses the driver.
    #[default]
    Wire,
    /// The `mysql` crate, one reply awaited per statement.
    Driver,
}

/// Everything a sink needs to know; build with [`SinkConfig::new`] and the
/// builder methods.
///
/// `Debug` and `Display` show the URL with its password replaced by `***`.
#[derive(Clone)]
pub struct SinkConfig {
    /// `mysql://user:pass@host:port/db?params`.
    pub(crate) url: String,
    /// Table in the URL's database.
    pub(crate) table: String,
    /// Target columns, in the order of the rows' values.
    pub(crate) columns: Vec<String>,
    /// Duplicate-key behaviour.
    pub(crate) mode: Mode,
    /// How rows travel.
    pub(crate) write_path: WritePath,
    /// Who sends the bulk path's statements.
    pub(crate) bulk_client: BulkClient,
    /// Most rows in one statement.
    pub(crate) max_rows_per_statement: usize,
    /// Optional statement size bound, below the server's own.
    pub(crate) max_statement_bytes: Option<usize>,
    /// Bad records allowed (diverted to the reject file) before halting.
    pub(crate) max_bad: u64,
    /// Where bad records go.
    pub(crate) reject_file: Option<PathBuf>,
    /// `(column, type)` pairs for `CREATE TABLE IF NOT EXISTS`.
    pub(crate) create_table: Option<Vec<(String, String)>>,
    /// Statements run on every new connection, before the sink's own setup.
    pub(crate) init_commands: Vec<String>,
    /// File holding the password (first line).
    pub(crate) password_file: Option<PathBuf>,
    /// Connect timeout; `None`: the URL's, else [`DEFAULT_CONNECT_TIMEOUT`].
    pub(crate) connect_timeout: Option<Duration>,
    /// Read/write timeout; `None`: [`DEFAULT_NET_TIMEOUT`].
    pub(crate) net_timeout: Option<Duration>,
}

impl SinkConfig {
    /// A configuration writing `columns` of `table` at `url`, with defaults:
    /// mode [`Mode::Insert`], [`WritePath::default`], 2,000 rows per
    /// statement, no bad records allowed.
    pub fn new(url: impl Into<String>, table: impl Into<String>, columns: &[&str]) -> Self {
        SinkConfig {
            url: url.into(),
            table: table.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            mode: Mode::default(),
            write_path: WritePath::default(),
            bulk_client: BulkClient::default(),
            max_rows_per_statement: 2_000,
            max_statement_bytes: None,
            max_bad: 0,
            reject_file: None,
            create_table: None,
            init_commands: Vec::new(),
            password_file: None,
            connect_timeout: None,
            net_timeout: None,
        }
    }

    /// Bounds how long opening a TCP connection may take (default: the
    /// URL's `tcp_connect_timeout_ms`, else [`DEFAULT_CONNECT_TIMEOUT`]);
    /// overrides the URL. A timeout is a retryable lost connection. At
    /// least 1 ms (a zero timeout would mean none to the socket).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout.max(Duration::from_millis(1)));
        self
    }

    /// Bounds how long one read or write on a connection may wait (default
    /// [`DEFAULT_NET_TIMEOUT`]), and sets `TCP_USER_TIMEOUT` to the same
    /// (overriding the URL's `tcp_user_timeout_ms`). A server that stops
    /// answering then becomes a retryable [`MysqlError::TimedOut`]: the
    /// batch is rolled back and replayed on a new connection. At least
    /// 1 ms (a zero timeout would mean none to the socket).
    pub fn net_timeout(mut self, timeout: Duration) -> Self {
        self.net_timeout = Some(timeout.max(Duration::from_millis(1)));
        self
    }

    /// Sets the duplicate-key mode. On MySQL and MariaDB,
    /// [`Mode::Ignore`] is `INSERT IGNORE`, whose warnings other than the
    /// duplicates it skips are still errors (IGNORE would otherwise turn bad
    /// values into 0 or `NULL`); [`Mode::Upsert`] is `INSERT … ON DUPLICATE
    /// KEY UPDATE` of every mapped non-key column; [`Mode::Replace`] is
    /// `REPLACE`.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the write path.
    pub fn write_path(mut self, path: WritePath) -> Self {
        self.write_path = path;
        self
    }

    /// Sets the client of the bulk path ([`BulkClient::Wire`] by default);
    /// the other paths always use the `mysql` crate.
    pub fn bulk_client(mut self, client: BulkClient) -> Self {
        self.bulk_client = client;
        self
    }

    /// Caps rows per statement (at least 1).
    pub fn max_rows_per_statement(mut self, rows: usize) -> Self {
        self.max_rows_per_statement = rows.max(1);
        self
    }

    /// Caps statement size below what `max_allowed_packet` allows.
    pub fn max_statement_bytes(mut self, bytes: usize) -> Self {
        self.max_statement_bytes = Some(bytes);
        self
    }

    /// Allows up to `max_bad` bad records (over all shards) to be diverted.
    pub fn max_bad(mut self, max_bad: u64) -> Self {
        self.max_bad = max_bad;
        self
    }

    /// Writes bad records to `path` (created or truncated by `prepare`).
    pub fn reject_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.reject_file = Some(path.into());
        self
    }

    /// Creates the table if missing, from `(column, SQL type)` pairs.
    /// Types are trusted configuration; they are checked only for statement
    /// separators and comments.
    pub fn create_table(mut self, columns: Vec<(String, String)>) -> Self {
        self.create_table = Some(columns);
        self
    }

    /// Adds a statement to run on every new connection (e.g. a `SET SESSION`).
    pub fn init_command(mut self, sql: impl Into<String>) -> Self {
        self.init_commands.push(sql.into());
        self
    }

    /// Reads the password from the first line of `path` when the URL has none.
    pub fn password_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.password_file = Some(path.into());
        self
    }

    /// The URL with any password replaced by `***`.
    pub fn redacted_url(&self) -> String {
        redact_url(&self.url)
    }

    /// Driver options: URL, then password from the URL, `password_file` or
    /// `MYSQL_PWD` (in that order), the init commands, and the timeouts and
    /// TCP keepalive both clients apply.
    pub(crate) fn opts(&self) -> Result<Opts, MysqlError> {
        let opts = Opts::from_url(&self.url).map_err(|e| MysqlError::Config(e.to_string()))?;
        let mut builder = OptsBuilder::from_opts(opts.clone())
            // The sink caches its own prepared statements; the driver's cache
            // would close them behind its back when it evicts.
            .stmt_cache_size(0)
            .init(self.init_commands.clone());
        if opts.get_pass().is_none() {
            builder = builder.pass(self.fallback_password()?);
        }
        Ok(self.with_timeouts(builder, &opts).into())
    }

    /// `builder` with the connect, read and write timeouts and TCP
    /// keepalive: the configured values first, then the URL's, then the
    /// defaults (the keepalive's from the net timeout, by [`Keepalive`]'s
    /// rule).
    fn with_timeouts(&self, builder: OptsBuilder, url: &Opts) -> OptsBuilder {
        let connect = self.connect_timeout.or(url.get_tcp_connect_timeout());
        let net = self.net_timeout.unwrap_or(DEFAULT_NET_TIMEOUT);
        let net_ms = u32::try_from(net.as_millis()).unwrap_or(u32::MAX).max(1);
        let user_timeout = match self.net_timeout {
            Some(_) => net_ms,
            None => url.get_tcp_user_timeout_ms().unwrap_or(net_ms),
        };
        let keepalive = Keepalive::for_net_timeout(net);
        let idle_ms = u32::try_from(keepalive.idle.as_millis()).unwrap_or(u32::MAX);
        let interval_secs = u32::try_from(keepalive.interval.as_secs()).unwrap_or(u32::MAX);
        builder
            .tcp_connect_timeout(Some(connect.unwrap_or(DEFAULT_CONNECT_TIMEOUT)))
            .read_timeout(Some(net))
            .write_timeout(Some(net))
            .tcp_keepalive_time_ms(url.get_tcp_keepalive_time_ms().or(Some(idle_ms)))
            .tcp_keepalive_probe_interval_secs(
                url.get_tcp_keepalive_probe_interval_secs()
                    .or(Some(interval_secs)),
            )
            .tcp_keepalive_probe_count(
                url.get_tcp_keepalive_probe_count()
                    .or(Some(keepalive.probes)),
            )
            .tcp_user_timeout_ms(Some(user_timeout))
    }

    /// The password from `password_file` or `MYSQL_PWD`.
    fn fallback_password(&self) -> Result<Option<String>, MysqlError> {
        if let Some(path) = &self.password_file {
            let text =
                std::fs::read_to_string(path).map_err(|source| MysqlError::PasswordFile {
                    path: path.clone(),
                    source,
                })?;
            return Ok(Some(text.lines().next().unwrap_or("").to_owned()));
        }
        Ok(std::env::var("MYSQL_PWD").ok())
    }
}

impl fmt::Debug for SinkConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkConfig")
            .field("url", &self.redacted_url())
            .field("table", &self.table)
            .field("columns", &self.columns)
            .field("mode", &self.mode)
            .field("write_path", &self.write_path)
            .field("bulk_client", &self.bulk_client)
            .field("max_rows_per_statement", &self.max_rows_per_statement)
            .field("max_statement_bytes", &self.max_statement_bytes)
            .field("max_bad", &self.max_bad)
            .field("reject_file", &self.reject_file)
            .field("init_commands", &self.init_commands.len())
            .field("password_file", &self.password_file)
            .field("connect_timeout", &self.connect_timeout)
            .field("net_timeout", &self.net_timeout)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for SinkConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} table {} ({} columns), mode {:?}, path {:?}",
            self.redacted_url(),
            self.table,
            self.columns.len(),
            self.mode,
            self.write_path
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_urls_timeouts_and_defaults_fill_the_rest() {
        let url = "mysql://u@h/db?tcp_connect_timeout_ms=1500&tcp_user_timeout_ms=7000";
        let from_url = SinkConfig::new(url, "t", &["a"]).opts().unwrap();
        assert_eq!(
            from_url.get_tcp_connect_timeout(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(from_url.get_tcp_user_timeout_ms(), Some(7000));
        assert_eq!(from_url.get_read_timeout(), Some(&DEFAULT_NET_TIMEOUT));
        assert_eq!(from_url.get_tcp_keepalive_time_ms(), Some(60_000));
        assert_eq!(from_url.get_tcp_keepalive_probe_interval_secs(), Some(10));
        let flags = SinkConfig::new(url, "t", &["a"])
            .connect_timeout(Duration::from_secs(2))
            .net_timeout(Duration::from_secs(9))
            .opts()
            .unwrap();
        assert_eq!(
            flags.get_tcp_connect_timeout(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(flags.get_write_timeout(), Some(&Duration::from_secs(9)));
        assert_eq!(flags.get_tcp_user_timeout_ms(), Some(9000));
        assert_eq!(flags.get_tcp_keepalive_time_ms(), Some(2000));
        assert_eq!(flags.get_tcp_keepalive_probe_interval_secs(), Some(2));
        assert_eq!(flags.get_tcp_keepalive_probe_count(), Some(6));
    }

    #[test]
    fn debug_and_display_never_show_the_password() {
        let config = SinkConfig::new("mysql://root:hunter2@localhost/test", "t", &["a"]);
        assert!(!format!("{config:?}").contains("hunter2"));
        assert!(!format!("{config}").contains("hunter2"));
        assert!(format!("{config}").contains("root:***@localhost"));
    }

    #[test]
    fn password_file_supplies_a_missing_password() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pw");
        std::fs::write(&path, "from-file\n").unwrap();
        let config = SinkConfig::new("mysql://u@h/db", "t", &["a"]).password_file(&path);
        assert_eq!(config.opts().unwrap().get_pass(), Some("from-file"));
    }

    #[test]
    fn url_password_wins_over_mysql_pwd_which_wins_over_nothing() {
        // The only test reading MYSQL_PWD without a password file.
        std::env::set_var("MYSQL_PWD", "from-env");
        let from_env = SinkConfig::new("mysql://u@h/db", "t", &["a"])
            .opts()
            .unwrap();
        let from_url = SinkConfig::new("mysql://u:in-url@h/db", "t", &["a"])
            .opts()
            .unwrap();
        std::env::remove_var("MYSQL_PWD");
        assert_eq!(from_env.get_pass(), Some("from-env"));
        assert_eq!(from_url.get_pass(), Some("in-url"));
    }

    #[test]
    fn missing_password_file_is_a_clear_error() {
        let config =
            SinkConfig::new("mysql://u@h/db", "t", &["a"]).password_file("/nonexistent/pw");
        let err = config.opts().unwrap_err();
        assert!(err.to_string().contains("/nonexistent/pw"));
    }
}
