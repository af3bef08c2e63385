//! The protocol's packet framing: a 3-byte length, a sequence number, and
//! payloads of 2^24 - 1 bytes or more split across packets.
//!
//! Nothing read from the server is trusted: a payload joined from several
//! packets may not grow past [`MAX_REPLY`] (what the handshake announces as
//! our `max_allowed_packet`), and every packet must carry the next sequence
//! number (an ERR packet excepted: it is the server's error whatever its
//! number). A violation is a [`MysqlError::Protocol`] before the offending
//! payload is allocated.

use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::os::unix::net::UnixStream;

use crate::MysqlError;

/// Largest payload one packet carries; a payload of this size or more
/// continues in the next packet.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Largest payload accepted from the server, joined across packets: the
/// `max_allowed_packet` the handshake announces. The replies this client
/// reads are OKs, errors and a few short rows.
pub(super) const MAX_REPLY: usize = 16 * 1024 * 1024;

/// Payloads up to this size are allocated whole before they are read
/// (faster for the usual small replies); larger ones grow as bytes arrive.
const SMALL_PAYLOAD: usize = 64 * 1024;

/// Bytes a packet's header takes: length (3) and sequence number (1).
pub(super) const HEADER_ROOM: usize = 4;

/// The byte stream under the packets.
#[derive(Debug)]
pub(super) enum Stream {
    /// TCP, with `TCP_NODELAY` (a statement is one write).
    Tcp(TcpStream),
    /// A Unix socket (the server's `@@socket` on the same machine).
    #[cfg(unix)]
    Unix(UnixStream),
}

