//! `ringpipe tune`: the throughput of a grid of batch sizes × shard counts
//! × write paths, measured on the user's own server with a sample of the
//! user's own input, and the flags that won.
//!
//! Every cell imports the same first `--sample` records into a scratch copy
//! of the table's definition (`CREATE TABLE … LIKE`; into PostgreSQL
//! `(LIKE … INCLUDING ALL)`), emptied before each cell and dropped at the
//! end, also when a cell fails. The cells run in a rotated order, round `k`
//! starting with cell `k`, so that a slow minute of a shared machine does
//! not always hit the same cell; each cell's figure is the median of its
//! rounds.

mod chart;

use std::io::Write;
use std::time::Instant;

use ringpipe_mysql::{Ident, Mode, MysqlTarget, SinkConfig};
use ringpipe_pipeline::{Import, Row, Source, SourceProgress, Target, TargetError};
use ringpipe_postgres::{is_postgres_url, PgConfig, PgTarget};
use ringpipe_text::{CsvSource, JsonlSource};
use ringpipe_xml::{XmlConfig, XmlSource};

use super::ends;
use crate::cli::{FormatArg, TuneArgs, WritePathArg};
use crate::error::CliError;
use crate::hint;

/// One point of the grid and what it measured, one rate per round.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    pub path: WritePathArg,
    pub shards: usize,
    pub batch_rows: usize,
    pub rates: Vec<f64>,
}

impl Cell {
    /// The median of the rounds' rows/s (the mean of the middle two for an
    /// even count).
    pub fn median(&self) -> f64 {
        let mut r = self.rates.clone();
        r.sort_by(f64::total_cmp);
        match r.len() {
            0 => 0.0,
            n if n % 2 == 1 => r[n / 2],
            n => (r[n / 2 - 1] + r[n / 2]) / 2.0,
        }
    }
}

/// Runs the sweep, prints the table and the recommendation, writes the chart.
pub fn run(mut args: TuneArgs) -> Result<(), CliError> {
    let postgres = is_postgres_url(&args.url);
    if args.write_path.is_empty() {
        args.write_path = match postgres {
            true => vec![WritePathArg::CopyBinary, WritePathArg::CopyText],
            false => vec![
                WritePathArg::Bulk,
                WritePathArg::LoadData,
                WritePathArg::Insert,
            ],
        };
    }
    check(&args, postgres)?;
    let columns = match postgres {
        true => ringpipe_postgres::table_columns(&args.url, &args.table)
            .map_err(|e| CliError::Described(hint::postgres(&e, &args.url, &args.table)))?,
        false => ringpipe_mysql::table_columns(&args.url, &args.table)
            .map_err(|e| CliError::Described(hint::database(&e, &args.url, &args.table)))?,
    };
    let scratch = Scratch::create(&args.url, &args.table, postgres)?;
    let mut cells = Vec::new();
    for &path in &args.write_path {
        for &shards in &args.shards {
            for &batch_rows in &args.batch_rows {
                let rates = Vec::with_capacity(args.rounds);
                cells.push(Cell {
                    path,
                    shards,
                    batch_rows,
                    rates,
                });
            }
        }
    }
    let mut expected = None;
    let n = cells.len();
    for round in 0..args.rounds {
        for k in 0..n {
            let cell = &mut cells[(round + k) % n];
            let (rows, seconds) = measure(&args, &scratch, &columns, cell)?;
            if *expected.get_or_insert(rows) != rows {
                return Err(CliError::Usage(format!(
                    "a cell wrote {rows} rows, another {}: the sample is not stable",
                    expected.unwrap_or_default()
                )));
            }
            cell.rates.push(rows as f64 / seconds.max(1e-9));
        }
        log::info!("round {} of {} done", round + 1, args.rounds);
    }
    scratch.drop_now()?;
    let rows = expected.unwrap_or_default();
    let mut out = std::io::stdout().lock();
    write!(out, "{}", table(&cells, rows, args.rounds))?;
    if let Some(best) = cells
        .iter()
        .max_by(|a, b| a.median().total_cmp(&b.median()))
    {
        writeln!(
            out,
            "recommended: --write-path {} --shards {} --batch-rows {} ({:.0} rows/s)",
            path_name(best.path),
            best.shards,
            best.batch_rows,
            best.median()
        )?;
    }
    std::fs::write(&args.chart, chart::svg(&cells, &args.table, rows))?;
    writeln!(out, "chart: {}", args.chart.display())?;
    Ok(())
}

