//! `ringpipe`: the command-line importer. It parses arguments, shows
//! progress and reports; the work lives in the `ringpipe-*` crates.

mod cli;
mod commands;
mod error;
mod hint;
mod preview;
mod progress;
mod report;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::CliError;

fn main() -> ExitCode {
    // RINGPIPE_MYSQL_URL: the older name of RINGPIPE_URL (set before any thread).
    if let (None, Some(url)) = (
        std::env::var_os("RINGPIPE_URL"),
        std::env::var_os("RINGPIPE_MYSQL_URL"),
    ) {
        std::env::set_var("RINGPIPE_URL", url);
    }
    let cli = Cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let result = match cli.command {
        Command::Import(args) => commands::import::run(*args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Status(args) => commands::status::run(args),
        Command::Gen(args) => commands::gen::run(args),
        Command::Tune(args) => commands::tune::run(*args),
        Command::Completions { shell } => commands::docs::completions(shell),
        Command::Man => commands::docs::man(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`ringpipe ... | head`) is not a failure.
        Err(CliError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "ringpipe: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}
