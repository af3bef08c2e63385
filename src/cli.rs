//! The command line as typed: raw clap arguments, validated later.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use ringpipe_pipeline::Mode;

/// Fast, exact import of XML, CSV and JSON Lines into MySQL/MariaDB and
/// PostgreSQL, on a lock-free ring.
#[derive(Debug, Parser)]
#[command(name = "ringpipe", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import the records of an XML, CSV or JSON Lines file into a table.
    Import(Box<ImportArgs>),
    /// Check the server settings that decide bulk-load speed.
    Doctor(DoctorArgs),
    /// Show the checkpoints of a table's imports: every part's rows
    /// committed and whether it is complete.
    Status(StatusArgs),
    /// Write a deterministic product catalogue (for tests and benchmarks).
    Gen(GenArgs),
    /// Measure batch sizes × shards × write paths on a sample; recommend flags.
    Tune(Box<TuneArgs>),
    /// Print a shell completion script: `ringpipe completions bash >
    /// /etc/bash_completion.d/ringpipe`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `ringpipe man > ringpipe.1`.
    Man,
}

/// One example per group of `import`'s options.
const IMPORT_EXAMPLES: &str = "\
Examples:
  Input:        ringpipe import dump.xml.gz …            (gzip; `-` reads stdin)
  Mapping:      ringpipe import osm.xml --row node --map k=key …
  Target:       ringpipe import p.xml --url mysql://me@db:3306/shop --table product --mode upsert
  Performance:  ringpipe import p.xml … --shards 4 --batch-rows 2000
  Reliability:  ringpipe import p.xml … --resume --max-bad 10 --reject-file bad.tsv
  Output:       ringpipe import p.xml … --dry-run --preview 5";

