//! Rows as the escaped tab-separated text `LOAD DATA` reads.
//!
//! The statement declares `FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
//! LINES TERMINATED BY '\n'`, so a value must escape exactly the bytes that
//! would otherwise end a field or a line, the escape itself, and NUL and
//! `\r` (which some server versions mangle). `\N` stands for NULL; an empty
//! field is the empty string.

use super::Values;
use ringpipe_pipeline::Value;

/// Appends one record as a TSV line, newline included.
pub(crate) fn push_row(out: &mut Vec<u8>, row: &impl Values) {
    for index in 0..row.width() {
        if index > 0 {
            out.push(b'\t');
        }
        push_field(out, row.value(index));
    }
    out.push(b'\n');
}

/// Appends one escaped field (`\N` for NULL).
pub(crate) fn push_field(out: &mut Vec<u8>, value: Option<Value<'_>>) {
    let Some(value) = value else {
        out.extend_from_slice(b"\\N");
        return;
    };
    let bytes = value.as_bytes();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\\' => b"\\\\",
            0 => b"\\0",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..at]);
        out.extend_from_slice(escape);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringpipe_pipeline::Row;

    #[test]
    fn null_empty_and_specials() {
        let mut row = Row::with_columns(3);
        row.set(1, "");
        row.set(2, "a\tb\nc\rd\\e\0f\\N");
        let mut out = Vec::new();
        push_row(&mut out, &row);
        assert_eq!(out, b"\\N\t\ta\\tb\\nc\\rd\\\\e\\0f\\\\N\n");
    }

    #[test]
    fn multibyte_passes_through() {
        let mut out = Vec::new();
        push_field(&mut out, Some(Value::Text("zoë 😀")));
        assert_eq!(out, "zoë 😀".as_bytes());
    }
}
