//! Line and column of a byte offset, counted once over the input as it
//! streams past.
//!
//! Every byte is scanned exactly once, in large slices: newlines with
//! memchr's vectorised count, and characters (UTF-8 leading bytes) only
//! after the last newline of each slice. Per record the cost is
//! one call over the bytes since the previous record.

/// Line/column state at some byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineCounter {
    /// Byte offset this state describes.
    offset: u64,
    /// 1-based line at `offset`.
    line: u64,
    /// Characters between the line's start and `offset` (0-based column).
    chars_into_line: u64,
}

impl LineCounter {
    /// State at `offset`, taken to be the start of line 1.
    pub(crate) fn at_start(offset: u64) -> Self {
        LineCounter {
            offset,
            line: 1,
            chars_into_line: 0,
        }
    }

    /// The byte offset described.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// 1-based line.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// 1-based column, in characters.
    pub(crate) fn column(&self) -> u64 {
        self.chars_into_line + 1
    }

    /// Moves past `bytes`, which must be the input starting at `self.offset()`.
    pub(crate) fn advance(&mut self, bytes: &[u8]) {
        match memchr::memrchr(b'\n', bytes) {
            None => self.chars_into_line += count_chars(bytes),
            Some(last) => {
                self.line += count_newlines(&bytes[..last]) + 1;
                self.chars_into_line = count_chars(&bytes[last + 1..]);
            }
        }
        self.offset += bytes.len() as u64;
    }

    /// A copy moved past `bytes`.
    pub(crate) fn advanced(mut self, bytes: &[u8]) -> Self {
        self.advance(bytes);
        self
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    // memchr's iterator has a vectorised `count`.
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Counts UTF-8 characters by counting bytes that are not continuation
/// bytes (`0b10xx_xxxx`, i.e. -128..=-65 as `i8`). Invalid UTF-8 is caught
/// elsewhere; here it only needs to be counted consistently.
fn count_chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_col(counter: LineCounter) -> (u64, u64) {
        (counter.line(), counter.column())
    }

    #[test]
    fn counts_lines_and_characters_not_bytes() {
        let mut counter = LineCounter::at_start(0);
        counter.advance("ab\ncafé 🚀".as_bytes());
        assert_eq!(line_col(counter), (2, 7));
        assert_eq!(counter.offset(), 3 + 5 + 1 + 4);
    }

    #[test]
    fn split_input_gives_the_same_answer() {
        let text = "<a>\n  <b>é\n\n</b>\n</a>".as_bytes();
        let whole = LineCounter::at_start(0).advanced(text);
        for split in 0..text.len() {
            let mut counter = LineCounter::at_start(0);
            counter.advance(&text[..split]);
            counter.advance(&text[split..]);
            assert_eq!(counter, whole, "split at {split}");
        }
        assert_eq!(line_col(whole), (5, 5));
    }

    #[test]
    fn starts_at_a_given_offset() {
        let counter = LineCounter::at_start(3).advanced(b"x\ny");
        assert_eq!(
            (counter.offset(), counter.line(), counter.column()),
            (6, 2, 2)
        );
    }
}
