//! What makes an import the same import when it resumes.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// What a resumed import must share with the interrupted one.
///
/// The checkpoints of a shard are only meaningful for the same records
/// dealt to the same shards: the same input, the same shard count, and the
/// same everything else that decides which record lands where (regions,
/// shard block, the mapping of fields to columns, the write mode). A
/// resumable target stores this beside its checkpoints, and
/// [`Import`](crate::Import) refuses to resume when any part differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportIdentity {
    /// The input, as [`fingerprint`] recognises it.
    pub input: String,
    /// Number of shards across the import.
    pub shards: u32,
    /// Everything else, as one string.
    pub mapping: String,
}

/// Bytes hashed at each end of a file.
const SAMPLE: u64 = 1 << 20;

/// Recognises a file again by its content, not its name: its size and the
/// CRC-32 of its first and last MiB. The same file mounted at another path
/// (or on another machine) gives the same fingerprint.
///
/// # Errors
///
/// When the file cannot be read.
pub fn fingerprint(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let head = crc_of(&mut file, SAMPLE)?;
    let tail_start = size.saturating_sub(SAMPLE);
    file.seek(SeekFrom::Start(tail_start))?;
    let tail = crc_of(&mut file, SAMPLE)?;
    Ok(format!("{size} bytes, crc32 {head:08x}/{tail:08x}"))
}

/// The CRC-32 of the next `limit` bytes of `reader` (fewer at its end).
fn crc_of(reader: &mut impl Read, limit: u64) -> io::Result<u32> {
    let mut bytes = Vec::new();
    reader.take(limit).read_to_end(&mut bytes)?;
    Ok(crc32fast::hash(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_the_content_not_the_path() {
        let dir = std::env::temp_dir().join(format!("ringpipe-fp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
        let content = vec![7u8; 3 << 20];
        std::fs::write(&a, &content).unwrap();
        std::fs::write(&b, &content).unwrap();
        let mut other = content.clone();
        *other.last_mut().unwrap() = 8; // same size and head, other tail
        std::fs::write(&c, &other).unwrap();
        let print = |p: &Path| fingerprint(p).unwrap();
        assert_eq!(print(&a), print(&b));
        assert_ne!(print(&a), print(&c));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
