//! Finding the first of a few bytes in the short runs the lexer scans: a
//! tag (`<sku>`), an end tag, the indentation between elements, a field
//! value.
//!
//! `memchr` is fastest on long haystacks but pays a fixed cost per call
//! (dispatch, set-up, a vector tail) that dominates on runs of a few bytes,
//! which is most of what a record holds. These scans compare sixteen bytes
//! at once with SSE2 (part of every x86-64 processor, so nothing is
//! detected at run time) and read the last fewer-than-sixteen bytes as
//! `u64` words, finding the first wanted byte with the "has a zero byte"
//! bit trick, then one by one; other processors use the words all the
//! way. A short run costs a handful of instructions; after [`SHORT`]
//! bytes the single-byte scans hand the rest to `memchr`, so a long run
//! costs what it does there (the scans for three or more bytes stay with
//! their own loop).

use memchr::{memchr, memchr2, memchr3};

/// Bytes scanned before a long run goes to `memchr`.
const SHORT: usize = 32;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// `b` in every byte.
#[inline(always)]
const fn splat(b: u8) -> u64 {
    ONES * b as u64
}

/// Sets bit 7 of each byte that is zero in `word`. Bytes above the first
/// zero byte may be marked falsely (a borrow), but the lowest mark is
/// always exact, and every zero byte is marked.
#[inline(always)]
fn zeros(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// Marks the bytes of `word` that are in `set` (lowest mark exact).
#[inline(always)]
fn word_marks<const N: usize>(word: u64, set: [u8; N]) -> u64 {
    set.iter()
        .fold(0, |marks, &b| marks | zeros(word ^ splat(b)))
}

/// Sixteen bytes at a time, with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
    use std::arch::x86_64::{_mm_set1_epi8, _mm_setzero_si128};

    /// A bit per byte of `block` (bit `i` for byte `i`) that is in `set`.
    #[inline(always)]
    pub(super) fn marks<const N: usize>(block: &[u8; 16], set: [u8; N]) -> u32 {
        // SAFETY: the module is built only where SSE2 is enabled (it is
        // part of the x86-64 baseline), so every instruction exists; and
        // `block` is sixteen readable bytes, which `_mm_loadu_si128` reads
        // without any alignment requirement.
        unsafe {
            let bytes = _mm_loadu_si128(block.as_ptr().cast());
            let any = set.iter().fold(_mm_setzero_si128(), |any, &b| {
                _mm_or_si128(any, _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b as i8)))
            });
            _mm_movemask_epi8(any) as u32
        }
    }
}

/// The first position in `data` whose byte is in `set`; past `short`
/// bytes, `long` searches the rest.
#[inline(always)]
fn first<const N: usize>(
    data: &[u8],
    set: [u8; N],
    short: usize,
    long: impl Fn(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let mut at = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while let Some(block) = data.get(at..at + 16) {
        let block: &[u8; 16] = block.try_into().ok()?;
        let found = sse2::marks(block, set);
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize);
        }
        at += 16;
        if at >= short {
            return long(&data[at..]).map(|found| at + found);
        }
    }
    while let Some(chunk) = data.get(at..at + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let found = word_marks(u64::from_le_bytes(word), set);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
        if at >= short {
            return long(&data[at..]).map(|found| at + found);
        }
    }
    let rest = data.get(at..).unwrap_or_default();
    rest.iter()
        .position(|b| set.contains(b))
        .map(|found| at + found)
}

/// White space as XML defines it (production [3]).
const BLANK: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];

/// The length of the white space (space, tab, LF, CR) that starts
/// `data`: the indentation between elements.
#[inline]
pub(crate) fn blank_len(data: &[u8]) -> usize {
    let mut at = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while let Some(block) = data.get(at..at + 16) {
        let Ok(block) = <&[u8; 16]>::try_from(block) else {
            break;
        };
        let other = !sse2::marks(block, BLANK) & 0xFFFF;
        if other != 0 {
            return at + other.trailing_zeros() as usize;
        }
        at += 16;
    }
    let rest = data.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|b| !BLANK.contains(b))
        .unwrap_or(rest.len())
}

/// The first `b` in `data` (as `memchr`).
#[inline]
pub(crate) fn byte(b: u8, data: &[u8]) -> Option<usize> {
    first(data, [b], SHORT, |rest| memchr(b, rest))
}

/// The first `a` or `b` in `data` (as `memchr2`).
#[inline]
pub(crate) fn byte2(a: u8, b: u8, data: &[u8]) -> Option<usize> {
    first(data, [a, b], SHORT, |rest| memchr2(a, b, rest))
}

/// The first `a`, `b`, `c` or `d` in `data` (for the short runs of
/// attribute names).
#[inline]
pub(crate) fn byte4(a: u8, b: u8, c: u8, d: u8, data: &[u8]) -> Option<usize> {
    first(data, [a, b, c, d], usize::MAX, |_| None)
}

/// The first `>`, `"` or `'` in `data`: where a tag ends or a quoted
/// attribute value starts (as `memchr3`).
#[inline]
pub(crate) fn tag_stop(data: &[u8]) -> Option<usize> {
    first(data, [b'>', b'"', b'\''], SHORT, |rest| {
        memchr3(b'>', b'"', b'\'', rest)
    })
}

