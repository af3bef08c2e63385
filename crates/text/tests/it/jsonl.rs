//! JSON Lines: each key once, blank lines, limits and positions.

use std::io::Cursor;

use ringpipe_pipeline::{Row, Source};
use ringpipe_text::{JsonlSource, TextConfig, TextError};

fn read(text: &[u8], config: TextConfig) -> Result<Vec<Vec<Option<String>>>, TextError> {
    let columns = config.columns.len();
    let mut source = JsonlSource::from_reader(Cursor::new(text.to_vec()), "t.jsonl", config);
    let mut row = Row::with_columns(columns);
    let mut rows = Vec::new();
    while source.next_row(&mut row)? {
        rows.push(
            (0..columns)
                .map(|i| row.text(i).map(str::to_owned))
                .collect(),
        );
    }
    Ok(rows)
}

#[test]
fn a_key_given_twice_is_an_error_with_its_line() {
    let config = TextConfig::new(["a", "b"]);
    let text = b"{\"a\": 1}\n{\"a\": 1, \"b\": 2, \"a\": 3}\n";
    let error = read(text, config.clone()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.jsonl:2:20: record 2: a JSON object (the key \"a\" twice)"
    );
    // Also a key no column takes, and one spelled with an escape.
    let text = b"{\"x\": 1, \"\\u0078\": 2}\n";
    let error = read(text, config.clone()).unwrap_err();
    assert!(error.to_string().contains("the key \"x\" twice"), "{error}");
    // Many keys: still found.
    let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
    let text = format!("{{{}, \"k7\": 0}}\n", keys.join(", "));
    let error = read(text.as_bytes(), config).unwrap_err();
    assert!(
        error.to_string().contains("the key \"k7\" twice"),
        "{error}"
    );
}

#[test]
fn only_json_whitespace_makes_a_line_blank() {
    let config = TextConfig::new(["a"]);
    let rows = read(b" \t\r\n{\"a\": \"x\"}\r\n\n", config.clone()).unwrap();
    assert_eq!(rows, vec![vec![Some("x".to_owned())]]);
    let error = read("{\"a\": 1}\n\u{3000}\n".as_bytes(), config).unwrap_err();
    assert!(error.to_string().starts_with("t.jsonl:2:"), "{error}");
    assert!(error.to_string().contains("record 2"), "{error}");
}

#[test]
fn a_line_longer_than_the_limit_is_refused() {
    let config = TextConfig::new(["a"]).max_value_bytes(12);
    assert_eq!(
        read(b"{\"a\": \"123\"}\n", config.clone()).unwrap().len(),
        1
    );
    let error = read(b"{\"a\": 1}\n{\"a\": \"1234\"}\n", config).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("t.jsonl:2:0: record 2: a line of at most 12 bytes"),
        "{error}"
    );
}

#[test]
fn bytes_that_are_not_utf8_are_refused_with_their_offset() {
    let error = read(b"{\"a\": 1}\n{\"a\": \"\xc3(\"}\n", TextConfig::new(["a"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.jsonl:2:8: record 2: UTF-8 text, found byte 0xc3 at byte offset 16"
    );
}

#[test]
fn an_input_without_records_is_refused_unless_allowed() {
    for text in [&b""[..], b"\n  \n\t\r\n"] {
        let error = read(text, TextConfig::new(["a"])).unwrap_err();
        assert!(matches!(error, TextError::NoRecords { .. }), "{error:?}");
        let allowed = TextConfig::new(["a"]).allow_empty(true);
        assert_eq!(
            read(text, allowed).unwrap(),
            Vec::<Vec<Option<String>>>::new()
        );
    }
}
