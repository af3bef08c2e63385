//! The progress line on a terminal; nothing when stderr is not one.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ringpipe_pipeline::Progress;

/// Shows rows, MB read, rows/s and an ETA from the file size.
pub struct ProgressLine {
    bar: Option<ProgressBar>,
}

impl ProgressLine {
    /// A progress line for an input of `total_bytes` (when known).
    pub fn new(total_bytes: Option<u64>) -> Self {
        if !std::io::stderr().is_terminal() {
            return ProgressLine { bar: None };
        }
        let bar = ProgressBar::with_draw_target(total_bytes, ProgressDrawTarget::stderr());
        let template = match total_bytes {
            Some(_) => {
                "{elapsed_precise} [{bar:30}] {binary_bytes}/{binary_total_bytes} {msg} ETA {eta}"
            }
            None => "{elapsed_precise} {binary_bytes} {msg}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        ProgressLine { bar: Some(bar) }
    }

    /// No line at all (`--quiet`).
    pub fn hidden() -> Self {
        ProgressLine { bar: None }
    }

    /// Updates the line.
    pub fn update(&self, progress: &Progress) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(progress.source.bytes_read);
        let seconds = progress.elapsed.as_secs_f64().max(1e-3);
        bar.set_message(format!(
            "{} rows read, {} committed, {:.0} rows/s",
            progress.rows_read,
            progress.rows_written,
            progress.rows_written as f64 / seconds
        ));
    }

    /// Removes the line before the summary is printed.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
