//! Byte searches for XML's short runs.
//!
//! Most runs the parser scans are a few bytes long: the indentation
//! between tags, a tag's name, a price. `memchr` pays a fixed cost per call
//! (dispatch, alignment, vector set-up) that such runs never earn back, so
//! the first few bytes are looked at one by one and `memchr` takes only
//! what is longer.

/// Bytes looked at one by one before handing over to `memchr`.
const SHORT: usize = 16;

/// The first `needle` in `haystack`.
#[inline(always)]
pub(crate) fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    let head = &haystack[..haystack.len().min(SHORT)];
    if let Some(at) = head.iter().position(|&b| b == needle) {
        return Some(at);
    }
    let rest = haystack.get(SHORT..)?;
    memchr::memchr(needle, rest).map(|at| SHORT + at)
}

/// The first of `a`, `b` or `c` in `haystack`.
#[inline(always)]
pub(crate) fn find_any3(a: u8, b: u8, c: u8, haystack: &[u8]) -> Option<usize> {
    let head = &haystack[..haystack.len().min(SHORT)];
    if let Some(at) = head.iter().position(|&x| x == a || x == b || x == c) {
        return Some(at);
    }
    let rest = haystack.get(SHORT..)?;
    memchr::memchr3(a, b, c, rest).map(|at| SHORT + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_memchr_on_every_length_and_position() {
        for len in 0..80 {
            for at in 0..=len {
                let mut hay = vec![b'x'; len];
                if at < len {
                    hay[at] = b'<';
                }
                let want = memchr::memchr(b'<', &hay);
                assert_eq!(find_byte(b'<', &hay), want, "len {len} at {at}");
                assert_eq!(find_any3(b'>', b'<', b'"', &hay), want);
            }
        }
    }
}
