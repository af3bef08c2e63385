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
    /// Which part of the input this import is ([`Part::WHOLE`] unless
    /// [`Import::part`](crate::Import::part) says otherwise).
    pub part: Part,
}

/// How an import deals its records to shards: how many consecutive
/// records a shard takes in turn, and in how many regions (each part of)
/// the input is parsed at once. It decides which record lands where, so
/// it ends [`ImportIdentity::mapping`], and a resume must read the same
/// way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Consecutive records a shard takes in turn.
    pub shard_block: u64,
    /// Regions of (each part of) the input parsed at once.
    pub regions: usize,
}

impl Layout {
    const BLOCK: &'static str = ";shard-block=";
    const REGIONS: &'static str = ";regions=";

    /// What the mapping of an import with this layout ends with.
    pub(crate) fn suffix(&self) -> String {
        match self.regions {
            1 => format!("{}{}", Self::BLOCK, self.shard_block),
            n => format!("{}{}{}{n}", Self::BLOCK, self.shard_block, Self::REGIONS),
        }
    }

    /// The mapping without its layout, and the layout; `None` for a
    /// mapping that does not end with one.
    pub(crate) fn split(mapping: &str) -> Option<(&str, Layout)> {
        let (rest, tail) = mapping.split_at(mapping.rfind(Self::BLOCK)?);
        let tail = &tail[Self::BLOCK.len()..];
        let (block, regions) = match tail.split_once(Self::REGIONS) {
            Some((block, regions)) => (block, regions.parse().ok()?),
            None => (tail, 1),
        };
        let shard_block = block.parse().ok()?;
        Some((
            rest,
            Layout {
                shard_block,
                regions,
            },
        ))
    }
}

/// Part `index` of an input cut into `count` parts, each imported on its
/// own (by its own process, on its own machine) with its own checkpoints.
///
/// Record numbers stay those of the whole input, so the parts' records
/// never collide. `index` runs from 0 to `count - 1`, as a Kubernetes
/// Indexed Job's completion index does.
///
/// # Examples
///
/// ```
/// use ringpipe_pipeline::Part;
///
/// let part: Part = "2/4".parse()?;
/// assert_eq!((part.index, part.count), (2, 4));
/// assert_eq!(part.to_string(), "2/4");
/// assert!("4/4".parse::<Part>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Part {
    /// This part, from 0.
    pub index: u32,
    /// How many parts the input is cut into (at least 1).
    pub count: u32,
}

impl Part {
    /// The whole input: part 0 of 1.
    pub const WHOLE: Part = Part { index: 0, count: 1 };

    /// Part `index` of `count`, if `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Part> {
        (index < count).then_some(Part { index, count })
    }

    /// Whether this is the whole input (one part).
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }
}

impl Default for Part {
    fn default() -> Self {
        Part::WHOLE
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Part {
    type Err = String;

    /// `i/n`, with `0 <= i < n`.
    fn from_str(text: &str) -> Result<Part, String> {
        let bad = || format!("{text:?}: expected i/n with 0 <= i < n (such as 0/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
        Part::new(number(index)?, number(count)?).ok_or_else(bad)
    }
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
    fn a_layout_is_read_back_from_the_mapping_it_ends() {
        for layout in [
            Layout {
                shard_block: 5000,
                regions: 1,
            },
            Layout {
                shard_block: 1,
                regions: 3,
            },
        ] {
            let mapping = format!("row=p;map=shard-block=x{}", layout.suffix());
            assert_eq!(
                Layout::split(&mapping),
                Some(("row=p;map=shard-block=x", layout))
            );
        }
        assert_eq!(Layout::split("row=p"), None);
        assert_eq!(Layout::split("row=p;shard-block=x"), None);
    }

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
