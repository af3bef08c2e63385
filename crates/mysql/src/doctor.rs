//! Reading the server settings that decide bulk-load speed, and flagging
//! the known traps.

use std::collections::HashMap;

use mysql::prelude::Queryable;

use crate::connect::open_url;
use ringpipe_pipeline::{DoctorReport, Finding, Severity};

use crate::MysqlError;

/// Reads the server's settings and flags bulk-load traps.
///
/// # Errors
///
/// Connection or server errors.
pub fn doctor(url: &str) -> Result<DoctorReport, MysqlError> {
    let mut conn = open_url(url)?;
    let rows: Vec<(String, String)> = conn
        .query("SHOW GLOBAL VARIABLES")
        .map_err(|e| MysqlError::driver(e, "reading server variables"))?;
    let vars: HashMap<String, String> = rows
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let version = vars.get("version").cloned().unwrap_or_default();
    Ok(DoctorReport {
        findings: diagnose(&vars, &version),
        server_version: version,
    })
}

/// The findings for a variable map (separate from I/O for testing).
fn diagnose(vars: &HashMap<String, String>, version: &str) -> Vec<Finding> {
    let num = |name: &str| vars.get(name).and_then(|v| v.parse::<u64>().ok());
    let on = |name: &str| vars.get(name).is_some_and(|v| v == "ON" || v == "1");
    let mut out = Vec::new();
    let mut add = |setting: &str, severity, reason: &str, fix: &str| {
        let value = vars
            .get(setting)
            .cloned()
            .unwrap_or_else(|| "(unset)".into());
        out.push(Finding {
            setting: setting.into(),
            value,
            severity,
            reason: reason.into(),
            fix: fix.into(),
        });
    };
    // A server that refuses writes: a replica, or a primary being switched
    // over. The sink retries its refusals (1290, 1836) for --retry-for, in
    // case a failover is under way, then fails.
    for (setting, who) in [
        (
            "read_only",
            "users without the SUPER or READ ONLY ADMIN privilege",
        ),
        ("super_read_only", "every user"),
        ("innodb_read_only", "every user, for InnoDB tables"),
    ] {
        if on(setting) {
            add(
                setting,
                Severity::Warn,
                &format!("the server refuses writes from {who} (a replica?): an import waits --retry-for for it to become writable, then fails"),
                "point --url at the primary, or at a proxy that follows it",
            );
        }
    }
    let packet = num("max_allowed_packet").unwrap_or(0);
    if packet < 16 << 20 {
        add(
            "max_allowed_packet",
            Severity::Warn,
            "small packets split batches into many statements",
            "SET GLOBAL max_allowed_packet = 67108864",
        );
    } else {
        add(
            "max_allowed_packet",
            Severity::Ok,
            "room for large multi-row statements",
            "",
        );
    }
    if on("local_infile") {
        add(
            "local_infile",
            Severity::Ok,
            "LOAD DATA LOCAL is allowed (used by --write-path load-data; the default bulk path does not need it)",
            "",
        );
    } else {
        add(
            "local_infile",
            Severity::Info,
            "LOAD DATA LOCAL is refused: --write-path load-data falls back to INSERTs (the default bulk path does not need it)",
            "SET GLOBAL local_infile = ON",
        );
    }
    if on("autocommit") {
        add(
            "autocommit",
            Severity::Info,
            "the sink commits per batch explicitly; row-at-a-time tools would commit per row",
            "",
        );
    } else {
        add("autocommit", Severity::Ok, "off", "");
    }
    if num("innodb_flush_log_at_trx_commit") == Some(1) {
        add(
            "innodb_flush_log_at_trx_commit",
            Severity::Info,
            "one redo fsync per commit (per batch here)",
            "for a one-off load: SET GLOBAL innodb_flush_log_at_trx_commit = 2",
        );
    } else {
        add(
            "innodb_flush_log_at_trx_commit",
            Severity::Ok,
            "no fsync per commit",
            "",
        );
    }
    if on("log_bin") {
        add(
            "log_bin",
            Severity::Info,
            "every row is also written to the binary log",
            "if no replica needs the load: SET SESSION sql_log_bin = 0 (needs privilege)",
        );
        if num("sync_binlog") == Some(1) {
            add(
                "sync_binlog",
                Severity::Info,
                "one binlog fsync per commit",
                "for a one-off load: SET GLOBAL sync_binlog = 0",
            );
        }
    } else {
        add("log_bin", Severity::Ok, "binary log off", "");
    }
    if num("binlog_commit_wait_count").is_some_and(|n| n > 0) {
        add("binlog_commit_wait_count", Severity::Warn, "each commit waits up to binlog_commit_wait_usec for a group: single-threaded commits crawl", "SET GLOBAL binlog_commit_wait_count = 0");
        add(
            "binlog_commit_wait_usec",
            Severity::Info,
            "the wait per commit while binlog_commit_wait_count > 0",
            "",
        );
    } else if vars.contains_key("binlog_commit_wait_count") {
        add(
            "binlog_commit_wait_count",
            Severity::Ok,
            "commits do not wait for a group",
            "",
        );
    }
    if num("innodb_buffer_pool_size").unwrap_or(0) < 1 << 30 {
        add(
            "innodb_buffer_pool_size",
            Severity::Warn,
            "under 1 GiB: secondary index pages spill to disk during large loads",
            "set innodb_buffer_pool_size to 50-70% of RAM (my.cnf)",
        );
    } else {
        add(
            "innodb_buffer_pool_size",
            Severity::Ok,
            "large enough for index builds",
            "",
        );
    }
    if !version.contains("MariaDB") && mysql_at_least(version, (8, 0, 27)) {
        add(
            "innodb_ddl_threads",
            Severity::Info,
            "threads for parallel secondary index builds (ALTER TABLE ... ADD INDEX)",
            "",
        );
        if num("innodb_ddl_buffer_size").unwrap_or(0) <= 1 << 20 {
            add(
                "innodb_ddl_buffer_size",
                Severity::Warn,
                "1 MiB default makes index builds merge many small runs",
                "SET SESSION innodb_ddl_buffer_size = 268435456 before building indexes",
            );
        } else {
            add("innodb_ddl_buffer_size", Severity::Ok, "raised", "");
        }
        add(
            "innodb_parallel_read_threads",
            Severity::Info,
            "threads scanning the clustered index during index builds",
            "",
        );
    }
    out
}

