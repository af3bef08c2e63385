//! Feeds arbitrary bytes to `XmlSource` and drains it: it must never
//! panic, and must stay finished after an error or the end of input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringpipe_pipeline::{Row, Source};
use ringpipe_xml::{XmlConfig, XmlSource};

fuzz_target!(|data: &[u8]| {
    // Small limits so that the fuzzer reaches them.
    let config = XmlConfig::new("product", ["id", "name", "price"])
        .max_depth(32)
        .max_attributes(8)
        .max_value_bytes(4096);
    let Ok(mut source) =
        XmlSource::from_reader("fuzz", std::io::Cursor::new(data.to_vec()), config)
    else {
        return;
    };
    let mut row = Row::with_columns(3);
    let mut records = 0u64;
    loop {
        match source.next_row(&mut row) {
            Ok(true) => {
                records += 1;
                assert_eq!(row.position().record, records);
            }
            Ok(false) | Err(_) => break,
        }
    }
    assert!(!source.next_row(&mut row).unwrap());
});
