//! `ringpipe doctor`: the server settings that decide bulk-load speed.

use std::io::Write;

use crate::cli::DoctorArgs;
use crate::error::CliError;

/// Prints the doctor's report; findings are advice, so they never fail
/// the command.
pub fn run(args: DoctorArgs) -> Result<(), CliError> {
    super::import::check_url(&args.url)?;
    let report = match ringpipe_postgres::is_postgres_url(&args.url) {
        true => ringpipe_postgres::doctor(&args.url)?.to_string(),
        false => ringpipe_mysql::doctor(&args.url)?.to_string(),
    };
    write!(std::io::stdout().lock(), "{report}")?;
    Ok(())
}