fn check(args: &TuneArgs, postgres: bool) -> Result<(), CliError> {
    let bad = |what: &str| Err(CliError::Usage(what.into()));
    super::import::check_url(&args.url)?;
    let copy = |path: &WritePathArg| ends::mysql_write_path(*path).is_none();
    if args.write_path.iter().any(|path| copy(path) != postgres) {
        return bad(match postgres {
            true => "--write-path: copy-binary or copy-text into PostgreSQL",
            false => "--write-path: insert, prepared, load-data or bulk into MySQL/MariaDB",
        });
    }
    if super::import::is_pipe(&args.input.file) {
        return bad("tune reads its sample once per cell: give it a file, not stdin or a pipe");
    }
    ends::check_input(&args.input)?;
    if ends::format(&args.input) != FormatArg::Xml && args.row != "row" {
        return bad("--row is for XML input");
    }
    if args.sample == 0 || args.rounds == 0 {
        return bad("--sample and --rounds must be at least 1");
    }
    if args.batch_rows.contains(&0) || args.batch_rows.is_empty() {
        return bad("--batch-rows: one or more sizes, each at least 1");
    }
    if args.shards.is_empty() || args.shards.iter().any(|s| !(1..=64).contains(s)) {
        return bad("--shards: one or more counts, each 1..=64");
    }
    if args.write_path.is_empty() {
        return bad("--write-path: one or more paths");
    }
    Ok(())
}

/// One import of the sample into the emptied scratch table: rows, seconds.
fn measure(
    args: &TuneArgs,
    scratch: &Scratch,
    columns: &[String],
    cell: &Cell,
) -> Result<(u64, f64), CliError> {
    scratch.execute(&format!("TRUNCATE TABLE {}", scratch.quoted))?;
    let (file, left) = (&args.input.file, args.sample);
    match ends::format(&args.input) {
        FormatArg::Xml => {
            let xml = XmlConfig::new(args.row.clone(), columns.iter().cloned());
            let inner = XmlSource::open(file, xml)?;
            measure_sample(args, scratch, columns, cell, Sample { inner, left })
        }
        FormatArg::Csv => {
            let config = ends::input_config(&args.input, columns);
            let inner = CsvSource::open(file, config).map_err(ends::text_error)?;
            measure_sample(args, scratch, columns, cell, Sample { inner, left })
        }
        FormatArg::Jsonl => {
            let config = ends::input_config(&args.input, columns);
            let inner = JsonlSource::open(file, config).map_err(ends::text_error)?;
            measure_sample(args, scratch, columns, cell, Sample { inner, left })
        }
    }
}

/// [`measure`] with the sample's source open.
fn measure_sample<S: Source>(
    args: &TuneArgs,
    scratch: &Scratch,
    columns: &[String],
    cell: &Cell,
    source: Sample<S>,
) -> Result<(u64, f64), CliError> {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let (url, name) = (&args.url, scratch.name.as_str());
    let start = Instant::now();
    let written = match ends::mysql_write_path(cell.path) {
        Some(path) => {
            let config = SinkConfig::new(url.clone(), name, &names)
                .mode(Mode::Insert)
                .write_path(path);
            let describe = |e: &_| hint::database(e, url, name);
            run_cell(MysqlTarget::new(config), cell, source, describe)?
        }
        None => {
            let format = ends::copy_format(Some(cell.path));
            let config = PgConfig::new(url.clone(), name, &names).format(format);
            let describe = |e: &_| hint::postgres(e, url, name);
            run_cell(PgTarget::new(config), cell, source, describe)?
        }
    };
    Ok((written, start.elapsed().as_secs_f64()))
}

