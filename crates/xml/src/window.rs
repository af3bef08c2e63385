//! The input as a sliding window: the bytes of the token being read, and
//! whatever was read after them.
//!
//! The lexer asks for more bytes only while the token it is reading is
//! incomplete, so the window holds at most one token plus one read chunk.
//! A token longer than the token limit fails instead of growing the
//! window, which is what bounds memory on a 1 GB text node. Bytes are
//! checked as UTF-8 once, in whole chunks as they arrive, and line numbers
//! are counted once, as bytes leave the window.

use std::io::{self, Read};
use std::ops::Range;

use crate::chars;
use crate::diagnose::{Fault, Located};
use crate::encoding::DecodeError;
use crate::error::LimitKind;
use crate::position::LineCounter;

/// Bytes requested from the input per read.
const CHUNK: usize = 64 * 1024;

/// Above this size the buffer shrinks back once its long token is gone, so
/// that one huge value does not pin its memory for the rest of the run.
const KEEP: usize = 1 << 20;

/// A window over the input starting at the current token.
pub(crate) struct Window {
    inner: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// First byte of the current token.
    start: usize,
    /// End of the bytes read.
    end: usize,
    /// `buf[..valid]` is known to be UTF-8 (from `start` on; earlier bytes
    /// may have been dropped).
    valid: usize,
    /// Whether `buf[valid..]` starts with bytes that are not UTF-8 (or the
    /// input ended inside a character).
    invalid: bool,
    /// Whether what stops `valid` is a character XML forbids (a C0
    /// control, U+FFFE, U+FFFF) rather than bad UTF-8.
    forbidden: bool,
    /// The input has ended.
    eof: bool,
    /// Input offset of `buf[0]`.
    base: u64,
    /// Line/column counted up to some offset at or before `start`.
    counter: LineCounter,
    /// Longest token, in bytes, before reading more fails.
    max_token: usize,
    /// `max_value_bytes`, reported when a token grows past `max_token`.
    value_limit: u64,
    /// Bytes moved to the buffer's head so far.
    #[cfg(test)]
    moved: usize,
}

impl Window {
    /// A window over `inner`, whose first byte is at input offset `start`
    /// (non-zero when a byte-order mark was stripped before it).
    pub(crate) fn new(
        inner: Box<dyn Read + Send>,
        start: u64,
        max_token: usize,
        value_limit: u64,
    ) -> Self {
        Self::starting_at(inner, LineCounter::at_start(start), max_token, value_limit)
    }

    /// A window over `inner`, whose first byte is at `at` (offset, line and
    /// column): a region of a file read from the middle.
    pub(crate) fn starting_at(
        inner: Box<dyn Read + Send>,
        at: LineCounter,
        max_token: usize,
        value_limit: u64,
    ) -> Self {
        Window {
            inner,
            buf: vec![0; 2 * CHUNK],
            start: 0,
            end: 0,
            valid: 0,
            invalid: false,
            forbidden: false,
            eof: false,
            base: at.offset(),
            counter: at,
            max_token,
            value_limit,
            #[cfg(test)]
            moved: 0,
        }
    }

    /// The current token's bytes and what was read after them.
    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// The leading bytes of [`data`](Self::data) that passed the UTF-8
    /// and character checks.
    #[inline]
    pub(crate) fn checked(&self) -> &[u8] {
        &self.buf[self.start..self.valid.max(self.start)]
    }

    /// Whether the input has ended (no [`fill`](Self::fill) will add bytes).
    #[inline]
    pub(crate) fn at_eof(&self) -> bool {
        self.eof
    }

    /// Ends the current token after its first `len` bytes; the next token
    /// starts there.
    #[inline]
    pub(crate) fn consume(&mut self, len: usize) {
        debug_assert!(self.start + len <= self.end);
        self.start += len;
    }

