//! Line and column of a byte offset, counted once over the input as it
//! streams past.
//!
//! Every byte is scanned exactly once, in large slices: newlines sixteen
//! bytes at a time, and characters (UTF-8 leading bytes) only
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

/// The `\n` in `bytes`, which are a record's few hundred bytes: memchr's
/// `count` reads up to 32 bytes before its aligned loop and those after it
/// one by one, a large share of so short a slice, so x86-64 counts sixteen
/// bytes at a time with SSE2 (part of its baseline), the last sixteen
/// overlapping.
#[inline]
fn count_newlines(bytes: &[u8]) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let count = sse2::count(b'\n', bytes);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let count = memchr::memchr_iter(b'\n', bytes).count() as u64;
    count
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi64, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_sad_epu8, _mm_set1_epi8, _mm_setzero_si128, _mm_srli_si128,
        _mm_sub_epi8,
    };

    /// The bytes of `bytes` equal to `b`.
    pub(super) fn count(b: u8, bytes: &[u8]) -> u64 {
        let n = bytes.len();
        if n < 16 {
            return bytes.iter().filter(|&&x| x == b).count() as u64;
        }
        // SAFETY: SSE2 is enabled for this build (the module's `cfg`), so
        // every instruction exists; each load reads sixteen bytes of
        // `bytes` (`at + 16 <= n`, and `n >= 16` for the last block),
        // and `_mm_loadu_si128` has no alignment requirement.
        unsafe {
            let wanted = _mm_set1_epi8(b as i8);
            let load = |at: usize| _mm_loadu_si128(bytes.as_ptr().add(at).cast());
            let (mut total, mut lanes, mut counted) = (0, _mm_setzero_si128(), 0);
            let mut at = 0;
            while at + 16 <= n {
                // An equal byte is -1: subtracting it adds one to its lane.
                lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(load(at), wanted));
                at += 16;
                counted += 1;
                // A lane counts to at most 255.
                if counted == 255 {
                    total += sum_bytes(lanes);
                    (lanes, counted) = (_mm_setzero_si128(), 0);
                }
            }
            total += sum_bytes(lanes);
            // The last `n - at` bytes, as the top lanes of the last sixteen.
            let tail = _mm_movemask_epi8(_mm_cmpeq_epi8(load(n - 16), wanted)) as u32;
            total + u64::from((tail >> (16 - (n - at))).count_ones())
        }
    }

    /// The sum of the sixteen bytes of `lanes`.
    ///
    /// # Safety
    ///
    /// SSE2 must be available (it is wherever this module is built).
    #[inline(always)]
    unsafe fn sum_bytes(lanes: __m128i) -> u64 {
        // SAFETY: SSE2 is available (the caller's contract).
        unsafe {
            let halves = _mm_sad_epu8(lanes, _mm_setzero_si128());
            _mm_cvtsi128_si64(_mm_add_epi64(halves, _mm_srli_si128(halves, 8))) as u64
        }
    }
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
    fn newlines_are_counted_as_memchr_counts_them() {
        for len in (0..70).chain([255 * 16 - 1, 255 * 16, 255 * 16 + 17, 10_000]) {
            for every in [1, 2, 3, 7, 16, 1000] {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| if i % every == 0 { b'\n' } else { b'a' })
                    .collect();
                let want = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                assert_eq!(count_newlines(&bytes), want, "len {len}, every {every}");
            }
        }
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
