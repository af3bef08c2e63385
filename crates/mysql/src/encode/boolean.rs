//! The words `true` and `false` in a `BOOLEAN` or `BIT(1)` column.
//!
//! MariaDB and MySQL declare `BOOLEAN` as `TINYINT(1)` and read a value
//! for it as an integer: in strict mode the text `'true'` is refused
//! (`Incorrect integer value`), although SQL writes the same value `TRUE`.
//! JSON Lines, XML Schema's `xsd:boolean` and most CSV writers spell
//! booleans as those words, so the sink writes `true` and `false`, in any
//! case, into a `TINYINT(1)` column as 1 and 0, on every write path. The
//! same goes for a `BIT(1)` column, where the server would store the
//! word's characters (and refuse them as too long). Nothing else changes:
//! other spellings (`t`, `yes`, `on`) are the server's to refuse, the words
//! are refused in any other integer column by the server and in a wider
//! `BIT` by the sink's check, and a text column keeps the word.

use ringpipe_pipeline::{RecordPosition, Value};

use super::Values;

/// A column that takes the words `true` and `false`, by how it stores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BooleanColumn {
    /// `TINYINT(1)`, which `BOOLEAN` is: the digits `1` and `0`.
    Integer,
    /// `BIT(1)` (what many object mappers make of a boolean field): the
    /// bits 1 and 0.
    Bit,
}

impl BooleanColumn {
    /// The kind of a column `information_schema.columns.column_type`
    /// declares as `column_type`, if it takes the words.
    pub(crate) fn of(column_type: &str) -> Option<BooleanColumn> {
        match column_type.to_ascii_lowercase().as_str() {
            "tinyint(1)" | "tinyint(1) unsigned" => Some(BooleanColumn::Integer),
            "bit(1)" => Some(BooleanColumn::Bit),
            _ => None,
        }
    }

    /// How the column is sent `truth`.
    fn value(self, truth: bool) -> Value<'static> {
        match self {
            BooleanColumn::Integer => Value::Text(if truth { "1" } else { "0" }),
            BooleanColumn::Bit => Value::Bytes(if truth { &[1] } else { &[0] }),
        }
    }
}

/// A row as the server is to read it: the words `true` and `false` in the
/// columns that take them as those columns store them, every other value
/// as it is.
pub(crate) struct AsBooleans<'a, V> {
    row: &'a V,
    /// Per column, whether and how it takes the words.
    columns: &'a [Option<BooleanColumn>],
}

impl<'a, V: Values> AsBooleans<'a, V> {
    /// `row`, whose columns take the words as `columns` (one per column)
    /// says.
    pub(crate) fn new(row: &'a V, columns: &'a [Option<BooleanColumn>]) -> Self {
        debug_assert_eq!(row.width(), columns.len());
        AsBooleans { row, columns }
    }
}

impl<V: Values> Values for AsBooleans<'_, V> {
    fn width(&self) -> usize {
        self.row.width()
    }

    #[inline]
    fn value(&self, index: usize) -> Option<Value<'_>> {
        let value = self.row.value(index)?;
        if let (Value::Text(text), Some(column)) = (value, self.columns[index]) {
            if let Some(truth) = truth(text) {
                return Some(column.value(truth));
            }
        }
        Some(value)
    }

    fn position(&self) -> RecordPosition {
        self.row.position()
    }
}

/// The truth the word `true` or `false`, in any case, names.
pub(crate) fn truth(word: &str) -> Option<bool> {
    if word.eq_ignore_ascii_case("true") {
        Some(true)
    } else if word.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use ringpipe_pipeline::Row;

    use super::*;

    #[test]
    fn only_the_two_words_in_a_column_that_takes_them_change() {
        use BooleanColumn::{Bit, Integer};
        let given = [
            ("true", Some(Integer), Value::Text("1")),
            ("FALSE", Some(Integer), Value::Text("0")),
            ("True", Some(Bit), Value::Bytes(&[1])),
            ("false", Some(Bit), Value::Bytes(&[0])),
            ("t", Some(Integer), Value::Text("t")),
            ("yes", Some(Bit), Value::Text("yes")),
            (" true", Some(Integer), Value::Text(" true")),
            ("1", Some(Integer), Value::Text("1")),
            ("", Some(Integer), Value::Text("")),
            ("true", None, Value::Text("true")),
        ];
        let mut row = Row::with_columns(given.len() + 1);
        for (index, (text, ..)) in given.iter().enumerate() {
            row.set(index, text);
        }
        let mut columns: Vec<_> = given.iter().map(|(_, column, _)| *column).collect();
        columns.push(Some(Integer));
        let read = AsBooleans::new(&row, &columns);
        for (index, (.., sent)) in given.iter().enumerate() {
            assert_eq!(read.value(index), Some(*sent), "{index}");
        }
        assert_eq!(read.value(given.len()), None);
    }

    #[test]
    fn bytes_stay_bytes() {
        let mut row = Row::with_columns(1);
        row.set_bytes(0, b"true");
        let read = AsBooleans::new(&row, &[Some(BooleanColumn::Integer)]);
        assert_eq!(read.value(0), Some(Value::Bytes(b"true")));
    }

    #[test]
    fn only_tinyint_1_and_bit_1_take_the_words() {
        use BooleanColumn::{Bit, Integer};
        for (declared, kind) in [
            ("tinyint(1)", Some(Integer)),
            ("TINYINT(1) UNSIGNED", Some(Integer)),
            ("bit(1)", Some(Bit)),
            ("tinyint(4)", None),
            ("tinyint(1) unsigned zerofill", None),
            ("bit(8)", None),
            ("int(1)", None),
        ] {
            assert_eq!(BooleanColumn::of(declared), kind, "{declared}");
        }
    }
}
