//! Opening a connection: the URL's settings, then the init commands.

use postgres::{Client, Config, NoTls};

use crate::config::driver_config;
use crate::error::CONNECTING;
use crate::PgError;

/// A connection to `url` that has run `init_commands`.
///
/// # Errors
///
/// When the server cannot be reached or an init command fails.
pub fn connect(url: &str, init_commands: &[String]) -> Result<Client, PgError> {
    connect_with(&driver_config(url)?, init_commands)
}

/// Runs `sql` (statements without parameters) on a connection of its
/// own: a tool's set-up, such as a scratch table.
///
/// # Errors
///
/// When the server cannot be reached or refuses a statement.
pub fn execute(url: &str, sql: &str) -> Result<(), PgError> {
    connect(url, &[])?
        .batch_execute(sql)
        .map_err(|e| PgError::server(e, "running a set-up statement"))
}

fn connect_with(config: &Config, init_commands: &[String]) -> Result<Client, PgError> {
    let mut client = config
        .connect(NoTls)
        .map_err(|e| PgError::server(e, CONNECTING))?;
    for sql in init_commands {
        client
            .batch_execute(sql)
            .map_err(|e| PgError::server(e, "running an init command"))?;
    }
    Ok(client)
}
