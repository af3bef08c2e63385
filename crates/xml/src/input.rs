//! Turning a path, stdin or any reader into a UTF-8 byte stream: gzip is
//! unwrapped, the encoding detected and transcoded if needed, and the raw
//! bytes read are counted for progress reports.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::encoding::{self, Charset, Transcoder};

/// How many leading bytes are examined for a BOM and the XML declaration.
const PREFIX: usize = 1024;

/// An input ready for the parser.
pub(crate) struct Prepared {
    /// UTF-8 bytes, BOM removed.
    pub(crate) reader: Box<dyn Read + Send>,
    /// Input offset of `reader`'s first byte (the stripped BOM's length, for
    /// UTF-8 input).
    pub(crate) start: u64,
    /// The encoding the input was read in.
    pub(crate) charset: Charset,
    /// Whether the input was gzip (its offsets are not the file's).
    pub(crate) compressed: bool,
}

/// Counts the raw bytes that pass through, for progress reporting (read
/// via [`XmlSource::progress`](crate::XmlSource)).
pub(crate) use ringpipe_pipeline::CountingReader as Counting;

/// Opens `path` (`-` is stdin); returns the reader and the file's size when
/// it is a regular file.
pub(crate) fn open_path(path: &Path) -> io::Result<(Box<dyn Read + Send>, Option<u64>)> {
    if path.as_os_str() == "-" {
        return Ok((Box::new(io::stdin()), None));
    }
    let file = File::open(path)?;
    let metadata = file.metadata()?;
    let total = metadata.is_file().then_some(metadata.len());
    Ok((Box::new(file), total))
}

/// Why an input could not be prepared.
#[derive(Debug)]
pub(crate) enum PrepareError {
    /// Reading the first bytes failed.
    Io(io::Error),
    /// The encoding cannot be read; the message says why.
    Encoding(String),
}

impl From<io::Error> for PrepareError {
    fn from(error: io::Error) -> Self {
        PrepareError::Io(error)
    }
}

/// Unwraps gzip (when `gzip` is true or the stream starts with the gzip
/// magic number) and prepares the encoding.
///
/// # Errors
///
/// Reading the first bytes fails, or the encoding cannot be read.
pub(crate) fn prepare(raw: Box<dyn Read + Send>, gzip: bool) -> Result<Prepared, PrepareError> {
    let (magic, raw) = read_prefix(raw, 2)?;
    let gzip = gzip || magic == [0x1F, 0x8B];
    let raw = Cursor::new(magic).chain(raw);
    let plain: Box<dyn Read + Send> = if gzip {
        Box::new(MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    let (mut prefix, rest) = read_prefix(plain, PREFIX)?;
    let detected = encoding::detect(&prefix).map_err(PrepareError::Encoding)?;
    prefix.drain(..detected.bom);
    let reader: Box<dyn Read + Send> = Box::new(Cursor::new(prefix).chain(rest));
    let prepared = match detected.charset {
        Charset::Utf8 => Prepared {
            reader,
            start: detected.bom as u64,
            charset: Charset::Utf8,
            compressed: gzip,
        },
        charset => Prepared {
            reader: Box::new(Transcoder::new(reader, charset, detected.bom as u64)),
            start: 0,
            charset,
            compressed: gzip,
        },
    };
    Ok(prepared)
}

/// Reads up to `n` bytes (fewer only at the end of input); returns them and
/// the reader positioned after them.
fn read_prefix<R: Read>(mut reader: R, n: usize) -> io::Result<(Vec<u8>, R)> {
    let mut prefix = Vec::with_capacity(n);
    (&mut reader).take(n as u64).read_to_end(&mut prefix)?;
    Ok((prefix, reader))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(prepared: Prepared) -> (String, u64, &'static str) {
        let mut text = String::new();
        let Prepared {
            mut reader,
            start,
            charset,
            ..
        } = prepared;
        reader.read_to_string(&mut text).unwrap();
        (text, start, charset.name())
    }

    #[test]
    fn gzip_is_detected_by_its_magic_number() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"\xEF\xBB\xBF<a>1</a>").unwrap();
        let bytes = gz.finish().unwrap();
        let prepared = prepare(Box::new(Cursor::new(bytes)), false).unwrap();
        assert_eq!(read_all(prepared), ("<a>1</a>".into(), 3, "UTF-8"));
    }

    #[test]
    fn latin1_declaration_is_transcoded() {
        let bytes = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xE9</a>".to_vec();
        let prepared = prepare(Box::new(Cursor::new(bytes)), false).unwrap();
        let (text, start, charset) = read_all(prepared);
        assert!(text.ends_with("<a>café</a>"), "{text}");
        assert_eq!((start, charset), (0, "ISO-8859-1"));
    }
}
