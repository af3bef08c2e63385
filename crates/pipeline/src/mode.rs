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
