//! The open batch: its rows as COPY data, where each row ends and in
//! which format it is (so that a range of them can be sent again, as runs
//! of one format), what a bad record is reported with, and the interval
//! values the server is to check.

use std::ops::Range;
use std::sync::Arc;

use ringpipe_pipeline::{RecordPosition, Row};

use crate::check::Check;
use crate::interval_fields::IntervalFields;
use crate::reject::{push_values_line, Rejected};
use crate::{CopyEncoder, PgError, RowFormat};

/// One batch's rows, encoded.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// COPY data of the encoded rows, without the binary header and trailer.
    data: Vec<u8>,
    /// End of each encoded row in `data`.
    ends: Vec<usize>,
    /// Each encoded row's COPY format.
    formats: Vec<RowFormat>,
    /// Each encoded row's position in the input.
    positions: Vec<RecordPosition>,
    /// Each encoded row's values as a reject line (kept only when bad
    /// records are allowed), and the end of each line.
    lines: Option<(Vec<u8>, Vec<usize>)>,
    /// Records the encoder refused, set aside.
    pub(super) refused: Vec<Rejected>,
    /// The intervals with a field list the rows hold, for the server to
    /// check before the batch is sent.
    pub(super) held: Vec<Held>,
}

/// An interval with a field list, in a value of the batch.
#[derive(Debug)]
pub(super) struct Held {
    /// The encoded row it belongs to.
    pub(super) row: usize,
    /// Its column (among the imported ones).
    pub(super) column: usize,
    pub(super) fields: IntervalFields,
    pub(super) value: String,
    /// The column's value, when the interval is inside it (an element, a
    /// field, a bound) rather than all of it: one copy for all the
    /// intervals it holds.
    pub(super) within: Option<Arc<str>>,
}

impl Batch {
    /// An empty batch; `keep_lines` when bad records may be set aside.
    pub(super) fn new(keep_lines: bool) -> Batch {
        Batch {
            lines: keep_lines.then(Default::default),
            ..Batch::default()
        }
    }

