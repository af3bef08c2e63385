//! What a PostgreSQL import writes where, and how.

use std::path::PathBuf;
use std::time::Duration;

use postgres::Config;
use ringpipe_pipeline::Keepalive;
pub use ringpipe_pipeline::{Mode, DEFAULT_CONNECT_TIMEOUT, DEFAULT_NET_TIMEOUT};

use crate::PgError;

/// How rows travel in `COPY … FROM STDIN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CopyFormat {
    /// Binary when every column's type has a binary encoding here, else
    /// text. In binary, a row holding a value in a spelling the encoders
    /// do not read (a numeric, timestamp or date not in its canonical
    /// spelling, a hexadecimal float, ...) goes in its own text-format COPY
    /// (see [`Encoder`](crate::Encoder)), so the server reads it as in text.
    #[default]
    Auto,
    /// `FORMAT binary`, with the same per-row text fallback as `Auto`; an
    /// error if a column's type has no encoder here.
    Binary,
    /// `FORMAT text`: the server parses every value, any type.
    Text,
}

/// The destination of a PostgreSQL import: server, table, columns, mode.
///
/// `Debug` does not show the URL, which may hold a password.
#[derive(Clone)]
pub struct PgConfig {
    /// `postgres://user[:password]@host[:port]/database` (or `postgresql://`).
    pub url: String,
    /// The table, `name` or `schema.name`.
    pub table: String,
    /// The columns each row fills, in row order.
    pub columns: Vec<String>,
    /// What to do with existing keys.
    pub mode: Mode,
    /// The COPY format.
    pub format: CopyFormat,
    /// SQL run on every connection as it opens, in order.
    pub init_commands: Vec<String>,
    /// Bad records set aside (over all shards) before the import stops.
    pub max_bad: u64,
    /// Where bad records go, one line each with the reason.
    pub reject_file: Option<PathBuf>,
    /// How long opening a TCP connection may take; `None`: the URL's
    /// `connect_timeout`, else [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Option<Duration>,
    /// How long a sink's call may wait for the server (and sent data stay
    /// unacknowledged); `None`: the URL's `tcp_user_timeout`, else
    /// [`DEFAULT_NET_TIMEOUT`].
    pub net_timeout: Option<Duration>,
}

impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConfig")
            .field("url", &"(hidden)")
            .field("table", &self.table)
            .field("columns", &self.columns)
            .field("mode", &self.mode)
            .field("format", &self.format)
            .field("init_commands", &self.init_commands)
            .field("max_bad", &self.max_bad)
            .field("reject_file", &self.reject_file)
            .field("connect_timeout", &self.connect_timeout)
            .field("net_timeout", &self.net_timeout)
            .finish()
    }
}

impl PgConfig {
    /// A plain insert of `columns` into `table`.
    pub fn new(url: impl Into<String>, table: impl Into<String>, columns: &[&str]) -> Self {
        PgConfig {
            url: url.into(),
            table: table.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            mode: Mode::Insert,
            format: CopyFormat::Auto,
            init_commands: Vec::new(),
            max_bad: 0,
            reject_file: None,
            connect_timeout: None,
            net_timeout: None,
        }
    }

    /// Bounds how long opening a TCP connection may take (overrides the
    /// URL's `connect_timeout`; at least 1 ms). A timeout is a retryable
    /// lost connection. The login that follows is bounded by
    /// [`net_timeout`](Self::net_timeout) on the sinks' connections.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout.max(Duration::from_millis(1)));
        self
    }

    /// Bounds how long one call of a sink (its login, a statement, a
    /// COPY, the `COMMIT`) may wait for the server, and how long the
    /// network may hold what was sent unacknowledged (`TCP_USER_TIMEOUT`,
    /// with keepalive probes every quarter of it); overrides the URL's
    /// `tcp_user_timeout`; at least 1 ms. A server that stays silent
    /// longer, a dead host or a cut network becomes a retryable lost
    /// connection: the connection is dropped, and the batch rolled back
    /// and replayed on a new one (a `COMMIT` left without an answer is
    /// settled by the checkpoint first).
    pub fn net_timeout(mut self, timeout: Duration) -> Self {
        self.net_timeout = Some(timeout.max(Duration::from_millis(1)));
        self
    }

    /// Allows `max_bad` bad records: each batch that holds some is searched
    /// (bisected), its good rows commit, its bad ones go to the reject file
    /// with the server's message. With 0 (the default) the first bad record
    /// ends the import, named with its position.
    pub fn max_bad(mut self, max_bad: u64) -> Self {
        self.max_bad = max_bad;
        self
    }

    /// Writes bad records to `path` (emptied by a fresh import, appended
    /// to by a resumed one).
    pub fn reject_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.reject_file = Some(path.into());
        self
    }

    /// Sets the duplicate-key mode. On PostgreSQL, [`Mode::Ignore`] is
    /// `ON CONFLICT DO NOTHING` (within a batch the first of two equal keys
    /// wins), [`Mode::Upsert`] `ON CONFLICT (key) DO UPDATE` of the listed
    /// columns and [`Mode::Replace`] a delete and an insert (within a batch
    /// the last of two equal keys wins for both).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the COPY format.
    pub fn format(mut self, format: CopyFormat) -> Self {
        self.format = format;
        self
    }

    /// Adds SQL to run on every connection as it opens.
    pub fn init_command(mut self, sql: impl Into<String>) -> Self {
        self.init_commands.push(sql.into());
        self
    }

    /// The driver's configuration: the URL's, with the password from
    /// `PGPASSWORD` when the URL has none.
    ///
    /// # Errors
    ///
    /// [`PgError::Config`] for a URL the driver cannot read (the message
    /// does not repeat the URL, which may hold a password).
    pub fn driver_config(&self) -> Result<Config, PgError> {
        self.session_config().map(Config::from)
    }

    /// [`driver_config`](Self::driver_config) for the asynchronous driver
    /// the sinks run with a timeout around every call.
    pub(crate) fn session_config(&self) -> Result<tokio_postgres::Config, PgError> {
        let mut config = session_config(&self.url)?;
        if let Some(timeout) = self.connect_timeout {
            config.connect_timeout(timeout);
        }
        if let Some(timeout) = self.net_timeout {
            net_timeout(&mut config, timeout);
        }
        Ok(config)
    }
}

