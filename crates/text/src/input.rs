//! Opening a text input: a file (`-` is stdin), decompressed if gzip.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

/// A buffered reader of `path`'s text and the file's size (`None` for
/// stdin and pipes). Gzip is recognised by its magic number.
pub(crate) fn open(path: &Path) -> io::Result<(Box<dyn BufRead + Send>, Option<u64>)> {
    let (raw, total): (Box<dyn Read + Send>, _) = match path.as_os_str() == "-" {
        true => (Box::new(io::stdin()), None),
        false => {
            let file = File::open(path)?;
            let metadata = file.metadata()?;
            let total = metadata.is_file().then_some(metadata.len());
            (Box::new(file), total)
        }
    };
    let mut reader = BufReader::with_capacity(64 * 1024, raw);
    let gzip = reader.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(match gzip {
        true => (Box::new(BufReader::new(MultiGzDecoder::new(reader))), total),
        false => (Box::new(reader), total),
    })
}

/// The name of `path` in messages.
pub(crate) fn name(path: &Path) -> String {
    match path.as_os_str() == "-" {
        true => "stdin".into(),
        false => path.display().to_string(),
    }
}
