//! Counting lines as CSV records end them: `\n`, `\r` and `\r\n` each
//! end one line, also when a buffer ends between the `\r` and the `\n`.

use memchr::memchr2_iter;

/// The line ends in `bytes` (`\n`, `\r` and `\r\n` each end one line),
/// the byte before which was a `\r` if `cr`; `cr` becomes whether `bytes`
/// ends with one (its `\n` may start the next bytes).
pub(super) fn line_ends(bytes: &[u8], cr: &mut bool) -> u64 {
    let Some(&last) = bytes.last() else {
        return 0;
    };
    let mut ends = 0;
    for at in memchr2_iter(b'\r', b'\n', bytes) {
        let after_cr = match at {
            0 => *cr,
            _ => bytes[at - 1] == b'\r',
        };
        ends += u64::from(bytes[at] == b'\r' || !after_cr);
    }
    *cr = last == b'\r';
    ends
}
