//! The reusable row that travels through an import ring.

/// One record as text columns, reused in place from event to event.
///
/// A [`Row`] lives in a ring slot for the life of the pipeline. Sources
/// overwrite it with [`Row::set`] / [`Row::value_mut`]; the `String` behind
/// each column keeps its capacity, so steady-state imports allocate nothing
/// per row. `None` means SQL `NULL`; `Some("")` is the empty string.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::pipeline::Row;
///
/// let mut row = Row::with_columns(2);
/// row.set(0, "42");
/// row.value_mut(1).push_str("caf\u{e9}");
/// assert_eq!(row.get(0), Some("42"));
/// assert_eq!(row.get(1), Some("café"));
/// row.clear();
/// assert_eq!(row.get(0), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// Column text; meaningful only where `present[i]` is true.
    values: Vec<String>,
    /// `false` means the column is SQL `NULL` in this record.
    present: Vec<bool>,
    /// Where the record came from, for error messages and checkpoints.
    position: RecordPosition,
}

/// Where a record started in its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordPosition {
    /// 1-based number of the record in the input (0 before the first record).
    pub record: u64,
    /// 1-based line of the record's start tag (0 when unknown).
    pub line: u64,
    /// 1-based column (in characters) of the record's start tag (0 when unknown).
    pub column: u64,
    /// Byte offset of the record's start in the (decompressed) input.
    pub byte_offset: u64,
}

impl Row {
    /// A row of `columns` columns, all `NULL`.
    pub fn with_columns(columns: usize) -> Self {
        Row {
            values: vec![String::new(); columns],
            present: vec![false; columns],
            position: RecordPosition::default(),
        }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the row has no columns at all.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Sets every column to `NULL`, keeping each buffer's capacity.
    pub fn clear(&mut self) {
        self.present.iter_mut().for_each(|p| *p = false);
        self.position = RecordPosition::default();
    }

    /// The value of column `index`, `None` for `NULL`.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn get(&self, index: usize) -> Option<&str> {
        self.present[index].then(|| self.values[index].as_str())
    }

    /// Sets column `index` to `value` (not `NULL`), reusing its buffer.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn set(&mut self, index: usize, value: &str) {
        self.value_mut(index).push_str(value);
    }

    /// Marks column `index` present and returns its emptied buffer to append to.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn value_mut(&mut self, index: usize) -> &mut String {
        self.present[index] = true;
        let value = &mut self.values[index];
        value.clear();
        value
    }

    /// Returns column `index`'s buffer without clearing it, marking it present.
    ///
    /// Lets a parser append a value that arrives in several pieces
    /// (text, then an entity, then CDATA).
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn append_mut(&mut self, index: usize) -> &mut String {
        self.present[index] = true;
        &mut self.values[index]
    }

    /// Sets column `index` to `NULL`.
    ///
    /// # Panics
    ///
    /// Panics if `index >= self.len()`.
    pub fn set_null(&mut self, index: usize) {
        self.present[index] = false;
    }

    /// Where this record came from.
    pub fn position(&self) -> RecordPosition {
        self.position
    }

    /// Records where this record came from.
    pub fn set_position(&mut self, position: RecordPosition) {
        self.position = position;
    }

    /// Total bytes of text currently held (not capacity).
    pub fn text_len(&self) -> usize {
        self.values
            .iter()
            .zip(&self.present)
            .filter(|(_, p)| **p)
            .map(|(v, _)| v.len())
            .sum()
    }

    /// Frees any column buffer whose capacity exceeds `max_bytes`.
    ///
    /// The clearing stage calls this so that one huge record does not pin
    /// its memory in a slot for the rest of the run.
    pub fn shrink_to(&mut self, max_bytes: usize) {
        for value in &mut self.values {
            if value.capacity() > max_bytes {
                value.clear();
                value.shrink_to(max_bytes);
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
        assert_eq!(row.get(0), Some(""));
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
    fn shrink_releases_only_oversized_buffers() {
        let mut row = Row::with_columns(2);
        row.set(0, &"x".repeat(1 << 20));
        row.set(1, "small");
        row.shrink_to(1024);
        assert!(row.value_mut(0).capacity() <= 1024);
        assert_eq!(row.get(1), Some("small"));
    }
}
