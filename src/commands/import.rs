//! `ringpipe import`: validated settings → XML source → pipeline → MySQL sinks.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use ringpipe_mysql::{
    clear_checkpoint, prepare, resume_point, table_columns, BulkClient, ImportIdentity, Mode,
    MysqlError, ServerStats, SinkConfig, WritePath,
};
use ringpipe_ring::pipeline::{Pipeline, Regions, Row, RunSummary, Sink, SinkError, Source};
use ringpipe_ring::{RewindDecision, RewindStrategy, WaitStrategy};
use ringpipe_xml::{XmlConfig, XmlSource};

use crate::cli::{BulkClientArg, ImportArgs, ModeArg, WaitArg, WritePathArg};
use crate::error::CliError;
use crate::progress::ProgressLine;
use crate::report::{peak_rss_mib, ImportReport};

/// Runs an import and prints its report.
pub fn run(args: ImportArgs) -> Result<(), CliError> {
    check_args(&args)?;
    if let Some(file) = &args.password_file {
        use_password_file(file)?;
    }
    let columns = match args.columns.is_empty() {
        true => table_columns(&args.url, &args.table)?,
        false => args.columns.clone(),
    };
    let xml = xml_config(&args, &columns)?;
    let sources = XmlSource::open_regions(&args.file, xml, regions(&args))?;
    if sources.len() < regions(&args) {
        log::info!(
            "{}: gzip, stdin or not UTF-8: read as one region",
            args.file.display()
        );
    }
    let usage = sources[0].column_usage();
    let split = Split::new(sources.len(), args.shards);
    let progress = ProgressLine::new(sources[0].progress().bytes_total);
    let pipelines = sources
        .into_iter()
        .zip(&split.regions)
        .map(|(source, region)| {
            Pipeline::new(source)
                .shards(region.shards)
                .batch_rows(args.batch_rows)
                .shard_block(shard_block(&args))
                .wait_strategy(wait_strategy(args.wait))
                .rewind_strategy(retry_for(Duration::from_secs(args.retry_for)))
        });
    let report = if args.dry_run {
        let regions = Regions::new(pipelines.collect());
        let summary = regions.run_with_progress(|_| Ok(DiscardSink), |p| progress.update(p));
        progress.finish();
        let summary = summary.map_err(CliError::dry_run)?;
        report(&args, &split, "none (dry run)", &summary, 0, None)
    } else {
        let config = sink_config(&args, &columns, &split)?;
        let pipelines: Vec<_> = match checkpoint_start(&args, &config, &columns, &split)? {
            Some(last_record) => pipelines
                .zip(&split.regions)
                .map(|(pipeline, region)| {
                    let shards = region.first_shard..region.first_shard + region.shards;
                    pipeline.resume_after(last_record[shards].to_vec())
                })
                .collect(),
            None => pipelines.collect(),
        };
        let target = prepare(&config)?;
        let before = ServerStats::read(&args.url).ok();
        let summary = Regions::new(pipelines)
            .run_with_progress(|shard| target.connect_sink(shard), |p| progress.update(p));
        progress.finish();
        let summary = summary?;
        if config_has_checkpoint(&args) {
            // A finished import leaves no checkpoint behind.
            clear_checkpoint(&config)?;
        }
        let server = before.and_then(|b| Some(ServerStats::read(&args.url).ok()?.delta(&b)));
        let path = format!("{:?}", target.write_path());
        report(&args, &split, &path, &summary, target.rejected(), server)
    };
    let report = report.unfilled(usage.unfilled());
    let mut out = std::io::stdout().lock();
    match args.json {
        true => writeln!(
            out,
            "{}",
            serde_json::to_string(&report).expect("report serialises")
        )?,
        false => write!(out, "{report}")?,
    }
    Ok(())
}

/// How the input's regions share the shards.
struct Split {
    regions: Vec<RegionShards>,
}

/// One region's shards.
struct RegionShards {
    first_shard: usize,
    shards: usize,
}

impl Split {
    /// `shards` dealt out evenly to `regions` regions, in order (the
    /// arguments are checked: `regions` divides `shards`).
    fn new(regions: usize, shards: usize) -> Split {
        let each = shards / regions;
        let regions = (0..regions)
            .map(|r| RegionShards {
                first_shard: r * each,
                shards: each,
            })
            .collect();
        Split { regions }
    }

    /// What a resumed import must split the same way: empty for one region
    /// (so that checkpoints of earlier versions still resume). The split
    /// points follow from the input and the region count alone.
    fn identity(&self) -> String {
        match self.regions.len() {
            1 => String::new(),
            n => format!(";regions={n}"),
        }
    }
}

