//! Which columns ever received a value, shared by every region's source
//! of one input, so that a mapping that matched nothing can be reported:
//! a source marks each column it fills; the import reads the flags once
//! the sources are done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One flag per column, set the first time a record gives that column a
/// value (a `NULL` from `xsi:nil` counts: the field was there).
///
/// Cloning shares the flags.
#[derive(Debug, Clone)]
pub struct ColumnUsage {
    columns: Arc<[String]>,
    used: Arc<[AtomicBool]>,
    /// This clone's own copy, so that a flag is stored once per source.
    seen: Vec<bool>,
}

impl ColumnUsage {
    /// Flags for `columns`, none set.
    pub fn new(columns: &[String]) -> Self {
        ColumnUsage {
            columns: columns.into(),
            used: columns.iter().map(|_| AtomicBool::new(false)).collect(),
            seen: vec![false; columns.len()],
        }
    }

    /// Column `index` received a value.
    #[inline]
    pub fn mark(&mut self, index: usize) {
        if !self.seen[index] {
            self.seen[index] = true;
            // Relaxed: a flag read only after the sources are done (their
            // threads joined), which orders it.
            self.used[index].store(true, Ordering::Relaxed);
        }
    }

    /// The columns no record gave a value, in column order.
    pub fn unfilled(&self) -> Vec<String> {
        self.columns
            .iter()
            .zip(self.used.iter())
            // Relaxed: see `mark`.
            .filter(|(_, used)| !used.load(Ordering::Relaxed))
            .map(|(column, _)| column.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flags() {
        let columns = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let mut first = ColumnUsage::new(&columns);
        let mut second = first.clone();
        assert_eq!(first.unfilled(), ["a", "b", "c"]);
        first.mark(0);
        second.mark(2);
        second.mark(2);
        assert_eq!(first.unfilled(), ["b"]);
        assert_eq!(second.unfilled(), ["b"]);
    }
}
