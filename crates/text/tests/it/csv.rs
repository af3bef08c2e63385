//! CSV: quoting, `NULL`, the header, and errors with line, field and record.

use std::io::Cursor;

use ringpipe_pipeline::{Row, Source};
use ringpipe_text::{CsvSource, TextConfig, TextError};

use crate::common::cells;

fn read(csv: &[u8], config: TextConfig) -> Result<Vec<Vec<Option<String>>>, TextError> {
    let columns = config.columns.len();
    let mut source = CsvSource::from_reader(Cursor::new(csv.to_vec()), "t.csv", config)?;
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
fn quoting_delimiters_and_nulls() {
    let csv = b"b;a;skip\n\"x;\"\"y\"\"\nz\";NULL;1\n\n;\"\";2\r\n\"NULL\";3;4";
    let config = TextConfig::new(["a", "b"])
        .delimiter(b';')
        .null_string("NULL");
    assert_eq!(
        read(csv, config).unwrap(),
        cells(&[
            &[None, Some("x;\"y\"\nz")],
            &[Some(""), Some("")],
            &[Some("3"), Some("NULL")],
        ])
    );
}

#[test]
fn only_an_unquoted_null_string_is_null() {
    let config = TextConfig::new(["id", "v"]).null_string("\\N");
    let rows = read(b"id,v\n1,\\N\n2,\"\\N\"\n3,\\N \n", config).unwrap();
    let expected = cells(&[
        &[Some("1"), None],
        &[Some("2"), Some("\\N")],
        &[Some("3"), Some("\\N ")],
    ]);
    assert_eq!(rows, expected);
    // PostgreSQL's CSV default: an unquoted empty field is NULL, "" is empty.
    let config = TextConfig::new(["id", "v"]).null_string("");
    let rows = read(b"id,v\n1,\n2,\"\"\n", config).unwrap();
    assert_eq!(rows, cells(&[&[Some("1"), None], &[Some("2"), Some("")]]));
}

#[test]
fn errors_name_line_field_and_record() {
    let error = read(b"a,b\n1,2\n3\n", TextConfig::new(["a", "b"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:3:2: record 2: 2 fields as in the header, found 1"
    );
    let error = read(b"a,b\n1,2\n\"x\ny\",2,3\n", TextConfig::new(["a", "b"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:3:3: record 2: 2 fields as in the header, found 3"
    );
    let error = read(b"a,b\n1,\"x\ny\xff\"\n", TextConfig::new(["a", "b"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:3:2: record 1: UTF-8 text, found byte 0xff at byte offset 10"
    );
}

#[test]
fn a_field_longer_than_the_limit_is_refused() {
    let config = TextConfig::new(["a"]).max_value_bytes(8);
    assert_eq!(read(b"a\n12345678\n", config.clone()).unwrap().len(), 1);
    let error = read(b"a\n1\n123456789\n", config).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("t.csv:3:1: record 2: a field of at most 8 bytes"),
        "{error}"
    );
}

#[test]
fn header_must_fit() {
    let strict = TextConfig::new(["a"]).strict(true);
    assert!(read(b"a,x\n", strict).is_err());
    assert!(read(b"a,a\n", TextConfig::new(["a"])).is_err());
    let error = read(b"a,x\n1,2\n", TextConfig::new(["a", "b"])).unwrap_err();
    assert!(matches!(error, TextError::Mapping { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "t.csv: the header names no field for the column(s) [\"b\"]; its fields are \
         [\"a\", \"x\"] (choose the columns with --columns / TextConfig::new)"
    );
    assert!(read(b"", TextConfig::new(["a"])).is_err());
    let error = read(b"a,\"\xff\"\n", TextConfig::new(["a"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:1:2: record 0: UTF-8 text, found byte 0xff at byte offset 3"
    );
}

#[test]
fn a_delimiter_that_quotes_or_ends_records_is_refused() {
    for delimiter in [b'"', b'\r', b'\n'] {
        let config = TextConfig::new(["a"]).delimiter(delimiter);
        let error = read(b"a\n1\n", config).unwrap_err();
        assert!(matches!(error, TextError::Config { .. }), "{error:?}");
        assert!(
            error.to_string().contains("the delimiter cannot be"),
            "{error}"
        );
    }
}

#[test]
fn an_input_without_records_is_refused_unless_allowed() {
    for text in [&b"a,b\n"[..], b"a,b\n\n\r\n"] {
        let error = read(text, TextConfig::new(["a", "b"])).unwrap_err();
        assert!(matches!(error, TextError::NoRecords { .. }), "{error:?}");
        assert!(error.to_string().starts_with("t.csv: no record"), "{error}");
        let allowed = TextConfig::new(["a", "b"]).allow_empty(true);
        assert_eq!(
            read(text, allowed).unwrap(),
            Vec::<Vec<Option<String>>>::new()
        );
    }
}

#[test]
fn text_after_a_closing_quote_and_an_unclosed_quote_are_refused_where_they_are() {
    let config = || TextConfig::new(["a", "b"]);
    let error = read(b"a,b\n1,2\n3,\"x\"y\n", config()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:3:2: record 2: the delimiter or the record's end after a field's closing \
         quote (a quote inside a quoted field is written twice: \"\")"
    );
    let error = read(b"a,b\n1,\"open\n2,3\n", config()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:2:2: record 1: a closing quote for this field before the input ends"
    );
}

#[test]
fn a_header_of_more_fields_than_any_table_has_columns_is_refused_at_the_first_too_many() {
    let config = || TextConfig::new(["id", "name"]);
    // 4096 fields are read; the rest of the line never is.
    let mut wide = b"id,name".to_vec();
    wide.extend_from_slice(&[b','; 4094]);
    wide.extend_from_slice(b"\n1,a");
    wide.extend_from_slice(&[b','; 4094]);
    assert_eq!(
        read(&wide, config()).unwrap(),
        cells(&[&[Some("1"), Some("a")]])
    );
    let mut wider = b"\nid,name".to_vec();
    wider.resize(wider.len() + 2_000_000, b',');
    let error = read(&wider, config()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:2:4097: record 0: a header of at most 4096 fields (no table has more \
         columns: MySQL allows 4096, PostgreSQL 1600)"
    );
}

#[test]
fn a_header_field_that_names_a_column_only_when_case_is_ignored_is_refused() {
    let config = || TextConfig::new(["id", "name"]);
    let error = read(b"id,name,ID\n1,a,2\n", config()).unwrap_err();
    assert!(matches!(error, TextError::Mapping { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "t.csv: the header names \"id\" and \"ID\" (field 3), one column to MySQL, whose \
         column names ignore case"
    );
    let error = read(b"ID,name\n1,a\n", config()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv: the header's \"ID\" (field 1) is not a column: it differs from the column \
         \"id\" only in case (fields are matched exactly)"
    );
    // Where the table has both (PostgreSQL's quoted names), each fills its own.
    let rows = read(b"ID,id\n1,2\n", TextConfig::new(["id", "ID"])).unwrap();
    assert_eq!(rows, cells(&[&[Some("2"), Some("1")]]));
}

#[test]
fn in_a_file_of_one_column_an_empty_line_is_an_empty_field() {
    let config = || TextConfig::new(["name"]);
    let expected = cells(&[&[Some("a")], &[Some("")], &[Some("b")], &[Some("")]]);
    assert_eq!(read(b"name\na\n\nb\n\n", config()).unwrap(), expected);
    assert_eq!(
        read(b"name\r\na\r\n\r\nb\r\n\r\n", config()).unwrap(),
        expected
    );
    assert_eq!(read(b"name\ra\r\rb\r\r", config()).unwrap(), expected);
    // An empty null string makes it NULL (PostgreSQL's COPY … CSV default).
    let rows = read(b"name\na\n\n\"\"\n", config().null_string("")).unwrap();
    assert_eq!(rows, cells(&[&[Some("a")], &[None], &[Some("")]]));
    // Wider files skip empty lines, which would be records of one field.
    let rows = read(b"a,b\n1,2\n\n3,4\n", TextConfig::new(["a", "b"])).unwrap();
    assert_eq!(
        rows,
        cells(&[&[Some("1"), Some("2")], &[Some("3"), Some("4")]])
    );
}

/// The line of each record of `csv`.
fn record_lines(csv: &[u8], config: TextConfig) -> Vec<u64> {
    let columns = config.columns.len();
    let mut source = CsvSource::from_reader(Cursor::new(csv.to_vec()), "t.csv", config).unwrap();
    let mut row = Row::with_columns(columns);
    let mut lines = Vec::new();
    while source.next_row(&mut row).unwrap() {
        lines.push(row.position().line);
    }
    lines
}

#[test]
fn a_lone_carriage_return_ends_a_line() {
    let config = || TextConfig::new(["a", "b"]);
    assert_eq!(
        record_lines(b"a,b\r1,2\r\r3,\"x\ry\"\r4,5", config()),
        [2, 4, 6]
    );
    assert_eq!(
        record_lines(b"a,b\r\n1,2\r\n\r\n3,4\n5,6\r7,8", config()),
        [2, 4, 5, 6]
    );
    let error = read(b"a,b\r1,2\r3\r", config()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "t.csv:3:2: record 2: 2 fields as in the header, found 1"
    );
}

#[test]
fn an_empty_input_is_refused_as_empty_unless_allowed() {
    for text in [&b""[..], b"\n\r\n"] {
        let error = read(text, TextConfig::new(["a"])).unwrap_err();
        assert!(matches!(error, TextError::Empty { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("t.csv: the input is empty (no CSV header"),
            "{error}"
        );
        let allowed = TextConfig::new(["a"]).allow_empty(true);
        assert_eq!(
            read(text, allowed).unwrap(),
            Vec::<Vec<Option<String>>>::new()
        );
    }
}
