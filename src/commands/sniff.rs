//! What the first bytes of an input say of its format, for an import
//! given neither `--format` nor a file name to go by.
//!
//! Stdin's bytes are looked at where standard input buffers them, without
//! consuming them, so the source then reads them as if never looked at; a
//! regular file's are read from a handle of their own.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::cli::FormatArg;

/// Bytes of a gzip stream's text looked at.
const LOOK: usize = 1024;

/// Bytes of a regular file looked at (as many as stdin's buffer holds).
const HEAD: usize = 8 * 1024;

/// The format stdin's first bytes make certain, if any (see [`of`]).
pub fn stdin() -> Option<FormatArg> {
    let mut stdin = io::stdin().lock();
    match stdin.fill_buf() {
        Ok(head) => of(head),
        Err(error) => {
            log::debug!("reading the first bytes of stdin: {error}");
            None
        }
    }
}

/// The format a regular file's first bytes make certain, if any (see
/// [`of`]). A file that cannot be read is left to the XML source, the
/// default, which says why with the file's name.
pub fn file(path: &Path) -> Option<FormatArg> {
    let mut head = Vec::with_capacity(HEAD);
    let read = File::open(path).and_then(|file| file.take(HEAD as u64).read_to_end(&mut head));
    match read {
        Ok(_) => of(&head),
        Err(error) => {
            log::debug!("reading the first bytes of {}: {error}", path.display());
            Some(FormatArg::Xml)
        }
    }
}

/// The format that `head`, an input's first bytes, makes certain: after a
/// UTF-8 byte-order mark and whitespace, `<` is XML and `{` JSON Lines;
/// a UTF-16 or UTF-32 byte-order mark, or `<` in one of those encodings,
/// is XML (only XML is read in them); anything else (a CSV header could
/// start with any character) tells nothing. Gzip is looked into.
pub fn of(head: &[u8]) -> Option<FormatArg> {
    if head.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::with_capacity(LOOK);
        // `head` may end inside the stream: what it decodes to before that
        // is kept, and the error of the cut ignored.
        let _ = MultiGzDecoder::new(head)
            .take(LOOK as u64)
            .read_to_end(&mut text);
        return of_text(&text);
    }
    of_text(head)
}

fn of_text(text: &[u8]) -> Option<FormatArg> {
    const WIDE: [&[u8]; 6] = [
        b"\xff\xfe",
        b"\xfe\xff",
        b"\0\0\xfe\xff",
        b"<\0",
        b"\0<",
        b"\0\0\0<",
    ];
    if WIDE.iter().any(|start| text.starts_with(start)) {
        return Some(FormatArg::Xml);
    }
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    match text.iter().find(|byte| !byte.is_ascii_whitespace())? {
        b'<' => Some(FormatArg::Xml),
        b'{' => Some(FormatArg::Jsonl),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        gz.write_all(text).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn angle_bracket_is_xml_and_brace_is_json_lines() {
        assert_eq!(of(b"<?xml version=\"1.0\"?><r/>"), Some(FormatArg::Xml));
        assert_eq!(of(b"\xef\xbb\xbf\n  <r/>"), Some(FormatArg::Xml));
        assert_eq!(of(b"{\"id\": 1}\n"), Some(FormatArg::Jsonl));
        assert_eq!(of(b"\r\n\t{\"id\": 1}"), Some(FormatArg::Jsonl));
        assert_eq!(
            of(b"\xff\xfe<\0r\0/\0>\0"),
            Some(FormatArg::Xml),
            "UTF-16LE"
        );
        assert_eq!(of(b"\0<\0r\0/\0>"), Some(FormatArg::Xml), "UTF-16BE");
    }

    #[test]
    fn anything_else_tells_nothing() {
        for head in [
            &b"id,name\n1,a\n"[..],
            b"\"id\"\t\"name\"",
            b"",
            b" \n\t",
            b"[1]",
        ] {
            assert_eq!(of(head), None, "{head:?}");
        }
    }

    #[test]
    fn gzip_is_looked_into_even_when_cut() {
        assert_eq!(of(&gzip(b"<rows/>")), Some(FormatArg::Xml));
        assert_eq!(of(&gzip(b"{\"a\":1}\n")), Some(FormatArg::Jsonl));
        assert_eq!(of(&gzip(b"a,b\n1,2\n")), None);
        let long = gzip(&b"{\"id\": 12345, \"name\": \"x\"}\n".repeat(10_000));
        assert_eq!(of(&long[..64]), Some(FormatArg::Jsonl));
        assert_eq!(of(&long[..8]), None, "only the header");
    }
}
