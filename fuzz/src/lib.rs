//! What the region targets share: draining a source into what it gave, and
//! a scratch file to read regions from.

use std::path::PathBuf;

use ringpipe_pipeline::{RecordPosition, Row, Source};

/// Rows, their positions, and the error that ended them (as its message).
pub type Drained = (
    Vec<Vec<Option<String>>>,
    Vec<RecordPosition>,
    Option<String>,
);

/// Reads every row of `source` into `into`; whether it ended in an error.
pub fn drain(mut source: impl Source, into: &mut Drained) -> bool {
    let mut row = Row::with_columns(source.columns().len());
    loop {
        match source.next_row(&mut row) {
            Ok(true) => {
                into.0.push(
                    (0..row.len())
                        .map(|i| row.text(i).map(str::to_owned))
                        .collect(),
                );
                into.1.push(row.position());
            }
            Ok(false) => return false,
            Err(error) => {
                into.2 = Some(error.to_string());
                return true;
            }
        }
    }
}

/// Drains `sources` in order, stopping at the first error.
pub fn drain_all<S: Source>(sources: Vec<S>) -> Drained {
    let mut drained = Drained::default();
    for source in sources {
        if drain(source, &mut drained) {
            break;
        }
    }
    drained
}

/// A file of this process's own holding `data`, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// Writes `data` to a file named by this process and `extension`.
    pub fn new(extension: &str, data: &[u8]) -> Self {
        let name = format!("ringpipe-fuzz-{}.{extension}", std::process::id());
        let scratch = Scratch(std::env::temp_dir().join(name));
        std::fs::write(&scratch.0, data).expect("write the input");
        scratch
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