/// Whether a MySQL `VERSION()` string is at least `min`.
fn mysql_at_least(version: &str, min: (u64, u64, u64)) -> bool {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u64>().ok());
    let v = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    v >= min
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn binlog_group_wait_is_a_trap() {
        let v = vars(&[("binlog_commit_wait_count", "10"), ("local_infile", "ON")]);
        let findings = diagnose(&v, "10.11.6-MariaDB");
        let f = findings
            .iter()
            .find(|f| f.setting == "binlog_commit_wait_count")
            .unwrap();
        assert_eq!(f.severity, Severity::Warn);
        assert!(f.fix.contains("= 0"));
    }

    #[test]
    fn a_read_only_server_is_named() {
        let findings = diagnose(&vars(&[("read_only", "ON")]), "10.11.6-MariaDB");
        let f = findings.iter().find(|f| f.setting == "read_only").unwrap();
        assert_eq!(f.severity, Severity::Warn);
        assert!(f.reason.contains("refuses writes"), "{}", f.reason);
        let writable = vars(&[("read_only", "OFF"), ("super_read_only", "OFF")]);
        assert!(!diagnose(&writable, "8.0.36")
            .iter()
            .any(|f| f.setting.ends_with("read_only")));
    }

    #[test]
    fn mysql_ddl_settings_only_from_8_0_27() {
        let v = vars(&[("innodb_ddl_buffer_size", "1048576")]);
        assert!(diagnose(&v, "8.0.36")
            .iter()
            .any(|f| f.setting == "innodb_ddl_buffer_size"));
        assert!(!diagnose(&v, "8.0.26")
            .iter()
            .any(|f| f.setting == "innodb_ddl_threads"));
        assert!(!diagnose(&v, "10.11.6-MariaDB")
            .iter()
            .any(|f| f.setting == "innodb_ddl_threads"));
    }
}
