//! [`PgSink`]: one shard's connection, one transaction per batch.

use std::io::Write;
use std::sync::Arc;

use postgres::Client;
use ringpipe_pipeline::{Checkpoint, Row, Sink};

use crate::connect::connect;
use crate::plan::Plan;
use crate::{checkpoint, CopyEncoder, PgConfig, PgError};

/// One shard's writer: rows are encoded as COPY data as they arrive, and
/// `commit` sends the batch in one transaction with its checkpoint.
///
/// The batch is sent at `commit`, not streamed from `write`: the driver's
/// COPY writer borrows the connection, so it cannot outlive one call, and
/// holding the batch lets a replay after a lost connection first ask the
/// checkpoint whether the lost `COMMIT` had landed.
pub struct PgSink {
    client: Client,
    config: Arc<PgConfig>,
    plan: Arc<Plan>,
    shard: usize,
    encoder: CopyEncoder,
    /// The open batch's COPY data.
    data: Vec<u8>,
    /// Rows in `data`.
    rows: u64,
    /// A `COMMIT` failed: the batch may have landed.
    uncertain: bool,
}

impl PgSink {
    /// Connects the sink of `shard`.
    pub(crate) fn open(
        config: Arc<PgConfig>,
        plan: Arc<Plan>,
        shard: usize,
    ) -> Result<Self, PgError> {
        let client = session(&config, &plan)?;
        let encoder = plan.encoder();
        Ok(PgSink {
            client,
            config,
            plan,
            shard,
            encoder,
            data: Vec::new(),
            rows: 0,
            uncertain: false,
        })
    }

    /// Whether the batch's COPY is binary.
    pub fn is_binary(&self) -> bool {
        self.plan.binary
    }

    /// Sends the batch and its checkpoint in one transaction.
    fn send(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        if self.client.is_closed() {
            self.client = session(&self.config, &self.plan)?;
        }
        if std::mem::take(&mut self.uncertain) && self.landed(checkpoint)? {
            log::info!(
                "shard {}: the batch through record {} had committed",
                self.shard,
                checkpoint.last_record
            );
            return Ok(());
        }
        let run = |client: &mut Client, sql: &str, what: &str| {
            client
                .batch_execute(sql)
                .map_err(|e| PgError::server(e, what))
        };
        run(&mut self.client, "BEGIN", "starting a transaction")?;
        let mut copy = self
            .client
            .copy_in(self.plan.copy.as_str())
            .map_err(|e| PgError::server(e, "starting COPY"))?;
        if let Err(source) = copy.write_all(&self.data) {
            drop(copy); // aborts the COPY
            let lost = self.client.is_closed();
            return Err(PgError::Io {
                context: "sending COPY data",
                source,
                lost,
            });
        }
        copy.finish()
            .map_err(|e| PgError::server(e, self.copy_context()))?;
        for sql in &self.plan.merge {
            run(&mut self.client, sql, "merging the batch")?;
        }
        if let Some(import) = checkpoint.import {
            let params: [&(dyn postgres::types::ToSql + Sync); 6] = [
                &self.plan.table,
                &(checkpoint.shard as i32),
                &(import.shards as i32),
                &(checkpoint.last_record as i64),
                &import.input,
                &import.mapping,
            ];
            self.client
                .execute(self.plan.record.as_str(), &params)
                .map_err(|e| PgError::server(e, "recording the checkpoint"))?;
        }
        // When a COMMIT's connection is gone (a FATAL from a terminated
        // backend, a dropped socket), the transaction may have landed before
        // it; an error the server answered on a live connection means it
        // did not.
        let committed = run(&mut self.client, "COMMIT", "committing");
        self.uncertain = committed.is_err() && self.client.is_closed();
        committed
    }

    /// Whether this shard's checkpoint already covers the batch.
    fn landed(&mut self, checkpoint: &Checkpoint<'_>) -> Result<bool, PgError> {
        if checkpoint.import.is_none() {
            // Without checkpoints nothing can tell, and sending the batch
            // again could store it twice: fail instead.
            return Err(PgError::Config(format!(
                "the connection was lost during the COMMIT of the batch through record {}, \
                 and without checkpoints (the input is a pipe) it cannot be known whether \
                 it was stored; check the table, and import from a file to be able to resume",
                checkpoint.last_record
            )));
        }
        let through = checkpoint::committed_through(
            &mut self.client,
            &self.plan.checkpoints,
            &self.plan.table,
            self.shard,
        )?;
        Ok(through.is_some_and(|last| last >= checkpoint.last_record))
    }

    fn copy_context(&self) -> String {
        format!("COPY of a batch of {} rows", self.rows)
    }
}

/// A connection with the init commands run and the staging table made.
fn session(config: &PgConfig, plan: &Plan) -> Result<Client, PgError> {
    let mut client = connect(&config.url, &config.init_commands)?;
    if let Some(sql) = &plan.create_stage {
        client
            .batch_execute(sql)
            .map_err(|e| PgError::server(e, "creating the staging table"))?;
    }
    Ok(client)
}

impl Sink for PgSink {
    type Error = PgError;

    fn begin(&mut self) -> Result<(), PgError> {
        self.data.clear();
        self.rows = 0;
        self.encoder.start(&mut self.data);
        Ok(())
    }

    fn write(&mut self, row: &Row) -> Result<(), PgError> {
        self.encoder.row(row, &mut self.data)?;
        self.rows += 1;
        Ok(())
    }

    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        self.encoder.finish(&mut self.data);
        let sent = self.send(checkpoint);
        if sent.is_err() && !self.client.is_closed() {
            // Surface a failed ROLLBACK: the connection is then unusable.
            if let Err(e) = self.client.batch_execute("ROLLBACK") {
                log::warn!("shard {}: rollback failed: {e}", self.shard);
                self.client = session(&self.config, &self.plan)?;
            }
        }
        sent
    }

    fn rollback(&mut self) -> Result<(), PgError> {
        // `commit` rolled back its own transaction; `begin` drops the data.
        self.data.clear();
        self.rows = 0;
        Ok(())
    }
}
