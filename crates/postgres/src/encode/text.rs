//! Rows in text COPY format: tab-separated, `\N` for NULL, backslash
//! escapes, bytea as hex.

use memchr::{memchr, memchr3};
use ringpipe_pipeline::Row;

/// Appends `row` as one text COPY line. A NUL goes as it is, for the
/// server to refuse (its text types cannot hold one).
pub(super) fn text_row(bytea: &[bool], row: &Row, out: &mut Vec<u8>) {
    for (index, value) in row.values().enumerate() {
        if index > 0 {
            out.push(b'\t');
        }
        match value {
            None => out.extend_from_slice(b"\\N"),
            Some(value) if bytea.get(index).copied().unwrap_or(false) => hex(value.as_bytes(), out),
            Some(value) => {
                let bytes = value.as_bytes();
                // Most values need no escape: two vectorised scans, one copy.
                match needs_escape(bytes) {
                    false => out.extend_from_slice(bytes),
                    true => escape(bytes, out),
                }
            }
        }
    }
    out.push(b'\n');
}

/// A bytea value in text COPY: `\\x` and hex digits (the backslash doubled
/// for COPY's own escaping).
fn hex(bytes: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\\\x");
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 15)]);
    }
}

/// Whether `bytes` holds a byte text COPY escapes, by memchr's vectorised
/// scans (fewer instructions than a byte loop over the catalogue's
/// values, measured with callgrind).
fn needs_escape(bytes: &[u8]) -> bool {
    memchr3(b'\\', b'\t', b'\n', bytes).is_some() || memchr(b'\r', bytes).is_some()
}

/// Text COPY escaping: backslash, tab, newline and carriage return.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for (at, byte) in bytes.iter().enumerate() {
        let escaped: &[u8] = match byte {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..at]);
        out.extend_from_slice(escaped);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_values_with_special_bytes_are_escaped() {
        assert!(!needs_escape(
            b"plain text \xc3\xa9 long enough to span a vector of bytes"
        ));
        // A NUL goes as it is, for the server to refuse.
        assert!(!needs_escape(b"a\0b"));
        for special in [b'\t', b'\n', b'\r', b'\\'] {
            let mut value = vec![b'x'; 40];
            value[37] = special;
            assert!(needs_escape(&value), "{special}");
        }
    }
}
