//! Finding the input's character encoding and turning it into UTF-8.
//!
//! The parser works on UTF-8 only. Detection follows XML 1.0 Appendix F:
//! a byte-order mark first, then the first bytes' pattern, then the
//! `encoding` of the XML declaration. UTF-8 (and US-ASCII, a subset) pass
//! through untouched; everything `encoding_rs` knows is transcoded while
//! streaming; anything else is refused.

use std::fmt;
use std::io::{self, Read};

use encoding_rs::{DecoderResult, Encoding, UTF_16BE, UTF_16LE, UTF_8};

/// How to read the input's bytes as UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Charset {
    /// Already UTF-8.
    Utf8,
    /// ISO-8859-1 proper: each byte is the code point of the same value.
    /// (`encoding_rs` follows WHATWG and reads the label as windows-1252,
    /// which differs in 0x80–0x9F; XML means the real thing.)
    Latin1,
    /// Another encoding, decoded by `encoding_rs`.
    Other(&'static Encoding),
}

impl Charset {
    /// The encoding's name for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Charset::Utf8 => "UTF-8",
            Charset::Latin1 => "ISO-8859-1",
            Charset::Other(encoding) => encoding.name(),
        }
    }
}

/// The encoding found at the start of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Detected {
    /// How to decode.
    pub(crate) charset: Charset,
    /// Length of the byte-order mark to skip.
    pub(crate) bom: usize,
}

/// Finds the encoding from the first bytes of the input (up to the end of
/// the XML declaration, if there is one).
///
/// # Errors
///
/// A message naming an encoding that cannot be read.
pub(crate) fn detect(prefix: &[u8]) -> Result<Detected, String> {
    let found = |charset, bom| Ok(Detected { charset, bom });
    match prefix {
        [0xEF, 0xBB, 0xBF, ..] => found(Charset::Utf8, 3),
        [0xFF, 0xFE, 0, 0, ..]
        | [0, 0, 0xFE, 0xFF, ..]
        | [0, 0, 0, b'<', ..]
        | [b'<', 0, 0, 0, ..] => Err("UTF-32 input is not supported; convert it to UTF-8".into()),
        [0xFF, 0xFE, ..] => found(Charset::Other(UTF_16LE), 2),
        [0xFE, 0xFF, ..] => found(Charset::Other(UTF_16BE), 2),
        [b'<', 0, b'?', 0, ..] => found(Charset::Other(UTF_16LE), 0),
        [0, b'<', 0, b'?', ..] => found(Charset::Other(UTF_16BE), 0),
        _ => match declared_encoding(prefix) {
            None => found(Charset::Utf8, 0),
            Some(label) => charset_for_label(&label).map(|charset| Detected { charset, bom: 0 }),
        },
    }
}

