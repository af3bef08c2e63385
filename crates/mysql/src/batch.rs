//! The current batch's rows, kept until commit.
//!
//! The ring owns its rows, so the sink copies each row once into one flat
//! buffer. The copy lets the sink re-send any subset of the batch: to find a
//! bad record, to fall back to another write path, and to feed the paths
//! that bind values at commit time.

use std::ops::Range;

use mysql::Value as Param;
use ringpipe_pipeline::{RecordPosition, Value};

use crate::encode::Values;

/// Rows of one batch, every present value back to back in one buffer.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Columns per row.
    width: usize,
    /// Every present value (text or binary), back to back.
    data: Vec<u8>,
    /// Per cell (row-major): a [`Cell`], 8 bytes, so a 5,000-row batch of
    /// nine columns keeps 360 KB of bookkeeping rather than a megabyte.
    cells: Vec<Cell>,
    /// Per row: where the record came from.
    positions: Vec<RecordPosition>,
}

/// One value's place: the end of its bytes in [`Batch::data`] and its kind
/// in the top bits. Its start is the previous cell's end (0 for the first),
/// since values are stored in cell order; a NULL cell's end is the previous
/// end.
#[derive(Debug, Clone, Copy)]
struct Cell(u64);

impl Cell {
    const NULL: u64 = 1 << 63;
    const BINARY: u64 = 1 << 62;
    const END: u64 = Self::BINARY - 1;

    fn end(self) -> usize {
        // Lossless: `push` stores `data.len()`, a `usize`.
        (self.0 & Self::END) as usize
    }
}

/// One stored row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredRow<'a> {
    /// The batch holding it.
    batch: &'a Batch,
    /// Its index in the batch.
    index: usize,
}

impl Batch {
    /// An empty batch of `width`-column rows.
    pub(crate) fn new(width: usize) -> Self {
        Batch {
            width,
            ..Batch::default()
        }
    }

    /// The source record number of the first row held (0 when empty).
    pub(crate) fn first_record(&self) -> u64 {
        self.positions.first().map_or(0, |p| p.record)
    }

    /// Rows held.
    pub(crate) fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether no row is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Copies `row` in.
    pub(crate) fn push(&mut self, row: &impl Values) {
        for index in 0..self.width {
            let tag = match row.value(index) {
                None => Cell::NULL,
                Some(value) => {
                    self.data.extend_from_slice(value.as_bytes());
                    if value.is_binary() {
                        Cell::BINARY
                    } else {
                        0
                    }
                }
            };
            let end = self.data.len() as u64;
            debug_assert!(end <= Cell::END, "no buffer reaches 2^62 bytes");
            self.cells.push(Cell(end | tag));
        }
        self.positions.push(row.position());
    }

    /// Row `index`.
    pub(crate) fn row(&self, index: usize) -> StoredRow<'_> {
        StoredRow { batch: self, index }
    }

    /// Forgets every row, keeping capacity.
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.cells.clear();
        self.positions.clear();
    }

    /// Columns per row.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// The value of cell `index` (row-major).
    fn value_at(&self, index: usize) -> Option<Value<'_>> {
        let cell = self.cells[index];
        if cell.0 & Cell::NULL != 0 {
            return None;
        }
        let start = index.checked_sub(1).map_or(0, |i| self.cells[i].end());
        let bytes = &self.data[start..cell.end()];
        Some(if cell.0 & Cell::BINARY != 0 {
            Value::Bytes(bytes)
        } else {
            // SAFETY: `push` stored exactly these bytes from a `Value::Text`,
            // a `&str`; the range is that value's, from the previous cell's
            // end to this one's, so it is whole UTF-8.
            Value::Text(unsafe { std::str::from_utf8_unchecked(bytes) })
        })
    }

    /// The values of `rows`, row-major (`None`: NULL).
    pub(crate) fn values(
        &self,
        rows: Range<usize>,
    ) -> impl Iterator<Item = Option<Value<'_>>> + '_ {
        (rows.start * self.width..rows.end * self.width).map(|index| self.value_at(index))
    }

    /// Owned parameter values of `rows`, row-major, for the driver's
    /// binary protocol.
    pub(crate) fn params(&self, rows: Range<usize>) -> Vec<Param> {
        self.values(rows)
            .map(|value| value.map_or(Param::NULL, |v| Param::Bytes(v.as_bytes().to_vec())))
            .collect()
    }

    /// Bytes of values in row `row` (a size estimate for statement bounds).
    pub(crate) fn value_len(&self, row: usize) -> usize {
        if self.width == 0 {
            return 0;
        }
        let first = row * self.width;
        let start = first.checked_sub(1).map_or(0, |i| self.cells[i].end());
        self.cells[first + self.width - 1].end() - start
    }
}

impl Values for StoredRow<'_> {
    fn width(&self) -> usize {
        self.batch.width
    }

    fn value(&self, index: usize) -> Option<Value<'_>> {
        self.batch.value_at(self.index * self.batch.width + index)
    }

    fn position(&self) -> RecordPosition {
        self.batch.positions[self.index]
    }
}

#[cfg(test)]
mod tests {
    use ringpipe_pipeline::Row;

    use super::*;

    #[test]
    fn rows_round_trip_with_nulls_and_positions() {
        let mut batch = Batch::new(2);
        let mut row = Row::with_columns(2);
        row.set(0, "a");
        row.set_position(RecordPosition {
            record: 7,
            ..RecordPosition::default()
        });
        batch.push(&row);
        row.set(1, "");
        batch.push(&row);
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.row(0).value(1), None);
        assert_eq!(batch.row(1).value(1), Some(Value::Text("")));
        assert_eq!(batch.row(0).position().record, 7);
        assert_eq!(
            batch.params(1..2),
            vec![Param::Bytes(b"a".to_vec()), Param::Bytes(vec![])]
        );
        batch.clear();
        assert!(batch.is_empty());
    }

    #[test]
    fn text_binary_and_null_cells_read_back_anywhere() {
        let mut batch = Batch::new(3);
        let mut row = Row::with_columns(3);
        row.set(0, "héllo");
        row.set_bytes(1, &[0, 0xff]);
        batch.push(&row); // third column NULL
        row.clear();
        row.set(2, "");
        batch.push(&row);
        row.set(1, "x");
        batch.push(&row);
        let got: Vec<_> = batch.values(0..3).collect();
        assert_eq!(
            got,
            vec![
                Some(Value::Text("héllo")),
                Some(Value::Bytes(&[0, 0xff])),
                None,
                None,
                None,
                Some(Value::Text("")),
                None,
                Some(Value::Text("x")),
                Some(Value::Text("")),
            ]
        );
        assert_eq!(batch.row(1).value(2), Some(Value::Text("")));
        assert_eq!(batch.value_len(0), "héllo".len() + 2);
        assert_eq!(batch.value_len(1), 0);
        assert_eq!(batch.value_len(2), 1);
        assert_eq!(batch.values(2..3).count(), 3);
    }
}
