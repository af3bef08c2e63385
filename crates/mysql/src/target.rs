//! [`MysqlTarget`]: a MySQL/MariaDB table as the destination of a
//! resumable import.

use std::sync::{Arc, OnceLock};

use ringpipe_pipeline::{ImportIdentity, StoredCheckpoint, Target};

use crate::config::{Mode, SinkConfig};
use crate::prepare::{prepare_import, PreparedTarget};
use crate::sink::MysqlSink;
use crate::{checkpoint, MysqlError};

/// A table, as an [`Import`](ringpipe_pipeline::Import) writes it: one
/// [`MysqlSink`] (connection) per shard, checkpoints in
/// [`CHECKPOINT_TABLE`](crate::CHECKPOINT_TABLE) committed with the rows.
///
/// # Examples
///
/// ```no_run
/// use ringpipe_mysql::{MysqlTarget, SinkConfig};
/// use ringpipe_pipeline::Import;
/// # fn source() -> ringpipe_xml::XmlSource { unimplemented!() }
///
/// let config = SinkConfig::new("mysql://root@127.0.0.1:3306/test", "product", &["id", "name"]);
/// let summary = Import::new(MysqlTarget::new(config))
///     .shards(2)
///     .checkpoints("products.xml, 1234 bytes", "row=product")
///     .run(vec![source()])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A clone shares the preparation: keep one to ask
/// [`prepared`](MysqlTarget::prepared) after the import.
#[derive(Debug, Clone)]
pub struct MysqlTarget {
    config: SinkConfig,
    /// Made once, by [`Target::prepare`].
    prepared: Arc<OnceLock<PreparedTarget>>,
}

impl MysqlTarget {
    /// The table `config` names.
    pub fn new(config: SinkConfig) -> Self {
        MysqlTarget {
            config,
            prepared: Arc::default(),
        }
    }

    /// The prepared target, once the import has prepared it.
    pub fn prepared(&self) -> Option<&PreparedTarget> {
        self.prepared.get()
    }
}

impl Target for MysqlTarget {
    type Sink = MysqlSink;

    /// Checks the table and prepares the sinks' shared state; a fresh
    /// import in [`Mode::Truncate`] empties the table here and a fresh
    /// import's reject file is emptied; a resumed one keeps both.
    fn prepare(&self, resuming: bool) -> Result<(), MysqlError> {
        let mut config = self.config.clone();
        if resuming && config.mode == Mode::Truncate {
            config = config.mode(Mode::Insert);
        }
        let prepared = prepare_import(&config, resuming)?;
        // A second call keeps the first preparation.
        let _ = self.prepared.set(prepared);
        Ok(())
    }

    /// Charges the bad records of the interrupted runs to the budget.
    fn carry_diverted(&self, diverted: u64) {
        if let Some(prepared) = self.prepared.get() {
            prepared.carry_diverted(diverted);
        }
    }

    fn empties(&self) -> bool {
        self.config.mode == Mode::Truncate
    }

    fn order_matters(&self) -> bool {
        self.config.mode.order_matters()
    }

    fn open(&self, shard: usize) -> Result<MysqlSink, MysqlError> {
        let prepared = self
            .prepared
            .get()
            .ok_or_else(|| MysqlError::Config("open before prepare".into()))?;
        prepared.connect_sink(shard)
    }

    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, MysqlError> {
        checkpoint::stored(&self.config.opts()?, &self.config.table)
    }

    fn clear_checkpoints(&self) -> Result<(), MysqlError> {
        checkpoint::clear(&self.config.opts()?, &self.config.table)
    }

    fn clear_part(&self, import: &ImportIdentity) -> Result<(), MysqlError> {
        checkpoint::clear_part(&self.config.opts()?, &self.config.table, import)
    }

    fn mark_complete(&self, import: &ImportIdentity) -> Result<(), MysqlError> {
        checkpoint::mark_complete(&self.config.opts()?, &self.config.table, import)
    }
}
