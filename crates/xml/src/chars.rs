//! XML 1.0 `Char` (§2.2 [2]) over UTF-8 text: every byte of the input is
//! checked once, as it arrives, next to the UTF-8 check.
//!
//! In valid UTF-8 the characters outside `Char` are the C0 controls other
//! than tab, LF and CR, and U+FFFE / U+FFFF (surrogates cannot be encoded).
//! The scan looks at 64 bytes at a time with AVX2 where the processor has
//! it (about 0.4 instructions per byte), else with a branch-free fold;
//! only a block holding a suspect byte (a control, or `0xEF`, the lead
//! byte of U+F000–U+FFFF) is looked at byte by byte.

/// Where the first character outside `Char` starts in `text`, which holds
/// whole UTF-8 characters.
pub(crate) fn first_forbidden(text: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2 (checked just above).
        return unsafe { avx2::first_forbidden(text) };
    }
    first_forbidden_from(text, 0)
}

/// Whether `b` alone may start a forbidden character.
#[inline]
fn suspect(b: u8) -> bool {
    (b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r') | (b == 0xEF)
}

/// The portable scan of `text` from `start` (a character boundary).
fn first_forbidden_from(text: &[u8], start: usize) -> Option<usize> {
    let mut base = start;
    for block in text[start..].chunks(64) {
        if block.iter().fold(false, |any, &b| any | suspect(b)) {
            if let Some(at) = exact(text, base, base + block.len()) {
                return Some(at);
            }
        }
        base += block.len();
    }
    None
}

/// The byte-by-byte look at `text[from..to]`.
#[cold]
fn exact(text: &[u8], from: usize, to: usize) -> Option<usize> {
    (from..to).find(|&at| match text[at] {
        0xEF => text.get(at + 1) == Some(&0xBF) && matches!(text.get(at + 2), Some(0xBE | 0xBF)),
        b => suspect(b),
    })
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// [`super::first_forbidden`] with 256-bit compares.
    ///
    /// # Safety
    ///
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn first_forbidden(text: &[u8]) -> Option<usize> {
        // Each byte is classified by two table look-ups, one per nibble
        // (`vpshufb`), whose bits meet only for a suspect byte:
        // bit 0: 0x00-0x08, 0x0B, 0x0C, 0x0E, 0x0F (high nibble 0);
        // bit 1: 0x10-0x1F (high nibble 1); bit 2: 0xEF (high nibble E).
        #[rustfmt::skip]
        let low = _mm256_setr_epi8(
            3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 3, 3, 2, 3, 7,
            3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 3, 3, 2, 3, 7,
        );
        #[rustfmt::skip]
        let high = _mm256_setr_epi8(
            1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0,
            1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0,
        );
        let nibble = _mm256_set1_epi8(0x0F);
        let suspects = |v: __m256i| {
            let lo = _mm256_shuffle_epi8(low, _mm256_and_si256(v, nibble));
            let hi = _mm256_shuffle_epi8(high, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
            _mm256_and_si256(lo, hi)
        };
        let mut at = 0;
        while at + 64 <= text.len() {
            // SAFETY: `text[at..at + 64]` is in bounds (loop condition); the
            // loads are unaligned loads of 32 bytes each.
            let (a, b) = unsafe {
                let p = text.as_ptr().add(at);
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                )
            };
            let any = _mm256_or_si256(suspects(a), suspects(b));
            if _mm256_testz_si256(any, any) == 0 {
                if let Some(found) = super::exact(text, at, at + 64) {
                    return Some(found);
                }
            }
            at += 64;
        }
        super::first_forbidden_from(text, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_controls_and_nonchars_past_allowed_ones() {
        for pad in [0, 1, 63, 64, 65, 200] {
            let x = "x".repeat(pad);
            let cases = [
                (
                    format!("{x}\t\r\n\u{FFFD}\u{FF01}\u{EFFF}\u{1}"),
                    Some(pad + 3 + 3 + 3 + 3),
                ),
                (format!("{x}\u{FFFE}"), Some(pad)),
                (format!("{x}a\u{FFFF}"), Some(pad + 1)),
                (format!("{x}\u{0}"), Some(pad)),
                (format!("{x}\u{1F}\u{0}"), Some(pad)),
                (format!("{x}\u{7F}\u{85}\u{10FFFF}"), None),
            ];
            for (text, want) in cases {
                assert_eq!(first_forbidden(text.as_bytes()), want, "{text:?}");
                assert_eq!(first_forbidden_from(text.as_bytes(), 0), want, "{text:?}");
            }
        }
    }
}
