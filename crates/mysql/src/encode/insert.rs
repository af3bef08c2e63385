//! Multi-row `INSERT` text statements, encoded straight into reused buffers.
//!
//! Rows are appended to the current statement until the next one would push
//! it past the byte limit (derived from `max_allowed_packet`: a larger packet
//! makes the server drop the connection) or the row limit; then a new
//! statement starts. A batch therefore becomes as many statements as it
//! needs, all executed in the batch's one transaction.

use super::Values;
use crate::escape::{push_hex_literal, push_literal};
use crate::statement::InsertShape;
use ringpipe_pipeline::Value;

/// Builds the statements of one batch.
#[derive(Debug)]
pub(crate) struct InsertEncoder {
    /// Statement head and tail for the sink's mode.
    shape: InsertShape,
    /// Most bytes one statement may take (tail included).
    max_bytes: usize,
    /// Most rows one statement may hold.
    max_rows: usize,
    /// The session's `NO_BACKSLASH_ESCAPES` flag.
    no_backslash_escapes: bool,
    /// Statement buffers; the first `used` hold this batch, the rest are
    /// kept only for their capacity.
    statements: Vec<String>,
    /// Buffers in use.
    used: usize,
    /// Rows in the last statement in use.
    rows_in_last: usize,
    /// Whether the last statement already carries the tail.
    sealed: bool,
}

/// A row that cannot fit into any statement; holds the bytes it needs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge(pub(crate) usize);

impl InsertEncoder {
    /// An encoder for statements of `shape`, bounded by `max_bytes` and `max_rows`.
    pub(crate) fn new(shape: InsertShape, max_bytes: usize, max_rows: usize) -> Self {
        InsertEncoder {
            shape,
            max_bytes,
            max_rows: max_rows.max(1),
            no_backslash_escapes: false,
            statements: Vec::new(),
            used: 0,
            rows_in_last: 0,
            sealed: false,
        }
    }

    /// Adopts a session's escaping mode and statement size limit; call on
    /// every (re)connect, before encoding.
    pub(crate) fn configure(&mut self, no_backslash_escapes: bool, max_bytes: usize) {
        self.no_backslash_escapes = no_backslash_escapes;
        self.max_bytes = max_bytes;
    }

    /// Forgets the batch, keeping buffer capacity.
    pub(crate) fn clear(&mut self) {
        self.used = 0;
        self.rows_in_last = 0;
        self.sealed = false;
    }

    /// Appends a row, starting a new statement when the current one is full.
    ///
    /// # Errors
    ///
    /// [`TooLarge`] when the row does not fit even into an empty statement.
    pub(crate) fn push(&mut self, row: &impl Values) -> Result<(), TooLarge> {
        if self.used == 0 || self.sealed || self.rows_in_last == self.max_rows {
            self.start_statement();
        }
        if self.try_append(row) {
            return Ok(());
        }
        if self.rows_in_last == 0 {
            return Err(self.measure(row));
        }
        self.start_statement();
        if self.try_append(row) {
            Ok(())
        } else {
            Err(self.measure(row))
        }
    }

    /// The finished statements of the batch, each with the mode's tail.
    pub(crate) fn statements(&mut self) -> &[String] {
        self.seal();
        &self.statements[..self.used]
    }

    /// Appends the tail to the last statement, once.
    fn seal(&mut self) {
        if let (Some(last), false) = (self.used.checked_sub(1), self.sealed) {
            self.statements[last].push_str(&self.shape.tail);
            self.sealed = true;
        }
    }

    /// Seals the current statement and opens an empty one.
    fn start_statement(&mut self) {
        self.seal();
        if self.used == self.statements.len() {
            self.statements.push(String::new());
        }
        let statement = &mut self.statements[self.used];
        statement.clear();
        statement.push_str(&self.shape.head);
        self.used += 1;
        self.rows_in_last = 0;
        self.sealed = false;
    }

