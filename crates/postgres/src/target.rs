//! [`PgTarget`]: a PostgreSQL table as the destination of a resumable import.

use std::sync::{Arc, OnceLock};

use postgres::Client;
use ringpipe_pipeline::{ImportIdentity, StoredCheckpoint, Target};

use crate::config::Mode;
use crate::connect::connect;
use crate::ident::quote_table;
use crate::plan::Plan;
use crate::schema::describe;
use crate::{checkpoint, PgConfig, PgError, PgSink};

/// A table, as an [`Import`](ringpipe_pipeline::Import) writes it: one
/// [`PgSink`] (connection) per shard, checkpoints in
/// [`CHECKPOINT_TABLE`](crate::CHECKPOINT_TABLE) committed with the rows.
///
/// # Examples
///
/// ```no_run
/// use ringpipe_pipeline::{Import, Source};
/// use ringpipe_postgres::{Mode, PgConfig, PgTarget};
///
/// fn load<S: Source>(regions: Vec<S>) -> Result<u64, String> {
///     let url = "postgres://postgres@127.0.0.1:5432/test";
///     let config = PgConfig::new(url, "product", &["id", "name"]).mode(Mode::Upsert);
///     let summary = Import::new(PgTarget::new(config))
///         .shards(2)
///         .checkpoints("products.csv, 1234 bytes", "columns=id,name")
///         .run(regions)
///         .map_err(|failure| failure.to_string())?;
///     Ok(summary.rows_written)
/// }
/// ```
///
/// A clone shares the preparation.
#[derive(Debug, Clone)]
pub struct PgTarget {
    config: Arc<PgConfig>,
    plan: Arc<OnceLock<Arc<Plan>>>,
}

impl PgTarget {
    /// The table `config` names.
    pub fn new(config: PgConfig) -> Self {
        PgTarget {
            config: Arc::new(config),
            plan: Arc::default(),
        }
    }

    /// Whether the import wrote binary COPY (`None` before `prepare`).
    pub fn binary(&self) -> Option<bool> {
        self.plan.get().map(|plan| plan.binary)
    }

    fn client(&self) -> Result<(Client, String), PgError> {
        let client = connect(&self.config.url, &self.config.init_commands)?;
        Ok((client, checkpoint::table_name(&self.config.table)?))
    }
}

impl Target for PgTarget {
    type Sink = PgSink;

    /// Checks the table and settles the statements; a fresh import in
    /// [`Mode::Truncate`] empties the table here, a resumed one does not.
    fn prepare(&self, resuming: bool) -> Result<(), PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::ensure_table(&mut client, &checkpoints)?;
        let table = describe(&mut client, &self.config.table)?;
        let plan = Plan::new(&self.config, &table)?;
        if self.config.mode == Mode::Truncate && !resuming {
            let sql = format!("TRUNCATE {}", quote_table(&self.config.table)?);
            client
                .batch_execute(&sql)
                .map_err(|e| PgError::server(e, "truncating the table"))?;
        }
        // A second call keeps the first plan.
        let _ = self.plan.set(Arc::new(plan));
        Ok(())
    }

    fn open(&self, shard: usize) -> Result<PgSink, PgError> {
        let plan = self
            .plan
            .get()
            .ok_or_else(|| PgError::Config("open before prepare".into()))?;
        PgSink::open(Arc::clone(&self.config), Arc::clone(plan), shard)
    }

    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::stored(&mut client, &checkpoints, &self.config.table)
    }

    fn clear_checkpoints(&self) -> Result<(), PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::clear(&mut client, &checkpoints, &self.config.table)
    }

    /// No completion marker yet (the table is keyed (target_table, shard)):
    /// a finished import leaves no checkpoint behind, as before parts.
    fn mark_complete(&self, _: &ImportIdentity) -> Result<(), PgError> {
        self.clear_checkpoints()
    }
}
