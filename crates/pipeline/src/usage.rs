//! Which columns ever received a value, and which fields of the input
//! fed none, shared by every region's source of one input, so that a
//! mapping that matched nothing, or left fields behind, is reported: a
//! source marks each column it fills and each field it ignores; the
//! import reads them once the sources are done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// The most distinct ignored field names kept; the others are counted
/// together, so that an input of endless new names takes bounded memory.
const MAX_IGNORED_NAMES: usize = 32;

/// One flag per column, set the first time a record gives that column a
/// value (a `NULL` from `xsi:nil` counts: the field was there), and the
/// fields of the input that no column takes, with how often each came.
///
/// Cloning shares the flags and the ignored fields; each clone counts
/// ignored fields on its own and adds them to the shared count when it is
/// dropped (a source, when its region is done).
#[derive(Debug)]
pub struct ColumnUsage {
    columns: Arc<[String]>,
    used: Arc<[AtomicBool]>,
    /// This clone's own copy, so that a flag is stored once per source.
    seen: Vec<bool>,
    ignored: Arc<Mutex<IgnoredFields>>,
    /// This clone's ignored fields, not yet in `ignored`.
    own: IgnoredFields,
}

/// Fields of the input that fed no column: each name with the number of
/// times it came (first seen first), at most 32 names; `others` counts
/// the fields of any further names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredFields {
    /// Name and times seen.
    pub names: Vec<(String, u64)>,
    /// Times a field of a name beyond the first 32 came.
    pub others: u64,
}

impl IgnoredFields {
    /// Whether no field was ignored.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.others == 0
    }

    /// Counts `times` fields called `name`.
    fn add(&mut self, name: &str, times: u64) {
        if let Some((_, seen)) = self.names.iter_mut().find(|(n, _)| n == name) {
            *seen += times;
        } else if self.names.len() < MAX_IGNORED_NAMES {
            self.names.push((name.to_owned(), times));
        } else {
            self.others += times;
        }
    }

    /// Adds `other`'s counts to these.
    fn merge(&mut self, other: &IgnoredFields) {
        for (name, times) in &other.names {
            self.add(name, *times);
        }
        self.others += other.others;
    }
}

impl Clone for ColumnUsage {
    /// Shares the flags and the ignored fields; the clone's own count of
    /// ignored fields starts empty, so nothing is counted twice.
    fn clone(&self) -> Self {
        ColumnUsage {
            columns: Arc::clone(&self.columns),
            used: Arc::clone(&self.used),
            seen: self.seen.clone(),
            ignored: Arc::clone(&self.ignored),
            own: IgnoredFields::default(),
        }
    }
}

impl Drop for ColumnUsage {
    fn drop(&mut self) {
        if !self.own.is_empty() {
            self.ignored.lock().merge(&self.own);
        }
    }
}

impl ColumnUsage {
    /// Flags for `columns`, none set.
    pub fn new(columns: &[String]) -> Self {
        ColumnUsage {
            columns: columns.into(),
            used: columns.iter().map(|_| AtomicBool::new(false)).collect(),
            seen: vec![false; columns.len()],
            ignored: Arc::default(),
            own: IgnoredFields::default(),
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

    /// A field called `name` came and fed no column (its name matched
    /// none, and nothing else took it).
    pub fn ignore(&mut self, name: &str) {
        self.own.add(name, 1);
    }

    /// The fields that fed no column: those of the clones dropped so far
    /// (every source, once the import is done) and this one's.
    pub fn ignored(&self) -> IgnoredFields {
        let mut all = self.ignored.lock().clone();
        all.merge(&self.own);
        all
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

    #[test]
    fn ignored_fields_add_up_over_clones_once_each() {
        let first = ColumnUsage::new(&["a".to_owned()]);
        let mut second = first.clone();
        let mut third = first.clone();
        second.ignore("x");
        second.ignore("y");
        third.ignore("x");
        assert_eq!(third.ignored().names, [("x".to_owned(), 1)]);
        drop(second);
        drop(third);
        let all = first.ignored();
        let names = [("x".to_owned(), 2), ("y".to_owned(), 1)];
        assert_eq!((all.names, all.others), (names.to_vec(), 0));
    }

    #[test]
    fn ignored_names_are_bounded() {
        let mut usage = ColumnUsage::new(&[]);
        for i in 0..100 {
            usage.ignore(&format!("f{i}"));
            usage.ignore("f0");
        }
        let ignored = usage.ignored();
        assert_eq!(ignored.names.len(), MAX_IGNORED_NAMES);
        assert_eq!(ignored.names[0], ("f0".to_owned(), 101));
        assert_eq!(ignored.others, 100 - MAX_IGNORED_NAMES as u64);
    }
}
