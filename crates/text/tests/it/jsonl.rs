//! JSON Lines: each key once, blank lines, limits and positions.

use std::io::Cursor;

use ringpipe_pipeline::{Decode, Row, Source};
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
        "t.jsonl:2:18: record 2: a JSON object (the key \"a\" twice)"
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
            .starts_with("t.jsonl:2:1: record 2: a line of at most 12 bytes"),
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

/// The message of reading `text` into the columns `id` and `name`.
fn refused(text: &str, config: TextConfig) -> String {
    read(text.as_bytes(), config).unwrap_err().to_string()
}

#[test]
fn faults_name_the_character_column_of_the_key_or_value() {
    let config = || TextConfig::new(["id", "name"]);
    let cases = [
        // serde_json's own faults, at the character it stopped at.
        (
            "{\"name\":\"\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\", x}",
            "1:18: record 1: a JSON object (key must be a string)",
        ),
        (
            "{\"id\": 1}\n[1]",
            "2:1: record 2: a JSON object (invalid type: sequence, expected a JSON object)",
        ),
        (
            " \"s\"",
            "1:2: record 1: a JSON object (invalid type: string \"s\", expected a JSON object)",
        ),
        // A line that ends inside the object: where it ends.
        (
            "{\"name\": \"\u{e9}\"\n",
            "1:13: record 1: a JSON object (EOF while parsing an object)",
        ),
        (
            "{\"name\": \"\u{e9}\"",
            "1:13: record 1: a JSON object (EOF while parsing an object)",
        ),
        // The object's own faults, at the key's opening quote.
        (
            "{\"\u{e9}\": 1, \"id\": 2, \"id\": 3}",
            "1:19: record 1: a JSON object (the key \"id\" twice)",
        ),
        (
            "{\"\u{e9}\": 1, \"\\u00e9\": 2, \"id\": 3}",
            "1:10: record 1: a JSON object (the key \"\u{e9}\" twice)",
        ),
        // A value whose escape is not text: the value's quote.
        (
            "{\"name\":\"\\ud800\"}",
            "1:9: record 1: a JSON string (unexpected end of hex escape)",
        ),
        (
            "{\"\u{e9}\":\"\u{e9}\",\"name\":\"\\ud800\"}",
            "1:17: record 1: a JSON string (unexpected end of hex escape)",
        ),
    ];
    for (text, expected) in cases {
        let error = refused(text, config());
        assert_eq!(error, format!("t.jsonl:{expected}"), "{text:?}");
    }
    let strict = refused("{\"\u{e9}\u{e9}\": 1, \"id\": 2}", config().strict(true));
    assert_eq!(
        strict,
        "t.jsonl:1:2: record 1: no key \"\u{e9}\u{e9}\", which is not a column"
    );
    let strict = refused("{\"id\": \"\u{e9}\", \"x\": 1}", config().strict(true));
    assert!(
        strict.starts_with("t.jsonl:1:13: record 1: no key \"x\""),
        "{strict}"
    );
    let error = read(b"{\"id\": \"\xc3\xa9\xc3\xa9\xff\"}\n", config()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("t.jsonl:1:11: record 1: UTF-8 text, found byte 0xff"),
        "{error}"
    );
}

#[test]
fn an_object_that_fills_no_column_is_refused() {
    let config = || TextConfig::new(["id", "name"]);
    let error = refused("{\"id\": 1}\n {}\n", config());
    assert_eq!(
        error,
        "t.jsonl:2:2: record 2: a key naming a column (\"id\", \"name\"), found no key"
    );
    let error = refused("{\"x\": 1, \"y\": 2}", config());
    assert_eq!(
        error,
        "t.jsonl:1:1: record 1: a key naming a column (\"id\", \"name\"), found only keys \
         that name none, as \"x\""
    );
    // A key naming a column, even as null, fills it.
    assert_eq!(
        read(b"{\"id\": null}", config()).unwrap(),
        vec![vec![None, None]]
    );
}

#[test]
fn a_key_that_names_a_column_only_when_case_is_ignored_is_refused() {
    let config = || TextConfig::new(["id", "name"]);
    let error = refused("{\"ID\": 1, \"Name\": \"a\"}", config());
    assert_eq!(
        error,
        "t.jsonl:1:2: record 1: a key naming a column exactly, found \"ID\", which differs \
         from the column \"id\" only in case"
    );
    // Besides the column's own key, in either order: one column to MySQL.
    for (text, column) in [
        ("{\"id\": 1, \"ID\": 2}", 11),
        ("{\"ID\": 2, \"id\": 1}", 11),
    ] {
        let error = refused(text, config().strict(true));
        assert!(
            error.starts_with(&format!(
                "t.jsonl:1:{column}: record 1: each column named once, found the keys"
            )),
            "{error}"
        );
        assert!(error.contains("one column to MySQL"), "{error}");
    }
    // Where the table has both (PostgreSQL's quoted names), each fills its own.
    let both = TextConfig::new(["id", "ID"]);
    let rows = read(b"{\"id\": 1, \"ID\": 2}", both).unwrap();
    assert_eq!(rows, vec![vec![Some("1".to_owned()), Some("2".to_owned())]]);
}

#[test]
fn decoded_columns_hold_bytes_and_a_bad_digit_names_its_place() {
    let config = || TextConfig::new(["id", "b"]).decode("b", Decode::Base64);
    let text =
        b"{\"id\": 1, \"b\": \"AP8=\"}\n{\"id\": 2, \"b\": null}\n{\"id\": 3, \"b\": \"A*8=\"}\n";
    let mut source = JsonlSource::from_reader(Cursor::new(text.to_vec()), "t.jsonl", config());
    let mut row = Row::with_columns(2);
    assert!(source.next_row(&mut row).unwrap());
    assert_eq!(
        row.get(1).map(|v| v.as_bytes().to_vec()),
        Some(vec![0, 255])
    );
    assert!(source.next_row(&mut row).unwrap());
    assert!(row.get(1).is_none(), "NULL stays NULL");
    let error = source.next_row(&mut row).unwrap_err().to_string();
    assert_eq!(
        error,
        "t.jsonl:3:16: record 3: base64 for column `b` ('*' is not a base64 digit, at byte 1 of \
         the value)"
    );
    let other = TextConfig::new(["id"]).decode("b", Decode::Hex);
    let mut source = JsonlSource::from_reader(Cursor::new(text.to_vec()), "t.jsonl", other);
    let error = source.next_row(&mut row).unwrap_err().to_string();
    assert_eq!(
        error,
        "t.jsonl: a decoding for \"b\", which is not a column"
    );
}