impl Stream {
    /// The stream with the options' read and write timeouts.
    pub(super) fn with_timeouts(self, opts: &mysql::Opts) -> io::Result<Self> {
        let (read, write) = (
            opts.get_read_timeout().copied(),
            opts.get_write_timeout().copied(),
        );
        match &self {
            Stream::Tcp(s) => {
                s.set_read_timeout(read)?;
                s.set_write_timeout(write)?;
            }
            #[cfg(unix)]
            Stream::Unix(s) => {
                s.set_read_timeout(read)?;
                s.set_write_timeout(write)?;
            }
        }
        Ok(self)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            #[cfg(unix)]
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// Packets over a [`Stream`]: buffered reads, one `write` per command.
#[derive(Debug)]
pub(super) struct Framed<S = Stream> {
    /// The stream, read through a buffer (replies are small and many).
    stream: BufReader<S>,
    /// The sequence number the next packet read or written carries.
    sequence: u8,
    /// Largest payload accepted, joined across packets.
    limit: usize,
    /// Headers and payload of the packets being written, reused.
    out: Vec<u8>,
}

impl<S: Read + Write> Framed<S> {
    /// Frames packets over `stream`.
    pub(super) fn new(stream: S) -> Self {
        Framed {
            stream: BufReader::with_capacity(16 * 1024, stream),
            sequence: 0,
            limit: MAX_REPLY,
            out: Vec::new(),
        }
    }

    /// Expects the first packet of a command's reply next (sequence 1).
    /// Needed before each reply when commands were sent ahead of replies:
    /// every command restarts the numbering.
    pub(super) fn expect_reply(&mut self) {
        self.sequence = 1;
    }

    /// Reads the next payload into `payload` (cleared first), joining a
    /// payload split across packets.
    ///
    /// # Errors
    ///
    /// [`MysqlError::Connection`] (or `TimedOut`) for I/O errors, also when
    /// the server closed the connection; [`MysqlError::Protocol`] for a
    /// packet out of sequence or a payload past the limit.
    pub(super) fn read(
        &mut self,
        payload: &mut Vec<u8>,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        payload.clear();
        loop {
            let mut header = [0; 4];
            self.stream
                .read_exact(&mut header)
                .map_err(|e| MysqlError::io(&e, context))?;
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            self.check_size(payload.len(), len, context)?;
            let (expected, first) = (self.sequence, payload.is_empty());
            let out_of_order = |sequence| MysqlError::Protocol {
                what: format!("a packet with sequence number {sequence}, expected {expected}"),
                context,
            };
            if header[3] != expected && !(first && len <= SMALL_PAYLOAD) {
                return Err(out_of_order(header[3]));
            }
            self.sequence = header[3].wrapping_add(1);
            self.read_payload(payload, len)
                .map_err(|e| MysqlError::io(&e, context))?;
            // An ERR packet is the server's word whatever its number (an
            // error a server sends on its own, on shutdown, a kill or an
            // idle timeout, need not follow the numbering): the caller
            // reads it as an error.
            if header[3] != expected && payload.first() != Some(&0xFF) {
                return Err(out_of_order(header[3]));
            }
            if len < MAX_PAYLOAD {
                return Ok(());
            }
        }
    }

    /// Appends the `len` bytes of one packet's payload to `payload`. A
    /// small payload (the usual OK) is read in place; a large one grows as
    /// its bytes arrive, so that a length the server does not follow with
    /// data costs no allocation.
    fn read_payload(&mut self, payload: &mut Vec<u8>, len: usize) -> io::Result<()> {
        let start = payload.len();
        if len <= SMALL_PAYLOAD {
            payload.resize(start + len, 0);
            return self.stream.read_exact(&mut payload[start..]);
        }
        let got = (&mut self.stream).take(len as u64).read_to_end(payload)?;
        if got < len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    /// Checks a packet's length before its payload is read: the joined
    /// payload may not grow past the limit.
    fn check_size(
        &self,
        joined: usize,
        len: usize,
        context: &'static str,
    ) -> Result<(), MysqlError> {
        if joined.saturating_add(len) > self.limit {
            return Err(MysqlError::Protocol {
                what: format!(
                    "a reply of more than {} bytes (the limit is {} bytes)",
                    joined.saturating_add(len),
                    self.limit
                ),
                context,
            });
        }
        Ok(())
    }

    /// Sends `body` as a new command (sequence 0).
    pub(super) fn command(&mut self, body: &[u8]) -> io::Result<()> {
        self.sequence = 0;
        self.send(body)
    }

    /// Sends a new command whose payload follows [`HEADER_ROOM`] free bytes
    /// at the start of `packet`: the header is written there, so a payload
    /// under 16 MiB goes out without a copy.
    pub(super) fn command_in_place(&mut self, packet: &mut [u8]) -> io::Result<()> {
        let len = packet.len() - HEADER_ROOM;
        if len >= MAX_PAYLOAD {
            return self.command(&packet[HEADER_ROOM..]);
        }
        self.sequence = 1;
        let bytes = (len as u32).to_le_bytes();
        packet[..HEADER_ROOM].copy_from_slice(&[bytes[0], bytes[1], bytes[2], 0]);
        let stream = self.stream.get_mut();
        stream.write_all(packet)?;
        stream.flush()
    }

    /// Sends `body` as the next packet of the current exchange (the
    /// handshake's replies).
    pub(super) fn send(&mut self, body: &[u8]) -> io::Result<()> {
        self.out.clear();
        let mut rest = body;
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            let len = (n as u32).to_le_bytes();
            self.out
                .extend_from_slice(&[len[0], len[1], len[2], self.sequence]);
            self.sequence = self.sequence.wrapping_add(1);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < MAX_PAYLOAD {
                break;
            }
        }
        let stream = self.stream.get_mut();
        stream.write_all(&self.out)?;
        stream.flush()
    }

    /// The stream under the packets.
    #[cfg(test)]
    fn get_ref(&self) -> &S {
        self.stream.get_ref()
    }

    /// Fills the read buffer without consuming it (for tests).
    #[cfg(test)]
    fn fill(&mut self) -> io::Result<&[u8]> {
        std::io::BufRead::fill_buf(&mut self.stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream that reads from `input` and records what is written.
    struct Loop {
        input: Cursor<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Loop {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Loop {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn framed(input: Vec<u8>) -> Framed<Loop> {
        Framed::new(Loop {
            input: Cursor::new(input),
            written: Vec::new(),
        })
    }

    #[test]
    fn a_command_is_one_packet_with_sequence_zero() {
        let mut f = framed(Vec::new());
        f.sequence = 5;
        f.command(b"\x03COMMIT").unwrap();
        assert_eq!(f.get_ref().written, b"\x07\x00\x00\x00\x03COMMIT");
    }

    #[test]
    fn a_command_built_in_place_gets_its_header_in_the_room_left() {
        let mut f = framed(Vec::new());
        let mut packet = b"....\x03COMMIT".to_vec();
        f.command_in_place(&mut packet).unwrap();
        assert_eq!(f.get_ref().written, b"\x07\x00\x00\x00\x03COMMIT");
        let mut big = vec![7; HEADER_ROOM + MAX_PAYLOAD];
        f.command_in_place(&mut big).unwrap();
        let w = &f.get_ref().written[11..];
        assert_eq!(&w[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&w[4 + MAX_PAYLOAD..], &[0, 0, 0, 1]);
    }

    #[test]
    fn a_payload_of_the_packet_limit_ends_with_an_empty_packet() {
        let mut f = framed(Vec::new());
        f.command(&vec![7; MAX_PAYLOAD]).unwrap();
        let w = &f.get_ref().written;
        assert_eq!(&w[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&w[4 + MAX_PAYLOAD..], &[0, 0, 0, 1]);
    }

    #[test]
    fn a_split_payload_is_read_whole_and_the_reply_sequence_follows() {
        let mut input = vec![0xFF, 0xFF, 0xFF, 3];
        input.extend(vec![1; MAX_PAYLOAD]);
        input.extend([2, 0, 0, 4, 9, 9]);
        let mut f = framed(input);
        f.sequence = 3;
        f.limit = 2 * MAX_PAYLOAD;
        let mut payload = Vec::new();
        f.read(&mut payload, "t").unwrap();
        assert_eq!(payload.len(), MAX_PAYLOAD + 2);
        assert_eq!(&payload[MAX_PAYLOAD..], &[9, 9]);
        assert_eq!(f.sequence, 5);
        assert!(f.fill().unwrap().is_empty());
    }

    #[test]
    fn a_closed_stream_is_a_lost_connection() {
        let mut f = framed(vec![5, 0, 0]);
        let e = f.read(&mut Vec::new(), "t").unwrap_err();
        assert!(matches!(e, MysqlError::Connection { .. }), "{e}");
    }

    #[test]
    fn a_packet_out_of_sequence_is_a_protocol_error() {
        let mut f = framed(vec![1, 0, 0, 2, 0]);
        f.expect_reply();
        let e = f.read(&mut Vec::new(), "t").unwrap_err();
        assert!(matches!(e, MysqlError::Protocol { .. }), "{e}");
        assert!(
            e.to_string().contains("sequence number 2, expected 1"),
            "{e}"
        );
    }

    #[test]
    fn an_error_packet_out_of_sequence_is_still_the_servers_word() {
        let mut f = framed(vec![3, 0, 0, 0, 0xFF, 0x1D, 0x04]);
        f.expect_reply();
        let mut payload = Vec::new();
        f.read(&mut payload, "t").unwrap();
        assert_eq!(payload, [0xFF, 0x1D, 0x04]);
    }

    #[test]
    fn a_joined_payload_past_the_limit_is_refused_before_it_is_read() {
        // Two full packets announced, a few bytes sent: the second header
        // alone must be refused, without allocating its 16 MiB.
        let mut input = vec![0xFF, 0xFF, 0xFF, 1];
        input.extend(vec![0; MAX_PAYLOAD]);
        input.extend([0xFF, 0xFF, 0xFF, 2, 1, 2, 3]);
        let mut f = framed(input);
        f.expect_reply();
        let mut payload = Vec::new();
        let e = f.read(&mut payload, "t").unwrap_err();
        assert!(e.to_string().contains("the limit is 16777216 bytes"), "{e}");
        assert_eq!(payload.len(), MAX_PAYLOAD);
    }
}
