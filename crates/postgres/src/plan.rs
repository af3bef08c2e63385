//! The statements of one import, settled once in `prepare` and shared by
//! every shard: the COPYs (text, and binary when the column types allow
//! it), and for the modes that need one, the staging table and the
//! statement that moves its rows into the target.

use crate::check::Check;
use crate::config::{CopyFormat, Mode, PgConfig};
use crate::encode::{CopyEncoder, Encoder};
use crate::ident::{quote, quote_table};
use crate::schema::{quoted_list, Table};
use crate::{checkpoint, PgError};

/// The per-connection staging table of the ignore, upsert and replace modes.
const STAGE: &str = "\"ringpipe_stage\"";
/// The staging table's arrival-order column (within a batch, for "last wins").
const ORDER: &str = "\"ringpipe_order\"";

/// Everything a shard's sink runs, as SQL text with quoted identifiers.
#[derive(Debug)]
pub struct Plan {
    /// The table name as configured (the checkpoint rows' `target_table`).
    pub table: String,
    /// `COPY … FROM STDIN (FORMAT binary)`, when binary COPY is in use.
    pub copy_binary: Option<String>,
    /// `COPY … FROM STDIN (FORMAT text)`: every row when binary COPY is
    /// not in use, else the rows holding a value not canonical for its
    /// binary encoder.
    pub copy_text: String,
    /// Creates the staging table (run once per connection), if the mode stages.
    pub create_stage: Option<String>,
    /// Moves the staged batch into the target, in order.
    pub merge: Vec<String>,
    /// Empties the staging table within a transaction (between the ranges
    /// of a batch searched for bad records), if the mode stages.
    pub clear_stage: Option<String>,
    /// The checkpoint upsert.
    pub record: String,
    /// Adds a batch's bad records to its checkpoint.
    pub record_diverted: String,
    /// Whether binary COPY is in use (rows that are not canonical for
    /// it still go in text COPY).
    pub binary: bool,
    /// The imported columns (by index) whose values hold intervals with
    /// a field list, which the server checks per batch, with their checks.
    pub field_lists: Vec<(usize, Check)>,
    /// The encoder's per-column settings.
    encoders: Option<Vec<Encoder>>,
    bytea: Vec<bool>,
    checks: Vec<Option<Check>>,
    columns: Vec<String>,
}

impl Plan {
    /// The plan of `config` against the described `table`.
    ///
    /// # Errors
    ///
    /// [`PgError::Config`] for an unknown column, a mode that needs a key
    /// the table lacks, or binary format asked for a type it cannot carry.
    pub fn new(config: &PgConfig, table: &Table) -> Result<Plan, PgError> {
        let target = quote_table(&config.table)?;
        let mut types = Vec::new();
        let mut checks = Vec::new();
        let mut fields = Vec::new();
        for (index, name) in config.columns.iter().enumerate() {
            let column = table.columns.iter().find(|c| &c.name == name);
            let column = column
                .ok_or_else(|| PgError::Config(format!("{target} has no column {name:?}")))?;
            types.push(column.typname.as_str());
            checks.push(column.check.clone());
            let lists = column.check.as_ref().filter(|c| c.has_field_lists());
            fields.extend(lists.map(|check| (index, check.clone())));
        }
        let encoders: Option<Vec<Encoder>> = types.iter().map(|t| Encoder::for_type(t)).collect();
        let encoders = match (config.format, encoders) {
            (CopyFormat::Text, _) => None,
            (_, Some(encoders)) => Some(encoders),
            (CopyFormat::Auto, None) => None,
            (CopyFormat::Binary, None) => {
                return Err(PgError::Config(format!(
                    "binary COPY cannot carry a column of {target}'s types {types:?}"
                )))
            }
        };
        let columns = quoted_list(&config.columns, "")?;
        let stages = !matches!(config.mode, Mode::Insert | Mode::Truncate);
        let into = match stages {
            true => STAGE.to_owned(),
            false => target.clone(),
        };
        let copy = |options: &str| format!("COPY {into} ({columns}) FROM STDIN {options}");
        let checkpoints = checkpoint::table_name(&config.table)?;
        Ok(Plan {
            table: config.table.clone(),
            copy_binary: encoders.as_ref().map(|_| copy("(FORMAT binary)")),
            copy_text: copy("(FORMAT text)"),
            create_stage: stages.then(|| {
                format!(
                    "CREATE TEMP TABLE {STAGE} ON COMMIT DELETE ROWS AS \
                     SELECT {columns} FROM {target} WITH NO DATA; \
                     ALTER TABLE {STAGE} ADD COLUMN {ORDER} bigint GENERATED ALWAYS AS IDENTITY"
                )
            }),
            merge: merge(config, table, &target, &columns)?,
            clear_stage: stages.then(|| format!("DELETE FROM {STAGE}")),
            record: checkpoint::record_sql(&checkpoints),
            record_diverted: checkpoint::diverted_sql(&checkpoints),
            binary: encoders.is_some(),
            field_lists: fields,
            bytea: types.iter().map(|t| *t == "bytea").collect(),
            checks,
            encoders,
            columns: config.columns.clone(),
        })
    }

    /// A fresh encoder for a shard.
    pub fn encoder(&self) -> CopyEncoder {
        CopyEncoder::new(
            self.encoders.clone(),
            self.bytea.clone(),
            self.columns.clone(),
        )
        .with_checks(self.checks.clone())
    }
}

/// The statements moving a staged batch into `target`.
fn merge(
    config: &PgConfig,
    table: &Table,
    target: &str,
    columns: &str,
) -> Result<Vec<String>, PgError> {
    let keyed = matches!(config.mode, Mode::Upsert | Mode::Replace);
    if keyed && (table.key.is_empty() || table.key.iter().any(|k| !config.columns.contains(k))) {
        return Err(PgError::Config(format!(
            "{:?} mode needs a primary key on {target} whose columns are all imported",
            config.mode
        )));
    }
    let key = quoted_list(&table.key, "")?;
    // Within a batch, the last row of a key wins (as MySQL's upsert and REPLACE).
    let last_of_each =
        format!("SELECT DISTINCT ON ({key}) {columns} FROM {STAGE} ORDER BY {key}, {ORDER} DESC");
    let insert = format!("INSERT INTO {target} ({columns})");
    Ok(match config.mode {
        Mode::Insert | Mode::Truncate => Vec::new(),
        Mode::Ignore => vec![format!(
            "{insert} SELECT {columns} FROM {STAGE} ORDER BY {ORDER} ON CONFLICT DO NOTHING"
        )],
        Mode::Upsert => {
            let others: Vec<&String> = config
                .columns
                .iter()
                .filter(|c| !table.key.contains(c))
                .collect();
            let action = match others.is_empty() {
                true => "DO NOTHING".to_owned(),
                false => {
                    let sets: Result<Vec<String>, PgError> = others
                        .iter()
                        .map(|c| Ok(format!("{0} = EXCLUDED.{0}", quote(c)?)))
                        .collect();
                    format!("DO UPDATE SET {}", sets?.join(", "))
                }
            };
            vec![format!(
                "{insert} {last_of_each} ON CONFLICT ({key}) {action}"
            )]
        }
        Mode::Replace => {
            let matches: Result<Vec<String>, PgError> = table
                .key
                .iter()
                .map(|k| Ok(format!("t.{0} = s.{0}", quote(k)?)))
                .collect();
            vec![
                format!(
                    "DELETE FROM {target} t USING {STAGE} s WHERE {}",
                    matches?.join(" AND ")
                ),
                format!("{insert} {last_of_each}"),
            ]
        }
    })
}
