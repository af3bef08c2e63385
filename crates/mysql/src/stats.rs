//! Counters: the sink's own, and the server's `SHOW GLOBAL STATUS`.

use std::collections::BTreeMap;
use std::fmt;

use mysql::prelude::Queryable;

use crate::connect::open_url;
use crate::MysqlError;

/// Client-side counters of one sink.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// Rows committed.
    pub rows: u64,
    /// Write statements sent (INSERT, LOAD DATA, prepared or bulk executes).
    pub statements: u64,
    /// Successful commits.
    pub commits: u64,
    /// Calls to `rollback`.
    pub rollbacks: u64,
    /// Connections opened (the first included).
    pub connects: u64,
    /// Connections reopened after a loss.
    pub reconnects: u64,
    /// Reads or writes that waited longer than the network timeout (each
    /// one dropped its connection; a reconnect follows).
    pub timeouts: u64,
    /// Batches the server rolled back as a deadlock victim or, on Galera,
    /// for a certification conflict (both error 1213); each is replayed.
    pub conflicts: u64,
    /// Bad records diverted to the reject file.
    pub rejected: u64,
}

/// The status counters that matter for bulk loads.
const COUNTERS: &[&str] = &[
    "Com_commit",
    "Com_insert",
    "Com_insert_select",
    "Com_replace",
    "Com_load",
    "Com_rollback",
    "Com_stmt_execute",
    "Com_stmt_prepare",
    "Handler_commit",
    "Handler_write",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_data_fsyncs",
    "Questions",
];

/// A snapshot (or difference) of global status counters.
///
/// # Examples
///
/// ```no_run
/// use ringpipe_mysql::ServerStats;
///
/// let url = "mysql://root@127.0.0.1:3306/test";
/// let before = ServerStats::read(url)?;
/// // ... import ...
/// let delta = ServerStats::read(url)?.delta(&before);
/// println!("{delta}; rows per commit {:.0}", delta.rows_per_commit());
/// # Ok::<(), ringpipe_mysql::MysqlError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Counter name → value.
    values: BTreeMap<String, u64>,
}

impl ServerStats {
    /// Reads the counters from `SHOW GLOBAL STATUS`.
    ///
    /// # Errors
    ///
    /// Connection or server errors.
    pub fn read(url: &str) -> Result<Self, MysqlError> {
        let mut conn = open_url(url)?;
        let rows: Vec<(String, String)> = conn
            .query("SHOW GLOBAL STATUS")
            .map_err(|e| MysqlError::driver(e, "reading server status"))?;
        let values = rows
            .into_iter()
            .filter(|(name, _)| COUNTERS.iter().any(|c| c.eq_ignore_ascii_case(name)))
            .filter_map(|(name, value)| Some((name, value.parse().ok()?)))
            .collect();
        Ok(ServerStats { values })
    }

    /// The counters' growth since `before`.
    pub fn delta(&self, before: &ServerStats) -> ServerStats {
        let values = self
            .values
            .iter()
            .map(|(name, now)| (name.clone(), now.saturating_sub(before.get(name))))
            .collect();
        ServerStats { values }
    }

    /// A counter's value (0 when unknown).
    pub fn get(&self, name: &str) -> u64 {
        self.values.get(name).copied().unwrap_or(0)
    }

    /// Write statements: inserts and replaces (text, prepared or bulk: the
    /// server counts each execute under its verb) and loads.
    pub fn write_statements(&self) -> u64 {
        ["Com_insert", "Com_replace", "Com_load"]
            .iter()
            .map(|c| self.get(c))
            .sum()
    }

    /// Rows written: `Innodb_rows_inserted`, or `Handler_write` on servers
    /// without it (MariaDB 10.6+ dropped the InnoDB row counters;
    /// `Handler_write` also counts internal temporary-table writes).
    pub fn rows_written(&self) -> u64 {
        match self.values.get("Innodb_rows_inserted") {
            Some(rows) => *rows,
            None => self.get("Handler_write"),
        }
    }

    /// Rows written per `Com_commit`.
    pub fn rows_per_commit(&self) -> f64 {
        ratio(self.rows_written(), self.get("Com_commit"))
    }

    /// Rows written per write statement.
    pub fn rows_per_statement(&self) -> f64 {
        ratio(self.rows_written(), self.write_statements())
    }
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl fmt::Display for ServerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        f.write_str(&parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_and_ratios() {
        let before = ServerStats {
            values: [
                ("Com_commit".into(), 10),
                ("Innodb_rows_inserted".into(), 100),
            ]
            .into(),
        };
        let after = ServerStats {
            values: [
                ("Com_commit".into(), 12),
                ("Innodb_rows_inserted".into(), 1100),
            ]
            .into(),
        };
        let d = after.delta(&before);
        assert_eq!(d.get("Com_commit"), 2);
        assert_eq!(d.rows_per_commit(), 500.0);
        assert_eq!(d.rows_per_statement(), 0.0);
    }
}
