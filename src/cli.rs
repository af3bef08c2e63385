//! The command line as typed: raw clap arguments, validated later.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Fast, safe XML → MySQL/MariaDB import on a lock-free ring.
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
    /// Import the records of an XML file into a table.
    Import(Box<ImportArgs>),
    /// Check the server settings that decide bulk-load speed.
    Doctor(DoctorArgs),
    /// Write a deterministic product catalogue (for tests and benchmarks).
    Gen(GenArgs),
}

/// `ringpipe import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The XML file; `-` reads stdin; `.gz` files are decompressed.
    pub file: PathBuf,
    /// Server URL, `mysql://user[:password]@host[:port]/database`; the
    /// password may instead come from MYSQL_PWD or --password-file.
    #[arg(long, env = "RINGPIPE_MYSQL_URL", hide_env_values = true)]
    pub url: String,
    /// File whose first line is the password.
    #[arg(long)]
    pub password_file: Option<PathBuf>,
    /// Target table (in the URL's database).
    #[arg(long)]
    pub table: String,
    /// The record element, as in LOAD XML's `ROWS IDENTIFIED BY '<row>'`.
    #[arg(long, default_value = "row")]
    pub row: String,
    /// Rename a field: `--map element=column` (repeatable). Fields map to
    /// the column of the same name otherwise.
    #[arg(long = "map", value_name = "FIELD=COLUMN")]
    pub maps: Vec<String>,
    /// Columns to fill, comma-separated (default: every column of the table).
    /// A listed column whose field is missing from a record gets NULL; leave
    /// a column out to keep its default.
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// What to do with duplicate keys.
    #[arg(long, value_enum, default_value_t = ModeArg::Insert)]
    pub mode: ModeArg,
    /// How rows travel to the server (default: the fastest measured).
    #[arg(long, value_enum)]
    pub write_path: Option<WritePathArg>,
    /// Who sends the bulk path's statements: our wire client, one statement
    /// ahead of the server (it leaves TLS, compression and other
    /// authentication plugins to the driver), or the `mysql` crate.
    #[arg(long, value_enum, default_value_t = BulkClientArg::Wire)]
    pub bulk_client: BulkClientArg,
    /// Sink connections, each committing its own share of every batch.
    #[arg(long, default_value_t = 2)]
    pub shards: usize,
    /// Most rows one connection commits in one transaction. The ring holds
    /// about `batch_rows × shards` rows, which sets the memory use.
    #[arg(long, default_value_t = 5_000)]
    pub batch_rows: usize,
    /// Consecutive records a shard takes in turn (default: --batch-rows), so
    /// that each connection writes its own key ranges; 1 is plain
    /// sequence-modulo sharding.
    #[arg(long)]
    pub shard_block: Option<u64>,
    /// Parse the file in this many regions at once (default: one per
    /// shard), each on its own thread feeding its own share of the shards,
    /// so that each connection writes keys of its own stretch of the file.
    /// It must divide --shards. Gzip, stdin and non-UTF-8 input are read as
    /// one region.
    #[arg(long)]
    pub regions: Option<usize>,
    /// How idle pipeline threads wait.
    #[arg(long, value_enum, default_value_t = WaitArg::Blocking)]
    pub wait: WaitArg,
    /// SQL to run on every sink connection as it opens, e.g. `--init-command
    /// "SET SESSION sql_log_bin = 0"` (repeatable, in order). The session's
    /// `sql_mode` still gains `STRICT_TRANS_TABLES` after it.
    #[arg(long = "init-command", value_name = "SQL")]
    pub init_commands: Vec<String>,
    /// Bad records to divert to --reject-file before stopping.
    #[arg(long, default_value_t = 0, requires = "reject_file")]
    pub max_bad: u64,
    /// Where bad records go (TSV: record, position, reason, values).
    #[arg(long)]
    pub reject_file: Option<PathBuf>,
    /// Unknown fields in a record are an error instead of being ignored.
    #[arg(long)]
    pub strict: bool,
    /// Accept a well-formed file without any record element (an empty
    /// export) instead of stopping with exit 3.
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
    /// `hex`), for producers that do not mark binary fields with
    /// `xsi:type` (repeatable).
    #[arg(long = "decode", value_name = "COLUMN=hex|base64")]
    pub decodes: Vec<String>,
    /// The separator `--repeated join` puts between values.
    #[arg(long, value_name = "SEP", default_value = "\\n")]
    pub join_with: String,
    /// Finish an interrupted import: skip exactly the records its shards
    /// committed (read from the `ringpipe_checkpoint` table). The input,
    /// shard count and mapping must be the same as before.
    #[arg(long, conflicts_with = "dry_run")]
    pub resume: bool,
    /// Parse and map every record, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the final summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// How long a shard keeps retrying a failing batch (seconds) before
    /// the import stops.
    #[arg(long, default_value_t = 60)]
    pub retry_for: u64,
}

impl ImportArgs {
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
    /// Server URL.
    #[arg(long, env = "RINGPIPE_MYSQL_URL", hide_env_values = true)]
    pub url: String,
}

/// `ringpipe gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of product records.
    #[arg(long, required_unless_present = "ddl")]
    pub rows: Option<u64>,
    /// Output file (`-` for stdout; `.gz` compresses).
    #[arg(long, required_unless_present = "ddl")]
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
