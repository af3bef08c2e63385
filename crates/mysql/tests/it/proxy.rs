//! A fault-injecting TCP proxy in front of the test server, on 127.0.0.1
//! only: every connection a client opens to [`Proxy::url`] is piped to the
//! real server, and the server's replies pass through [`Fault`]s the test
//! arms at the moment it chooses (a fault armed once hits the next reply
//! chunk of any connection, then disarms), or for the reply to the next
//! `COMMIT` a client sends. One fault acts on the server instead:
//! [`Fault::SilentRollback`].

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What happens to server replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Hold the next reply chunk this long, then pass it on.
    Stall(Duration),
    /// Pass on the first half of the next reply chunk, then close both
    /// sides (a connection cut mid-packet).
    Cut,
    /// Drop the last byte of the next reply chunk and keep the connection
    /// open (a packet shorter than its header says).
    Truncate,
    /// Flip every bit of the first payload byte of the next reply chunk.
    Flip,
    /// Hold every reply chunk this long from now on.
    DelayEach(Duration),
    /// Armed at a `COMMIT` only: close the client's side at once and pass
    /// the `COMMIT` to the server this long after, so that the server
    /// commits a transaction whose client has already reconnected.
    LateCommit(Duration),
    /// Armed at a `COMMIT` only, and hits the transaction's last command
    /// (`RELEASE SAVEPOINT`, else `COMMIT`): before passing it on, send the
    /// server a `ROLLBACK` whose reply the client never sees. The server has
    /// ended the transaction without an error reaching the client, as a
    /// Galera node can after a brute-force abort.
    SilentRollback,
}

/// `COM_QUERY "ROLLBACK"`, sequence 0.
const ROLLBACK: &[u8] = b"\x09\x00\x00\x00\x03ROLLBACK";

/// The proxy; it stops accepting when dropped (piped connections end with
/// their client or server).
pub struct Proxy {
    /// Where clients connect.
    addr: SocketAddr,
    /// The armed one-shot fault, if any.
    once: Arc<Mutex<Option<Fault>>>,
    /// The standing delay of [`Fault::DelayEach`].
    each: Arc<Mutex<Option<Duration>>>,
    /// A fault armed when a client next sends `COMMIT`.
    at_commit: Arc<Mutex<Option<Fault>>>,
}

impl Proxy {
    /// A proxy to `upstream` (`host:port` of the real server).
    pub fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let faults = Faults {
            once: Arc::new(Mutex::new(None)),
            each: Arc::new(Mutex::new(None)),
            at_commit: Arc::new(Mutex::new(None)),
            swallow: Arc::new(Mutex::new(false)),
        };
        let proxy = Proxy {
            addr,
            once: Arc::clone(&faults.once),
            each: Arc::clone(&faults.each),
            at_commit: Arc::clone(&faults.at_commit),
        };
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                pipe(client, server, faults.clone());
            }
        });
        proxy
    }

    /// `url` (a `mysql://user@host:port/db` URL) pointed at the proxy, on
    /// TCP only (no move to the server's Unix socket past the proxy).
    pub fn url(&self, url: &str) -> String {
        let scheme_end = url.find("://").unwrap() + 3;
        let at = url[scheme_end..]
            .find('@')
            .map_or(scheme_end, |i| scheme_end + i + 1);
        let path = url[at..].find('/').map_or(url.len(), |i| at + i);
        let sep = if url.contains('?') { '&' } else { '?' };
        format!(
            "{}{}{}{sep}prefer_socket=false",
            &url[..at],
            self.addr,
            &url[path..]
        )
    }

    /// Arms `fault`.
    pub fn arm(&self, fault: Fault) {
        match fault {
            Fault::DelayEach(d) => *self.each.lock().unwrap() = Some(d),
            other => *self.once.lock().unwrap() = Some(other),
        }
    }

    /// Arms `fault` (one-shot) for the reply to the next `COMMIT`.
    pub fn arm_at_commit(&self, fault: Fault) {
        *self.at_commit.lock().unwrap() = Some(fault);
    }

    /// Whether the one-shot fault armed last has hit.
    pub fn fired(&self) -> bool {
        self.once.lock().unwrap().is_none() && self.at_commit.lock().unwrap().is_none()
    }
}

