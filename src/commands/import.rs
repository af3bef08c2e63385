//! `ringpipe import`: arguments → XML, CSV or JSON Lines source regions →
//! [`Import`] into a MySQL or PostgreSQL target → report. The import itself (shards, checkpoints, resume,
//! retries) is the pipeline crate's.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use clap::ValueEnum;
use ringpipe_mysql::{BulkClient, MysqlError, MysqlTarget, ServerStats, SinkConfig};
use ringpipe_pipeline::{fingerprint, ColumnUsage, Import, Mode, RunSummary, Source, Target};
use ringpipe_postgres::{is_postgres_url, PgError, PgTarget};
use ringpipe_ring::WaitStrategy;
use ringpipe_xml::{XmlConfig, XmlSource};

use super::ends;
use crate::cli::{BulkClientArg, FormatArg, ImportArgs, ModeArg, WaitArg};
use crate::error::CliError;
use crate::hint;
use crate::preview::Preview;
use crate::progress::ProgressLine;
use crate::report::{peak_rss_mib, ImportReport};

/// Runs an import and prints its report.
pub fn run(args: ImportArgs) -> Result<(), CliError> {
    check_args(&args)?;
    ends::check_args(&args)?;
    if let Some(file) = &args.password_file {
        use_password_file(file, ends::password_var(&args.url))?;
    }
    let columns = match args.columns.is_empty() {
        true => ends::table_columns(&args)?,
        false => args.columns.clone(),
    };
    // A part import opens the regions of every part (their records count
    // in the whole file) and runs its own.
    let parts = args.part.map_or(1, |p| p.count as usize);
    let wanted = regions(&args) * parts;
    match ends::format(&args.input) {
        FormatArg::Csv => {
            let csv = ends::csv(&args, &columns, wanted)?;
            check_split(&args, csv.len())?;
            let usage = csv[0].column_usage();
            return load(args, columns, csv, usage);
        }
        FormatArg::Jsonl => {
            let jsonl = ends::jsonl(&args, &columns, wanted)?;
            check_split(&args, jsonl.len())?;
            let usage = jsonl[0].column_usage();
            return load(args, columns, jsonl, usage);
        }
        FormatArg::Xml => {}
    }
    let xml = xml_config(&args, &columns)?;
    let regions = XmlSource::open_regions(&args.input.file, xml, wanted)?;
    check_split(&args, regions.len())?;
    let usage = regions[0].column_usage();
    load(args, columns, regions, usage)
}

/// Refuses a part import of an input that could not be cut into regions
/// (`got` of them); notes when one region reads what was to be several.
fn check_split(args: &ImportArgs, got: usize) -> Result<(), CliError> {
    let parts = args.part.map_or(1, |p| p.count as usize);
    if parts > 1 && got < regions(args) * parts {
        return Err(CliError::Usage(format!(
            "--part: {} cannot be cut into parts (gzip, or not UTF-8); \
             decompress it or convert it to UTF-8 first",
            args.input.file.display()
        )));
    }
    if got < regions(args) {
        log::info!(
            "{}: gzip, stdin or not UTF-8: read as one region",
            args.input.file.display()
        );
    }
    Ok(())
}