/// Regions of the input parsed at once: one per shard by default.
fn regions(args: &ImportArgs) -> usize {
    args.regions.unwrap_or(args.shards)
}

/// Records per shard turn: whole transactions by default.
fn shard_block(args: &ImportArgs) -> u64 {
    args.shard_block.unwrap_or(args.batch_rows as u64)
}

fn check_args(args: &ImportArgs) -> Result<(), CliError> {
    if args.shard_block == Some(0) {
        return Err(CliError::Usage("--shard-block must be at least 1".into()));
    }
    if !(1..=64).contains(&args.shards) {
        return Err(CliError::Usage(format!(
            "--shards must be 1..=64, not {}",
            args.shards
        )));
    }
    if args.batch_rows == 0 {
        return Err(CliError::Usage("--batch-rows must be at least 1".into()));
    }
    if args.resume && is_pipe(&args.file) {
        // Before anything opens the input: what a look at a pipe reads is lost.
        return Err(CliError::Usage(
            "--resume needs an input file, not stdin or a pipe".into(),
        ));
    }
    if regions(args) == 0 || args.shards % regions(args) != 0 {
        return Err(CliError::Usage(format!(
            "--regions must divide --shards ({}), not {}",
            args.shards,
            regions(args)
        )));
    }
    Ok(())
}

/// The password file works like `MYSQL_PWD`: set it before any thread
/// starts, so every connection of the import (schema, sinks, counters) uses it.
fn use_password_file(path: &Path) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::Usage(format!(
            "cannot read --password-file {}: {e}",
            path.display()
        ))
    })?;
    std::env::set_var("MYSQL_PWD", text.lines().next().unwrap_or_default());
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
    config.validate().map_err(CliError::Usage)?;
    Ok(config)
}

fn sink_config(
    args: &ImportArgs,
    columns: &[String],
    split: &Split,
) -> Result<SinkConfig, CliError> {
    let mode = match args.mode {
        // A resumed truncate must not empty the table again.
        ModeArg::Truncate if args.resume => Mode::Insert,
        ModeArg::Insert => Mode::Insert,
        ModeArg::Ignore => Mode::Ignore,
        ModeArg::Upsert => Mode::Upsert,
        ModeArg::Replace => Mode::Replace,
        ModeArg::Truncate => Mode::Truncate,
    };
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut config = SinkConfig::new(args.url.clone(), args.table.clone(), &names)
        .mode(mode)
        .max_bad(args.max_bad);
    if config_has_checkpoint(args) {
        config = config.checkpoint(identity(args, columns, split)?);
    }
    if let Some(path) = args.write_path {
        config = config.write_path(match path {
            WritePathArg::Insert => WritePath::Insert,
            WritePathArg::Prepared => WritePath::Prepared,
            WritePathArg::LoadData => WritePath::LoadData,
            WritePathArg::Bulk => WritePath::Bulk,
        });
    }
    config = config.bulk_client(match args.bulk_client {
        BulkClientArg::Wire => BulkClient::Wire,
        BulkClientArg::Driver => BulkClient::Driver,
    });
    if let Some(file) = &args.reject_file {
        config = config.reject_file(file.clone());
    }
    for sql in &args.init_commands {
        config = config.init_command(sql.clone());
    }
    Ok(config)
}

/// Checkpoints need an input that can be recognised again: not a pipe.
fn config_has_checkpoint(args: &ImportArgs) -> bool {
    !is_pipe(&args.file)
}

