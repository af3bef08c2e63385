//! Opening the byte stream under the wire client: TCP with the options'
//! connect, read and write timeouts, `TCP_NODELAY`, keepalive and
//! `TCP_USER_TIMEOUT` (as the driver sets them on its own sockets), or the
//! server's Unix socket with the same read and write timeouts.

use std::net::{TcpStream, ToSocketAddrs};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::Duration;

use mysql::Opts;

use super::framing::Stream;
use super::reply;
use crate::MysqlError;

/// A TCP connection to the options' host and port, with their timeouts.
pub(super) fn tcp_stream(opts: &Opts) -> Result<Stream, MysqlError> {
    let context = "connect";
    let io = |e| reply::io_error(e, context);
    let host = opts.get_ip_or_hostname();
    let mut last = None;
    for addr in (host.as_ref(), opts.get_tcp_port())
        .to_socket_addrs()
        .map_err(io)?
    {
        let attempt = match opts.get_tcp_connect_timeout() {
            Some(timeout) => TcpStream::connect_timeout(&addr, timeout),
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => {
                stream.set_nodelay(true).map_err(io)?;
                keep_alive(&stream, opts).map_err(io)?;
                return Stream::Tcp(stream).with_timeouts(opts).map_err(io);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(io(last.unwrap_or_else(|| {
        std::io::Error::other("the host has no address")
    })))
}

/// TCP keepalive probes and `TCP_USER_TIMEOUT` as the options say (the
/// driver sets the same on its connections): a peer that vanishes without
/// a FIN or RST is noticed even while no read is waiting.
fn keep_alive(stream: &TcpStream, opts: &Opts) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(stream);
    if let Some(ms) = opts.get_tcp_keepalive_time_ms() {
        let mut keepalive =
            socket2::TcpKeepalive::new().with_time(Duration::from_millis(u64::from(ms)));
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        {
            if let Some(secs) = opts.get_tcp_keepalive_probe_interval_secs() {
                keepalive = keepalive.with_interval(Duration::from_secs(u64::from(secs)));
            }
            if let Some(count) = opts.get_tcp_keepalive_probe_count() {
                keepalive = keepalive.with_retries(count);
            }
        }
        socket.set_tcp_keepalive(&keepalive)?;
    }
    #[cfg(target_os = "linux")]
    if let Some(ms) = opts.get_tcp_user_timeout_ms() {
        socket.set_tcp_user_timeout(Some(Duration::from_millis(u64::from(ms))))?;
    }
    Ok(())
}

/// A connection to the Unix socket at `path`, with the options' timeouts.
#[cfg(unix)]
pub(super) fn unix_stream(path: &str, opts: &Opts) -> Result<Stream, MysqlError> {
    let io = |e| reply::io_error(e, "connect");
    let stream = UnixStream::connect(path).map_err(io)?;
    Stream::Unix(stream).with_timeouts(opts).map_err(io)
}

/// No Unix sockets here: the caller stays on TCP.
#[cfg(not(unix))]
pub(super) fn unix_stream(_path: &str, _opts: &Opts) -> Result<Stream, MysqlError> {
    Err(reply::io_error(
        std::io::ErrorKind::Unsupported.into(),
        "connect",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SinkConfig;

    #[test]
    fn tcp_sockets_get_the_timeouts_keepalive_and_user_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let opts = SinkConfig::new(format!("mysql://u@127.0.0.1:{port}/db"), "t", &["a"])
            .net_timeout(Duration::from_secs(7))
            .opts()
            .unwrap();
        let Stream::Tcp(stream) = tcp_stream(&opts).unwrap() else {
            panic!("a TCP stream");
        };
        assert_eq!(stream.read_timeout().unwrap(), Some(Duration::from_secs(7)));
        assert_eq!(
            stream.write_timeout().unwrap(),
            Some(Duration::from_secs(7))
        );
        let socket = socket2::SockRef::from(&stream);
        assert!(socket.keepalive().unwrap());
        // A quarter of the net timeout, in whole seconds.
        assert_eq!(socket.tcp_keepalive_time().unwrap(), Duration::from_secs(1));
        #[cfg(target_os = "linux")]
        assert_eq!(
            socket.tcp_user_timeout().unwrap(),
            Some(Duration::from_secs(7))
        );
    }
}
