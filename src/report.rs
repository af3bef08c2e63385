//! The final summary of an import, for people and for machines.

use std::fmt;
use std::time::Duration;

use ringpipe_pipeline::ColumnUsage;
use serde::Serialize;

/// What an import did.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    /// The input file.
    pub file: String,
    /// The target table.
    pub table: String,
    /// Write path used (after server fallbacks).
    pub write_path: String,
    /// Sink connections.
    pub shards: usize,
    /// Regions of the input parsed at once (1: one parser feeds every shard).
    pub regions: usize,
    /// Records parsed.
    pub rows_read: u64,
    /// Rows committed by this run.
    pub rows_written: u64,
    /// Rows an interrupted earlier run had committed (`--resume`).
    pub rows_skipped: u64,
    /// Bad records diverted to the reject file.
    pub rows_rejected: u64,
    /// Batches rolled back and replayed.
    pub rewinds: u64,
    /// Connections opened again after one was lost (server restart, kill,
    /// network fault).
    pub reconnects: u64,
    /// Reads or writes that timed out (`--net-timeout`).
    pub timeouts: u64,
    /// Batches the server rolled back for a conflict with another
    /// transaction, then replayed: a deadlock or, on Galera, a
    /// certification conflict (MySQL error 1213); a deadlock or a
    /// serialization failure (PostgreSQL 40P01, 40001).
    pub conflicts: u64,
    /// Wall time.
    pub seconds: f64,
    /// Committed rows per second.
    pub rows_per_second: f64,
    /// Peak resident memory of the process, in MiB.
    pub peak_rss_mib: f64,
    /// Commits the client made.
    pub commits: u64,
    /// Commits the server counted (`Com_commit`, all sessions); `None`
    /// when its counters were not read (PostgreSQL, or no access to them).
    pub server_commits: Option<u64>,
    /// Rows the server counted per commit (`Innodb_rows_inserted` /
    /// `Com_commit`, all sessions).
    pub server_rows_per_commit: Option<f64>,
    /// Rows per write statement, by the server's counters.
    pub server_rows_per_statement: Option<f64>,
    /// True for `--dry-run` (nothing written).
    pub dry_run: bool,
    /// Mapped columns that no record gave a value (a misspelt field or
    /// mapping imports NULLs without this).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfilled_columns: Vec<String>,
    /// Fields of the input that fed no column, with how often each came
    /// (the first 32 names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_fields: Vec<IgnoredField>,
    /// How often fields of further names came.
    #[serde(skip_serializing_if = "is_zero")]
    pub ignored_other_fields: u64,
    /// A dry run's first rows, column name to value (`null` for NULL,
    /// binary values as `0x…` hex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
}

/// A field of the input that fed no column, and how often it came.
#[derive(Debug, Clone, Serialize)]
pub struct IgnoredField {
    /// Its name, as the input spells it.
    pub field: String,
    /// How many times it came.
    pub times: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ImportReport {
    /// Takes the sinks' count of their recoveries.
    pub fn recovered(&mut self, recoveries: ringpipe_pipeline::Recoveries) {
        self.reconnects = recoveries.reconnects;
        self.timeouts = recoveries.timeouts;
        self.conflicts = recoveries.conflicts;
    }

    /// The report with the columns no record gave a value and the fields
    /// no column took.
    pub fn usage(mut self, usage: &ColumnUsage) -> Self {
        self.unfilled_columns = usage.unfilled();
        let ignored = usage.ignored();
        self.ignored_fields = (ignored.names.into_iter())
            .map(|(field, times)| IgnoredField { field, times })
            .collect();
        self.ignored_other_fields = ignored.others;
        self
    }

    /// Rows per second for `rows` over `elapsed`.
    pub fn rate(rows: u64, elapsed: Duration) -> f64 {
        rows as f64 / elapsed.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.dry_run {
            "parsed (dry run)"
        } else {
            "imported"
        };
        writeln!(f, "{} → {}: {verb}", self.file, self.table)?;
        writeln!(f, "  rows read       {}", self.rows_read)?;
        match self.dry_run {
            true => writeln!(
                f,
                "  rows mapped     {} (nothing written)",
                self.rows_written
            )?,
            false => writeln!(f, "  rows written    {}", self.rows_written)?,
        }
        if !self.unfilled_columns.is_empty() {
            writeln!(
                f,
                "  never filled    {} (no record had a field for them: check the input's field \
                 names, and for XML --row, --map, --field)",
                self.unfilled_columns.join(", ")
            )?;
        }
        if !self.ignored_fields.is_empty() {
            let fields: Vec<String> = (self.ignored_fields.iter())
                .map(|i| format!("{} ({}×)", i.field, i.times))
                .collect();
            let more = match self.ignored_other_fields {
                0 => String::new(),
                n => format!(" and {n} of other names"),
            };
            writeln!(
                f,
                "  ignored fields  {}{more} (no column takes them: --map FIELD=COLUMN or \
                 --field COLUMN=PATH maps one, --strict refuses them)",
                fields.join(", ")
            )?;
        }
        if self.rows_skipped > 0 {
            writeln!(
                f,
                "  rows resumed    {} (committed by the interrupted run)",
                self.rows_skipped
            )?;
        }
        writeln!(f, "  rows rejected   {}", self.rows_rejected)?;
        writeln!(
            f,
            "  rewinds         {} (reconnects {}, timeouts {}, conflicts {})",
            self.rewinds, self.reconnects, self.timeouts, self.conflicts
        )?;
        writeln!(f, "  time            {:.2} s", self.seconds)?;
        writeln!(f, "  rate            {:.0} rows/s", self.rows_per_second)?;
        writeln!(f, "  peak RSS        {:.1} MiB", self.peak_rss_mib)?;
        writeln!(
            f,
            "  write path      {} × {} shards, {} region(s) parsed at once",
            self.write_path, self.shards, self.regions
        )?;
        if self.dry_run {
            return Ok(());
        }
        write!(f, "  commits         {}", self.commits)?;
        match (
            self.server_commits,
            self.server_rows_per_commit,
            self.server_rows_per_statement,
        ) {
            (Some(commits), Some(per_commit), Some(per_statement)) => writeln!(
                f,
                " (server: {commits}, {per_commit:.0} rows/commit, {per_statement:.0} \
                 rows/statement)"
            ),
            _ => writeln!(f),
        }
    }
}

/// Peak resident set size of this process in MiB (`VmHWM`), 0 if unknown.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}
