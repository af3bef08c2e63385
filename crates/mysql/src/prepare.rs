//! The once-per-import preparation step, run before any sink exists.

use std::sync::Arc;

use mysql::prelude::Queryable;
use ringpipe_pipeline::Recoveries;

use crate::check::Check;
use crate::config::{BulkClient, Mode, SinkConfig, WritePath};
use crate::connect::{self, Session};
use crate::ident::Ident;
use crate::redact::SecretOpts;
use crate::reject::RejectLog;
use crate::schema;
use crate::shared::Shared;
use crate::sink::MysqlSink;
use crate::statement::{self, InsertShape};
use crate::wire::bulk;
use crate::MysqlError;

/// What every sink of one import shares: checked schema, statement texts,
/// effective write path, server capabilities and the bad-record budget.
///
/// Made by [`prepare`]; `Send + Sync`, so shards can connect from their own
/// threads.
#[derive(Debug, Clone)]
pub struct PreparedTarget {
    /// Shared, read-only state.
    pub(crate) inner: Arc<Shared>,
}

/// Checks the target and prepares it once per import: validates names,
/// creates the table if asked, checks that the table and mapped columns
/// exist, truncates for [`Mode::Truncate`] (once, not per shard), picks the
/// effective write path and opens the reject file (emptying it: a fresh
/// import; [`MysqlTarget`](crate::MysqlTarget) prepares resumed ones).
///
/// # Errors
///
/// Bad configuration or identifiers, connection failures, a missing table
/// or column ([`MysqlError::Schema`]), an unwritable reject file.
pub fn prepare(config: &SinkConfig) -> Result<PreparedTarget, MysqlError> {
    prepare_import(config, false)
}

/// As [`prepare`]; a resumed import (`resuming`) appends to the reject
/// file the interrupted run wrote.
pub(crate) fn prepare_import(
    config: &SinkConfig,
    resuming: bool,
) -> Result<PreparedTarget, MysqlError> {
    let table = Ident::new(&config.table)?;
    let columns = config
        .columns
        .iter()
        .map(|c| Ident::new(c))
        .collect::<Result<Vec<_>, _>>()?;
    if columns.is_empty() {
        return Err(MysqlError::Config("no columns mapped".into()));
    }
    let opts = config.opts()?;
    let mut session = connect::open(&opts)?;
    let conn = session.conn.driver()?;
    if let Some(create) = &config.create_table {
        schema::create(conn, &table, create)?;
    }
    schema::check(conn, &config.table, &config.columns)?;
    // The sinks record checkpoints into it: it must have its current shape.
    crate::checkpoint_table::ensure_table(conn)?;
    let key_columns = schema::keys_of(conn, &config.table)?;
    let column_types = schema::column_types_of(conn, &config.table, &config.columns)?;
    let param_kinds = bulk::param_kinds(&column_types);
    let checks = column_types.iter().map(Check::for_column).collect();
    let booleans: Box<[_]> = column_types.iter().map(|c| c.boolean).collect();
    if config.mode == Mode::Truncate {
        conn.query_drop(format!("TRUNCATE TABLE {table}"))
            .map_err(|e| MysqlError::driver(e, "truncating the table"))?;
    }
    let update: Vec<Ident> = columns
        .iter()
        .filter(|c| !key_columns.iter().any(|k| k.eq_ignore_ascii_case(c.name())))
        .cloned()
        .collect();
    let path = effective_path(config.write_path, config.mode, &session);
    let target = Shared {
        redacted_url: config.redacted_url(),
        path,
        client: match path {
            WritePath::Bulk => config.bulk_client,
            _ => BulkClient::Driver,
        },
        shape: InsertShape::new(&table, &columns, config.mode, &update),
        load_sql: statement::load_data(&table, &columns, config.mode),
        rejects: RejectLog::open(config.max_bad, config.reject_file.as_deref(), resuming)?,
        max_rows: config.max_rows_per_statement,
        param_kinds,
        checks,
        booleans: booleans.iter().any(Option::is_some).then_some(booleans),
        max_bytes: config.max_statement_bytes,
        mode: config.mode,
        table_name: config.table.clone(),
        recoveries: Default::default(),
        key_columns,
        columns,
        opts: SecretOpts(opts),
    };
    Ok(PreparedTarget {
        inner: Arc::new(target),
    })
}

/// The path the sinks will use, after the documented fallbacks.
fn effective_path(wanted: WritePath, mode: Mode, session: &Session) -> WritePath {
    match wanted {
        WritePath::LoadData if mode == Mode::Upsert => {
            // LOAD DATA has no ON DUPLICATE KEY UPDATE; a temporary table
            // plus INSERT ... SELECT would write every row twice.
            log::info!("LOAD DATA cannot upsert; using multi-row INSERT");
            WritePath::Insert
        }
        WritePath::LoadData if !session.local_infile => {
            log::warn!("the server has local_infile=OFF; using multi-row INSERT instead of LOAD DATA LOCAL");
            WritePath::Insert
        }
        WritePath::Bulk if !session.mariadb => {
            log::warn!("bulk protocol needs MariaDB; using prepared multi-row statements");
            WritePath::Prepared
        }
        path => path,
    }
}

impl PreparedTarget {
    /// Opens the sink of shard `shard` on its own connection.
    ///
    /// # Errors
    ///
    /// Connection failures (retryable ones say so).
    pub fn connect_sink(&self, shard: usize) -> Result<MysqlSink, MysqlError> {
        MysqlSink::connect(Arc::clone(&self.inner), shard)
    }

    /// The write path sinks will use (after fallbacks).
    pub fn write_path(&self) -> WritePath {
        self.inner.path
    }

    /// The mapped columns, in row order.
    pub fn columns(&self) -> Vec<String> {
        self.inner
            .columns
            .iter()
            .map(|c| c.name().to_owned())
            .collect()
    }

    /// The table's primary key columns (or first unique key's).
    pub fn key_columns(&self) -> &[String] {
        &self.inner.key_columns
    }

    /// Bad records the whole import may divert.
    pub fn max_bad(&self) -> u64 {
        self.inner.rejects.budget.max_bad()
    }

    /// Connections the shards opened again after losing one, reads or
    /// writes that timed out, and batches rolled back by a deadlock or a
    /// Galera certification conflict, so far over all shards.
    pub fn recoveries(&self) -> Recoveries {
        self.inner.recoveries.read()
    }

    /// Bad records diverted to the reject file so far, over all shards,
    /// in this run (not those of the runs a resumed import continues).
    pub fn rejected(&self) -> u64 {
        self.inner.rejects.budget.used()
    }

    /// Charges `earlier` bad records, set aside by the committed batches of
    /// the runs this resumed import continues, to the import's budget.
    pub(crate) fn carry_diverted(&self, earlier: u64) {
        self.inner.rejects.budget.carry(earlier);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_can_share_the_target_and_own_their_sinks() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<PreparedTarget>();
        send::<MysqlSink>();
    }
}
