//! An in-memory source and a resumable in-memory target: what the import
//! does, checked without a database (the database sinks have their own
//! tests against real servers).

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ringpipe_pipeline::{
    Checkpoint, ImportIdentity, Retryable, Row, Sink, Source, StoredCheckpoint, Target,
};

/// The ids `from + 1 ..= to` of one region of an input, failing at
/// `fail_at` if set (panicking there instead if `panics`).
#[derive(Debug, Clone)]
pub struct Numbers {
    columns: Vec<String>,
    from: u64,
    next: u64,
    to: u64,
    pub fail_at: Option<u64>,
    pub panics: bool,
    /// A record whose name reads differently: an input edited since.
    pub changed: Option<u64>,
}

/// One region of the input `1..=total` split into `regions` equal parts.
pub fn region(from: u64, to: u64) -> Numbers {
    Numbers {
        columns: vec!["id".into(), "name".into()],
        from,
        next: from,
        to,
        fail_at: None,
        panics: false,
        changed: None,
    }
}

/// The input `1..=total` as `regions` consecutive regions.
pub fn regions(total: u64, regions: u64) -> Vec<Numbers> {
    let each = total.div_ceil(regions);
    (0..regions)
        .map(|r| region((r * each).min(total), ((r + 1) * each).min(total)))
        .collect()
}

#[derive(Debug, thiserror::Error)]
#[error("bad record {0}")]
pub struct BadRecord(pub u64);

impl Source for Numbers {
    type Error = BadRecord;
    fn columns(&self) -> &[String] {
        &self.columns
    }
    fn records_before(&self) -> u64 {
        self.from
    }
    fn next_row(&mut self, row: &mut Row) -> Result<bool, BadRecord> {
        self.next += 1;
        if self.fail_at == Some(self.next) {
            assert!(!self.panics, "source bug at {}", self.next);
            return Err(BadRecord(self.next));
        }
        row.clear();
        row.set(0, &self.next.to_string());
        row.value_mut(1).push_str(&format!("row-{}", self.next));
        if self.changed == Some(self.next) {
            row.value_mut(1).push_str(" (edited)");
        }
        Ok(self.next <= self.to)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct TestError {
    pub message: String,
    pub retryable: bool,
}

impl Retryable for TestError {
    fn is_retryable(&self) -> bool {
        self.retryable
    }
}

/// What the "database" holds: committed rows and checkpoints, changed
/// together under one lock (a transaction).
#[derive(Debug, Default)]
pub struct Store {
    /// (shard, id, record number) of every committed row.
    pub rows: Vec<(usize, u64, u64)>,
    /// Keyed as the MySQL target keys them: input, part, shard.
    pub checkpoints: BTreeMap<(String, u32, usize), StoredCheckpoint>,
}

/// How the sinks of a [`Memory`] target misbehave.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Fail every commit whose number (per sink, 1-based) is divisible by this.
    pub retryable_every: Option<u64>,
    /// Fail for good when this id is written.
    pub fatal_id: Option<u64>,
    /// Refuse to open this shard's sink.
    pub unopenable: Option<usize>,
    /// Refuse this many openings of any sink retryably first, as a server
    /// with every connection taken would.
    pub refused_opens: Arc<AtomicU64>,
    /// Fail each kind of checkpoint bookkeeping (read, clear, mark
    /// complete) retryably the first time, as a deadlock would; the kinds
    /// asked for are collected here.
    pub flaky_bookkeeping: Option<Arc<Mutex<HashSet<&'static str>>>>,
}

/// A resumable target in memory.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub store: Arc<Mutex<Store>>,
    pub faults: Faults,
    pub closed: Arc<AtomicU64>,
    /// Whether a fresh start empties it (a truncating import).
    pub empties: bool,
    /// Whether it keeps the first or last record of a key (an upsert).
    pub order_matters: bool,
}

impl Memory {
    /// A retryable failure the first time `what` is asked for, if the
    /// bookkeeping is flaky.
    fn bookkeeping(&self, what: &'static str) -> Result<(), TestError> {
        let Some(seen) = &self.faults.flaky_bookkeeping else {
            return Ok(());
        };
        match seen.lock().unwrap().insert(what) {
            true => Err(TestError {
                message: format!("{what}: deadlock"),
                retryable: true,
            }),
            false => Ok(()),
        }
    }

    /// Committed ids, checking none was committed twice.
    pub fn committed_ids(&self) -> HashSet<u64> {
        let store = self.store.lock().unwrap();
        let ids: HashSet<u64> = store.rows.iter().map(|&(_, id, _)| id).collect();
        assert_eq!(ids.len(), store.rows.len(), "a row was committed twice");
        ids
    }

