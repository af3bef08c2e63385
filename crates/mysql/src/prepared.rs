//! Binary-protocol paths: prepared multi-row statements and MariaDB bulk.
//!
//! A prepared statement holds at most 65,535 placeholders, so a chunk holds
//! at most `65_535 / columns` rows. Statements are cached per shape (rows
//! per statement): full chunks share one, and any shorter chunk, the
//! batch's tail included, is cut into powers of two, so that at most
//! `log2(full) + 1` shapes ever exist. Caching the tail's exact size
//! instead would prepare a new statement for nearly every batch (ring
//! batches vary in size), each keeping its parameter metadata, so memory
//! would grow with the import.

use std::collections::HashMap;
use std::ops::Range;

use mysql::prelude::Queryable;
use mysql::{Conn, Params, Statement};

use crate::batch::Batch;
use crate::statement::InsertShape;
use crate::MysqlError;

/// Most placeholders the server accepts in one prepared statement.
const MAX_PLACEHOLDERS: usize = 65_535;

/// Per-value bytes a binary packet may add to the text (type, length prefix).
const PARAM_OVERHEAD: usize = 12;

/// Prepared statements of one connection, by rows per statement.
#[derive(Debug)]
pub(crate) struct PreparedCache {
    /// Statement parts for the sink's mode.
    shape: InsertShape,
    /// Prepared statements by rows-per-statement.
    statements: HashMap<usize, Statement>,
}

impl PreparedCache {
    /// An empty cache for statements of `shape`.
    pub(crate) fn new(shape: InsertShape) -> Self {
        PreparedCache {
            shape,
            statements: HashMap::new(),
        }
    }

    /// Forgets every statement (they die with their connection).
    pub(crate) fn clear(&mut self) {
        self.statements.clear();
    }

    /// Rows per full multi-row chunk.
    pub(crate) fn full_chunk(&self, max_rows: usize) -> usize {
        max_rows.min(MAX_PLACEHOLDERS / self.shape.width).max(1)
    }

    /// The statement for `rows` rows, preparing it on first use.
    pub(crate) fn statement(
        &mut self,
        conn: &mut Conn,
        rows: usize,
    ) -> Result<&Statement, MysqlError> {
        if !self.statements.contains_key(&rows) {
            let sql = self.shape.placeholders(rows);
            let statement = conn
                .prep(sql)
                .map_err(|e| MysqlError::driver(e, "preparing a statement"))?;
            self.statements.insert(rows, statement);
        }
        Ok(&self.statements[&rows])
    }

    /// Executes `rows` of `batch` as one multi-row prepared statement.
    pub(crate) fn execute(
        &mut self,
        conn: &mut Conn,
        batch: &Batch,
        rows: Range<usize>,
    ) -> Result<(), MysqlError> {
        let statement = self.statement(conn, rows.len())?.clone();
        conn.exec_drop(&statement, Params::Positional(batch.params(rows)))
            .map_err(|e| MysqlError::driver(e, "executing a prepared insert"))
    }

    /// Executes `rows` of `batch` with one single-row statement through
    /// `exec_batch`, which MariaDB runs as one `COM_STMT_BULK_EXECUTE`.
    pub(crate) fn execute_bulk(
        &mut self,
        conn: &mut Conn,
        batch: &Batch,
        rows: Range<usize>,
    ) -> Result<(), MysqlError> {
        let statement = self.statement(conn, 1)?.clone();
        let params = rows.map(|row| Params::Positional(batch.params(row..row + 1)));
        conn.exec_batch(&statement, params)
            .map_err(|e| MysqlError::driver(e, "executing a bulk insert"))
    }
}

/// Splits `rows` into chunks of at most `full` rows and `max_bytes` bytes
/// (estimated), cutting short chunks to a power of two.
///
/// With `round_tail`, the last chunk is cut into powers of two as well (the
/// prepared path); without it (bulk, which runs a one-row statement), it is
/// sent whole.
pub(crate) fn chunks(
    batch: &Batch,
    rows: Range<usize>,
    full: usize,
    max_bytes: usize,
    width: usize,
    round_tail: bool,
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = rows.start;
    while start < rows.end {
        let mut end = start;
        let mut bytes = 0;
        while end < rows.end && end - start < full {
            let row_bytes = batch.value_len(end) + width * PARAM_OVERHEAD;
            if end > start && bytes + row_bytes > max_bytes {
                break;
            }
            bytes += row_bytes;
            end += 1;
        }
        let len = end - start;
        if len < full && len > 1 && (end < rows.end || round_tail) {
            end = start + prev_power_of_two(len);
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// The largest power of two `<= n` (n > 0).
fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringpipe_pipeline::Row;

    fn batch(rows: usize, bytes: usize) -> Batch {
        let mut batch = Batch::new(1);
        let mut row = Row::with_columns(1);
        row.set(0, &"x".repeat(bytes));
        (0..rows).for_each(|_| batch.push(&row));
        batch
    }

    #[test]
    fn full_chunks_then_a_remainder() {
        let b = batch(10, 1);
        assert_eq!(
            chunks(&b, 0..10, 4, 1 << 20, 1, false),
            vec![0..4, 4..8, 8..10]
        );
    }

    #[test]
    fn a_rounded_tail_is_cut_into_powers_of_two() {
        let b = batch(27, 1);
        let c = chunks(&b, 0..27, 8, 1 << 20, 1, true);
        assert_eq!(c, vec![0..8, 8..16, 16..24, 24..26, 26..27]);
    }

    #[test]
    fn byte_bound_cuts_to_powers_of_two() {
        let b = batch(20, 88); // 100 bytes per row with overhead
        let c = chunks(&b, 0..20, 100, 700, 1, false);
        assert_eq!(c[0], 0..4); // 7 rows fit, rounded down to 4
        assert_eq!(c.iter().map(|r| r.len()).sum::<usize>(), 20);
    }

    #[test]
    fn placeholder_limit_bounds_full_chunks() {
        let cols: Vec<_> = (0..9)
            .map(|i| crate::Ident::new(&format!("c{i}")).unwrap())
            .collect();
        let t = crate::Ident::new("t").unwrap();
        let shape = InsertShape::new(&t, &cols, crate::Mode::Insert, &[]);
        assert_eq!(PreparedCache::new(shape).full_chunk(100_000), 7_281);
    }

    #[test]
    fn powers_of_two() {
        assert_eq!(prev_power_of_two(1), 1);
        assert_eq!(prev_power_of_two(7), 4);
        assert_eq!(prev_power_of_two(8), 8);
    }
}