    pub(super) fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.formats.clear();
        self.positions.clear();
        self.refused.clear();
        self.held.clear();
        if let Some((lines, ends)) = &mut self.lines {
            lines.clear();
            ends.clear();
        }
    }

    /// Encodes `row`; a value the encoder refuses leaves the batch as it was.
    pub(super) fn push(&mut self, row: &Row, encoder: &CopyEncoder) -> Result<(), PgError> {
        let format = encoder.row(row, &mut self.data)?;
        self.ends.push(self.data.len());
        self.formats.push(format);
        self.positions.push(row.position());
        if let Some((lines, ends)) = &mut self.lines {
            push_values_line(row, lines);
            ends.push(lines.len());
        }
        Ok(())
    }

    /// Holds the intervals with a field list that `row` (the last pushed)
    /// holds in the columns of `columns`, each found by its check, for the
    /// server's check.
    pub(super) fn hold(&mut self, row: &Row, columns: &[(usize, Check)]) {
        let mut found = Vec::new();
        for (column, check) in columns {
            let text = row.get(*column).map(|v| std::str::from_utf8(v.as_bytes()));
            let Some(Ok(text)) = text else {
                continue;
            };
            check.field_list_values(text, &mut found);
            let whole = matches!(check, Check::Interval { .. });
            let within: Option<Arc<str>> = (!whole && !found.is_empty()).then(|| text.into());
            for (value, fields) in found.drain(..) {
                self.held.push(Held {
                    row: self.ends.len() - 1,
                    column: *column,
                    fields,
                    value,
                    within: within.clone(),
                });
            }
        }
    }

    /// Removes `rows` (in ascending order) from the batch; the rest keep
    /// their order.
    pub(super) fn remove(&mut self, rows: &[usize]) {
        let mut kept = Batch {
            data: Vec::with_capacity(self.data.len()),
            lines: self.lines.as_ref().map(|_| Default::default()),
            refused: std::mem::take(&mut self.refused),
            ..Batch::default()
        };
        let mut out = rows.iter().copied().peekable();
        for index in 0..self.len() {
            if out.next_if_eq(&index).is_some() {
                continue;
            }
            kept.data.extend_from_slice(self.data(index..index + 1));
            kept.ends.push(kept.data.len());
            kept.formats.push(self.formats[index]);
            kept.positions.push(self.positions[index]);
            if let (Some((lines, ends)), Some((from, from_ends))) = (&mut kept.lines, &self.lines) {
                let start = index.checked_sub(1).map_or(0, |i| from_ends[i]);
                lines.extend_from_slice(&from[start..from_ends[index]]);
                ends.push(lines.len());
            }
        }
        *self = kept;
    }

    /// Encoded rows.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Records of the batch: encoded and refused.
    pub(super) fn records(&self) -> u64 {
        (self.ends.len() + self.refused.len()) as u64
    }

    /// The runs of `rows`: each a maximal range of consecutive rows in one
    /// format, in row order (one run when every row is in one format).
    pub(super) fn runs(&self, rows: Range<usize>) -> Vec<(RowFormat, Range<usize>)> {
        let mut runs: Vec<(RowFormat, Range<usize>)> = Vec::new();
        let formats = self.formats.get(rows.clone()).unwrap_or_default();
        for (index, &format) in (rows.start..).zip(formats) {
            match runs.last_mut() {
                Some((last, run)) if *last == format => run.end = index + 1,
                _ => runs.push((format, index..index + 1)),
            }
        }
        runs
    }

    /// The COPY data of `rows` (all of one format, see [`Batch::runs`]).
    pub(super) fn data(&self, rows: Range<usize>) -> &[u8] {
        let start = rows.start.checked_sub(1).map_or(0, |i| self.ends[i]);
        let end = rows.end.checked_sub(1).map_or(0, |i| self.ends[i]);
        &self.data[start..end.max(start)]
    }

    /// Row `index` as a bad record refused for `reason`.
    pub(super) fn rejected(&self, index: usize, reason: String) -> Rejected {
        let values = match &self.lines {
            Some((lines, ends)) => {
                let start = index.checked_sub(1).map_or(0, |i| ends[i]);
                lines[start..ends[index]].to_vec()
            }
            None => b"\n".to_vec(),
        };
        Rejected {
            position: self.positions[index],
            reason,
            values,
        }
    }

    /// Row `index`'s position.
    pub(super) fn position(&self, index: usize) -> RecordPosition {
        self.positions[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoder;

    #[test]
    fn runs_split_the_rows_where_their_format_changes() {
        let encoder = CopyEncoder::new(Some(vec![Encoder::Numeric]), vec![false], vec!["n".into()]);
        let mut batch = Batch::new(false);
        for value in ["1", "2", "1e3", "NaN", "3", "4.5", " 6"] {
            let mut row = Row::with_columns(1);
            row.set(0, value);
            batch.push(&row, &encoder).unwrap();
        }
        use RowFormat::{Binary, Text};
        assert_eq!(
            batch.runs(0..7),
            vec![(Binary, 0..2), (Text, 2..4), (Binary, 4..6), (Text, 6..7)]
        );
        assert_eq!(batch.runs(3..5), vec![(Text, 3..4), (Binary, 4..5)]);
        assert_eq!(batch.runs(0..1), vec![(Binary, 0..1)]);
        assert_eq!(batch.runs(2..2), vec![]);
        assert_eq!(batch.data(2..4), b"1e3\nNaN\n");
    }

    #[test]
    fn rows_removed_leave_the_rest_in_order() {
        let encoder = CopyEncoder::new(None, vec![false], vec!["n".into()]);
        let mut batch = Batch::new(true);
        for value in ["a", "b", "c", "d", "e"] {
            let mut row = Row::with_columns(1);
            row.set(0, value);
            batch.push(&row, &encoder).unwrap();
        }
        batch.remove(&[1, 4]);
        assert_eq!(batch.len(), 3);
        assert_eq!(batch.data(0..3), b"a\nc\nd\n");
        assert_eq!(batch.rejected(2, String::new()).values, b"d\n");
        assert_eq!(batch.runs(0..3), vec![(RowFormat::Text, 0..3)]);
    }
}
