//! The current batch's rows, kept until commit.
//!
//! The ring owns its rows, so the sink copies each row once into one flat
//! buffer. The copy lets the sink re-send any subset of the batch: to find a
//! bad record, to fall back to another write path, and to feed the paths
//! that bind values at commit time.

use std::ops::Range;

use mysql::Value as Param;
use ringpipe_pipeline::{RecordPosition, Row, Value};

use crate::encode::Values;

/// Rows of one batch, values in two flat buffers (text and binary).
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Columns per row.
    width: usize,
    /// Every present text value, back to back.
    text: String,
    /// Every present binary value, back to back.
    binary: Vec<u8>,
    /// Per cell (row-major): where its value is, `None` for NULL.
    cells: Vec<Option<Cell>>,
    /// Per row: where the record came from.
    positions: Vec<RecordPosition>,
}

/// Where one value of a batch is kept.
#[derive(Debug, Clone)]
struct Cell {
    /// Byte range in `text` or `binary`.
    range: Range<usize>,
    /// Whether the value is binary (in `binary`).
    binary: bool,
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

    /// The source record number of the last row held (0 when empty).
    pub(crate) fn last_record(&self) -> u64 {
        self.positions.last().map_or(0, |p| p.record)
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
    pub(crate) fn push(&mut self, row: &Row) {
        for index in 0..self.width {
            let cell = row.get(index).map(|value| match value {
                Value::Text(text) => {
                    let start = self.text.len();
                    self.text.push_str(text);
                    Cell {
                        range: start..self.text.len(),
                        binary: false,
                    }
                }
                Value::Bytes(bytes) => {
                    let start = self.binary.len();
                    self.binary.extend_from_slice(bytes);
                    Cell {
                        range: start..self.binary.len(),
                        binary: true,
                    }
                }
            });
            self.cells.push(cell);
        }
        self.positions.push(row.position());
    }

    /// Row `index`.
    pub(crate) fn row(&self, index: usize) -> StoredRow<'_> {
        StoredRow { batch: self, index }
    }

    /// Forgets every row, keeping capacity.
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.binary.clear();
        self.cells.clear();
        self.positions.clear();
    }

    /// Columns per row.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// The value a cell holds.
    fn value_of(&self, cell: &Option<Cell>) -> Option<Value<'_>> {
        cell.as_ref().map(|cell| match cell.binary {
            false => Value::Text(&self.text[cell.range.clone()]),
            true => Value::Bytes(&self.binary[cell.range.clone()]),
        })
    }

    /// The values of `rows`, row-major (`None`: NULL).
    pub(crate) fn values(
        &self,
        rows: Range<usize>,
    ) -> impl Iterator<Item = Option<Value<'_>>> + '_ {
        self.cells[rows.start * self.width..rows.end * self.width]
            .iter()
            .map(|cell| self.value_of(cell))
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
        self.cells[row * self.width..(row + 1) * self.width]
            .iter()
            .flatten()
            .map(|cell| cell.range.len())
            .sum()
    }
}

impl StoredRow<'_> {
    /// Where the record came from.
    pub(crate) fn position(&self) -> RecordPosition {
        self.batch.positions[self.index]
    }
}

impl Values for StoredRow<'_> {
    fn width(&self) -> usize {
        self.batch.width
    }

    fn value(&self, index: usize) -> Option<Value<'_>> {
        self.batch
            .value_of(&self.batch.cells[self.index * self.batch.width + index])
    }
}

#[cfg(test)]
mod tests {
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
}
