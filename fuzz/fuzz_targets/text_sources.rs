//! Feeds arbitrary bytes to `CsvSource` and `JsonlSource` and drains them:
//! they must never panic, must number records 1, 2, 3, ... and must stay
//! finished after an error or the end of input. The first byte picks
//! whether column `b` is decoded (none, hex, base64).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringpipe_pipeline::{Decode, Row, Source};
use ringpipe_text::{CsvSource, JsonlSource, TextConfig};

fn drain(mut source: impl Source) {
    let mut row = Row::with_columns(source.columns().len());
    let mut records = 0u64;
    while let Ok(true) = source.next_row(&mut row) {
        records += 1;
        assert_eq!(row.position().record, records);
    }
    assert!(!source.next_row(&mut row).unwrap());
}

fuzz_target!(|data: &[u8]| {
    // A small limit so that the fuzzer reaches it.
    let mut config = TextConfig::new(["a", "b"])
        .null_string("\\N")
        .max_value_bytes(64);
    match data.first().map(|b| b % 3) {
        Some(1) => config = config.decode("b", Decode::Hex),
        Some(2) => config = config.decode("b", Decode::Base64),
        _ => {}
    }
    let input = || std::io::Cursor::new(data.to_vec());
    if let Ok(source) = CsvSource::from_reader(input(), "fuzz.csv", config.clone()) {
        drain(source);
    }
    drain(JsonlSource::from_reader(input(), "fuzz.jsonl", config));
});