/// `ringpipe import`.
#[derive(Debug, Args)]
#[command(after_long_help = IMPORT_EXAMPLES)]
pub struct ImportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Server URL, `mysql://user[:password]@host[:port]/database` or
    /// `postgres://…` (the sink follows the scheme); the password may
    /// instead come from MYSQL_PWD / PGPASSWORD or --password-file.
    /// RINGPIPE_MYSQL_URL is read when RINGPIPE_URL is not set.
    #[arg(
        help_heading = "Target",
        long,
        env = "RINGPIPE_URL",
        hide_env_values = true
    )]
    pub url: String,
    /// File whose first line is the password.
    #[arg(help_heading = "Target", long)]
    pub password_file: Option<PathBuf>,
    /// Target table (in the URL's database).
    #[arg(help_heading = "Target", long)]
    pub table: String,
    /// The record element, as in LOAD XML's `ROWS IDENTIFIED BY '<row>'`.
    #[arg(help_heading = "Mapping", long, default_value = "row")]
    pub row: String,
    /// Rename a field: `--map element=column` (repeatable). Fields map to
    /// the column of the same name otherwise.
    #[arg(help_heading = "Mapping", long = "map", value_name = "FIELD=COLUMN")]
    pub maps: Vec<String>,
    /// Columns to fill, comma-separated (default: every column of the table).
    /// A listed column whose field is missing from a record gets NULL; leave
    /// a column out to keep its default.
    #[arg(help_heading = "Mapping", long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// What to do with duplicate keys. Ignore keeps the first record of a
    /// key, upsert and replace the last: they take one shard unless
    /// --any-order.
    #[arg(help_heading = "Target", long, value_enum, default_value_t = ModeArg::Insert)]
    pub mode: ModeArg,
    /// Let several shards (or parts) write in ignore, upsert or replace
    /// mode: records of one key in different shards then land in any
    /// order, so either may win. Right when the input holds each key once.
    #[arg(help_heading = "Target", long)]
    pub any_order: bool,
    /// How rows travel to the server (default: the fastest measured).
    #[arg(help_heading = "Performance", long, value_enum)]
    pub write_path: Option<WritePathArg>,
    /// Who sends the bulk path's statements (MySQL/MariaDB): our wire
    /// client, one statement ahead of the server (it leaves TLS,
    /// compression and other authentication plugins to the driver), or the
    /// `mysql` crate (default: wire).
    #[arg(help_heading = "Performance", long, value_enum)]
    pub bulk_client: Option<BulkClientArg>,
    /// Sink connections, each committing its own share of every batch
    /// (default: 2; 1 in ignore, upsert and replace mode unless --any-order).
    #[arg(help_heading = "Performance", long = "shards", value_name = "SHARDS")]
    pub shards_arg: Option<usize>,
    /// Most rows one connection commits in one transaction. The ring holds
    /// about `batch_rows × shards` rows, which sets the memory use.
    #[arg(help_heading = "Performance", long, default_value_t = 5_000)]
    pub batch_rows: usize,
    /// Consecutive records a shard takes in turn (default: --batch-rows), so
    /// that each connection writes its own key ranges; 1 is plain
    /// sequence-modulo sharding.
    #[arg(help_heading = "Performance", long)]
    pub shard_block: Option<u64>,
    /// Parse the file in this many regions at once, each on its own thread
    /// feeding its own share of the shards, so that each connection writes
    /// keys of its own stretch of the file (default: one per shard into
    /// MySQL/MariaDB, one into PostgreSQL, where that measured faster).
    /// It must divide --shards. Gzip, stdin and non-UTF-8 input are read as
    /// one region.
    #[arg(help_heading = "Performance", long)]
    pub regions: Option<usize>,
    /// How idle pipeline threads wait.
    #[arg(help_heading = "Performance", long, value_enum, default_value_t = WaitArg::Blocking)]
    pub wait: WaitArg,
    /// SQL to run on every sink connection as it opens, e.g. `--init-command
    /// "SET SESSION sql_log_bin = 0"` (repeatable, in order). The session's
    /// `sql_mode` still gains `STRICT_TRANS_TABLES` after it.
    #[arg(help_heading = "Target", long = "init-command", value_name = "SQL")]
    pub init_commands: Vec<String>,
    /// Bad records to divert to --reject-file before stopping, counted over
    /// the whole import, or the whole part with --part (a --resume counts
    /// those its earlier runs set aside).
    #[arg(
        help_heading = "Reliability",
        long,
        default_value_t = 0,
        requires = "reject_file"
    )]
    pub max_bad: u64,
    /// Where bad records go (TSV: record, position, reason, values), each
    /// on disk before its batch commits; a fresh import empties the file,
    /// --resume appends to it.
    #[arg(help_heading = "Reliability", long)]
    pub reject_file: Option<PathBuf>,
    /// Fields no column takes (an unknown name, an element inside an XML
    /// field) are an error instead of being left out and counted in the
    /// summary.
    #[arg(help_heading = "Mapping", long)]
    pub strict: bool,
    /// Accept an input without any record (an empty export: an XML file
    /// without record elements, a CSV header alone, no JSON object)
    /// instead of stopping with exit 3.
    #[arg(long)]
    pub allow_empty: bool,
    /// What a column given two values in one record gets: `error` (the
    /// default), `first`, `last` or `join`; `COLUMN=POLICY` for one column
    /// (repeatable).
    #[arg(long = "repeated", value_name = "[COLUMN=]POLICY")]
    pub repeated: Vec<String>,
    /// Fill a column from a field path, evaluated while streaming:
    /// `--field name="tag[@k='name']/@v"` (repeatable). Forms: `child`,
    /// `@attr`, `child/@attr`, `a/b/c`, `../@attr`, `[@attr='v']`,
    /// `[not(@attr)]`, `text()` (docs/xml-mapping.md).
    #[arg(long = "field", value_name = "COLUMN=PATH")]
    pub fields: Vec<String>,
    /// Decode a column's text into bytes: `--decode data=base64` (or
    /// `hex`, with or without PostgreSQL's `\x` prefix), for CSV, JSON
    /// Lines and XML producers that do not mark binary fields with
    /// `xsi:type` (repeatable).
    #[arg(long = "decode", value_name = "COLUMN=hex|base64")]
    pub decodes: Vec<String>,
    /// The separator `--repeated join` puts between values.
    #[arg(long, value_name = "SEP", default_value = "\\n")]
    pub join_with: String,
    /// Finish an interrupted import: skip exactly the records its shards
    /// committed (read from the `ringpipe_checkpoint` table). The input,
    /// shard count, part count and mapping must be the same as before. The
    /// input is recognised by its size and its first and last MiB; the
    /// records committed are read again on the way and must give the same
    /// rows, else the resume stops there (start over: rows of other shards
    /// read before that point may have been written).
    /// Idempotent: with no checkpoint it starts the import (part), and for
    /// one that finished it exits 0 saying "already complete".
    #[arg(help_heading = "Reliability", long, conflicts_with = "dry_run")]
    pub resume: bool,
    /// Import only part I of the file cut into N parts at record
    /// boundaries (I from 0 to N-1), with checkpoints of its own: N
    /// processes, on any machines, in any order, import the file exactly
    /// once. A Kubernetes Indexed Job passes `--part
    /// $JOB_COMPLETION_INDEX/N`. Not with --mode truncate.
    #[arg(help_heading = "Performance", long, value_name = "I/N")]
    pub part: Option<ringpipe_pipeline::Part>,
    /// Parse and map every record, write nothing; shows the first rows as
    /// they would be written (see --preview).
    #[arg(help_heading = "Output", long)]
    pub dry_run: bool,
    /// Rows a dry run shows, as a table (or a `preview` array in --json).
    #[arg(help_heading = "Output", long, value_name = "N", default_value_t = 10)]
    pub preview: usize,
    /// Print the final summary as one JSON object on stdout.
    #[arg(help_heading = "Output", long)]
    pub json: bool,
    /// No progress and no summary: errors only.
    #[arg(help_heading = "Output", long, short, conflicts_with = "json")]
    pub quiet: bool,
    /// How long a batch may keep failing retryably (seconds of wall-clock
    /// time since it first failed: rollbacks, reconnects, timeouts and
    /// backoff pauses included) before the import stops.
    #[arg(help_heading = "Reliability", long, default_value_t = 60)]
    pub retry_for: u64,
    /// How long opening a connection may take (seconds); overrides the
    /// URL's tcp_connect_timeout_ms (PostgreSQL: connect_timeout).
    /// Default 30.
    #[arg(help_heading = "Reliability", long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub connect_timeout: Option<u64>,
    /// How long one read or write may wait for the server (seconds), also
    /// TCP_USER_TIMEOUT; overrides the URL's tcp_user_timeout_ms. A server
    /// that stays silent longer is a lost connection: the batch is rolled
    /// back and replayed on a new one. Default 300 (a long COMMIT fits).
    /// PostgreSQL: overrides the URL's tcp_user_timeout.
    #[arg(help_heading = "Reliability", long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub net_timeout: Option<u64>,
}

