//! Encoders that turn rows into bytes for the server, as rows arrive.

pub(crate) mod boolean;
pub(crate) mod insert;
pub(crate) mod tsv;

use ringpipe_pipeline::{RecordPosition, Row, Value};

/// A record's column values and where it came from, whether fresh from the
/// ring or kept in a batch.
pub(crate) trait Values {
    /// Number of columns.
    fn width(&self) -> usize;
    /// Column `index`, `None` for NULL.
    fn value(&self, index: usize) -> Option<Value<'_>>;
    /// Where the record came from.
    fn position(&self) -> RecordPosition;
}

impl Values for Row {
    fn width(&self) -> usize {
        self.len()
    }

    fn value(&self, index: usize) -> Option<Value<'_>> {
        self.get(index)
    }

    fn position(&self) -> RecordPosition {
        Row::position(self)
    }
}
