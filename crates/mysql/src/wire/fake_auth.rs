//! A fake MariaDB on 127.0.0.1 that switches every login to another
//! authentication plugin (`client_ed25519`, `parsec`, or one nobody
//! knows), records the size of each answer and refuses the login. Both
//! clients must answer or refuse it with an error, never panic (the
//! `mysql` crate's `mysql_common` panics here when built without its
//! `client_ed25519` / `client_parsec` features).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use super::fuzz::{greeting, packet};
use crate::config::{BulkClient, SinkConfig};
use crate::connect;
use crate::MysqlError;

/// Reads one packet's payload; `None` when the client hung up.
fn read_packet(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut header = [0; 4];
    stream.read_exact(&mut header).ok()?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload).ok()?;
    Some(payload)
}

/// One login: greeting, switch to `plugin`, the plugin's exchange, then
/// `ERR 1045`. The sizes of the client's answers after the switch. The
/// plugin `b"(empty)"` answers the login with an empty packet instead, and
/// `b"(refuse)"` refuses it at once, without a switch.
fn serve(mut stream: TcpStream, plugin: &'static [u8]) -> Vec<usize> {
    let hello = greeting(b"5.5.5-10.11.6-MariaDB", b"mysql_native_password");
    let mut answers = Vec::new();
    let mut sequence = 0;
    let mut send = |stream: &mut TcpStream, payload: &[u8]| {
        let _ = stream.write_all(&packet(sequence, payload));
        sequence += 2;
    };
    send(&mut stream, &hello);
    if read_packet(&mut stream).is_none() {
        return answers;
    }
    if plugin == b"(empty)" {
        send(&mut stream, &[]);
        let _ = read_packet(&mut stream);
        return answers;
    }
    let mut refusal = vec![0xFF, 0x15, 0x04, b'#'];
    refusal.extend_from_slice(b"28000Access denied for user 'fuzz'");
    if plugin == b"(refuse)" {
        send(&mut stream, &refusal);
        return answers;
    }
    let mut switch = vec![0xFE];
    switch.extend_from_slice(plugin);
    switch.push(0);
    switch.extend_from_slice(&[7; 32]);
    send(&mut stream, &switch);
    let Some(answer) = read_packet(&mut stream) else {
        return answers;
    };
    answers.push(answer.len());
    if plugin == b"parsec" {
        // The client asked for the extended salt with an empty packet.
        let mut salt = vec![0x01, b'P', 0];
        salt.extend_from_slice(&[9; 18]);
        send(&mut stream, &salt);
        let Some(answer) = read_packet(&mut stream) else {
            return answers;
        };
        answers.push(answer.len());
    }
    send(&mut stream, &refusal);
    answers
}

/// Serves `logins` logins switching to `plugin`; the answer sizes of each
/// login arrive on the receiver.
fn fake_server(plugin: &'static [u8], logins: usize) -> (u16, mpsc::Receiver<Vec<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(logins) {
            let Ok(stream) = stream else { return };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = tx.send(serve(stream, plugin));
        }
    });
    (port, rx)
}

/// Logs in through `client` to a fake server switching to `plugin`.
fn login(
    plugin: &'static [u8],
    client: BulkClient,
    logins: usize,
) -> (MysqlError, Vec<Vec<usize>>) {
    let (port, answers) = fake_server(plugin, logins);
    let url = format!("mysql://fuzz:pw@127.0.0.1:{port}/test?prefer_socket=false");
    let opts = SinkConfig::new(url, "t", &["a"])
        .connect_timeout(Duration::from_secs(5))
        .net_timeout(Duration::from_secs(5))
        .opts()
        .unwrap();
    let error = connect::open_with(&opts, client).unwrap_err();
    let answers = (0..logins)
        .map(|_| answers.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    (error, answers)
}

#[test]
fn ed25519_is_answered_on_both_paths() {
    // The wire client answers the switch itself: the server's refusal.
    let (error, answers) = login(b"client_ed25519", BulkClient::Wire, 1);
    assert_eq!(error.code(), Some(1045), "{error}");
    assert_eq!(answers, [vec![64]]);
    // The driver answers it too (and reads the refusal as unexpected).
    let (error, answers) = login(b"client_ed25519", BulkClient::Driver, 1);
    assert!(!error.to_string().is_empty());
    assert_eq!(answers, [vec![64]]);
}

#[test]
fn a_refused_driver_login_is_tried_once_more() {
    // The driver's second try covers the ed25519 nonce it signs short
    // (see `connect`); the wire client signs it whole and does not retry.
    let (error, answers) = login(b"(refuse)", BulkClient::Driver, 2);
    assert_eq!(error.code(), Some(1045), "{error}");
    assert_eq!(answers.len(), 2);
    let (error, _) = login(b"(refuse)", BulkClient::Wire, 1);
    assert_eq!(error.code(), Some(1045), "{error}");
}

#[test]
fn parsec_goes_to_the_driver_which_answers_it() {
    // The wire client hands the connection to the driver, which logs in
    // again and answers: empty packet for the salt, then nonce + signature.
    let (error, answers) = login(b"parsec", BulkClient::Wire, 2);
    assert!(!error.to_string().is_empty());
    assert_eq!(answers[1], vec![0, 96], "{error}");
    let (_, answers) = login(b"parsec", BulkClient::Driver, 1);
    assert_eq!(answers, [vec![0, 96]]);
}

#[test]
fn an_unknown_plugin_is_refused_with_a_clear_error() {
    let (error, _) = login(b"dialog", BulkClient::Wire, 2);
    assert!(
        matches!(&error, MysqlError::UnsupportedAuth { plugin } if plugin == "dialog"),
        "{error}"
    );
    assert!(error.to_string().contains("use mysql_native_password"));
}

#[test]
fn an_empty_authentication_reply_is_an_error_on_both_paths() {
    for client in [BulkClient::Wire, BulkClient::Driver] {
        let (error, _) = login(b"(empty)", client, 1);
        assert!(
            matches!(error, MysqlError::Protocol { .. }),
            "{client:?}: {error}"
        );
    }
}
