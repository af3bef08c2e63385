//! Opening a text input: a file (`-` is stdin), decompressed if gzip, its
//! UTF-8 byte-order mark skipped, UTF-16 and UTF-32 refused (by their
//! byte-order marks), and every byte checked to be UTF-8 as it is read.
//!
//! The XML crate transcodes other encodings; CSV and JSON Lines are read
//! as UTF-8 only, which needs just the few lines here.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use flate2::bufread::MultiGzDecoder;
use ringpipe_pipeline::CountingReader;

/// Buffer size of every input.
const BUFFER: usize = 64 * 1024;

/// An opened input.
pub(crate) struct Opened {
    /// Its UTF-8 text, after the byte-order mark.
    pub(crate) reader: Box<dyn BufRead + Send>,
    /// The file's size (`None` for stdin and pipes).
    pub(crate) total: Option<u64>,
    /// Offset of `reader`'s first byte (3 after a UTF-8 byte-order mark).
    pub(crate) start: u64,
    /// A regular, uncompressed file: its offsets are the text's, so it can
    /// be read in regions.
    pub(crate) splittable: bool,
    /// Raw (compressed) bytes read so far, for progress.
    pub(crate) raw_bytes: Arc<AtomicU64>,
}

/// Opens `path` (`-`: stdin).
///
/// # Errors
///
/// The file cannot be read, or it is UTF-16 or UTF-32.
pub(crate) fn open(path: &Path) -> io::Result<Opened> {
    let (raw, total): (Box<dyn Read + Send>, _) = match path.as_os_str() == "-" {
        true => (Box::new(io::stdin()), None),
        false => {
            let file = File::open(path)?;
            let metadata = file.metadata()?;
            let total = metadata.is_file().then_some(metadata.len());
            (Box::new(file), total)
        }
    };
    let raw_bytes = Arc::new(AtomicU64::new(0));
    let counted = CountingReader::new(raw, Arc::clone(&raw_bytes));
    let mut reader = BufReader::with_capacity(BUFFER, counted);
    let gzip = reader.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let mut plain: Box<dyn Read + Send> = match gzip {
        true => Box::new(MultiGzDecoder::new(reader)),
        false => Box::new(reader),
    };
    let mut head = Vec::with_capacity(4);
    (&mut plain).take(4).read_to_end(&mut head)?;
    let bom = bom(&head)?;
    head.drain(..bom);
    let start = bom as u64;
    Ok(Opened {
        reader: checked(io::Cursor::new(head).chain(plain), start),
        total,
        start,
        splittable: total.is_some() && !gzip,
        raw_bytes,
    })
}

/// The length of a UTF-8 byte-order mark at the start of `head`; UTF-16
/// and UTF-32 byte-order marks are an error.
fn bom(head: &[u8]) -> io::Result<usize> {
    let encoding = if head.starts_with(b"\xef\xbb\xbf") {
        return Ok(3);
    } else if head.starts_with(&[0, 0, 0xfe, 0xff]) {
        "UTF-32BE"
    } else if head.starts_with(&[0xff, 0xfe, 0, 0]) {
        "UTF-32LE"
    } else if head.starts_with(&[0xfe, 0xff]) {
        "UTF-16BE"
    } else if head.starts_with(&[0xff, 0xfe]) {
        "UTF-16LE"
    } else {
        return Ok(0);
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "the input is {encoding} (by its byte-order mark); CSV and JSON Lines are read \
             as UTF-8: convert it first (iconv -f {encoding} -t UTF-8)"
        ),
    ))
}

/// `reader`, whose first byte is at `offset`, checked to be UTF-8.
pub(crate) fn checked(reader: impl Read + Send + 'static, offset: u64) -> Box<dyn BufRead + Send> {
    Box::new(Utf8Check {
        inner: reader,
        buf: vec![0; BUFFER].into_boxed_slice(),
        pos: 0,
        valid: 0,
        filled: 0,
        offset,
        fault: None,
    })
}

/// The first byte of an input that is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("UTF-8 text, found byte {byte:#04x} at byte offset {offset}")]
pub(crate) struct NotUtf8 {
    /// Offset of the byte in the input (decompressed, for gzip).
    pub(crate) offset: u64,
    /// The byte.
    pub(crate) byte: u8,
}