/// Imports `source` into `target` with the cell's shards and batch size;
/// the rows written.
fn run_cell<T: Target, S: Source>(
    target: T,
    cell: &Cell,
    source: Sample<S>,
    describe: impl Fn(&TargetError<T>) -> String,
) -> Result<u64, CliError>
where
    TargetError<T>: std::fmt::Display,
{
    Import::new(target)
        .shards(cell.shards)
        .batch_rows(cell.batch_rows)
        .run(vec![source])
        .map(|summary| summary.rows_written)
        .map_err(|f| CliError::import(&f, false, describe))
}

/// The cells as a markdown table, grouped by write path and shard count.
fn table(cells: &[Cell], rows: u64, rounds: usize) -> String {
    let mut s = format!(
        "{rows} rows per import, {rounds} rounds; rows/s, median of the rounds\n\n\
         | write path | shards | batch rows | rows/s | per round |\n|---|---:|---:|---:|---|\n"
    );
    for c in cells {
        let per_round: Vec<String> = c.rates.iter().map(|r| format!("{r:.0}")).collect();
        s += &format!(
            "| {} | {} | {} | {:.0} | {} |\n",
            path_name(c.path),
            c.shards,
            c.batch_rows,
            c.median(),
            per_round.join(" / ")
        );
    }
    s
}

/// The flag's spelling of a write path.
pub(crate) fn path_name(path: WritePathArg) -> &'static str {
    match path {
        WritePathArg::Insert => "insert",
        WritePathArg::Prepared => "prepared",
        WritePathArg::LoadData => "load-data",
        WritePathArg::Bulk => "bulk",
        WritePathArg::CopyBinary => "copy-binary",
        WritePathArg::CopyText => "copy-text",
    }
}

/// A source that ends after its first `left` records.
struct Sample<S> {
    inner: S,
    left: u64,
}

impl<S: Source> Source for Sample<S> {
    type Error = S::Error;

    fn columns(&self) -> &[String] {
        self.inner.columns()
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, Self::Error> {
        if self.left == 0 {
            return Ok(false);
        }
        let more = self.inner.next_row(row)?;
        self.left -= u64::from(more);
        Ok(more)
    }

    fn records_before(&self) -> u64 {
        self.inner.records_before()
    }

    fn progress(&self) -> SourceProgress {
        self.inner.progress()
    }
}

/// The scratch copy of the table's definition, dropped when this goes out
/// of scope (a failed cell included).
struct Scratch {
    url: String,
    postgres: bool,
    /// Its name, and the name quoted for the server.
    name: String,
    quoted: String,
    dropped: bool,
}

impl Scratch {
    fn create(url: &str, table: &str, postgres: bool) -> Result<Self, CliError> {
        let name = format!("ringpipe_tune_{}", std::process::id());
        let (quoted, create) = match postgres {
            true => {
                let quoted = ringpipe_postgres::quote(&name)?;
                let like = ringpipe_postgres::quote_table(table)?;
                let create = format!("CREATE TABLE {quoted} (LIKE {like} INCLUDING ALL)");
                (quoted, create)
            }
            false => {
                let quoted = Ident::new(&name)?.to_string();
                let create = format!("CREATE TABLE {quoted} LIKE {}", Ident::new(table)?);
                (quoted, create)
            }
        };
        let scratch = Scratch {
            url: url.to_owned(),
            postgres,
            name,
            quoted,
            dropped: false,
        };
        scratch.execute(&format!("DROP TABLE IF EXISTS {}", scratch.quoted))?;
        scratch.execute(&create)?;
        Ok(scratch)
    }

    /// Runs `sql` on a connection of its own.
    fn execute(&self, sql: &str) -> Result<(), CliError> {
        match self.postgres {
            true => ringpipe_postgres::execute(&self.url, sql)?,
            false => ringpipe_mysql::execute(&self.url, sql)?,
        }
        Ok(())
    }

    fn drop_now(mut self) -> Result<(), CliError> {
        self.dropped = true;
        self.execute(&format!("DROP TABLE IF EXISTS {}", self.quoted))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.dropped {
            if let Err(e) = self.execute(&format!("DROP TABLE IF EXISTS {}", self.quoted)) {
                log::warn!("could not drop the scratch table {}: {e}", self.name);
            }
        }
    }
}
