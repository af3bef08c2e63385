//! `ringpipe completions` and `ringpipe man`: generated from the same
//! argument definitions as the parser, so they never drift.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::CliError;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut command, "ringpipe", &mut out);
    out.flush()?;
    Ok(())
}

/// Prints the manual page.
pub fn man() -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definitions_hold_and_generate_completions_and_a_man_page() {
        Cli::command().debug_assert();
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ringpipe", &mut script);
            let script = String::from_utf8(script).unwrap();
            assert!(script.contains("--batch-rows"), "{shell:?}");
        }
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .unwrap();
        assert!(String::from_utf8(page).unwrap().contains(".TH ringpipe"));
    }
}