impl NotUtf8 {
    /// The fault an I/O error carries, if it is one.
    pub(crate) fn of(error: &io::Error) -> Option<NotUtf8> {
        error.get_ref()?.downcast_ref::<NotUtf8>().copied()
    }
}

/// A buffered reader that hands on the UTF-8 bytes of `inner`: everything
/// before the first byte that is not UTF-8, then an [`io::Error`] carrying
/// [`NotUtf8`], so the parser reaches the fault with every record before
/// it read.
struct Utf8Check<R> {
    inner: R,
    buf: Box<[u8]>,
    /// `buf[pos..valid]` is checked and not yet consumed; `buf[valid..filled]`
    /// is the start of a character the next read completes.
    pos: usize,
    valid: usize,
    filled: usize,
    /// Offset of `buf[pos]` in the input.
    offset: u64,
    fault: Option<NotUtf8>,
}

impl<R: Read> BufRead for Utf8Check<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.valid {
            if let Some(fault) = self.fault {
                return Err(io::Error::new(io::ErrorKind::InvalidData, fault));
            }
            // At most three bytes of a cut character remain: move them
            // to the front and read after them.
            self.buf.copy_within(self.valid..self.filled, 0);
            self.filled -= self.valid;
            (self.pos, self.valid) = (0, 0);
            let read = self.inner.read(&mut self.buf[self.filled..])?;
            self.filled += read;
            match simdutf8::compat::from_utf8(&self.buf[..self.filled]) {
                Ok(_) => self.valid = self.filled,
                Err(e) => {
                    self.valid = e.valid_up_to();
                    // A character cut by the end of this read is completed
                    // by the next one, unless the input ended.
                    if e.error_len().is_some() || read == 0 {
                        self.fault = Some(NotUtf8 {
                            offset: self.offset + self.valid as u64,
                            byte: self.buf[self.valid],
                        });
                    }
                }
            }
            if read == 0 && self.fault.is_none() {
                break;
            }
        }
        Ok(&self.buf[self.pos..self.valid])
    }

    fn consume(&mut self, amt: usize) {
        let amt = amt.min(self.valid - self.pos);
        self.pos += amt;
        self.offset += amt as u64;
    }
}

impl<R: Read> Read for Utf8Check<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// `bytes` as text, checked again where the reader checked it already
/// (cheap with simdutf8, and no `unsafe`); else the offset of the first
/// byte that is not UTF-8.
pub(crate) fn text(bytes: &[u8]) -> Result<&str, usize> {
    simdutf8::basic::from_utf8(bytes).map_err(|_| {
        simdutf8::compat::from_utf8(bytes)
            .err()
            .map_or(0, |e| e.valid_up_to())
    })
}

/// The name of `path` in messages.
pub(crate) fn name(path: &Path) -> String {
    match path.as_os_str() == "-" {
        true => "stdin".into(),
        false => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands on one byte per read, so every character is cut.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    fn read(bytes: &[u8]) -> (String, Option<NotUtf8>) {
        let mut text = String::new();
        let mut checked = checked(Trickle(bytes.to_vec().leak()), 10);
        let fault = checked.read_to_string(&mut text).err();
        (text, fault.and_then(|e| NotUtf8::of(&e)))
    }

    #[test]
    fn characters_cut_by_reads_pass_whole() {
        assert_eq!(
            read("caf\u{e9} \u{1F600}!".as_bytes()),
            ("caf\u{e9} \u{1F600}!".into(), None)
        );
    }

    #[test]
    fn the_first_bad_byte_is_named_after_everything_before_it() {
        let (_, fault) = read(b"ab\xe9cd");
        assert_eq!(
            fault,
            Some(NotUtf8 {
                offset: 12,
                byte: 0xe9
            })
        );
        // A character the input cuts short.
        let (_, fault) = read(b"abc\xf0\x9f\x98");
        assert_eq!(
            fault,
            Some(NotUtf8 {
                offset: 13,
                byte: 0xf0
            })
        );
        let mut checked = checked(Trickle(b"ok\n\xff"), 0);
        let mut line = String::new();
        assert_eq!(checked.read_line(&mut line).unwrap(), 3);
        assert!(checked.read_line(&mut line).is_err());
    }
}