/// Sets `TCP_USER_TIMEOUT` to `timeout`, with keepalive probes by
/// [`Keepalive`]'s rule, so that a silent peer is noticed within about
/// `timeout` even while nothing is sent.
fn net_timeout(config: &mut tokio_postgres::Config, timeout: Duration) {
    let keepalive = Keepalive::for_net_timeout(timeout);
    config
        .tcp_user_timeout(timeout)
        .keepalives(true)
        .keepalives_idle(keepalive.idle)
        .keepalives_interval(keepalive.interval)
        .keepalives_retries(keepalive.probes);
}

/// The driver's configuration of `url` (see [`PgConfig::driver_config`]).
///
/// # Errors
///
/// [`PgError::Config`] for a URL the driver cannot read.
pub fn driver_config(url: &str) -> Result<Config, PgError> {
    session_config(url).map(Config::from)
}

/// [`driver_config`] for the asynchronous driver.
fn session_config(url: &str) -> Result<tokio_postgres::Config, PgError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| PgError::Config(format!("cannot read the PostgreSQL URL: {e}")))?;
    if config.get_password().is_none() {
        if let Ok(password) = std::env::var("PGPASSWORD") {
            config.password(password);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name("ringpipe");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        net_timeout(&mut config, DEFAULT_NET_TIMEOUT);
    }
    Ok(config)
}

/// Whether `url` names a PostgreSQL server.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_schemes_and_hides_bad_urls() {
        assert!(is_postgres_url("postgresql://u@h/db"));
        assert!(!is_postgres_url("mysql://u@h/db"));
        let config = driver_config("postgres://u:secret@127.0.0.1:5432/test").unwrap();
        assert_eq!(config.get_dbname(), Some("test"));
        let error = driver_config("postgres://u:secret@h:notaport/db").unwrap_err();
        assert!(!error.to_string().contains("secret"), "{error}");
        let config = PgConfig::new("postgres://u:secret@h/db?password=secret", "t", &["a"]);
        let debug = format!("{config:?}");
        assert!(
            !debug.contains("secret") && debug.contains("\"t\""),
            "{debug}"
        );
    }

    #[test]
    fn timeouts_come_from_the_config_then_the_url_then_the_defaults() {
        let plain = driver_config("postgres://u@h/db").unwrap();
        assert_eq!(plain.get_connect_timeout(), Some(&DEFAULT_CONNECT_TIMEOUT));
        assert_eq!(plain.get_tcp_user_timeout(), Some(&DEFAULT_NET_TIMEOUT));
        assert!(plain.get_keepalives());
        assert_eq!(plain.get_keepalives_idle(), Duration::from_secs(60));
        assert_eq!(
            plain.get_keepalives_interval(),
            Some(Duration::from_secs(10))
        );
        assert_eq!(plain.get_keepalives_retries(), Some(6));
        let url = "postgres://u@h/db?connect_timeout=7&tcp_user_timeout=9";
        let from_url = driver_config(url).unwrap();
        assert_eq!(
            from_url.get_connect_timeout(),
            Some(&Duration::from_secs(7))
        );
        assert_eq!(
            from_url.get_tcp_user_timeout(),
            Some(&Duration::from_secs(9))
        );
        let set = PgConfig::new(url, "t", &["a"])
            .connect_timeout(Duration::from_secs(2))
            .net_timeout(Duration::from_secs(20))
            .driver_config()
            .unwrap();
        assert_eq!(set.get_connect_timeout(), Some(&Duration::from_secs(2)));
        assert_eq!(set.get_tcp_user_timeout(), Some(&Duration::from_secs(20)));
        assert_eq!(set.get_keepalives_idle(), Duration::from_secs(5));
        assert_eq!(set.get_keepalives_interval(), Some(Duration::from_secs(5)));
    }
}
