//! The bulk path on the wire client: a batch's statements go out ahead of
//! their replies, each encoded while the one before it runs.
//!
//! The statements that open the transaction ([`START`]) and the batch's
//! first statement leave from `write` as soon as that statement's rows are
//! in, so the server works on them while the rest of the batch arrives. The
//! other statements and the checkpoint upsert follow from `commit`, with at
//! most one reply outstanding behind the newest; only the savepoint check
//! and `COMMIT` wait until every reply has been read and was OK. Sending
//! ahead is safe because the wire session runs with `autocommit=0`: when a
//! statement fails, even with an error that rolls the whole transaction
//! back (a deadlock), what was sent behind it runs in a transaction that
//! nothing commits, and the sink rolls it back.

use std::ops::Range;

use super::path::Path;
use super::transaction::START;
use super::MysqlSink;
use crate::batch::Batch;
use crate::config::WritePath;
use crate::link::Link;
use crate::reject::Rejected;
use crate::warnings;
use crate::wire::{BulkEncoder, ParamKind, WireConn};
use crate::MysqlError;

/// What the sink is doing, for errors.
const CONTEXT: &str = "executing a bulk insert";

/// Commands `write` sends ahead: [`START`] and the first statement.
const SENT_BY_WRITE: usize = START.len() + 1;

/// Whether every statement's warnings were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// Each statement that left warnings had them read and judged.
    All,
    /// A statement left warnings after the next had already been sent, so
    /// `SHOW WARNINGS` could no longer show them: the batch must be checked
    /// again, statement by statement.
    WarningsUnread,
}

impl MysqlSink {
    /// From `write`: once the open batch holds one full bulk statement,
    /// sends [`START`] and that statement, without waiting for
    /// their replies (`commit` reads them). Only the wire client's bulk path
    /// does this, and not in IGNORE mode, which reads each statement's
    /// warnings in its own turn.
    pub(super) fn send_first_chunk(&mut self) -> Result<(), MysqlError> {
        let rows = self.batch.len();
        if self.path.sent_ahead() > 0
            || self.commit_unknown
            || rows != self.target.max_rows
            || self.path.kind() != WritePath::Bulk
            || self.allow_duplicates()
        {
            return Ok(());
        }
        let chunks = self.binary_chunks(0..rows);
        if chunks.len() != 1 {
            return Ok(()); // the byte bound cut it: leave it all to commit
        }
        let sql = self.target.shape.placeholders(1);
        let Some(Link::Wire(wire)) = self.session.as_mut().map(|s| &mut s.conn) else {
            return Ok(());
        };
        let Path::Bulk(bulk) = &mut self.path else {
            return Ok(());
        };
        let types = &self.target.param_kinds;
        let encoder = &mut bulk.encoder;
        let result = start_and_send(wire, encoder, &sql, types, &self.batch, 0..rows);
        self.note_failure(result)?;
        self.stats.statements += 1;
        if let Path::Bulk(bulk) = &mut self.path {
            bulk.sent_ahead = rows;
        }
        Ok(())
    }

    /// Runs the batch and its checkpoint in a new transaction, leaving it
    /// open for `COMMIT`; a row error, or warnings that could not be read,
    /// send it through recovery, statement by statement.
    pub(super) fn run_ahead(&mut self) -> Result<Vec<Rejected>, MysqlError> {
        let progress = self.progress_sql()?;
        let result = self.send_ahead(progress.as_deref());
        match self.note_failure(result) {
            Ok(Checked::All) => return Ok(Vec::new()),
            Ok(Checked::WarningsUnread) => log::info!(
                "shard {}: a statement sent ahead left warnings; checking the batch statement by statement",
                self.shard
            ),
            Err(e) if e.is_row_error() => {}
            Err(e) => return Err(e),
        }
        let rejected = self.recover()?;
        self.record_progress()?;
        Ok(rejected)
    }

    /// Sends [`START`] (unless `write` did), `rows` as bulk
    /// statements and `progress`, one statement ahead of the replies (none
    /// ahead in IGNORE mode, whose duplicates leave warnings that only the
    /// statement's own turn can read), and reads every reply.
    fn send_ahead(&mut self, progress: Option<&str>) -> Result<Checked, MysqlError> {
        let allow_duplicates = self.allow_duplicates();
        let ahead = usize::from(!allow_duplicates);
        let sql = self.target.shape.placeholders(1);
        if self.path.sent_ahead() > 0 && self.wire()?.pending() != SENT_BY_WRITE {
            // Another command read the replies to what `write` sent (and
            // would have dropped an error among them): start over.
            self.roll_back("rollback")?;
            self.path.clear();
        }
        let sent_ahead = self.path.sent_ahead();
        let chunks = self.binary_chunks(sent_ahead..self.batch.len());
        let first = sent_ahead == 0;
        let (Some(Link::Wire(wire)), Path::Bulk(bulk)) =
            (self.session.as_mut().map(|s| &mut s.conn), &mut self.path)
        else {
            return Err(MysqlError::Config(
                "the bulk path's wire client has no connection".into(),
            ));
        };
        let statement = wire.prepare(&sql, "preparing a bulk insert")?;
        if first {
            for sql in START {
                wire.send_query(sql, "begin")?;
            }
        }
        let mut checked = Checked::All;
        for chunk in chunks {
            let types = &self.target.param_kinds;
            wire.send_packet(
                bulk.encoder.encode(statement, types, &self.batch, chunk),
                CONTEXT,
            )?;
            self.stats.statements += 1;
            while wire.pending() > ahead {
                checked = settle_oldest(wire, allow_duplicates, checked)?;
            }
        }
        if let Some(sql) = progress {
            wire.send_query(sql, "recording the checkpoint")?;
        }
        while wire.pending() > 0 {
            checked = settle_oldest(wire, allow_duplicates, checked)?;
        }
        Ok(checked)
    }
}

impl MysqlSink {
    /// The wire connection.
    fn wire(&mut self) -> Result<&mut WireConn, MysqlError> {
        match self.session.as_mut().map(|s| &mut s.conn) {
            Some(Link::Wire(wire)) => Ok(wire),
            _ => Err(MysqlError::Config(
                "the bulk path's wire client has no connection".into(),
            )),
        }
    }
}

/// Prepares the bulk statement `sql` (before anything is sent ahead: the
/// first prepare waits for its reply), then sends [`START`] and
/// `rows` of `batch` with parameter types `types`.
fn start_and_send(
    wire: &mut WireConn,
    bulk: &mut BulkEncoder,
    sql: &str,
    types: &[ParamKind],
    batch: &Batch,
    rows: Range<usize>,
) -> Result<(), MysqlError> {
    let statement = wire.prepare(sql, "preparing a bulk insert")?;
    for sql in START {
        wire.send_query(sql, "begin")?;
    }
    wire.send_packet(bulk.encode(statement, types, batch, rows), CONTEXT)
}

/// Reads the oldest reply and judges its warnings, which `SHOW WARNINGS`
/// still shows only while no later statement has been sent.
fn settle_oldest(
    wire: &mut WireConn,
    allow_duplicates: bool,
    checked: Checked,
) -> Result<Checked, MysqlError> {
    let done = wire.finish(CONTEXT)?;
    if done.warnings == 0 {
        return Ok(checked);
    }
    if wire.pending() > 0 {
        return Ok(Checked::WarningsUnread);
    }
    warnings::check(wire, allow_duplicates)?;
    Ok(checked)
}
