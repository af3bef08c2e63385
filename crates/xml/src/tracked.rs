//! The buffered reader under the XML parser: it knows where each event
//! starts (line, column, byte offset) and refuses events that grow too big.
//!
//! quick-xml copies every event (a tag, a text node, a comment) whole into
//! the caller's buffer before returning it, so without a bound one 1 GB text
//! node would need 1 GB. The parser reads only through this reader; when the
//! bytes consumed since the current event started pass the limit, `fill_buf`
//! fails and the source reports [`LimitKind::ValueBytes`](crate::LimitKind).

use std::io::{self, BufRead, Read};

use crate::position::LineCounter;

/// Bytes requested from the inner reader per refill.
const CHUNK: usize = 64 * 1024;

/// A `BufRead` that tracks the position of event starts.
///
/// The source calls [`mark`](Self::mark) before asking the parser for each
/// event; the mark is then the event's first byte. Line counting is lazy:
/// the counter runs over each buffer once when it is refilled, and up to the
/// mark when a record's position is asked for.
pub(crate) struct TrackedReader {
    inner: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    /// Next unconsumed byte in `buf`.
    pos: usize,
    /// End of valid data in `buf`.
    end: usize,
    /// Input offset of `buf[0]`.
    base: u64,
    /// Input offset where the current event starts.
    mark: u64,
    /// Line/column at `mark`, once the buffer holding it has been counted.
    at_mark: Option<LineCounter>,
    /// Counted up to here; `<= mark` whenever `at_mark` is `None`.
    counter: LineCounter,
    /// Longest event, in bytes, before `fill_buf` fails.
    max_event: u64,
    /// Set when `fill_buf` failed because of `max_event`.
    too_large: bool,
}

impl TrackedReader {
    /// Reads `inner`, whose first byte is at input offset `start` (non-zero
    /// when a byte-order mark was stripped before it).
    pub(crate) fn new(inner: Box<dyn Read + Send>, start: u64, max_event: u64) -> Self {
        TrackedReader {
            inner,
            buf: vec![0; CHUNK].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: start,
            mark: start,
            at_mark: None,
            counter: LineCounter::at_start(start),
            max_event,
            too_large: false,
        }
    }

    /// Notes that the next event starts at the current read position.
    #[inline]
    pub(crate) fn mark(&mut self) {
        self.mark = self.base + self.pos as u64;
        self.at_mark = None;
    }

    /// Line/column/offset of the current event's first byte.
    pub(crate) fn mark_position(&mut self) -> LineCounter {
        if let Some(at_mark) = self.at_mark {
            return at_mark;
        }
        self.count_to(self.mark);
        self.counter
    }

    /// Whether the last `fill_buf` error was the event-size limit.
    pub(crate) fn hit_event_limit(&self) -> bool {
        self.too_large
    }

    /// Runs the counter up to `offset`, which must lie in the buffer.
    fn count_to(&mut self, offset: u64) {
        let from = (self.counter.offset() - self.base) as usize;
        let to = (offset - self.base) as usize;
        self.counter.advance(&self.buf[from..to]);
    }

    /// Counts the whole buffer before it is overwritten, keeping the
    /// mark's position if it lies in it.
    fn count_buffer(&mut self) {
        if self.at_mark.is_none() {
            self.count_to(self.mark);
            self.at_mark = Some(self.counter);
        }
        self.count_to(self.base + self.end as u64);
    }
}

impl Read for TrackedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for TrackedReader {
    #[inline]
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            self.refill()?;
        }
        Ok(&self.buf[self.pos..self.end])
    }

    #[inline]
    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.end);
    }
}

impl TrackedReader {
    /// Reads the next chunk once the buffer is used up.
    #[cold]
    fn refill(&mut self) -> io::Result<()> {
        let event_len = self.base + self.end as u64 - self.mark;
        if event_len > self.max_event {
            self.too_large = true;
            return Err(io::Error::other(
                "a single XML event exceeds the size limit",
            ));
        }
        self.count_buffer();
        self.base += self.end as u64;
        self.pos = 0;
        self.end = loop {
            match self.inner.read(&mut self.buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its data a few bytes at a time, to force many refills.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len() - self.1);
            out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    fn reader(data: &str, max_event: u64) -> TrackedReader {
        let inner = Trickle(data.as_bytes().to_vec(), 0);
        TrackedReader::new(Box::new(inner), 0, max_event)
    }

    fn skip(reader: &mut TrackedReader, mut n: usize) {
        while n > 0 {
            let step = reader.fill_buf().unwrap().len().min(n);
            reader.consume(step);
            n -= step;
        }
    }

    #[test]
    fn mark_position_survives_refills() {
        let mut r = reader("ab\ncdé\nfg", 100);
        skip(&mut r, 4);
        r.mark();
        skip(&mut r, 5);
        let at = r.mark_position();
        assert_eq!((at.offset(), at.line(), at.column()), (4, 2, 2));
        r.mark();
        let at = r.mark_position();
        assert_eq!((at.offset(), at.line(), at.column()), (9, 3, 2));
    }

    #[test]
    fn an_event_longer_than_the_limit_fails() {
        let mut r = reader("0123456789", 4);
        r.mark();
        let mut sink = Vec::new();
        let err = r.read_to_end(&mut sink).unwrap_err();
        assert!(r.hit_event_limit(), "{err}");
        assert!(sink.len() <= 4 + 3, "read {} bytes", sink.len());
    }

    #[test]
    fn marks_reset_the_event_length() {
        let mut r = reader("0123456789", 4);
        for _ in 0..10 {
            r.mark();
            skip(&mut r, 1);
        }
        assert!(r.fill_buf().unwrap().is_empty());
        assert!(!r.hit_event_limit());
    }
}