/// Stdin, or anything else that is not a regular file (`<(zcat …)`, a
/// FIFO): it cannot be fingerprinted without consuming what the import must
/// read, nor read again on `--resume`.
fn is_pipe(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Where to resume (`--resume`), or `None` for a fresh import, whose old
/// checkpoint (if any) is discarded.
fn checkpoint_start(
    args: &ImportArgs,
    config: &SinkConfig,
    columns: &[String],
    split: &Split,
) -> Result<Option<Vec<u64>>, CliError> {
    if !config_has_checkpoint(args) {
        debug_assert!(!args.resume, "refused by check_args");
        return Ok(None);
    }
    if !args.resume {
        clear_checkpoint(config)?;
        return Ok(None);
    }
    match resume_point(config, &identity(args, columns, split)?) {
        Ok(Some(point)) => {
            match split.regions.len() {
                1 => log::info!(
                    "resuming: {} records were committed before",
                    point.committed(shard_block(args))
                ),
                _ => log::info!(
                    "resuming after the last record each shard committed: {:?}",
                    point.last_record
                ),
            }
            Ok(Some(point.last_record))
        }
        Ok(None) => Err(CliError::Usage(format!(
            "nothing to resume: no interrupted import of {} is recorded",
            args.table
        ))),
        Err(MysqlError::Resume(why)) => Err(CliError::Usage(format!("cannot resume: {why}"))),
        Err(other) => Err(other.into()),
    }
}

/// What makes this import the same import on `--resume`.
fn identity(
    args: &ImportArgs,
    columns: &[String],
    split: &Split,
) -> Result<ImportIdentity, CliError> {
    let columns = columns.join(",");
    let mode = match args.mode {
        ModeArg::Insert | ModeArg::Truncate => "insert",
        ModeArg::Ignore => "ignore",
        ModeArg::Upsert => "upsert",
        ModeArg::Replace => "replace",
    };
    Ok(ImportIdentity {
        input: fingerprint(&args.file)?,
        shards: args.shards as u32,
        mapping: format!(
            "row={};columns={columns};map={};mode={mode};shard-block={}{}",
            args.row,
            args.maps.join(","),
            shard_block(args),
            split.identity()
        ),
    })
}

/// Path, size and CRC-32 of the first MiB: enough to recognise the input.
fn fingerprint(path: &Path) -> Result<String, CliError> {
    use std::io::Read;
    let unreadable =
        |e: std::io::Error| CliError::Usage(format!("cannot read {}: {e}", path.display()));
    let canonical = path.canonicalize().map_err(unreadable)?;
    let size = canonical.metadata().map_err(unreadable)?.len();
    let mut head = Vec::with_capacity(1 << 20);
    std::fs::File::open(&canonical)
        .and_then(|f| f.take(1 << 20).read_to_end(&mut head))
        .map_err(unreadable)?;
    Ok(format!(
        "{} ({size} bytes, crc32 {:08x})",
        canonical.display(),
        crc32fast::hash(&head)
    ))
}

fn wait_strategy(wait: WaitArg) -> WaitStrategy {
    match wait {
        WaitArg::BusySpin => WaitStrategy::busy_spin(),
        WaitArg::Yielding => WaitStrategy::yielding(),
        WaitArg::Sleeping => WaitStrategy::sleeping(),
        WaitArg::Blocking => WaitStrategy::blocking(),
    }
}

/// Backoff from 10 ms to 2 s with as many attempts as fit in `limit`.
fn retry_for(limit: Duration) -> RewindStrategy {
    let unbounded =
        RewindStrategy::backoff(Duration::from_millis(10), Duration::from_secs(2), None);
    let mut waited = Duration::ZERO;
    let mut attempts = 1;
    while let RewindDecision::Rewind { pause } = unbounded.decide(attempts) {
        if waited + pause > limit {
            break;
        }
        waited += pause;
        attempts += 1;
    }
    RewindStrategy::backoff(
        Duration::from_millis(10),
        Duration::from_secs(2),
        Some(attempts),
    )
}

fn report(
    args: &ImportArgs,
    split: &Split,
    write_path: &str,
    summary: &RunSummary,
    rejected: u64,
    server: Option<ServerStats>,
) -> ImportReport {
    let server = server.unwrap_or_default();
    ImportReport {
        file: args.file.display().to_string(),
        table: args.table.clone(),
        write_path: write_path.to_owned(),
        shards: summary.shards,
        regions: split.regions.len(),
        rows_read: summary.rows_read,
        rows_written: if args.dry_run {
            0
        } else {
            summary.rows_written
        },
        rows_skipped: summary.rows_skipped,
        rows_rejected: rejected,
        rewinds: summary.rewinds,
        seconds: summary.elapsed.as_secs_f64(),
        rows_per_second: ImportReport::rate(summary.rows_written, summary.elapsed),
        peak_rss_mib: peak_rss_mib(),
        commits: summary.commits,
        server_commits: server.get("Com_commit"),
        server_rows_per_commit: server.rows_per_commit(),
        server_rows_per_statement: server.rows_per_statement(),
        dry_run: args.dry_run,
        unfilled_columns: Vec::new(),
    }
}

/// The dry run's sink: accepts every row, stores nothing.
struct DiscardSink;

#[derive(Debug, thiserror::Error)]
#[error("unreachable")]
enum Never {}

impl SinkError for Never {
    fn is_retryable(&self) -> bool {
        false
    }
}

impl Sink for DiscardSink {
    type Error = Never;
    fn write(&mut self, _: &Row) -> Result<(), Never> {
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Never> {
        Ok(())
    }
    fn rollback(&mut self) -> Result<(), Never> {
        Ok(())
    }
}
