//! The wire client against a server that sends anything: the entry point
//! of the `wire_session` fuzz target (`fuzz/`) and of the deterministic
//! mutation test in this crate's suite.
//!
//! The "server" is the far end of a Unix socket pair that writes a fixed
//! byte string, whatever the client says, then closes. The client runs a
//! whole session against it: handshake, a text result set, a prepare, a
//! bulk command sent ahead of a `COMMIT`, and a `ROLLBACK` after whatever
//! failed. Every outcome must be a value (`Ok` or a typed error), never a
//! panic, a hang or an allocation past the framing's limits.

use std::io::Write;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use mysql::{Opts, OptsBuilder};

use super::framing::{Stream, HEADER_ROOM};
use super::WireConn;
use crate::MysqlError;

/// How long the client waits for a byte the script never sends (the script
/// is written at once, so only a client bug could wait at all).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs one client session against a server that sends `server` and
/// closes; the first error met, if any. `Ok(false)` when the client
/// handed the connection to the driver (another authentication plugin).
///
/// # Errors
///
/// Whatever the client reports: protocol, server or connection errors.
#[doc(hidden)]
pub fn wire_session(server: &[u8]) -> Result<bool, MysqlError> {
    let io = |e: std::io::Error| MysqlError::io(&e, "fuzz");
    let (client, mut far) = UnixStream::pair().map_err(io)?;
    client.set_read_timeout(Some(READ_TIMEOUT)).map_err(io)?;
    client.set_write_timeout(Some(READ_TIMEOUT)).map_err(io)?;
    let script = server.to_vec();
    let peer = std::thread::spawn(move || {
        // Errors here only mean the client hung up first.
        let _ = far.write_all(&script);
        let _ = far.shutdown(Shutdown::Write);
        let _ = std::io::copy(&mut far, &mut std::io::sink());
    });
    let result = session(Stream::Unix(client));
    // The client's end is closed by now, so the peer's copy has ended.
    let _ = peer.join();
    result
}

/// The session [`wire_session`] runs on `stream`.
fn session(stream: Stream) -> Result<bool, MysqlError> {
    let opts: Opts = OptsBuilder::new()
        .user(Some("fuzz"))
        .pass(Some("secret"))
        .db_name(Some("test"))
        .into();
    let Some(mut conn) = WireConn::handshake(stream, &opts)? else {
        return Ok(false);
    };
    let result = exchange(&mut conn);
    let rollback = conn.query_drop("ROLLBACK", "fuzz");
    result.and(rollback).map(|_| true)
}

/// The commands after the handshake: a result set, a prepare, a bulk
/// command and a `COMMIT` sent ahead of their replies.
fn exchange(conn: &mut WireConn) -> Result<(), MysqlError> {
    conn.query_rows("SELECT @@socket", "fuzz")?;
    let id = conn.prepare("INSERT INTO t VALUES (?, ?)", "fuzz")?;
    let mut packet = vec![0; HEADER_ROOM];
    packet.push(0xFA);
    packet.extend_from_slice(&id.to_le_bytes());
    packet.extend_from_slice(&[128, 0, 252, 0, 252, 0, 0, 1, b'1', 1]);
    conn.send_packet(&mut packet, "fuzz")?;
    conn.send_query("COMMIT", "fuzz")?;
    conn.finish("fuzz")?;
    conn.finish("fuzz")?;
    Ok(())
}

/// What a well-behaved MariaDB sends for the session of [`wire_session`],
/// packet by packet (each with its header): the seed of the mutation test
/// and of the fuzz corpus.
#[doc(hidden)]
pub fn script() -> Vec<Vec<u8>> {
    vec![
        packet(
            0,
            &greeting(b"5.5.5-10.11.6-MariaDB", b"mysql_native_password"),
        ),
        packet(2, &ok()),
        // SELECT @@socket: one column, its definition, EOF, one row, EOF.
        packet(1, &[1]),
        packet(2, &column_definition()),
        packet(3, &eof()),
        packet(4, b"\x0f/tmp/mysqld.sock"),
        packet(5, &eof()),
        // The prepare: id 1, no columns, 2 parameters and their definitions.
        packet(1, &[0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0]),
        packet(2, &column_definition()),
        packet(3, &column_definition()),
        packet(4, &eof()),
        // The bulk command's OK, COMMIT's, ROLLBACK's.
        packet(1, &ok()),
        packet(1, &ok()),
        packet(1, &ok()),
    ]
}

/// One packet: 3-byte length, sequence number, payload.
#[doc(hidden)]
pub fn packet(sequence: u8, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_le_bytes();
    let mut out = vec![len[0], len[1], len[2], sequence];
    out.extend_from_slice(payload);
    out
}

/// A MariaDB greeting (protocol 10, 4.1 packets, bulk operations) naming
/// `version` and the authentication `plugin`.
#[doc(hidden)]
pub fn greeting(version: &[u8], plugin: &[u8]) -> Vec<u8> {
    // PROTOCOL_41 | SECURE_CONNECTION | TRANSACTIONS | PLUGIN_AUTH |
    // LONG_FLAG | CONNECT_WITH_DB; no LONG_PASSWORD (MariaDB's CLIENT_MYSQL).
    let capabilities: u32 = 0x0200 | 0x8000 | 0x2000 | 0x0008_0000 | 0x0004 | 0x0008;
    let caps = capabilities.to_le_bytes();
    let mut p = vec![10];
    p.extend_from_slice(version);
    p.push(0);
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&caps[..2]);
    p.push(45); // utf8mb4_general_ci
    p.extend_from_slice(&2u16.to_le_bytes()); // autocommit
    p.extend_from_slice(&caps[2..]);
    p.push(21);
    p.extend_from_slice(&[0; 6]);
    p.extend_from_slice(&4u32.to_le_bytes()); // MARIADB_CLIENT_STMT_BULK_OPERATIONS
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(plugin);
    p.push(0);
    p
}

/// An OK packet: nothing affected, autocommit status, no warnings.
#[doc(hidden)]
pub fn ok() -> Vec<u8> {
    vec![0, 0, 0, 2, 0, 0, 0]
}

/// An EOF packet: no warnings, autocommit status.
fn eof() -> Vec<u8> {
    vec![0xFE, 0, 0, 2, 0]
}

/// A column definition (its content is skipped by the client).
fn column_definition() -> Vec<u8> {
    let mut p = Vec::new();
    for text in [&b"def"[..], b"", b"", b"", b"@@socket", b""] {
        p.push(text.len() as u8);
        p.extend_from_slice(text);
    }
    p.extend_from_slice(&[0x0C, 45, 0, 0, 1, 0, 0, 253, 0, 0, 0, 0, 0]);
    p
}