impl ImportArgs {
    /// `--shards`, else two, or one where the mode keeps the first or last
    /// record of a key and any order will not do.
    pub fn shards(&self) -> usize {
        let ordered = Mode::from(self.mode).order_matters() && !self.any_order;
        self.shards_arg.unwrap_or(if ordered { 1 } else { 2 })
    }

    /// `--join-with` as typed: `\n`, `\t` and `\\` stand for newline,
    /// tab and backslash.
    pub fn join_separator(&self) -> String {
        self.join_with
            .replace("\\\\", "\u{0}")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace('\u{0}', "\\")
    }
}

/// `ringpipe doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Server URL (`mysql://…` or `postgres://…`).
    #[arg(long, env = "RINGPIPE_URL", hide_env_values = true)]
    pub url: String,
}

/// `ringpipe status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Server URL (`mysql://…` or `postgres://…`).
    #[arg(long, env = "RINGPIPE_URL", hide_env_values = true)]
    pub url: String,
    /// The imported table.
    #[arg(long)]
    pub table: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `ringpipe gen`: records (`--rows` and `--out`) or a table's
/// definition (`--ddl`), one of the two.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["rows", "ddl"])))]
pub struct GenArgs {
    /// Number of product records.
    #[arg(long, requires = "out")]
    pub rows: Option<u64>,
    /// Output file (`-` for stdout; `.gz` compresses).
    #[arg(long, requires = "rows")]
    pub out: Option<PathBuf>,
    /// Print the CREATE TABLE statement for a catalogue table of this name
    /// instead of generating records.
    #[arg(long, value_name = "TABLE", conflicts_with_all = ["rows", "out"])]
    pub ddl: Option<String>,
    /// Seed of the deterministic generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Which of LOAD XML's three row forms to write.
    #[arg(long, value_enum, default_value_t = LayoutArg::Elements)]
    pub layout: LayoutArg,
    /// Whose SQL `--ddl` prints (default: mariadb).
    #[arg(long, value_enum, requires = "ddl", conflicts_with_all = ["rows", "out"])]
    pub dialect: Option<DialectArg>,
}

