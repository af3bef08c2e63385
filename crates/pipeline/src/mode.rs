//! [`Mode`]: what an import does with a row whose key the table already
//! holds. Every sink takes the same five modes; each sink's docs say how it
//! carries them out on its server.

/// What happens when a row's key already exists in the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A plain insert: a duplicate key is a bad record.
    #[default]
    Insert,
    /// The row already in the table stays; the new one is skipped.
    Ignore,
    /// The existing row's mapped non-key columns take the new values.
    Upsert,
    /// The existing row is deleted and the new one inserted (columns the
    /// import does not fill get their defaults).
    Replace,
    /// The table is emptied once, when a fresh import starts (never on
    /// `--resume`, which would lose the rows already committed); then as
    /// [`Insert`](Mode::Insert).
    Truncate,
}

impl Mode {
    /// Whether the rows a table ends with depend on the order in which
    /// records of the same key are written: in ignore mode the first record
    /// of a key stays, in upsert and replace modes the last one does. Only
    /// one writer keeps that order: records of one key written by two
    /// shards land in whichever order their commits take (see
    /// [`Import::any_order`](crate::Import::any_order)).
    ///
    /// Insert and truncate modes do not depend on it for what they keep
    /// silently: of two records of one key, the one written second is a bad
    /// record, reported with its position.
    pub fn order_matters(self) -> bool {
        matches!(self, Mode::Ignore | Mode::Upsert | Mode::Replace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_modes_that_keep_one_record_of_a_key_depend_on_order() {
        let ordered: Vec<Mode> = [
            Mode::Insert,
            Mode::Ignore,
            Mode::Upsert,
            Mode::Replace,
            Mode::Truncate,
        ]
        .into_iter()
        .filter(|m| m.order_matters())
        .collect();
        assert_eq!(ordered, [Mode::Ignore, Mode::Upsert, Mode::Replace]);
    }
}
