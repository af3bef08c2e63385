//! Writes arbitrary bytes to a file and reads it as CSV and as JSON Lines
//! in 2, 3 and 4 regions: the regions, drained in order, must give exactly
//! what one source gives (the same rows at the same positions and record
//! numbers, and the same error), and never panic.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use ringpipe_pipeline::{RecordPosition, Row, Source};
use ringpipe_text::{CsvSource, JsonlSource, TextConfig, TextError};

/// Rows, their positions, and the error that ended them (as its message).
type Drained = (
    Vec<Vec<Option<String>>>,
    Vec<RecordPosition>,
    Option<String>,
);

/// Reads every row of `source` into `into`; whether it ended in an error.
fn drain(mut source: impl Source, into: &mut Drained) -> bool {
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

/// One source against 2, 3 and 4 regions of the file at `path`.
fn agree<S: Source>(
    path: &Path,
    open: impl Fn(&Path, TextConfig) -> Result<S, TextError>,
    regions: impl Fn(&Path, TextConfig, usize) -> Result<Vec<S>, TextError>,
) {
    let config = || {
        TextConfig::new(["a", "b"])
            .null_string("\\N")
            .max_value_bytes(64)
    };
    let mut whole = Drained::default();
    match open(path, config()) {
        Ok(source) => {
            drain(source, &mut whole);
        }
        Err(_) => return,
    }
    for n in 2..=4 {
        let Ok(sources) = regions(path, config(), n) else {
            panic!("{n} regions: opened once, not again");
        };
        let mut split = Drained::default();
        for source in sources {
            if drain(source, &mut split) {
                break;
            }
        }
        assert_eq!(split, whole, "{n} regions");
    }
}

/// A file of this process's own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let csv = Scratch(dir.join(format!("ringpipe-fuzz-{pid}.csv")));
    std::fs::write(&csv.0, data).expect("write the input");
    agree(&csv.0, CsvSource::open, CsvSource::open_regions);
    let jsonl = Scratch(dir.join(format!("ringpipe-fuzz-{pid}.jsonl")));
    std::fs::write(&jsonl.0, data).expect("write the input");
    agree(&jsonl.0, JsonlSource::open, JsonlSource::open_regions);
});