/// The faults every piped connection shares.
#[derive(Clone)]
struct Faults {
    once: Arc<Mutex<Option<Fault>>>,
    each: Arc<Mutex<Option<Duration>>>,
    at_commit: Arc<Mutex<Option<Fault>>>,
    /// Set when the next reply packet answers a command the proxy sent
    /// itself, and is dropped.
    swallow: Arc<Mutex<bool>>,
}

/// Whether `chunk` starts with a `COM_QUERY` whose text starts with `sql`.
fn starts_query(chunk: &[u8], sql: &[u8]) -> bool {
    chunk.len() > 4 && chunk[4] == 0x03 && chunk[5..].starts_with(sql)
}

/// Pipes `client` to `server` as is (arming the `COMMIT` fault when one
/// passes), and `server` to `client` through the faults.
fn pipe(client: TcpStream, server: TcpStream, faults: Faults) {
    let (Ok(mut up_in), Ok(mut up_out)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let armed = faults.clone();
    thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = up_in.read(&mut buf) {
            let commit = starts_query(&buf[..n], b"COMMIT");
            let last = commit || starts_query(&buf[..n], b"RELEASE SAVEPOINT");
            let mut at_commit = armed.at_commit.lock().unwrap();
            if last && *at_commit == Some(Fault::SilentRollback) {
                at_commit.take();
                *armed.swallow.lock().unwrap() = true;
                if up_out.write_all(ROLLBACK).is_err() {
                    break;
                }
            }
            drop(at_commit);
            // COM_QUERY "COMMIT": armed before the server can answer it.
            if buf[..n].windows(7).any(|w| w == b"\x03COMMIT") {
                let fault = armed.at_commit.lock().unwrap().take();
                if let Some(Fault::LateCommit(hold)) = fault {
                    let _ = up_in.shutdown(Shutdown::Both);
                    thread::sleep(hold);
                    let _ = up_out.write_all(&buf[..n]);
                    thread::sleep(Duration::from_millis(300));
                    let _ = up_out.shutdown(Shutdown::Both);
                    return;
                }
                if let Some(fault) = fault {
                    *armed.once.lock().unwrap() = Some(fault);
                }
            }
            if up_out.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = up_out.shutdown(Shutdown::Write);
    });
    thread::spawn(move || downstream(server, client, &faults));
}

/// Server to client, chunk by chunk, applying the faults.
fn downstream(mut server: TcpStream, mut client: TcpStream, faults: &Faults) {
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &mut buf[..n];
        if std::mem::take(&mut *faults.swallow.lock().unwrap()) {
            // The proxy's own command had no other reply before it: the
            // client waited for each of its own.
            assert!(n >= 4, "a reply read in pieces shorter than a header");
            let len =
                usize::from(chunk[0]) | usize::from(chunk[1]) << 8 | usize::from(chunk[2]) << 16;
            chunk = &mut chunk[(4 + len).min(n)..];
            if chunk.is_empty() {
                continue;
            }
        }
        let n = chunk.len();
        if let Some(delay) = *faults.each.lock().unwrap() {
            thread::sleep(delay);
        }
        let fault = faults.once.lock().unwrap().take();
        let sent = match fault {
            Some(Fault::Stall(d)) => {
                thread::sleep(d);
                client.write_all(chunk)
            }
            Some(Fault::Cut) => {
                let _ = client.write_all(&chunk[..n / 2]);
                break;
            }
            Some(Fault::Truncate) => client.write_all(&chunk[..n - 1]),
            Some(Fault::Flip) => {
                chunk[4.min(n - 1)] ^= 0xFF;
                client.write_all(chunk)
            }
            Some(Fault::DelayEach(_) | Fault::LateCommit(_) | Fault::SilentRollback) | None => {
                client.write_all(chunk)
            }
        };
        if sent.is_err() {
            break;
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}
