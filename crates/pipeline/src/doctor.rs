//! A target's advice on its server's settings: what `ringpipe doctor`
//! prints, whichever database the target speaks to.

use std::fmt;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Fine for bulk loads.
    Ok,
    /// Worth knowing; costs some speed or is a deliberate trade-off.
    Info,
    /// A trap: fix it before a large import.
    Warn,
}

/// One setting, its value and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The server variable.
    pub setting: String,
    /// Its value (`(unset)` when the server lacks it).
    pub value: String,
    /// How much it matters.
    pub severity: Severity,
    /// One line: why.
    pub reason: String,
    /// One line: how to fix (empty when nothing to do).
    pub fix: String,
}

/// The doctor's verdict on one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorReport {
    /// `VERSION()`.
    pub server_version: String,
    /// One finding per inspected setting.
    pub findings: Vec<Finding>,
}

impl DoctorReport {
    /// Findings at [`Severity::Warn`].
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warn)
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "server {}", self.server_version)?;
        for finding in &self.findings {
            let tag = match finding.severity {
                Severity::Ok => "ok  ",
                Severity::Info => "info",
                Severity::Warn => "WARN",
            };
            writeln!(
                f,
                "[{tag}] {} = {}: {}",
                finding.setting, finding.value, finding.reason
            )?;
            if !finding.fix.is_empty() {
                writeln!(f, "       fix: {}", finding.fix)?;
            }
        }
        Ok(())
    }
}