/// Imports `regions` into the URL's server (nowhere on a dry run) and
/// prints the report; `usage` says which columns no record filled and
/// which fields no column took.
fn load<S: Source>(
    args: ImportArgs,
    columns: Vec<String>,
    regions: Vec<S>,
    usage: ColumnUsage,
) -> Result<(), CliError> {
    let region_count = regions.len();
    let progress = match args.quiet {
        true => ProgressLine::hidden(),
        false => ProgressLine::new(regions[0].progress().bytes_total),
    };
    let mut preview_table = None;
    let report = if args.dry_run {
        let preview = Preview::new(args.preview);
        let summary = import(&args, preview.clone(), &columns)?
            .run_with_progress(regions, |p| progress.update(p));
        progress.finish();
        let summary = summary.map_err(|f| CliError::import(&f, true, |e| e.to_string()))?;
        let mut report = report(&args, region_count, "none (dry run)", &summary, 0, None);
        if args.preview > 0 {
            report.preview = Some(preview_json(&preview, &columns));
            preview_table = Some(preview.table(&columns).to_string());
        }
        report
    } else if is_postgres_url(&args.url) {
        let target = PgTarget::new(ends::pg_config(&args, &columns));
        let summary = import(&args, target.clone(), &columns)?
            .run_with_progress(regions, |p| progress.update(p));
        progress.finish();
        let describe = |e: &PgError| hint::postgres(e, &args.url, &args.table);
        let summary = summary.map_err(|f| CliError::import(&f, false, describe))?;
        if summary.already_complete {
            return already_complete(&args);
        }
        let path = target
            .binary()
            .map_or("none", |b| if b { "copy-binary" } else { "copy-text" });
        let mut report = report(&args, region_count, path, &summary, target.rejected(), None);
        report.recovered(target.recoveries());
        report
    } else {
        let target = MysqlTarget::new(sink_config(&args, &columns));
        let before = ServerStats::read(&args.url).ok();
        let summary = import(&args, target.clone(), &columns)?
            .run_with_progress(regions, |p| progress.update(p));
        progress.finish();
        let describe = |e: &MysqlError| hint::database(e, &args.url, &args.table);
        let summary = summary.map_err(|f| CliError::import(&f, false, describe))?;
        if summary.already_complete {
            return already_complete(&args);
        }
        let server = before.and_then(|b| Some(ServerStats::read(&args.url).ok()?.delta(&b)));
        let prepared = target.prepared();
        let path = prepared.map_or("none".into(), |p| format!("{:?}", p.write_path()));
        let rejected = prepared.map_or(0, |p| p.rejected());
        let mut report = report(&args, region_count, &path, &summary, rejected, server);
        report.recovered(prepared.map(|p| p.recoveries()).unwrap_or_default());
        report
    };
    let report = report.usage(&usage);
    if args.quiet {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match args.json {
        true => writeln!(
            out,
            "{}",
            serde_json::to_string(&report).expect("report serialises")
        )?,
        false => {
            if let Some(table) = preview_table {
                writeln!(
                    out,
                    "first {} rows as they would be written:\n{table}",
                    args.preview
                )?;
            }
            write!(out, "{report}")?
        }
    }
    Ok(())
}

/// The import of `args` into `target`, resumable when the input is a file.
fn import<T: Target>(
    args: &ImportArgs,
    target: T,
    columns: &[String],
) -> Result<Import<T>, CliError> {
    let mut import = Import::new(target)
        .shards(args.shards())
        .batch_rows(args.batch_rows)
        .wait_strategy(wait_strategy(args.wait))
        .retry_for(Duration::from_secs(args.retry_for))
        .resume(args.resume)
        .any_order(args.any_order);
    if let Some(part) = args.part {
        import = import.part(part);
    }
    if let Some(block) = args.shard_block {
        import = import.shard_block(block);
    }
    if !is_pipe(&args.input.file) {
        let input = fingerprint(&args.input.file).map_err(|e| {
            CliError::Usage(format!("cannot read {}: {e}", args.input.file.display()))
        })?;
        import = import.checkpoints(input, mapping(args, columns));
    }
    Ok(import)
}

/// Regions of the input parsed at once: `--regions`, else the target's
/// default.
fn regions(args: &ImportArgs) -> usize {
    args.regions.unwrap_or_else(|| ends::default_regions(args))
}

fn check_args(args: &ImportArgs) -> Result<(), CliError> {
    check_url(&args.url)?;
    if args.shard_block == Some(0) {
        return Err(CliError::Usage("--shard-block must be at least 1".into()));
    }
    if !(1..=64).contains(&args.shards()) {
        return Err(CliError::Usage(format!(
            "--shards must be 1..=64, not {}",
            args.shards()
        )));
    }
    if args.batch_rows == 0 {
        return Err(CliError::Usage("--batch-rows must be at least 1".into()));
    }
    if args.resume && is_pipe(&args.input.file) {
        // Before anything opens the input: what a look at a pipe reads is lost.
        return Err(CliError::Usage(
            "--resume needs an input file, not stdin or a pipe".into(),
        ));
    }
    if let Some(part) = args.part {
        check_part(args, part)?;
    }
    check_order(args)?;
    if regions(args) == 0 || args.shards() % regions(args) != 0 {
        return Err(CliError::Usage(format!(
            "--regions must divide --shards ({}), not {}",
            args.shards(),
            regions(args)
        )));
    }
    Ok(())
}

/// Ignore, upsert and replace keep the first or last record of a key,
/// which only one writer keeps: several need --any-order.
fn check_order(args: &ImportArgs) -> Result<(), CliError> {
    if !Mode::from(args.mode).order_matters() || args.any_order {
        return Ok(());
    }
    let writers = match args.part {
        Some(part) if part.count > 1 => format!("--part {part}"),
        _ if args.shards() > 1 => format!("--shards {}", args.shards()),
        _ => return Ok(()),
    };
    let mode = args.mode.to_possible_value().expect("no mode is hidden");
    Err(CliError::Usage(format!(
        "--mode {} keeps one record of each key (ignore the first, upsert and replace \
         the last), which only one writer keeps in the input's order; with {writers} the \
         records of one key land in any order: add --any-order if the input holds each \
         key once (or any of its records will do)",
        mode.get_name()
    )))
}

/// A part must not empty what the others load, and needs a file that
/// every part reads.
fn check_part(args: &ImportArgs, part: ringpipe_pipeline::Part) -> Result<(), CliError> {
    if matches!(args.mode, ModeArg::Truncate) {
        return Err(CliError::Usage(format!(
            "--part {part} with --mode truncate: a part must not empty what the others \
             load; empty the table once before starting the parts"
        )));
    }
    if is_pipe(&args.input.file) {
        return Err(CliError::Usage(
            "--part needs an input file, not stdin or a pipe".into(),
        ));
    }
    Ok(())
}

/// A resumed import (part) that had finished: exit 0, nothing done.
fn already_complete(args: &ImportArgs) -> Result<(), CliError> {
    if args.quiet {
        return Ok(());
    }
    let part = args.part.map_or(String::new(), |p| format!(" part {p}"));
    let (file, table) = (args.input.file.display(), &args.table);
    let mut out = std::io::stdout().lock();
    match args.json {
        true => writeln!(
            out,
            "{}",
            serde_json::json!({
                "file": file.to_string(),
                "table": table,
                "part": args.part.map(|p| p.to_string()),
                "already_complete": true,
            })
        )?,
        false => writeln!(out, "{file}{part} into {table}: already complete")?,
    }
    Ok(())
}

/// Refuses a URL that is not `mysql://…` (or `mariadb://…`) with a
/// database, showing the form expected (and never the password).
pub fn check_url(url: &str) -> Result<(), CliError> {
    if is_postgres_url(url) {
        return Ok(());
    }
    let rest = ["mysql://", "mariadb://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme));
    let has_database = rest
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(host, db)| {
            !host.is_empty() && !db.split('?').next().unwrap_or_default().is_empty()
        });
    if has_database {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "--url {}: expected mysql://user[:password]@host[:port]/database",
        ringpipe_mysql::redact_url(url)
    )))
}