/// `gen --dialect`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DialectArg {
    /// MySQL and MariaDB (InnoDB, utf8mb4).
    Mariadb,
    /// PostgreSQL.
    Postgres,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Duplicate keys are bad records.
    Insert,
    /// Skip rows whose key exists.
    Ignore,
    /// Update the existing row's other columns.
    Upsert,
    /// Delete the existing row, insert the new one.
    Replace,
    /// Empty the table first, then insert.
    Truncate,
}

impl From<ModeArg> for Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Insert => Mode::Insert,
            ModeArg::Ignore => Mode::Ignore,
            ModeArg::Upsert => Mode::Upsert,
            ModeArg::Replace => Mode::Replace,
            ModeArg::Truncate => Mode::Truncate,
        }
    }
}

/// `--write-path`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WritePathArg {
    /// Multi-row INSERT text statements.
    Insert,
    /// Prepared multi-row statements.
    Prepared,
    /// LOAD DATA LOCAL INFILE, streamed.
    LoadData,
    /// MariaDB's bulk binary protocol.
    Bulk,
    /// PostgreSQL: binary COPY (every column's type must allow it).
    CopyBinary,
    /// PostgreSQL: text COPY.
    CopyText,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// XML records (`--row`).
    Xml,
    /// CSV with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// `--bulk-client`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BulkClientArg {
    /// ringpipe's own MariaDB wire client.
    Wire,
    /// The `mysql` crate.
    Driver,
}

/// `--wait`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WaitArg {
    /// Lowest latency, a core per idle thread.
    BusySpin,
    /// Spin, then yield the CPU.
    Yielding,
    /// Spin, yield, then sleep: near-zero idle CPU.
    Sleeping,
    /// Park on a condition variable.
    Blocking,
}

/// `--layout`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LayoutArg {
    /// Child elements, with `id` and `currency` as attributes.
    Elements,
    /// Every field an attribute of the record.
    Attributes,
    /// `<field name="...">` children, as `mysqldump --xml` writes.
    Fields,
}

/// The input file and how it is read, for `import` and `tune`.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The XML, CSV or JSON Lines file (by extension, or --format); `-`
    /// reads stdin (not for `tune`); `.gz` files are decompressed.
    #[arg(help_heading = "Input")]
    pub file: PathBuf,
    /// Input format (default: by the file's extension; else by its first
    /// character, `<` XML and `{` JSON Lines, for stdin and files (a pipe
    /// is read as XML); anything else needs --format).
    #[arg(help_heading = "Input", long, value_enum)]
    pub format: Option<FormatArg>,
    /// CSV field delimiter (one ASCII character, not `"`, CR or LF;
    /// default: a tab for a `.tsv` or `.tsv.gz` file, else `,`).
    #[arg(help_heading = "Input", long)]
    pub delimiter: Option<char>,
    /// Unquoted CSV fields equal to this are NULL; a quoted one stays text,
    /// as in PostgreSQL's CSV (default: none; empty is empty).
    #[arg(help_heading = "Input", long)]
    pub null_string: Option<String>,
}

/// `ringpipe tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The input whose first records are the sample.
    #[command(flatten)]
    pub input: InputArgs,
    /// Server URL, `mysql://user[:password]@host[:port]/database` or
    /// `postgres://…`.
    #[arg(long, env = "RINGPIPE_URL", hide_env_values = true)]
    pub url: String,
    /// The table whose definition the scratch copy takes (it is not written).
    #[arg(long)]
    pub table: String,
    /// The record element (XML).
    #[arg(long, default_value = "row")]
    pub row: String,
    /// Records of the sample: the first N of the file.
    #[arg(long, default_value_t = 200_000)]
    pub sample: u64,
    /// Times each cell runs (rotated order; the median counts).
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Batch sizes to try, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "500,1000,2000,5000,10000"
    )]
    pub batch_rows: Vec<usize>,
    /// Shard counts to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub shards: Vec<usize>,
    /// Write paths to try, comma-separated (default: bulk,load-data,insert
    /// into MySQL/MariaDB, copy-binary,copy-text into PostgreSQL).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub write_path: Vec<WritePathArg>,
    /// Where the chart goes (SVG: rows/s per batch size, one line per
    /// shard count and write path).
    #[arg(long, default_value = "ringpipe-tune.svg")]
    pub chart: PathBuf,
}
