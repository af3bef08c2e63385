//! The words `true` and `false` in a `BOOLEAN` column.
//!
//! MariaDB and MySQL declare `BOOLEAN` as `TINYINT(1)` and read a value
//! for it as an integer: in strict mode the text `'true'` is refused
//! (`Incorrect integer value`), although SQL writes the same value `TRUE`.
//! JSON Lines, XML Schema's `xsd:boolean` and most CSV writers spell
//! booleans as those words, so the sink writes `true` and `false`, in any
//! case, into a `TINYINT(1)` column as 1 and 0, on every write path, and
//! checks them as such. That is the only change: other spellings (`t`,
//! `yes`, `on`) are the server's to refuse, as are the words in any other
//! integer column, and a text column keeps the word.

use ringpipe_pipeline::{RecordPosition, Value};

use super::Values;

/// A row as the server is to read it: the words `true` and `false` in the
/// columns flagged in `booleans` as `1` and `0`, every other value as it is.
pub(crate) struct AsBooleans<'a, V> {
    row: &'a V,
    /// Per column, whether it is a `TINYINT(1)`.
    booleans: &'a [bool],
}

impl<'a, V: Values> AsBooleans<'a, V> {
    /// `row`, its columns flagged in `booleans` (one flag per column) read
    /// as booleans.
    pub(crate) fn new(row: &'a V, booleans: &'a [bool]) -> Self {
        debug_assert_eq!(row.width(), booleans.len());
        AsBooleans { row, booleans }
    }
}

impl<V: Values> Values for AsBooleans<'_, V> {
    fn width(&self) -> usize {
        self.row.width()
    }

    #[inline]
    fn value(&self, index: usize) -> Option<Value<'_>> {
        let value = self.row.value(index)?;
        if let (Value::Text(text), true) = (value, self.booleans[index]) {
            if let Some(digit) = digit(text) {
                return Some(Value::Text(digit));
            }
        }
        Some(value)
    }

    fn position(&self) -> RecordPosition {
        self.row.position()
    }
}

/// `1` for the word `true`, `0` for `false`, in any case.
fn digit(word: &str) -> Option<&'static str> {
    if word.eq_ignore_ascii_case("true") {
        Some("1")
    } else if word.eq_ignore_ascii_case("false") {
        Some("0")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use ringpipe_pipeline::Row;

    use super::*;

    #[test]
    fn only_the_two_words_in_a_boolean_column_become_digits() {
        let values = [
            "true", "FALSE", "True", "t", "yes", " true", "1", "", "true",
        ];
        let mut row = Row::with_columns(values.len() + 1);
        for (index, value) in values.iter().enumerate() {
            row.set(index, value);
        }
        let mut booleans = vec![true; values.len() + 1];
        booleans[values.len() - 1] = false;
        let read = AsBooleans::new(&row, &booleans);
        let texts: Vec<Option<&str>> = (0..read.width())
            .map(|i| {
                read.value(i)
                    .map(|v| std::str::from_utf8(v.as_bytes()).unwrap())
            })
            .collect();
        assert_eq!(
            texts,
            [
                Some("1"),
                Some("0"),
                Some("1"),
                Some("t"),
                Some("yes"),
                Some(" true"),
                Some("1"),
                Some(""),
                Some("true"),
                None
            ]
        );
    }

    #[test]
    fn bytes_stay_bytes() {
        let mut row = Row::with_columns(1);
        row.set_bytes(0, b"true");
        let read = AsBooleans::new(&row, &[true]);
        assert_eq!(read.value(0), Some(Value::Bytes(b"true")));
    }
}