/// The `encoding="…"` of a leading `<?xml …?>` declaration.
fn declared_encoding(prefix: &[u8]) -> Option<String> {
    let rest = prefix.strip_prefix(b"<?xml")?;
    let decl = &rest[..rest.windows(2).position(|w| w == b"?>")?];
    let at = decl.windows(8).position(|w| w == b"encoding")?;
    let after = decl[at + 8..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let (&quote, value) = after.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let end = value.iter().position(|&b| b == quote)?;
    Some(String::from_utf8_lossy(&value[..end]).to_ascii_lowercase())
}

fn charset_for_label(label: &str) -> Result<Charset, String> {
    const LATIN1: [&str; 9] = [
        "iso-8859-1",
        "iso8859-1",
        "iso_8859-1",
        "latin1",
        "l1",
        "iso-ir-100",
        "cp819",
        "ibm819",
        "csisolatin1",
    ];
    match label {
        "utf-8" | "utf8" | "us-ascii" | "ascii" => Ok(Charset::Utf8),
        _ if LATIN1.contains(&label) => Ok(Charset::Latin1),
        _ if label.starts_with("utf-16") || label.starts_with("utf-32") || label == "ucs-2" => Err(
            format!("the declaration says encoding \"{label}\" but the bytes are not in it"),
        ),
        _ => match Encoding::for_label(label.as_bytes()) {
            Some(encoding) if encoding == UTF_8 => Ok(Charset::Utf8),
            Some(encoding) => Ok(Charset::Other(encoding)),
            None => Err(format!("unsupported encoding \"{label}\"")),
        },
    }
}

/// Bytes that are not valid in the declared encoding.
#[derive(Debug)]
pub(crate) struct DecodeError {
    /// Names the encoding and the offset of the bad bytes in the raw input.
    pub(crate) message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// Streams `inner` (in `charset`, without its BOM) out as UTF-8.
pub(crate) struct Transcoder<R> {
    inner: R,
    charset: Charset,
    decoder: Option<encoding_rs::Decoder>,
    input: Vec<u8>,
    output: Vec<u8>,
    out_pos: usize,
    /// Raw bytes decoded so far, for error offsets.
    raw_offset: u64,
    /// Offset of the raw input's first byte (the BOM length).
    raw_start: u64,
    /// Reported once the valid output before it has been read.
    pending_error: Option<DecodeError>,
    finished: bool,
}

impl<R: Read> Transcoder<R> {
    /// A transcoder from `charset`; `raw_start` is where `inner` begins in
    /// the original input.
    pub(crate) fn new(inner: R, charset: Charset, raw_start: u64) -> Self {
        let decoder = match charset {
            Charset::Other(encoding) => Some(encoding.new_decoder_without_bom_handling()),
            Charset::Utf8 | Charset::Latin1 => None,
        };
        Transcoder {
            inner,
            charset,
            decoder,
            input: vec![0; 32 * 1024],
            output: Vec::new(),
            out_pos: 0,
            raw_offset: 0,
            raw_start,
            pending_error: None,
            finished: false,
        }
    }

    /// Decodes the next input chunk into `output`.
    fn decode_chunk(&mut self) -> io::Result<()> {
        let n = loop {
            match self.inner.read(&mut self.input) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        let last = n == 0;
        let src = &self.input[..n];
        self.output.clear();
        self.out_pos = 0;
        match &mut self.decoder {
            None => {
                self.output.resize(n * 2, 0);
                let written = encoding_rs::mem::convert_latin1_to_utf8(src, &mut self.output);
                self.output.truncate(written);
            }
            Some(decoder) => {
                let room = decoder
                    .max_utf8_buffer_length_without_replacement(n)
                    .ok_or_else(|| io::Error::other("input chunk too large to decode"))?;
                self.output.resize(room, 0);
                let (result, read, written) =
                    decoder.decode_to_utf8_without_replacement(src, &mut self.output, last);
                self.output.truncate(written);
                if let DecoderResult::Malformed(bad, after) = result {
                    let at = self.raw_start + self.raw_offset + read as u64
                        - u64::from(bad)
                        - u64::from(after);
                    self.pending_error = Some(DecodeError {
                        message: format!(
                            "bytes at input offset {at} are not valid {}",
                            self.charset.name()
                        ),
                    });
                }
            }
        }
        self.raw_offset += n as u64;
        self.finished = last;
        Ok(())
    }
}

impl<R: Read> Read for Transcoder<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.out_pos == self.output.len() {
            if let Some(error) = self.pending_error.take() {
                self.finished = true;
                return Err(io::Error::new(io::ErrorKind::InvalidData, error));
            }
            if self.finished {
                return Ok(0);
            }
            self.decode_chunk()?;
        }
        let available = &self.output[self.out_pos..];
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charset(prefix: &[u8]) -> Result<(&'static str, usize), String> {
        detect(prefix).map(|d| (d.charset.name(), d.bom))
    }

    fn transcode(bytes: &[u8], charset: Charset) -> io::Result<String> {
        let mut out = String::new();
        Transcoder::new(bytes, charset, 0).read_to_string(&mut out)?;
        Ok(out)
    }

    #[test]
    fn detects_boms_patterns_and_declarations() {
        assert_eq!(charset(b"\xEF\xBB\xBF<a/>"), Ok(("UTF-8", 3)));
        assert_eq!(charset(b"\xFF\xFE<\0"), Ok(("UTF-16LE", 2)));
        assert_eq!(charset(b"\0<\0?\0x"), Ok(("UTF-16BE", 0)));
        assert_eq!(charset(b"<a/>"), Ok(("UTF-8", 0)));
        assert_eq!(
            charset(b"<?xml version='1.0' encoding = 'Latin1'?><a/>"),
            Ok(("ISO-8859-1", 0))
        );
        assert_eq!(
            charset(b"<?xml version=\"1.0\" encoding=\"windows-1252\"?>"),
            Ok(("windows-1252", 0))
        );
        assert_eq!(
            charset(b"<?xml version=\"1.0\" encoding=\"US-ASCII\"?>"),
            Ok(("UTF-8", 0))
        );
        assert_eq!(
            charset(b"<?xml version=\"1.0\" encoding=\"klingon\"?>"),
            Err("unsupported encoding \"klingon\"".into())
        );
        assert!(charset(b"<?xml version=\"1.0\" encoding=\"UTF-16\"?>").is_err());
        assert!(charset(b"\0\0\0<").is_err());
    }

    #[test]
    fn latin1_is_iso_8859_1_not_windows_1252() {
        // 0x80 is U+0080 in ISO-8859-1 but the euro sign in windows-1252.
        assert_eq!(
            transcode(b"caf\xE9 \x80", Charset::Latin1).unwrap(),
            "café \u{80}"
        );
        assert_eq!(
            transcode(b"\x80", Charset::Other(encoding_rs::WINDOWS_1252)).unwrap(),
            "€"
        );
    }

    #[test]
    fn utf16_decodes_across_chunk_boundaries() {
        let text: String = "<a>héllo 🚀</a>".repeat(5000);
        let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(transcode(&bytes, Charset::Other(UTF_16LE)).unwrap(), text);
    }

    #[test]
    fn malformed_input_fails_after_the_valid_part() {
        // A lone low surrogate (0xDC00) after "ab".
        let bytes = [b'a', 0, b'b', 0, 0x00, 0xDC, b'c', 0];
        let mut reader = Transcoder::new(&bytes[..], Charset::Other(UTF_16LE), 2);
        let mut out = [0u8; 16];
        assert_eq!(reader.read(&mut out).unwrap(), 2);
        assert_eq!(&out[..2], b"ab");
        let err = reader.read(&mut out).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bytes at input offset 6 are not valid UTF-16LE"
        );
    }
}