/// The password file works like `MYSQL_PWD` (`PGPASSWORD`): set `var`
/// before any thread starts, so every connection of the import uses it.
fn use_password_file(path: &Path, var: &str) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::Usage(format!(
            "cannot read --password-file {}: {e}",
            path.display()
        ))
    })?;
    std::env::set_var(var, text.lines().next().unwrap_or_default());
    Ok(())
}

fn xml_config(args: &ImportArgs, columns: &[String]) -> Result<XmlConfig, CliError> {
    let mut config = XmlConfig::new(args.row.clone(), columns.iter().cloned())
        .strict(args.strict)
        .allow_empty(args.allow_empty)
        .join_with(args.join_separator());
    for repeated in &args.repeated {
        let usage = |m: String| CliError::Usage(format!("--repeated {repeated}: {m}"));
        config = match repeated.split_once('=') {
            None => config.repeated(repeated.parse().map_err(usage)?),
            Some((column, _)) if !columns.iter().any(|c| c == column) => {
                return Err(usage(format!("{column:?} is not a column")))
            }
            Some((column, policy)) => config.repeated_for(column, policy.parse().map_err(usage)?),
        };
    }
    for map in &args.maps {
        let Some((field, column)) = map.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--map {map:?}: expected FIELD=COLUMN"
            )));
        };
        if !columns.iter().any(|c| c == column) {
            let table = &args.table;
            return Err(CliError::Usage(format!(
                "--map {map}: column {column:?} is not among the columns of {table}"
            )));
        }
        config = config.rename(field, column);
    }
    for field in &args.fields {
        let usage = |m: &str| CliError::Usage(format!("--field {field}: {m}"));
        let Some((column, path)) = field.split_once('=') else {
            return Err(usage("expected COLUMN=PATH"));
        };
        if args
            .maps
            .iter()
            .any(|m| m.split_once('=').is_some_and(|(_, c)| c == column))
        {
            return Err(usage(&format!(
                "column {column:?} is also the target of a --map"
            )));
        }
        config = config.field(column, path);
    }
    for (column, decode) in ends::decodes(args)? {
        config = config.decode(column, decode);
    }
    config.validate().map_err(CliError::Usage)?;
    Ok(config)
}