    /// The current token's bytes `range` as text.
    ///
    /// # Errors
    ///
    /// An encoding fault at the first byte that is not UTF-8 when `range`
    /// reaches it. `range` must start and end on ASCII bytes or at the
    /// end of the token (never inside a character).
    #[inline(always)]
    pub(crate) fn text(&self, range: Range<usize>) -> Result<&str, Located> {
        // Every token's bytes pass through here before the next token
        // starts, so `valid` does not fall behind `start`; saturating keeps
        // the check sound even if it did.
        let valid = self.valid.saturating_sub(self.start);
        if range.end > valid {
            return Err(self.invalid_at(valid));
        }
        let bytes = &self.data()[range];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: `buf[..self.valid]` passed a UTF-8 check (see
        // `check_utf8`) and `bytes` lies inside it. Its ends are on ASCII
        // bytes or at the token's end, which the lexer only places before
        // an ASCII byte or at the end of valid data, so they are character
        // boundaries and the slice is UTF-8 on its own.
        Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
    }

    /// The fault for the first byte past the valid text, `at` bytes into
    /// the token.
    #[cold]
    fn invalid_at(&self, at: usize) -> Located {
        let fault = match self
            .data()
            .get(at..)
            .and_then(|rest| rest.first().map(|&b| (b, rest)))
        {
            Some((b, _)) if self.forbidden && b < 0x20 => Fault::Forbidden(format!(
                "character U+{b:04X} is not allowed in XML (only tab, LF and CR of the \
                 control characters)"
            )),
            Some((_, rest)) if self.forbidden => Fault::Forbidden(format!(
                "character {:?} (a noncharacter) is not allowed in XML",
                String::from_utf8_lossy(&rest[..3.min(rest.len())])
            )),
            _ => Fault::BadUtf8,
        };
        Located { fault, offset: at }
    }

    /// Input offset of the current token's first byte (cheaper than
    /// [`position`](Self::position), which also counts lines).
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// Line/column/offset of the current token's first byte.
    pub(crate) fn position(&mut self) -> LineCounter {
        let from = (self.counter.offset() - self.base) as usize;
        self.counter.advance(&self.buf[from..self.start]);
        self.counter
    }

    /// Reads more input after the current data. Returns `false` at the end
    /// of input.
    ///
    /// # Errors
    ///
    /// A limit fault when the current token is already longer than the
    /// token limit, an I/O or encoding fault when reading fails (positioned
    /// at the token's start).
    #[cold]
    pub(crate) fn fill(&mut self) -> Result<bool, Located> {
        if self.eof {
            return Ok(false);
        }
        if self.end - self.start > self.max_token {
            return Err(Fault::Limit(LimitKind::ValueBytes, self.value_limit).into());
        }
        self.make_room();
        let read = loop {
            match self.inner.read(&mut self.buf[self.end..self.end + CHUNK]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        let n = read.map_err(|e| Located::from(read_fault(e)))?;
        self.end += n;
        self.eof = n == 0;
        self.check_utf8();
        Ok(n != 0)
    }

    /// Makes at least [`CHUNK`] bytes free after `end`: drops the bytes
    /// before the current token (counting their lines first), and grows
    /// the buffer if the token alone needs it.
    fn make_room(&mut self) {
        if self.buf.len() - self.end >= CHUNK {
            return;
        }
        // Only a token that starts past the buffer's head moves, and then
        // once: a long token read chunk after chunk stays where it is (moving
        // it on every read would copy a 64 MiB value a thousand times).
        if self.start > 0 {
            let from = (self.counter.offset() - self.base) as usize;
            self.counter.advance(&self.buf[from..self.start]);
            self.buf.copy_within(self.start..self.end, 0);
            #[cfg(test)]
            {
                self.moved += self.end - self.start;
            }
            self.base += self.start as u64;
            self.end -= self.start;
            self.valid = self.valid.saturating_sub(self.start);
            self.start = 0;
        }
        if self.buf.len() > KEEP && self.end <= CHUNK {
            self.buf.truncate(2 * CHUNK);
            self.buf.shrink_to_fit();
        }
        if self.buf.len() - self.end < CHUNK {
            self.buf.resize(self.end + CHUNK, 0);
        }
    }

    /// Extends `valid` over the bytes just read.
    fn check_utf8(&mut self) {
        if self.invalid {
            return;
        }
        let from = self.valid;
        match simdutf8::compat::from_utf8(&self.buf[self.valid..self.end]) {
            Ok(_) => self.valid = self.end,
            Err(e) => {
                self.valid += e.valid_up_to();
                // `error_len() == None`: the bytes end inside a character,
                // which the next read may complete; at the end of input it
                // is an error.
                self.invalid = e.error_len().is_some() || self.eof;
            }
        }
        if let Some(bad) = chars::first_forbidden(&self.buf[from..self.valid]) {
            self.valid = from + bad;
            self.invalid = true;
            self.forbidden = true;
        }
    }
}

/// Classifies a failed read: the transcoder's bad bytes, or I/O.
fn read_fault(error: io::Error) -> Fault {
    match error
        .get_ref()
        .and_then(|e| e.downcast_ref::<DecodeError>())
    {
        Some(decode) => Fault::Encoding(decode.message.clone()),
        None => Fault::Io(error),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Hands out its data `step` bytes at a time, to force many reads.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.step).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// `data` as an input that hands out `step` bytes per read.
    pub(crate) fn trickle(data: &[u8], step: usize) -> Box<dyn Read + Send> {
        Box::new(Trickle {
            data: data.to_vec(),
            at: 0,
            step,
        })
    }

    fn window(data: &[u8], max_token: usize) -> Window {
        Window::new(trickle(data, 3), 0, max_token, 7)
    }

    fn fill_all(w: &mut Window) {
        while w.fill().unwrap() {}
    }

    #[test]
    fn positions_survive_dropping_bytes() {
        let mut w = window("ab\ncdé\nfg".as_bytes(), 100);
        fill_all(&mut w);
        w.consume(4);
        let at = w.position();
        assert_eq!((at.offset(), at.line(), at.column()), (4, 2, 2));
        w.consume(5);
        let at = w.position();
        assert_eq!((at.offset(), at.line(), at.column()), (9, 3, 2));
    }

    #[test]
    fn a_character_split_across_reads_is_valid() {
        let mut w = window("aé€😀".as_bytes(), 100);
        fill_all(&mut w);
        let len = w.data().len();
        assert_eq!(w.text(0..len).unwrap(), "aé€😀");
    }

    #[test]
    fn text_up_to_a_bad_byte_is_fine_and_past_it_fails_there() {
        let mut w = window(b"ab\xFFcd", 100);
        fill_all(&mut w);
        assert_eq!(w.text(0..2).unwrap(), "ab");
        let error = w.text(0..5).unwrap_err();
        assert!(matches!(error.fault, Fault::BadUtf8));
        assert_eq!(error.offset, 2);
    }

    #[test]
    fn characters_xml_forbids_stop_the_text_there() {
        for (input, at) in [
            (&b"ab\x00c"[..], 2),
            (b"a\tb\r\n\x0c", 5),
            ("aé\u{FFFE}".as_bytes(), 3),
            ("\u{FFFF}".as_bytes(), 0),
        ] {
            let mut w = window(input, 100);
            fill_all(&mut w);
            let error = w.text(0..input.len()).unwrap_err();
            assert!(matches!(error.fault, Fault::Forbidden(_)), "{input:?}");
            assert_eq!(error.offset, at, "{input:?}");
        }
    }

    #[test]
    fn input_ending_inside_a_character_is_invalid() {
        let mut w = window(b"ab\xC3", 100);
        fill_all(&mut w);
        assert_eq!(w.text(0..3).unwrap_err().offset, 2);
    }

    #[test]
    fn a_long_token_is_moved_at_most_once() {
        let mut data = b"<a>".to_vec();
        data.extend_from_slice(&[b'x'; 4 * KEEP]);
        let mut w = Window::new(Box::new(io::Cursor::new(data)), 0, 8 * KEEP, 7);
        assert!(w.fill().unwrap());
        w.consume(3);
        while w.fill().unwrap() {}
        assert_eq!(w.data().len(), 4 * KEEP);
        assert!(w.moved < 2 * CHUNK, "moved {} bytes", w.moved);
    }

    #[test]
    fn the_buffer_shrinks_back_after_a_huge_token() {
        let mut data = vec![b'x'; 4 * KEEP];
        data.extend_from_slice(&[b'y'; 4 * CHUNK]);
        let mut w = Window::new(Box::new(io::Cursor::new(data)), 0, 8 * KEEP, 7);
        while w.data().len() < 4 * KEEP {
            assert!(w.fill().unwrap());
        }
        assert!(w.buf.len() >= 4 * KEEP);
        w.consume(4 * KEEP);
        while w.fill().unwrap() {
            let len = w.data().len();
            w.consume(len);
        }
        assert!(w.buf.len() <= 2 * CHUNK, "{} bytes kept", w.buf.len());
    }

    #[test]
    fn a_token_longer_than_the_limit_fails_without_reading_on() {
        let data = vec![b'x'; 1 << 20];
        let mut w = Window::new(Box::new(io::Cursor::new(data)), 0, 100, 7);
        let error = loop {
            match w.fill() {
                Ok(true) => {}
                Ok(false) => panic!("read everything"),
                Err(error) => break error,
            }
        };
        assert!(matches!(
            error.fault,
            Fault::Limit(LimitKind::ValueBytes, 7)
        ));
        assert!(
            w.data().len() <= 100 + CHUNK,
            "{} bytes held",
            w.data().len()
        );
    }
}
