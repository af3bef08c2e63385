//! The reusable row that travels through an import ring.

/// One column's value: text, or bytes that are not text (a binary column).
///
/// SQL `NULL` is the absence of a value (`Option::None` in [`Row::get`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// UTF-8 text.
    Text(&'a str),
    /// Raw bytes (decoded from hex or base64, or read from a binary export).
    Bytes(&'a [u8]),
}

impl<'a> Value<'a> {
    /// The value's bytes, whichever kind it is.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        match *self {
            Value::Text(text) => text.as_bytes(),
            Value::Bytes(bytes) => bytes,
        }
    }

    /// The text, `None` for a binary value.
    #[inline]
    pub fn as_text(&self) -> Option<&'a str> {
        match *self {
            Value::Text(text) => Some(text),
            Value::Bytes(_) => None,
        }
    }

    /// Whether the value is binary.
    pub fn is_binary(&self) -> bool {
        matches!(self, Value::Bytes(_))
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the value holds no byte (the empty string, not `NULL`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a column holds in the current record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Null,
    Text,
    Bytes,
}

/// One record's columns, reused in place from event to event.
///
/// A [`Row`] lives in a ring slot for the life of the pipeline. Sources
/// overwrite it with [`Row::set`] / [`Row::value_mut`] (text) or
/// [`Row::set_bytes`] / [`Row::bytes_mut`] (binary); the buffer behind each
/// column keeps its capacity, so steady-state imports allocate nothing per
/// row. A column not set since [`Row::clear`] is SQL `NULL`; the empty string
/// is a value.
///
/// # Examples
///
/// ```
/// use ringpipe_pipeline::{Row, Value};
///
/// let mut row = Row::with_columns(3);
/// row.set(0, "42");
/// row.value_mut(1).push_str("caf\u{e9}");
/// assert_eq!(row.get(0), Some(Value::Text("42")));
/// assert_eq!(row.text(1), Some("café"));
/// assert_eq!(row.get(2), None); // NULL
/// row.set_bytes(2, &[0, 0xff]);
/// assert_eq!(row.get(2), Some(Value::Bytes(&[0, 0xff])));
/// row.clear();
/// assert_eq!(row.get(0), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// Text buffers; meaningful only where `kinds[i]` is `Text`.
    texts: Vec<String>,
    /// Binary buffers; meaningful only where `kinds[i]` is `Bytes`. Empty
    /// until the first binary value: most imports have none, and a ring
    /// holds thousands of rows.
    bytes: Vec<Vec<u8>>,
    /// What each column holds in this record.
    kinds: Vec<Kind>,
    /// Where the record came from, for error messages and checkpoints.
    position: RecordPosition,
}

/// Where a record started in its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordPosition {
    /// 1-based number of the record in the input (0 before the first record).
    pub record: u64,
    /// 1-based line of the record's start (0 when unknown).
    pub line: u64,
    /// 1-based column (in characters) of the record's start (0 when unknown).
    pub column: u64,
    /// Byte offset of the record's start in the (decompressed) input.
    pub byte_offset: u64,
}

impl Row {
    /// A row of `columns` columns, all `NULL`.
    pub fn with_columns(columns: usize) -> Self {
        Row {
            texts: vec![String::new(); columns],
            bytes: Vec::new(),
            kinds: vec![Kind::Null; columns],
            position: RecordPosition::default(),
        }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the row has no columns at all.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Sets every column to `NULL`, keeping each buffer's capacity.
    pub fn clear(&mut self) {
        self.kinds.iter_mut().for_each(|k| *k = Kind::Null);
        self.position = RecordPosition::default();
    }

    /// The value of column `index`, `None` for `NULL`.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    #[inline]
    pub fn get(&self, index: usize) -> Option<Value<'_>> {
        match self.kinds[index] {
            Kind::Null => None,
            Kind::Text => Some(Value::Text(&self.texts[index])),
            Kind::Bytes => Some(Value::Bytes(&self.bytes[index])),
        }
    }

    /// The text of column `index`: `None` for `NULL` and for a binary value.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    #[inline]
    pub fn text(&self, index: usize) -> Option<&str> {
        self.get(index).and_then(|value| value.as_text())
    }

