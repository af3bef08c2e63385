//! Writes arbitrary bytes to a file and reads it in 2, 3 and 4 regions:
//! the regions, drained in order, must give exactly what one source gives
//! (the same rows at the same positions and record numbers, and the same
//! error at the same place), and never panic.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use ringpipe_pipeline::{RecordPosition, Row, Source};
use ringpipe_xml::{XmlConfig, XmlSource};

/// Rows, their positions, and the error that ended them (as its message).
type Drained = (
    Vec<Vec<Option<String>>>,
    Vec<RecordPosition>,
    Option<String>,
);

/// Reads every row of `source` into `into`; whether it ended in an error.
fn drain(mut source: XmlSource, into: &mut Drained) -> bool {
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

/// A file of this process's own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fuzz_target!(|data: &[u8]| {
    let config = || {
        XmlConfig::new("product", ["id", "name", "price"])
            .max_depth(32)
            .max_attributes(8)
            .max_value_bytes(4096)
    };
    let file =
        Scratch(std::env::temp_dir().join(format!("ringpipe-fuzz-{}.xml", std::process::id())));
    std::fs::write(&file.0, data).expect("write the input");
    let mut whole = Drained::default();
    match XmlSource::open(&file.0, config()) {
        Ok(source) => {
            drain(source, &mut whole);
        }
        Err(_) => return,
    }
    for regions in 2..=4 {
        let sources = XmlSource::open_regions(&file.0, config(), regions).expect("opened once");
        let mut split = Drained::default();
        for source in sources {
            if drain(source, &mut split) {
                break;
            }
        }
        assert_eq!(split, whole, "{regions} regions");
    }
});
