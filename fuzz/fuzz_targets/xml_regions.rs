//! Writes arbitrary bytes to a file and reads it in 2, 3 and 4 regions:
//! the regions, drained in order, must give exactly what one source gives
//! (the same rows at the same positions and record numbers, and the same
//! error at the same place), and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringpipe_fuzz::{drain_all, Scratch};
use ringpipe_xml::{XmlConfig, XmlSource};

fuzz_target!(|data: &[u8]| {
    let config = || {
        XmlConfig::new("product", ["id", "name", "price"])
            .max_depth(32)
            .max_attributes(8)
            .max_value_bytes(4096)
    };
    let file = Scratch::new("xml", data);
    let Ok(source) = XmlSource::open(&file.0, config()) else {
        return;
    };
    let whole = drain_all(vec![source]);
    for regions in 2..=4 {
        let sources = XmlSource::open_regions(&file.0, config(), regions).expect("opened once");
        assert_eq!(drain_all(sources), whole, "{regions} regions");
    }
});