    /// Sets column `index` to the text `value` (not `NULL`), reusing its buffer.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn set(&mut self, index: usize, value: &str) {
        self.value_mut(index).push_str(value);
    }

    /// Marks column `index` as text and returns its emptied buffer to append to.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    #[inline]
    pub fn value_mut(&mut self, index: usize) -> &mut String {
        let value = self.append_mut(index);
        value.clear();
        value
    }

    /// Returns column `index`'s text buffer without clearing it, marking it
    /// text. Lets a parser append a value that arrives in several pieces
    /// (text, then an entity, then CDATA). A column that held bytes starts
    /// again empty.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    #[inline]
    pub fn append_mut(&mut self, index: usize) -> &mut String {
        if self.kinds[index] != Kind::Text {
            self.texts[index].clear();
            self.kinds[index] = Kind::Text;
        }
        &mut self.texts[index]
    }

    /// Sets column `index` to the binary `value` (not `NULL`).
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn set_bytes(&mut self, index: usize, value: &[u8]) {
        self.bytes_mut(index).extend_from_slice(value);
    }

    /// Marks column `index` as binary and returns its emptied byte buffer.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn bytes_mut(&mut self, index: usize) -> &mut Vec<u8> {
        self.kinds[index] = Kind::Bytes;
        if self.bytes.is_empty() {
            self.bytes.resize_with(self.kinds.len(), Vec::new);
        }
        let value = &mut self.bytes[index];
        value.clear();
        value
    }

    /// Sets column `index` to `NULL`.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    #[inline]
    pub fn set_null(&mut self, index: usize) {
        self.kinds[index] = Kind::Null;
    }

    /// The values of every column, in order (`None`: `NULL`).
    pub fn values(&self) -> impl ExactSizeIterator<Item = Option<Value<'_>>> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }

    /// Where this record came from.
    pub fn position(&self) -> RecordPosition {
        self.position
    }

    /// Records where this record came from.
    pub fn set_position(&mut self, position: RecordPosition) {
        self.position = position;
    }

    /// Total bytes of the values currently held (not capacity).
    #[inline]
    pub fn value_len(&self) -> usize {
        self.values().flatten().map(|value| value.len()).sum()
    }

    /// Frees any column buffer whose capacity exceeds `max_bytes`.
    ///
    /// An import calls this before a slot's row is filled again, so that
    /// one huge record does not pin its memory in a slot for the run.
    pub fn shrink_to(&mut self, max_bytes: usize) {
        for text in &mut self.texts {
            if text.capacity() > max_bytes {
                text.clear();
                text.shrink_to(max_bytes);
            }
        }
        for bytes in &mut self.bytes {
            if bytes.capacity() > max_bytes {
                bytes.clear();
                bytes.shrink_to(max_bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_differs_from_empty() {
        let mut row = Row::with_columns(2);
        row.set(0, "");
        assert_eq!(row.get(0), Some(Value::Text("")));
        assert_eq!(row.get(1), None);
    }

    #[test]
    fn clear_keeps_capacity_and_nulls_every_column() {
        let mut row = Row::with_columns(1);
        row.set(0, &"x".repeat(100));
        row.clear();
        assert_eq!(row.get(0), None);
        assert!(row.value_mut(0).capacity() >= 100);
    }

    #[test]
    fn a_column_switches_between_text_and_bytes() {
        let mut row = Row::with_columns(1);
        row.set_bytes(0, b"\x00\xff");
        assert_eq!(row.text(0), None);
        assert_eq!(row.get(0).map(|v| v.as_bytes()), Some(&b"\x00\xff"[..]));
        row.append_mut(0).push('a');
        assert_eq!(row.get(0), Some(Value::Text("a")));
        row.bytes_mut(0);
        assert_eq!(row.get(0), Some(Value::Bytes(b"")));
        assert_eq!(row.value_len(), 0);
    }

    #[test]
    fn binary_buffers_wait_for_the_first_binary_value() {
        let mut row = Row::with_columns(3);
        row.set(0, "text");
        assert_eq!(row.bytes.capacity(), 0, "a text-only row keeps none");
        row.set_bytes(2, b"\x01");
        assert_eq!(row.bytes.len(), 3);
        assert_eq!(row.get(2), Some(Value::Bytes(b"\x01")));
        assert_eq!(row.get(1), None);
    }

    #[test]
    fn shrink_releases_only_oversized_buffers() {
        let mut row = Row::with_columns(2);
        row.set(0, &"x".repeat(1 << 20));
        row.set(1, "small");
        row.shrink_to(1024);
        assert!(row.value_mut(0).capacity() <= 1024);
        assert_eq!(row.text(1), Some("small"));
    }
}
