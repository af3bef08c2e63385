//! Writes arbitrary bytes to a file and reads it as CSV and as JSON Lines
//! in 2, 3 and 4 regions: the regions, drained in order, must give exactly
//! what one source gives (the same rows at the same positions and record
//! numbers, and the same error), and never panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ringpipe_fuzz::{drain_all, Scratch};
use ringpipe_pipeline::Source;
use ringpipe_text::{CsvSource, JsonlSource, TextConfig, TextError};

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
    let Ok(source) = open(path, config()) else {
        return;
    };
    let whole = drain_all(vec![source]);
    for n in 2..=4 {
        let sources = regions(path, config(), n).expect("opened once");
        assert_eq!(drain_all(sources), whole, "{n} regions");
    }
}

fuzz_target!(|data: &[u8]| {
    let csv = Scratch::new("csv", data);
    agree(&csv.0, CsvSource::open, CsvSource::open_regions);
    let jsonl = Scratch::new("jsonl", data);
    agree(&jsonl.0, JsonlSource::open, JsonlSource::open_regions);
});
