//! [`PgTarget`]: a PostgreSQL table as the destination of a resumable import.

use std::sync::{Arc, OnceLock};

use ringpipe_pipeline::{ImportIdentity, Recoveries, RecoveryCounters, StoredCheckpoint, Target};

use crate::config::Mode;
use crate::conn::Conn;
use crate::ident::quote_table;
use crate::plan::Plan;
use crate::reject::RejectLog;
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
    prepared: Arc<OnceLock<Prepared>>,
}

/// What `prepare` settles for every shard.
#[derive(Debug)]
struct Prepared {
    plan: Arc<Plan>,
    rejects: Arc<RejectLog>,
    recoveries: Arc<RecoveryCounters>,
}

impl PgTarget {
    /// The table `config` names.
    pub fn new(config: PgConfig) -> Self {
        PgTarget {
            config: Arc::new(config),
            prepared: Arc::default(),
        }
    }

    /// Whether the import writes binary COPY (`None` before `prepare`); a
    /// row holding a value not canonical for its binary encoder still goes
    /// in a text-format COPY.
    pub fn binary(&self) -> Option<bool> {
        self.prepared.get().map(|p| p.plan.binary)
    }

    /// How often the shards had to recover so far (reconnects, and
    /// batches rolled back for a deadlock or serialization failure).
    pub fn recoveries(&self) -> Recoveries {
        self.prepared
            .get()
            .map_or_else(Recoveries::default, |p| p.recoveries.read())
    }

    /// Bad records set aside so far, over all shards, in this run (not
    /// those of the runs a resumed import continues).
    pub fn rejected(&self) -> u64 {
        self.prepared.get().map_or(0, |p| p.rejects.budget.used())
    }

    /// A connection on which the checkpoint table is ready, and its name.
    fn client(&self) -> Result<(Conn, String), PgError> {
        checkpoint::session(&self.config)
    }
}

impl Target for PgTarget {
    type Sink = PgSink;

    fn empties(&self) -> bool {
        self.config.mode == Mode::Truncate
    }

    fn order_matters(&self) -> bool {
        self.config.mode.order_matters()
    }

    /// Checks the table and settles the statements; a fresh import in
    /// [`Mode::Truncate`] empties the table here, a resumed one does not.
    fn prepare(&self, resuming: bool) -> Result<(), PgError> {
        let (mut client, _) = self.client()?;
        let table = describe(&mut client, &self.config.table)?;
        let plan = Plan::new(&self.config, &table)?;
        if self.config.mode == Mode::Truncate && !resuming {
            let sql = format!("TRUNCATE {}", quote_table(&self.config.table)?);
            client.batch_execute(&sql, "truncating the table")?;
        }
        let rejects = RejectLog::open(
            self.config.max_bad,
            self.config.reject_file.as_deref(),
            resuming,
        )?;
        // A second call keeps the first preparation.
        let _ = self.prepared.set(Prepared {
            plan: Arc::new(plan),
            rejects: Arc::new(rejects),
            recoveries: Arc::default(),
        });
        Ok(())
    }

    /// Charges the bad records of the interrupted runs to the budget.
    fn carry_diverted(&self, diverted: u64) {
        if let Some(prepared) = self.prepared.get() {
            prepared.rejects.budget.carry(diverted);
        }
    }

    fn open(&self, shard: usize) -> Result<PgSink, PgError> {
        let prepared = self
            .prepared
            .get()
            .ok_or_else(|| PgError::Config("open before prepare".into()))?;
        PgSink::open(
            Arc::clone(&self.config),
            Arc::clone(&prepared.plan),
            Arc::clone(&prepared.rejects),
            Arc::clone(&prepared.recoveries),
            shard,
        )
    }

    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, PgError> {
        let (mut client, checkpoints) = self.client()?;
        let rows = checkpoint::rows(
            &mut client,
            &checkpoints,
            &self.config.table,
            checkpoint::Read::Locking,
        )?;
        Ok(rows.into_iter().map(|row| row.checkpoint).collect())
    }

    fn clear_checkpoints(&self) -> Result<(), PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::clear(&mut client, &checkpoints, &self.config.table)
    }

    fn clear_part(&self, import: &ImportIdentity) -> Result<(), PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::clear_part(&mut client, &checkpoints, &self.config.table, import)
    }

    /// Keeps the part's checkpoints, marked complete: a repeated resume of
    /// it then has nothing to do.
    fn mark_complete(&self, import: &ImportIdentity) -> Result<(), PgError> {
        let (mut client, checkpoints) = self.client()?;
        checkpoint::mark_complete(&mut client, &checkpoints, &self.config.table, import)
    }
}
