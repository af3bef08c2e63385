//! Connection phase: the server's greeting, our reply, authentication.
//!
//! Only what the bulk path needs is spoken: protocol 10 with 4.1 packets, a
//! MariaDB server offering bulk operations, and `mysql_native_password`
//! (MariaDB's default plugin), also after an authentication switch, which
//! may also go to `client_ed25519` (MariaDB's `ed25519` plugin). Anything
//! else (TLS, compression, other plugins such as `parsec`, MySQL) is left
//! to the `mysql` crate, built with its `client_ed25519` and
//! `client_parsec` features: [`Greeting::NeedsDriver`] says why.

use std::io::{Read, Write};

use mysql::consts::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use mysql_common::scramble::{create_response_for_ed25519, scramble_native};

use super::framing::{Framed, MAX_REPLY};
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
const MAX_PACKET: u32 = MAX_REPLY as u32;

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
    framed.read(&mut payload, context)?;
    if payload.first() == Some(&0xFF) {
        // A refusal before any greeting (too many connections, host blocked).
        return Err(reply::parse(&payload, CapabilityFlags::empty(), context)
            .err()
            .unwrap_or_else(|| reply::protocol("an unreadable refusal", context)));
    }
    check_greeting(&payload, context)?;
    let hello: HandshakePacket<'_> = ParseBuf(&payload)
        .parse(())
        .map_err(|_| reply::protocol("an unreadable greeting", context))?;
    if !hello.server_version_ref().is_ascii() {
        // mysql_common's version parsers would panic on digits of other
        // scripts, which their patterns accept.
        return Err(reply::protocol(
            "a server version that is not ASCII",
            context,
        ));
    }
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

/// Refuses what `mysql_common`'s greeting parser would trip on: an
/// authentication data length of 128 or more overflows its `i8`
/// arithmetic (a panic where overflow checks are on).
fn check_greeting(payload: &[u8], context: &'static str) -> Result<(), MysqlError> {
    // Protocol version, NUL-terminated server version, then the length at
    // offset 20 of the fixed part.
    let Some(nul) = payload.iter().skip(1).position(|&b| b == 0) else {
        return Ok(()); // the parser refuses it
    };
    match payload.get(1 + nul + 1 + 20) {
        Some(&len) if len >= 0x80 => Err(reply::protocol(
            format!("an authentication data length of {len}"),
            context,
        )),
        _ => Ok(()),
    }
}

/// Reads the server's verdict, answering one switch to
/// `mysql_native_password` or `client_ed25519`; `None` for a switch to
/// anything else.
fn authenticate<S: Read + Write>(
    framed: &mut Framed<S>,
    login: &Login<'_>,
    capabilities: CapabilityFlags,
    payload: &mut Vec<u8>,
) -> Result<Option<()>, MysqlError> {
    let context = "authentication";
    let mut switched = false;
    loop {
        framed.read(payload, context)?;
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
        let answer = match switch.auth_plugin() {
            _ if switched => return Ok(None),
            AuthPlugin::MysqlNativePassword => {
                native_scramble(switch.plugin_data(), login.password)
            }
            AuthPlugin::Ed25519 => {
                create_response_for_ed25519(login.password, ed25519_nonce(payload)).to_vec()
            }
            _ => return Ok(None),
        };
        switched = true;
        framed
            .send(&answer)
            .map_err(|e| reply::io_error(e, context))?;
    }
}

/// The nonce of an authentication switch to `client_ed25519`: the 32
/// bytes after the plugin name, as sent. (`AuthSwitchRequest::plugin_data`
/// cuts a last 0 byte, which is right for the NUL after a
/// `mysql_native_password` scramble but not for this nonce, whose last byte
/// is 0 in one login of 256: the signature would then cover 31 bytes and
/// the server refuse the password.)
fn ed25519_nonce(switch: &[u8]) -> &[u8] {
    let data = match switch.iter().skip(1).position(|&b| b == 0) {
        Some(nul) => &switch[nul + 2..],
        None => &[],
    };
    &data[..data.len().min(32)]
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
    fn the_ed25519_nonce_keeps_a_last_zero_byte() {
        let switch = |nonce: &[u8]| [&[0xFE][..], b"client_ed25519\0", nonce].concat();
        let mut nonce = [7u8; 32];
        nonce[31] = 0;
        assert_eq!(ed25519_nonce(&switch(&nonce)), nonce);
        // A NUL after the 32 bytes is not part of the nonce.
        assert_eq!(ed25519_nonce(&switch(&[&nonce[..], &[0]].concat())), nonce);
        assert_eq!(ed25519_nonce(&switch(&[])), b"");
        assert_eq!(ed25519_nonce(b"\xFEclient_ed25519"), b"");
    }

    #[test]
    fn the_client_asks_for_neither_local_files_nor_multi_statements() {
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_LOCAL_FILES));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
        assert!(!WANTED.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF));
    }
}