    /// Appends `row` to the open statement if it fits; otherwise leaves the
    /// statement as it was.
    fn try_append(&mut self, row: &impl Values) -> bool {
        let statement = &mut self.statements[self.used - 1];
        let mark = statement.len();
        if self.rows_in_last > 0 {
            statement.push(',');
        }
        push_tuple(statement, row, self.no_backslash_escapes);
        if statement.len() + self.shape.tail.len() <= self.max_bytes {
            self.rows_in_last += 1;
            true
        } else {
            statement.truncate(mark);
            false
        }
    }

    /// Bytes a statement holding only `row` would need.
    fn measure(&self, row: &impl Values) -> TooLarge {
        let mut tuple = String::new();
        push_tuple(&mut tuple, row, self.no_backslash_escapes);
        TooLarge(self.shape.head.len() + tuple.len() + self.shape.tail.len())
    }
}

/// Appends `(v1,v2,...)` with each value escaped.
fn push_tuple(out: &mut String, row: &impl Values, no_backslash_escapes: bool) {
    out.push('(');
    for index in 0..row.width() {
        if index > 0 {
            out.push(',');
        }
        match row.value(index) {
            Some(Value::Text(text)) => push_literal(out, text, no_backslash_escapes),
            Some(Value::Bytes(bytes)) => push_hex_literal(out, bytes),
            None => out.push_str("NULL"),
        }
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Mode;
    use crate::ident::Ident;
    use ringpipe_pipeline::Row;

    fn encoder(max_bytes: usize, max_rows: usize, mode: Mode) -> InsertEncoder {
        let cols = [Ident::new("a").unwrap(), Ident::new("b").unwrap()];
        let shape = InsertShape::new(&Ident::new("t").unwrap(), &cols, mode, &cols[1..]);
        InsertEncoder::new(shape, max_bytes, max_rows)
    }

    fn row(a: &str) -> Row {
        let mut row = Row::with_columns(2);
        row.set(0, a);
        row
    }

    #[test]
    fn rows_share_a_statement() {
        let mut enc = encoder(1 << 20, 100, Mode::Insert);
        enc.push(&row("x")).unwrap();
        enc.push(&row("y'")).unwrap();
        assert_eq!(
            enc.statements(),
            ["INSERT INTO `t` (`a`,`b`) VALUES ('x',NULL),('y\\'',NULL)"]
        );
    }

    #[test]
    fn row_limit_splits_statements() {
        let mut enc = encoder(1 << 20, 2, Mode::Insert);
        for v in ["1", "2", "3", "4", "5"] {
            enc.push(&row(v)).unwrap();
        }
        assert_eq!(enc.statements().len(), 3);
    }

    #[test]
    fn byte_limit_splits_and_every_statement_fits() {
        let mut enc = encoder(120, 1000, Mode::Upsert);
        for _ in 0..10 {
            enc.push(&row("0123456789")).unwrap();
        }
        let statements = enc.statements().to_vec();
        assert!(statements.len() > 1);
        for s in &statements {
            assert!(s.len() <= 120, "{} bytes: {s}", s.len());
            assert!(s.ends_with("=VALUES(`b`)"));
        }
        let rows: usize = statements.iter().map(|s| s.matches("'0123").count()).sum();
        assert_eq!(rows, 10);
    }

    #[test]
    fn a_row_too_large_for_any_statement_is_reported() {
        let mut enc = encoder(60, 10, Mode::Insert);
        assert!(matches!(enc.push(&row(&"x".repeat(100))), Err(TooLarge(n)) if n > 100));
    }

    #[test]
    fn clear_reuses_buffers() {
        let mut enc = encoder(1 << 20, 10, Mode::Insert);
        enc.push(&row("a")).unwrap();
        enc.clear();
        enc.push(&row("b")).unwrap();
        assert_eq!(enc.statements().len(), 1);
        assert!(enc.statements()[0].ends_with("('b',NULL)"));
    }
}
