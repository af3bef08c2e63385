//! The SQL text of each write statement, per mode.

use crate::config::Mode;
use crate::ident::{join, Ident};

/// The fixed parts of a multi-row `INSERT`: rows go between `head` and `tail`.
#[derive(Debug, Clone)]
pub(crate) struct InsertShape {
    /// `INSERT [IGNORE] INTO t (cols) VALUES ` or `REPLACE INTO ...`.
    pub(crate) head: String,
    /// `ON DUPLICATE KEY UPDATE ...` for upserts, else empty.
    pub(crate) tail: String,
    /// Number of columns per row.
    pub(crate) width: usize,
}

impl InsertShape {
    /// Builds the statement parts for `mode`; `update` are the columns an
    /// upsert overwrites (every mapped column outside the key).
    pub(crate) fn new(table: &Ident, columns: &[Ident], mode: Mode, update: &[Ident]) -> Self {
        let verb = match mode {
            Mode::Insert | Mode::Truncate | Mode::Upsert => "INSERT INTO",
            Mode::Ignore => "INSERT IGNORE INTO",
            Mode::Replace => "REPLACE INTO",
        };
        let head = format!("{verb} {table} ({}) VALUES ", join(columns));
        let tail = if mode == Mode::Upsert {
            upsert_tail(columns, update)
        } else {
            String::new()
        };
        InsertShape {
            head,
            tail,
            width: columns.len(),
        }
    }

    /// The full statement with `rows` rows of `?` placeholders.
    pub(crate) fn placeholders(&self, rows: usize) -> String {
        let tuple = format!("({})", vec!["?"; self.width].join(","));
        let mut sql = self.head.clone();
        sql.push_str(&vec![tuple; rows].join(","));
        sql.push_str(&self.tail);
        sql
    }
}

/// `ON DUPLICATE KEY UPDATE c = VALUES(c), ...`.
///
/// `VALUES(col)` works on MariaDB and on MySQL (deprecated from 8.0.20 in
/// favour of a row alias, which MariaDB lacks). When every column is part
/// of the key there is nothing to update; `k = k` keeps the syntax valid
/// and makes a duplicate a no-op.
fn upsert_tail(columns: &[Ident], update: &[Ident]) -> String {
    let sets: Vec<String> = if update.is_empty() {
        vec![format!("{0}={0}", columns[0])]
    } else {
        update.iter().map(|c| format!("{c}=VALUES({c})")).collect()
    };
    format!(" ON DUPLICATE KEY UPDATE {}", sets.join(","))
}

/// The `LOAD DATA LOCAL INFILE` statement for `mode` (not for upserts):
/// tab-separated, backslash-escaped, newline-terminated (see `encode::tsv`).
pub(crate) fn load_data(table: &Ident, columns: &[Ident], mode: Mode) -> String {
    let duplicates = match mode {
        Mode::Replace => " REPLACE",
        Mode::Ignore => " IGNORE",
        _ => "",
    };
    // Hex literals read the same with or without NO_BACKSLASH_ESCAPES
    // (where '\t' would be two characters): tab, backslash, newline.
    format!(
        "LOAD DATA LOCAL INFILE 'ringpipe-batch'{duplicates} INTO TABLE {table} \
         CHARACTER SET utf8mb4 FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' \
         LINES TERMINATED BY X'0A' ({})",
        join(columns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<Ident> {
        names.iter().map(|n| Ident::new(n).unwrap()).collect()
    }

    #[test]
    fn upsert_updates_non_key_columns() {
        let cols = ids(&["id", "name"]);
        let shape = InsertShape::new(&ids(&["t"])[0], &cols, Mode::Upsert, &cols[1..]);
        assert_eq!(shape.head, "INSERT INTO `t` (`id`,`name`) VALUES ");
        assert_eq!(shape.tail, " ON DUPLICATE KEY UPDATE `name`=VALUES(`name`)");
        assert_eq!(
            shape.placeholders(2),
            format!("{}(?,?),(?,?){}", shape.head, shape.tail)
        );
    }

    #[test]
    fn modes_pick_their_verb() {
        let cols = ids(&["id"]);
        let t = &ids(&["t"])[0];
        assert!(InsertShape::new(t, &cols, Mode::Ignore, &[])
            .head
            .starts_with("INSERT IGNORE INTO"));
        assert!(InsertShape::new(t, &cols, Mode::Replace, &[])
            .head
            .starts_with("REPLACE INTO"));
        assert!(load_data(t, &cols, Mode::Replace).contains("'ringpipe-batch' REPLACE INTO"));
    }
}
