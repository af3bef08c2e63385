//! `ringpipe status`: the state of every part of a table's imports, from
//! its checkpoints.

use std::collections::BTreeMap;
use std::io::Write;

use ringpipe_pipeline::StoredCheckpoint;
use ringpipe_postgres::is_postgres_url;
use serde::Serialize;

use crate::cli::StatusArgs;
use crate::error::CliError;

/// One part of one input, as its checkpoints tell.
#[derive(Debug, Serialize)]
struct PartState {
    /// The input's fingerprint.
    input: String,
    /// The part, from 0.
    part: u32,
    /// How many parts the input was cut into.
    parts: u32,
    /// Shards of the part's import.
    shards: u32,
    /// Records its shards committed.
    records: u64,
    /// Of those, the bad records they set aside.
    diverted: u64,
    /// Whether the part finished.
    complete: bool,
}

/// `--json`'s object.
#[derive(Debug, Serialize)]
struct Status {
    table: String,
    parts: Vec<PartState>,
}

/// Every checkpoint row of `table` on the URL's server, with the records
/// its shard committed.
fn checkpoint_rows(url: &str, table: &str) -> Result<Vec<(StoredCheckpoint, u64)>, CliError> {
    Ok(match is_postgres_url(url) {
        true => ringpipe_postgres::checkpoint_rows(url, table)?
            .into_iter()
            .map(|row| (row.checkpoint, row.records))
            .collect(),
        false => ringpipe_mysql::checkpoint_rows(url, table)?
            .into_iter()
            .map(|row| (row.checkpoint, row.records))
            .collect(),
    })
}

/// Prints every part's state. A table with no checkpoints has no import
/// recorded: an empty list, exit 0.
pub fn run(args: StatusArgs) -> Result<(), CliError> {
    super::import::check_url(&args.url)?;
    let mut parts: BTreeMap<(String, u32), PartState> = BTreeMap::new();
    for (checkpoint, records) in checkpoint_rows(&args.url, &args.table)? {
        let identity = &checkpoint.identity;
        let key = (identity.input.clone(), identity.part.index);
        let state = parts.entry(key).or_insert_with(|| PartState {
            input: identity.input.clone(),
            part: identity.part.index,
            parts: identity.part.count,
            shards: identity.shards,
            records: 0,
            diverted: 0,
            complete: false,
        });
        state.records += records;
        state.diverted += checkpoint.diverted;
        state.complete |= checkpoint.complete;
    }
    let status = Status {
        table: args.table,
        parts: parts.into_values().collect(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string(&status).expect("status serialises");
        writeln!(out, "{json}")?;
        return Ok(());
    }
    if status.parts.is_empty() {
        writeln!(out, "{}: no import recorded", status.table)?;
    }
    for p in &status.parts {
        let state = if p.complete {
            "complete"
        } else {
            "not complete"
        };
        writeln!(
            out,
            "{} part {}/{} of {:?}: {} records committed by {} shards{}, {state}",
            status.table,
            p.part,
            p.parts,
            p.input,
            p.records,
            p.shards,
            match p.diverted {
                0 => String::new(),
                n => format!(" ({n} of them set aside as bad)"),
            }
        )?;
    }
    Ok(())
}
