//! Arbitrary bytes through both sources, the deterministic stand-in for
//! `fuzz/`'s `text_sources` target: no panic, records numbered 1, 2, 3, …,
//! and a source stays finished after an error or the end of input, with
//! and without a column decoded.

use std::io::Cursor;

use ringpipe_pipeline::{Decode, Row, Source};
use ringpipe_text::{CsvSource, JsonlSource, TextConfig};

use crate::common::Random;

/// Bytes made of what the formats care about, and of what they refuse.
fn hostile(random: &mut Random) -> Vec<u8> {
    let pieces: [&[u8]; 18] = [
        b"a,b\n",
        b"1,2\r\n",
        b"\"",
        b",",
        b"\n",
        b"\r",
        b"\\N",
        b"{\"a\":1,\"b\":\"x\"}\n",
        b"{\"a\":",
        b"null",
        b"[1,{\"b\":2}]",
        b"\xff",
        b"\xe2\x82",
        b"\x00",
        "\u{feff}".as_bytes(),
        b"caf\xc3\xa9",
        b"\\x0aFF",
        b"AP8=",
    ];
    let mut bytes = Vec::new();
    for _ in 0..random.below(60) {
        bytes.extend_from_slice(pieces[random.below(pieces.len())]);
    }
    bytes
}

/// Drains `source`: records numbered from 1, and nothing after its end.
fn drain(mut source: impl Source, input: &[u8]) {
    let mut row = Row::with_columns(source.columns().len());
    let mut records = 0;
    while let Ok(true) = source.next_row(&mut row) {
        records += 1;
        assert_eq!(row.position().record, records, "{input:?}");
    }
    assert!(matches!(source.next_row(&mut row), Ok(false)), "{input:?}");
}

#[test]
fn arbitrary_bytes_never_panic_and_a_finished_source_stays_finished() {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let input = hostile(&mut random);
        let mut config = TextConfig::new(["a", "b"])
            .null_string("\\N")
            .max_value_bytes(8);
        // Column `b` holds bytes in two thirds of the inputs.
        match random.below(3) {
            1 => config = config.decode("b", Decode::Hex),
            2 => config = config.decode("b", Decode::Base64),
            _ => {}
        }
        if let Ok(source) =
            CsvSource::from_reader(Cursor::new(input.clone()), "t.csv", config.clone())
        {
            drain(source, &input);
        }
        let source = JsonlSource::from_reader(Cursor::new(input.clone()), "t.jsonl", config);
        drain(source, &input);
    }
}
