//! Equality of the short strings the parser compares on every element: an
//! end tag's name against its start tag's, an element's name against the
//! field map's.
//!
//! `==` on slices calls the C library's `memcmp`, whose call and set-up
//! cost more than the comparison itself on names of a few bytes. Here a
//! name of up to sixteen bytes is compared as two overlapping words (of
//! eight, four or two bytes, by its length), inline and without a loop;
//! longer names go to `==`.

/// Whether `a` and `b` hold the same bytes.
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1 => a[0] == b[0],
        2..=3 => ends::<2>(a, b),
        4..=7 => ends::<4>(a, b),
        8..=16 => ends::<8>(a, b),
        _ => a == b,
    }
}

/// Whether `a` and `b` (of one length, at least `W` and at most `2 W`
/// bytes) agree in their first `W` bytes and in their last `W`, which
/// between them cover every byte.
#[inline(always)]
fn ends<const W: usize>(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    let word = |s: &[u8], at: usize| -> [u8; W] {
        let mut w = [0; W];
        w.copy_from_slice(&s[at..at + W]);
        w
    };
    word(a, 0) == word(b, 0) && word(a, n - W) == word(b, n - W)
}

/// [`same`] for text.
#[inline(always)]
pub(crate) fn same_str(a: &str, b: &str) -> bool {
    same(a.as_bytes(), b.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_slice_equality_at_every_length_and_difference() {
        for len in 0..=40 {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "len {len}");
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "len {len}, byte {at}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!same(&a, &longer) && !same(&longer, &a), "len {len}");
        }
    }
}
