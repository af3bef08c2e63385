//! What a PostgreSQL import writes where, and how.

use std::path::PathBuf;

use postgres::Config;
pub use ringpipe_pipeline::Mode;

use crate::PgError;

/// How rows travel in `COPY … FROM STDIN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CopyFormat {
    /// Binary when every column's type has a binary encoding here, else
    /// text. In binary, a row holding a numeric, timestamp or date value
    /// not in its canonical spelling goes in its own text-format COPY (see
    /// [`Encoder`](crate::Encoder)), so the server reads it as in text.
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
        }
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
        driver_config(&self.url)
    }
}

/// The driver's configuration of `url` (see [`PgConfig::driver_config`]).
///
/// # Errors
///
/// [`PgError::Config`] for a URL the driver cannot read.
pub fn driver_config(url: &str) -> Result<Config, PgError> {
    let mut config: Config = url
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
}
