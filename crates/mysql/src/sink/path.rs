//! What each write path keeps of its own beside the core's batch.
//!
//! Every path writes the same batch (the core's [`Batch`](crate::batch::Batch))
//! in the same transaction with the same checkpoint; they differ only in how
//! the rows travel: INSERT text ([`insert`](super::insert)), prepared
//! multi-row statements ([`binary`](super::binary)), `LOAD DATA LOCAL`
//! ([`load_data`](super::load_data)) and MariaDB's bulk command, through
//! the driver ([`binary`](super::binary)) or the wire client
//! ([`ahead`](super::ahead)).

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use mysql::LocalInfileHandler;

use crate::config::WritePath;
use crate::encode::{tsv, Values};
use crate::link::Link;
use crate::prepared::PreparedCache;
use crate::statement::InsertShape;
use crate::wire::BulkEncoder;

/// The state of the path a sink writes on.
#[derive(Debug)]
pub(super) enum Path {
    /// Multi-row INSERT text, encoded as rows arrive into the core's text
    /// encoder (which recovery uses on every path).
    Insert,
    /// Prepared multi-row statements (through the driver).
    Prepared(PreparedCache),
    /// The batch as TSV for `LOAD DATA LOCAL INFILE`.
    LoadData(LoadData),
    /// MariaDB's bulk command.
    Bulk(Bulk),
}

/// The bulk path's state, for either client.
#[derive(Debug)]
pub(super) struct Bulk {
    /// Statements of the driver client.
    pub(super) prepared: PreparedCache,
    /// Packets of the wire client.
    pub(super) encoder: BulkEncoder,
    /// Rows of the open batch the wire client already sent (its first
    /// statement, sent from `write`), their replies still unread.
    pub(super) sent_ahead: usize,
}

impl Path {
    /// The state of `path` for statements of `shape`.
    pub(super) fn new(path: WritePath, shape: &InsertShape) -> Self {
        match path {
            WritePath::Insert => Path::Insert,
            WritePath::Prepared => Path::Prepared(PreparedCache::new(shape.clone())),
            WritePath::LoadData => Path::LoadData(LoadData::default()),
            WritePath::Bulk => Path::Bulk(Bulk {
                prepared: PreparedCache::new(shape.clone()),
                encoder: BulkEncoder::default(),
                sent_ahead: 0,
            }),
        }
    }

    /// Which path this is.
    pub(super) fn kind(&self) -> WritePath {
        match self {
            Path::Insert => WritePath::Insert,
            Path::Prepared(_) => WritePath::Prepared,
            Path::LoadData(_) => WritePath::LoadData,
            Path::Bulk(_) => WritePath::Bulk,
        }
    }

    /// Adopts a new connection: statements prepared on the old one are
    /// gone, and `LOAD DATA` needs its file handler on the new one.
    pub(super) fn on_connect(&mut self, conn: &mut Link) {
        match self {
            Path::Insert => {}
            Path::Prepared(prepared) => prepared.clear(),
            Path::LoadData(load) => load.install(conn),
            Path::Bulk(bulk) => bulk.prepared.clear(),
        }
    }

    /// Forgets the open batch.
    pub(super) fn clear(&mut self) {
        match self {
            Path::LoadData(load) => load.clear(),
            Path::Bulk(bulk) => bulk.sent_ahead = 0,
            Path::Insert | Path::Prepared(_) => {}
        }
    }

    /// Rows of the open batch already sent ahead (the wire client's bulk path).
    pub(super) fn sent_ahead(&self) -> usize {
        match self {
            Path::Bulk(bulk) => bulk.sent_ahead,
            _ => 0,
        }
    }
}

/// The open batch's TSV and the buffer the file handler streams.
#[derive(Debug, Default)]
pub(super) struct LoadData {
    /// TSV of the open batch.
    tsv: Vec<u8>,
    /// The "file" the LOCAL INFILE handler streams; swapped with `tsv`.
    infile: Arc<Mutex<Vec<u8>>>,
}

impl LoadData {
    /// Appends a row.
    pub(super) fn push(&mut self, row: &impl Values) {
        tsv::push_row(&mut self.tsv, row);
    }

    /// Forgets the open batch.
    pub(super) fn clear(&mut self) {
        self.tsv.clear();
    }

    /// Hands the batch to the file handler, or takes it back.
    pub(super) fn swap(&mut self) {
        std::mem::swap(&mut *lock(&self.infile), &mut self.tsv);
    }

    /// Gives a new driver connection the handler that streams the batch.
    pub(super) fn install(&self, conn: &mut Link) {
        if let Link::Driver(conn) = conn {
            let infile = Arc::clone(&self.infile);
            conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, out| {
                out.write_all(&lock(&infile))
            })));
        }
    }
}

/// Locks the LOCAL INFILE buffer (a poisoned lock still holds valid bytes).
fn lock(infile: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    infile
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
