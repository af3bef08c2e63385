//! The PostgreSQL settings that decide bulk-load speed, read and judged.

use ringpipe_pipeline::{DoctorReport, Finding, Severity};

use crate::connect::connect;
use crate::PgError;

const SETTINGS: &str = "SELECT name, setting, coalesce(unit, '') FROM pg_settings \
     WHERE name IN ('synchronous_commit', 'wal_level', 'max_wal_size', \
     'maintenance_work_mem', 'fsync', 'full_page_writes', 'default_transaction_read_only')";

/// Reads the server's settings and judges them for bulk loads.
///
/// # Errors
///
/// Connection or server errors.
pub fn doctor(url: &str) -> Result<DoctorReport, PgError> {
    let mut client = connect(url, &[])?;
    let context = "reading the server's settings";
    let version: String = client
        .query_one("SELECT version()", &[])
        .map_err(|e| PgError::server(e, context))?
        .get(0);
    let rows = client
        .query(SETTINGS, &[])
        .map_err(|e| PgError::server(e, context))?;
    let in_recovery: bool = client
        .query_one("SELECT pg_is_in_recovery()", &[])
        .map_err(|e| PgError::server(e, context))?
        .get(0);
    let mut findings: Vec<Finding> = in_recovery.then(standby).into_iter().collect();
    findings.extend(
        rows.iter()
            .map(|row| judge(row.get(0), row.get(1), row.get(2))),
    );
    findings.push(Finding {
        setting: "unlogged tables".into(),
        value: "per table".into(),
        severity: Severity::Info,
        reason: "an UNLOGGED table writes no WAL (much faster loads), but a crash empties it, \
                 so an interrupted import cannot resume from it"
            .into(),
        fix: "ALTER TABLE t SET UNLOGGED for a load you can redo; SET LOGGED after".into(),
    });
    Ok(DoctorReport {
        server_version: version,
        findings,
    })
}

/// The finding on a server in recovery: a standby, which takes no writes.
fn standby() -> Finding {
    Finding {
        setting: "pg_is_in_recovery()".into(),
        value: "true".into(),
        severity: Severity::Warn,
        reason: "a standby: it refuses writes, and an import waits --retry-for for its \
                 promotion, then fails"
            .into(),
        fix: "point --url at the primary, or list every host with \
              target_session_attrs=read-write"
            .into(),
    }
}

/// `setting` in megabytes, given pg_settings' unit (`8kB`, `kB`, `MB`).
fn megabytes(setting: &str, unit: &str) -> Option<u64> {
    let value: u64 = setting.parse().ok()?;
    Some(match unit {
        "MB" => value,
        "kB" => value / 1024,
        "8kB" => value * 8 / 1024,
        _ => return None,
    })
}

/// The finding on one setting.
fn judge(name: &str, setting: &str, unit: &str) -> Finding {
    let mb = megabytes(setting, unit);
    let (severity, reason, fix) = match (name, setting) {
        ("synchronous_commit", "off") => (
            Severity::Ok,
            "commits do not wait for the WAL flush; a server crash can lose the last commits \
             with their checkpoints (a resume stays exact; a finished import may miss its tail)",
            "",
        ),
        ("synchronous_commit", _) => (
            Severity::Info,
            "every batch's COMMIT waits for its WAL to reach disk",
            "--init-command \"SET synchronous_commit = off\" (a crash loses rows and their \
             checkpoints together, so a resume stays exact)",
        ),
        ("wal_level", "minimal") => (
            Severity::Ok,
            "the least WAL; no replication or point-in-time recovery",
            "",
        ),
        ("wal_level", _) => (
            Severity::Info,
            "every row is written to the WAL as well (needed for replicas and backups)",
            "keep it for a replicated server; an UNLOGGED table skips the WAL instead",
        ),
        ("max_wal_size", _) if mb.is_some_and(|mb| mb < 4096) => (
            Severity::Warn,
            "a large load fills it quickly and forces frequent checkpoints (full-page writes)",
            "ALTER SYSTEM SET max_wal_size = '8GB'; SELECT pg_reload_conf();",
        ),
        ("max_wal_size", _) => (
            Severity::Ok,
            "room for a large load between checkpoints",
            "",
        ),
        ("maintenance_work_mem", _) if mb.is_some_and(|mb| mb < 256) => (
            Severity::Info,
            "index builds after a load (CREATE INDEX, ADD PRIMARY KEY) sort in this much memory",
            "SET maintenance_work_mem = '1GB' in the session that builds the indexes",
        ),
        ("maintenance_work_mem", _) => (Severity::Ok, "enough for index builds", ""),
        ("default_transaction_read_only", "on") => (
            Severity::Warn,
            "every session starts read-only: the import's writes are refused",
            "--init-command \"SET default_transaction_read_only = off\", or turn it off for \
             the role (ALTER ROLE … SET default_transaction_read_only = off)",
        ),
        ("fsync", "off") | ("full_page_writes", "off") => (
            Severity::Warn,
            "a crash can corrupt the whole cluster, not just lose the last commits",
            "turn it back on outside a throwaway test cluster",
        ),
        _ => (Severity::Ok, "safe", ""),
    };
    Finding {
        setting: name.into(),
        value: match mb {
            Some(mb) => format!("{mb}MB"),
            None => format!("{setting}{unit}"),
        },
        severity,
        reason: reason.into(),
        fix: fix.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_sizes_in_their_units() {
        assert_eq!(megabytes("1024", "MB"), Some(1024));
        assert_eq!(megabytes("65536", "kB"), Some(64));
        assert_eq!(megabytes("131072", "8kB"), Some(1024));
        assert_eq!(judge("max_wal_size", "1024", "MB").severity, Severity::Warn);
        assert_eq!(
            judge("synchronous_commit", "off", "").severity,
            Severity::Ok
        );
        assert_eq!(judge("fsync", "off", "").severity, Severity::Warn);
        let read_only = judge("default_transaction_read_only", "on", "");
        assert_eq!(read_only.severity, Severity::Warn);
        assert!(read_only.fix.contains("--init-command"));
        assert_eq!(
            judge("default_transaction_read_only", "off", "").severity,
            Severity::Ok
        );
        assert_eq!(standby().severity, Severity::Warn);
    }
}
