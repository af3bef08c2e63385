//! Connection phase: the server's greeting, our reply, authentication.
//!
//! Only what the bulk path needs is spoken: protocol 10 with 4.1 packets, a
//! MariaDB server offering bulk operations, and `mysql_native_password`
//! (MariaDB's default plugin), also after an authentication switch.
//! Anything else (TLS, compression, other plugins, MySQL) is left to the
//! `mysql` crate: [`Greeting::NeedsDriver`] says why.

use std::io::{Read, Write};

use mysql::consts::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use mysql_common::scramble::scramble_native;

use super::framing::Framed;
use super::reply::{self, Reply};
use crate::MysqlError;

/// What the sink asks for. Neither `CLIENT_LOCAL_FILES` nor
/// `CLIENT_MULTI_STATEMENTS`: this client never reads a file for the server
/// and never runs two statements from one string. Without
/// `CLIENT_DEPRECATE_EOF`, result sets end with EOF packets.
/// `CLIENT_LONG_PASSWORD` (MariaDB's `CLIENT_MYSQL`) stays clear so that
/// the server reads the extended capabilities.
const WANTED: CapabilityFlags = CapabilityFlags::CLIENT_PROTOCOL_41
    .union(CapabilityFlags::CLIENT_SECURE_CONNECTION)
    .union(CapabilityFlags::CLIENT_TRANSACTIONS)
    .union(CapabilityFlags::CLIENT_PLUGIN_AUTH)
    .union(CapabilityFlags::CLIENT_LONG_FLAG);

/// Largest packet we announce we would accept (replies are small).
const MAX_PACKET: u32 = 16 * 1024 * 1024;

/// How the connection phase ended.
#[derive(Debug)]
pub(super) enum Greeting {
    /// Authenticated.
    Ready {
        /// The capabilities both sides agreed on.
        capabilities: CapabilityFlags,
    },
    /// This client cannot serve this connection; the driver can.
    NeedsDriver(&'static str),
}

/// Who connects, from the driver's options.
pub(super) struct Login<'a> {
    /// The user name.
    pub(super) user: &'a str,
    /// The password (empty: none).
    pub(super) password: &'a [u8],
    /// The database to select, if any.
    pub(super) database: Option<&'a str>,
}

/// Reads the greeting, answers it and authenticates.
///
/// # Errors
///
/// I/O and protocol failures; the server's refusal (wrong password, ...).
pub(super) fn run<S: Read + Write>(
    framed: &mut Framed<S>,
    login: &Login<'_>,
) -> Result<Greeting, MysqlError> {
    let context = "connect";
    let mut payload = Vec::new();
    framed
        .read(&mut payload)
        .map_err(|e| reply::io_error(e, context))?;
    if payload.first() == Some(&0xFF) {
        // A refusal before any greeting (too many connections, host blocked).
        return Err(reply::parse(&payload, CapabilityFlags::empty(), context)
            .err()
            .unwrap_or_else(|| reply::protocol("an unreadable refusal", context)));
    }
    let hello: HandshakePacket<'_> = ParseBuf(&payload)
        .parse(())
        .map_err(|_| reply::protocol("an unreadable greeting", context))?;
    let server = hello.capabilities();
    if hello.protocol_version() != 10 || !server.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Ok(Greeting::NeedsDriver("an old protocol version"));
    }
    if hello.maria_db_server_version_parsed().is_none()
        || server.contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
        || !hello
            .mariadb_ext_capabilities()
            .contains(MariadbCapabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS)
    {
        return Ok(Greeting::NeedsDriver(
            "a server without MariaDB's bulk operations",
        ));
    }
    let plugin = hello.auth_plugin().map(|p| p.into_owned());
    if !matches!(plugin, None | Some(AuthPlugin::MysqlNativePassword)) {
        return Ok(Greeting::NeedsDriver(
            "an authentication plugin other than mysql_native_password",
        ));
    }
    let mut nonce = hello.scramble_1_ref().to_vec();
    nonce.extend_from_slice(hello.scramble_2_ref().unwrap_or_default());
    nonce.resize(20, 0);
    // `HandshakeResponse::new` adds CLIENT_CONNECT_WITH_DB when a database
    // is given, and CLIENT_PLUGIN_AUTH for the plugin named.
    let capabilities = WANTED & server;
    let response = HandshakeResponse::new(
        Some(native_scramble(&nonce, login.password)),
        hello.server_version_parsed().unwrap_or((10, 0, 0)),
        Some(login.user.as_bytes()),
        login
            .database
            .filter(|db| !db.is_empty())
            .map(str::as_bytes),
        Some(AuthPlugin::MysqlNativePassword),
        capabilities,
        None,
        MAX_PACKET,
    )
    .with_mariadb_ext_capabilities(MariadbCapabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS);
    let capabilities = response.capabilities();
    let mut body = Vec::new();
    response.serialize(&mut body);
    framed
        .send(&body)
        .map_err(|e| reply::io_error(e, context))?;
    authenticate(framed, login, capabilities, &mut payload).map(|ready| match ready {
        None => Greeting::NeedsDriver("an authentication switch to another plugin"),
        Some(()) => Greeting::Ready { capabilities },
    })
}

/// Reads the server's verdict, answering one switch to
/// `mysql_native_password`; `None` for a switch to anything else.
fn authenticate<S: Read + Write>(
    framed: &mut Framed<S>,
    login: &Login<'_>,
    capabilities: CapabilityFlags,
    payload: &mut Vec<u8>,
) -> Result<Option<()>, MysqlError> {
    let context = "authentication";
    let mut switched = false;
    loop {
        framed
            .read(payload)
            .map_err(|e| reply::io_error(e, context))?;
        if payload.first() != Some(&0xFE) {
            return match reply::parse(payload, capabilities, context)? {
                Reply::Ok(_) => Ok(Some(())),
                Reply::Other => Err(reply::protocol(
                    "an unexpected authentication reply",
                    context,
                )),
            };
        }
        let switch: AuthSwitchRequest<'_> = ParseBuf(payload)
            .parse(())
            .map_err(|_| reply::protocol("an unreadable authentication switch", context))?;
        if switched || switch.auth_plugin() != AuthPlugin::MysqlNativePassword {
            return Ok(None);
        }
        switched = true;
        let answer = native_scramble(switch.plugin_data(), login.password);
        framed
            .send(&answer)
            .map_err(|e| reply::io_error(e, context))?;
    }
}

/// `mysql_native_password`'s answer to `nonce`: empty for no password.
fn native_scramble(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    scramble_native(nonce, password).map_or_else(Vec::new, |s| s.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_password_answers_with_nothing() {
        assert!(native_scramble(&[1; 20], b"").is_empty());
        assert_eq!(native_scramble(&[1; 20], b"secret").len(), 20);
    }

    #[test]
    fn the_client_asks_for_neither_local_files_nor_multi_statements() {
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_LOCAL_FILES));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF));
    }
}