/// [`tag_stop`], also stopping at `:` and `x`: while the lexer looks for
/// a tag's end, it notes whether the text outside the quoted values (the
/// names) holds one of them, without which no attribute declares a
/// namespace or has a prefix.
#[inline]
pub(crate) fn tag_or_name_stop(data: &[u8]) -> Option<usize> {
    first(data, [b'>', b'"', b'\'', b':', b'x'], usize::MAX, |_| None)
}

/// The first `&`, tab, LF or CR in `data`: where an attribute value needs
/// more than a copy (a reference, or white space normalized to a space).
#[inline]
pub(crate) fn attribute_stop(data: &[u8]) -> Option<usize> {
    first(data, [b'&', b'\t', b'\n', b'\r'], usize::MAX, |_| None)
}

/// The bytes that stop [`text_stop`]: `<` ends the run, `>` may end
/// `]]>`, and `&` (a reference) or `\r` (a line end to normalize) make the
/// run need more than a copy.
const TEXT_STOPS: [u8; 4] = [b'<', b'>', b'&', b'\r'];

/// Whether a text byte stops [`text_stop`].
#[cfg(test)]
fn is_text_stop(b: u8) -> bool {
    TEXT_STOPS.contains(&b)
}

/// The first byte of `data` that stops a text run (`<`, `>`, `&`, `\r`).
#[inline]
pub(crate) fn text_stop(data: &[u8]) -> Option<usize> {
    // memchr has no four-byte search: this loop all the way.
    first(data, TEXT_STOPS, usize::MAX, |_| None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::SplitMix64;

    /// The reference answers: the first byte `pick` accepts.
    fn naive(data: &[u8], pick: impl Fn(u8) -> bool) -> Option<usize> {
        data.iter().position(|&b| pick(b))
    }

    /// Every scan agrees with the byte-by-byte answer on `data`.
    fn agree(data: &[u8]) {
        for b in [0u8, b'<', b'>', 0xFF] {
            assert_eq!(byte(b, data), naive(data, |x| x == b), "{b} in {data:?}");
            assert_eq!(byte(b, data), memchr(b, data), "{b} in {data:?}");
        }
        for (a, b) in [(b'"', b'<'), (b'\'', b'<'), (0, 0xFF), (b'a', b'a')] {
            assert_eq!(
                byte2(a, b, data),
                naive(data, |x| x == a || x == b),
                "{a}/{b} in {data:?}"
            );
        }
        assert_eq!(
            byte4(b'"', b'\'', b':', b'x', data),
            naive(data, |x| matches!(x, b'"' | b'\'' | b':' | b'x')),
            "names in {data:?}"
        );
        assert_eq!(
            tag_or_name_stop(data),
            naive(data, |x| matches!(x, b'>' | b'"' | b'\'' | b':' | b'x')),
            "tag or name in {data:?}"
        );
        assert_eq!(
            tag_stop(data),
            memchr3(b'>', b'"', b'\'', data),
            "tag in {data:?}"
        );
        assert_eq!(
            attribute_stop(data),
            naive(data, |x| matches!(x, b'&' | b'\t' | b'\n' | b'\r')),
            "attribute value in {data:?}"
        );
        assert_eq!(
            text_stop(data),
            naive(data, is_text_stop),
            "text in {data:?}"
        );
        assert_eq!(
            Some(blank_len(data)),
            naive(data, |x| !BLANK.contains(&x)).or(Some(data.len())),
            "blank in {data:?}"
        );
    }

    #[test]
    fn blank_runs_of_every_length_end_where_they_end() {
        for len in 0..=40 {
            for blank in BLANK {
                for after in [b'<', b'a', 0, 0xFF, b' ' + 1, b'\t' - 1] {
                    let mut data = vec![blank; len];
                    agree(&data);
                    data.push(after);
                    agree(&data);
                    data.extend_from_slice(b"    ");
                    agree(&data);
                }
            }
        }
    }

    #[test]
    fn every_byte_value_at_every_position_of_a_word() {
        // Each byte value alone, after each number of filler bytes (so at
        // every lane of a block and of a word, in the tail and past
        // `SHORT`), with fillers
        // that border it (b ± 1, which a borrow could confuse).
        for b in 0..=255u8 {
            for filler in [b'x', b.wrapping_sub(1), b.wrapping_add(1)] {
                if filler == b {
                    continue;
                }
                for len in (0..=34).chain([47, 48, 49, 64]) {
                    for at in 0..len {
                        let mut data = vec![filler; len];
                        data[at] = b;
                        agree(&data);
                    }
                }
            }
        }
    }

    #[test]
    fn random_runs_agree_with_the_reference() {
        const ALPHABET: &[u8] = b"<>&\r\"'\n \0\x01\x3D\x3F\x24\x25\x0C\x0Eaz\xEF\xFF";
        let mut rng = SplitMix64::new(7, 0);
        for _ in 0..20_000 {
            let len = rng.below(80) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| match rng.below(4) {
                    0 => rng.pick(ALPHABET),
                    _ => b'a' + rng.below(26) as u8,
                })
                .collect();
            agree(&data);
        }
    }
}
