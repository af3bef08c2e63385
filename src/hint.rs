//! Each database error a user can cause, as one line in the user's terms
//! with the fix when there is one. Everything else keeps the library's own
//! message; internals (shards, batches, sequences) are only in the
//! `RUST_LOG=debug` log.

use ringpipe_mysql::{codes, redact_url, MysqlError};
use ringpipe_postgres::PgError;

/// Access denied for a user (wrong password or unknown user).
const ACCESS_DENIED: [u16; 2] = [codes::ACCESS_DENIED, 1698];
/// `ER_DBACCESS_DENIED_ERROR`: no rights on the database.
const DB_ACCESS_DENIED: u16 = 1044;
/// `ER_BAD_DB_ERROR`: unknown database.
const BAD_DB: u16 = 1049;

/// `error`, met importing into `table` of the server `url`, for the user.
pub fn database(error: &MysqlError, url: &str, table: &str) -> String {
    let server = redact_url(url);
    match error {
        MysqlError::Connection { message, context } | MysqlError::TimedOut { message, context }
            if context.contains("connect") =>
        {
            format!(
                "cannot connect to {server}: {message}; is the server running? \
                 try `ringpipe doctor --url {server}`"
            )
        }
        MysqlError::Server { code, message, .. } if ACCESS_DENIED.contains(code) => format!(
            "{message} at {server}: check the user and the password \
             (in the URL, MYSQL_PWD or --password-file)"
        ),
        MysqlError::Server { code, message, .. } if *code == DB_ACCESS_DENIED => {
            format!("{message}: grant the user rights on it, or name another database in the URL")
        }
        MysqlError::Server { code, message, .. } if *code == BAD_DB => format!(
            "{message} on {server}: create it first (CREATE DATABASE …) \
             or name another in the URL"
        ),
        MysqlError::Server { message, .. } if error.is_read_only() => format!(
            "{message} at {server}: the server takes no writes (a replica, or a failover \
             under way): point --url at the primary; `ringpipe doctor --url {server}` names \
             the setting"
        ),
        MysqlError::Schema(message) if message.contains("does not exist") => format!(
            "{message}: create it first (for a catalogue made by `ringpipe gen`: \
             `ringpipe gen --ddl {table}` prints its CREATE TABLE)"
        ),
        duplicate if is_duplicate(duplicate) => format!(
            "{duplicate}; to accept duplicate keys use --mode ignore|upsert|replace, \
             or set bad records aside with --max-bad N --reject-file FILE"
        ),
        other => other.to_string(),
    }
}

/// `error`, met importing into `table` of the PostgreSQL server `url`,
/// for the user: the same cases as [`database`], by SQLSTATE.
pub fn postgres(error: &PgError, url: &str, table: &str) -> String {
    let server = redact_url(url);
    if let Some(why) = error.connect_failure() {
        return format!(
            "cannot connect to {server}: {why}; is the server running? \
             try `ringpipe doctor --url {server}`"
        );
    }
    match error.sqlstate() {
        // invalid_password, invalid_authorization_specification
        Some("28P01" | "28000") => format!(
            "{error} at {server}: check the user and the password \
             (in the URL, PGPASSWORD or --password-file)"
        ),
        // insufficient_privilege
        Some("42501") => format!("{error}: grant the user the rights, or name another table"),
        // invalid_catalog_name: no such database
        Some("3D000") => format!(
            "{error} on {server}: create it first (CREATE DATABASE …) or name another in the URL"
        ),
        // undefined_table
        Some("42P01") => format!(
            "{error}: create it first (for a catalogue made by `ringpipe gen`: \
             `ringpipe gen --ddl {table} --dialect postgres` prints its CREATE TABLE)"
        ),
        _ if error.read_only() => format!(
            "{error} at {server}: the server takes no writes (a standby, or \
             default_transaction_read_only): point --url at the primary, or list every host \
             with target_session_attrs=read-write; `ringpipe doctor --url {server}` names the \
             setting"
        ),
        // unique_violation
        Some("23505") => format!(
            "{error}; to accept duplicate keys use --mode ignore|upsert|replace, \
             or set bad records aside with --max-bad N --reject-file FILE"
        ),
        _ => error.to_string(),
    }
}

/// Whether the server refused a record for a duplicate key.
fn is_duplicate(error: &MysqlError) -> bool {
    matches!(
        error.code(),
        Some(codes::DUP_ENTRY | codes::DUP_ENTRY_WITH_KEY_NAME)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error(code: u16, message: &str) -> MysqlError {
        MysqlError::Server {
            code,
            state: "HY000".into(),
            message: message.into(),
            context: "insert",
        }
    }

    #[test]
    fn a_server_that_takes_no_writes_is_named_with_the_doctor() {
        let url = "mysql://u:secret@db:3306/test";
        let read_only = server_error(
            codes::OPTION_PREVENTS_STATEMENT,
            "The MariaDB server is running with the --read-only option so it cannot execute \
             this statement",
        );
        let line = database(&read_only, url, "t");
        assert!(line.contains("the server takes no writes"), "{line}");
        assert!(
            line.ends_with("`ringpipe doctor --url mysql://u:***@db:3306/test` names the setting"),
            "{line}"
        );
        assert!(
            database(&server_error(codes::READ_ONLY_MODE, "read only"), url, "t")
                .contains("takes no writes")
        );
        // The same code for another option is not a read-only server.
        let file_priv = server_error(
            codes::OPTION_PREVENTS_STATEMENT,
            "The MariaDB server is running with the --secure-file-priv option so it cannot \
             execute this statement",
        );
        assert!(!database(&file_priv, url, "t").contains("takes no writes"));
    }
}