fn sink_config(args: &ImportArgs, columns: &[String]) -> SinkConfig {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut config = SinkConfig::new(args.url.clone(), args.table.clone(), &names)
        .mode(args.mode.into())
        .max_bad(args.max_bad);
    if let Some(path) = args.write_path.and_then(ends::mysql_write_path) {
        config = config.write_path(path);
    }
    config = config.bulk_client(match args.bulk_client.unwrap_or(BulkClientArg::Wire) {
        BulkClientArg::Wire => BulkClient::Wire,
        BulkClientArg::Driver => BulkClient::Driver,
    });
    if let Some(file) = &args.reject_file {
        config = config.reject_file(file.clone());
    }
    if let Some(secs) = args.connect_timeout {
        config = config.connect_timeout(Duration::from_secs(secs));
    }
    if let Some(secs) = args.net_timeout {
        config = config.net_timeout(Duration::from_secs(secs));
    }
    for sql in &args.init_commands {
        config = config.init_command(sql.clone());
    }
    config
}

/// Stdin, or anything else that is not a regular file (`<(zcat …)`, a
/// FIFO): it cannot be fingerprinted without consuming what the import must
/// read, nor read again on `--resume`.
pub(crate) fn is_pipe(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// What, besides the input and the import's own layout, decides which
/// record becomes which row: a resumed import must have the same.
fn mapping(args: &ImportArgs, columns: &[String]) -> String {
    let mode = match args.mode {
        ModeArg::Insert | ModeArg::Truncate => "insert",
        ModeArg::Ignore => "ignore",
        ModeArg::Upsert => "upsert",
        ModeArg::Replace => "replace",
    };
    format!(
        "row={};columns={};map={};mode={mode}{}",
        args.row,
        columns.join(","),
        args.maps.join(","),
        ends::mapping(args)
    )
}

fn wait_strategy(wait: WaitArg) -> WaitStrategy {
    match wait {
        WaitArg::BusySpin => WaitStrategy::busy_spin(),
        WaitArg::Yielding => WaitStrategy::yielding(),
        WaitArg::Sleeping => WaitStrategy::sleeping(),
        WaitArg::Blocking => WaitStrategy::blocking(),
    }
}

fn report(
    args: &ImportArgs,
    regions: usize,
    write_path: &str,
    summary: &RunSummary,
    rejected: u64,
    server: Option<ServerStats>,
) -> ImportReport {
    ImportReport {
        file: args.input.file.display().to_string(),
        table: args.table.clone(),
        write_path: write_path.to_owned(),
        shards: summary.shards,
        regions,
        rows_read: summary.rows_read,
        rows_written: summary.rows_written,
        rows_skipped: summary.rows_skipped,
        rows_rejected: rejected,
        rewinds: summary.rewinds,
        reconnects: 0,
        timeouts: 0,
        conflicts: 0,
        seconds: summary.elapsed.as_secs_f64(),
        rows_per_second: ImportReport::rate(summary.rows_written, summary.elapsed),
        peak_rss_mib: peak_rss_mib(),
        commits: summary.commits,
        server_commits: server.as_ref().map(|s| s.get("Com_commit")),
        server_rows_per_commit: server.as_ref().map(ServerStats::rows_per_commit),
        server_rows_per_statement: server.as_ref().map(ServerStats::rows_per_statement),
        dry_run: args.dry_run,
        unfilled_columns: Vec::new(),
        ignored_fields: Vec::new(),
        ignored_other_fields: 0,
        preview: None,
    }
}

/// The preview's rows as JSON objects, column name to value.
fn preview_json(
    preview: &Preview,
    columns: &[String],
) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let value = |v: Option<String>| v.map_or(serde_json::Value::Null, serde_json::Value::String);
    preview
        .rows()
        .into_iter()
        .map(|row| {
            columns
                .iter()
                .cloned()
                .zip(row.into_iter().map(value))
                .collect()
        })
        .collect()
}