    /// Committed rows, by id.
    pub fn sorted(&self) -> Vec<(usize, u64, u64)> {
        let mut rows = self.store.lock().unwrap().rows.clone();
        rows.sort_by_key(|&(_, id, _)| id);
        rows
    }

    /// The same store with other faults (a second run).
    pub fn with_faults(&self, faults: Faults) -> Memory {
        Memory {
            faults,
            ..self.clone()
        }
    }
}

impl Target for Memory {
    type Sink = MemorySink;

    fn empties(&self) -> bool {
        self.empties
    }

    fn order_matters(&self) -> bool {
        self.order_matters
    }

    fn open(&self, shard: usize) -> Result<MemorySink, TestError> {
        if self.faults.unopenable == Some(shard) {
            return Err(TestError {
                message: "no connection".into(),
                retryable: false,
            });
        }
        let refused = &self.faults.refused_opens;
        if refused
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(TestError {
                message: "too many connections".into(),
                retryable: true,
            });
        }
        Ok(MemorySink {
            shard,
            target: self.clone(),
            pending: Vec::new(),
            commits: 0,
        })
    }

    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, TestError> {
        self.bookkeeping("read")?;
        Ok(self
            .store
            .lock()
            .unwrap()
            .checkpoints
            .values()
            .cloned()
            .collect())
    }

    fn clear_checkpoints(&self) -> Result<(), TestError> {
        self.bookkeeping("clear")?;
        self.store.lock().unwrap().checkpoints.clear();
        Ok(())
    }

    fn clear_part(&self, import: &ImportIdentity) -> Result<(), TestError> {
        self.bookkeeping("clear part")?;
        let mut store = self.store.lock().unwrap();
        store
            .checkpoints
            .retain(|(input, part, _), _| (input, *part) != (&import.input, import.part.index));
        Ok(())
    }

    fn mark_complete(&self, import: &ImportIdentity) -> Result<(), TestError> {
        self.bookkeeping("mark complete")?;
        let mut store = self.store.lock().unwrap();
        for shard in 0..import.shards as usize {
            let key = (import.input.clone(), import.part.index, shard);
            let marker = StoredCheckpoint {
                identity: import.clone(),
                shard,
                last_record: 0,
                region_start: 0,
                rows_crc: None,
                complete: true,
                diverted: 0,
            };
            store.checkpoints.entry(key).or_insert(marker).complete = true;
        }
        Ok(())
    }
}

pub struct MemorySink {
    shard: usize,
    target: Memory,
    pending: Vec<(usize, u64, u64)>,
    commits: u64,
}

impl Sink for MemorySink {
    type Error = TestError;

    fn begin(&mut self) -> Result<(), TestError> {
        assert!(self.pending.is_empty(), "a batch began over an open one");
        Ok(())
    }

    fn write(&mut self, row: &Row) -> Result<(), TestError> {
        let id: u64 = row.text(0).unwrap().parse().unwrap();
        assert_eq!(row.text(1), Some(format!("row-{id}").as_str()));
        if self.target.faults.fatal_id == Some(id) {
            return Err(TestError {
                message: format!("cannot store {id}"),
                retryable: false,
            });
        }
        self.pending.push((self.shard, id, row.position().record));
        Ok(())
    }

    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), TestError> {
        self.commits += 1;
        let every = self.target.faults.retryable_every;
        if every.is_some_and(|every| self.commits % every == 0) {
            return Err(TestError {
                message: "deadlock".into(),
                retryable: true,
            });
        }
        assert_eq!(checkpoint.shard, self.shard);
        let mut store = self.target.store.lock().unwrap();
        store.rows.append(&mut self.pending);
        if let Some(identity) = checkpoint.import {
            let stored = StoredCheckpoint {
                identity: ImportIdentity::clone(identity),
                shard: self.shard,
                last_record: checkpoint.last_record,
                region_start: checkpoint.region_start,
                rows_crc: checkpoint.rows_crc,
                complete: false,
                diverted: 0,
            };
            let key = (identity.input.clone(), identity.part.index, self.shard);
            store.checkpoints.insert(key, stored);
        }
        Ok(())
    }

    fn rollback(&mut self) -> Result<(), TestError> {
        self.pending.clear();
        Ok(())
    }

    fn close(&mut self) -> Result<(), TestError> {
        self.target.closed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The committed ids of shard `shard`, checked to be a gapless run from
/// `first`, each once; returns how many.
pub fn committed_run(rows: &[(usize, u64, u64)], shard: usize, first: u64) -> u64 {
    let ids: Vec<u64> = rows.iter().filter(|r| r.0 == shard).map(|r| r.1).collect();
    let expected: Vec<u64> = (first..first + ids.len() as u64).collect();
    assert_eq!(ids, expected, "shard {shard}: a gapless run from {first}");
    ids.len() as u64
}
