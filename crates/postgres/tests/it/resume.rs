//! Exactly once: an interrupted import resumed, a killed connection replayed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};
use ringpipe_pipeline::{Checkpoint, Import, ImportIdentity, Row, Sink, StoredCheckpoint, Target};
use ringpipe_postgres::{PgConfig, PgError, PgSink, PgTarget};

use crate::common::{url, Rows, Table};

const DDL: &str = "CREATE TABLE {t} (id bigint PRIMARY KEY, name text NOT NULL)";
const ROWS: u64 = 20_000;

/// A target whose sinks fail (fatally) or kill their connections at a commit.
pub struct Faulty {
    pub inner: PgTarget,
    /// The shard and commit number (0-based) at which to act.
    at: (usize, usize),
    /// Kill every connection of `app` instead of failing.
    kill: Option<String>,
    /// Before the kill, set `flag_table`'s one value to `on` for this
    /// long: sessions that read it at their start are then read-only.
    read_only: Option<(&'static str, Duration)>,
    done: AtomicBool,
}

impl Faulty {
    /// A faulty `inner` failing fatally at the `at` commit (shard, index),
    /// leaked as the pipeline wants its targets' sinks `'static`.
    pub fn fail_at(inner: PgTarget, at: (usize, usize)) -> &'static Faulty {
        Box::leak(Box::new(Faulty {
            inner,
            at,
            kill: None,
            read_only: None,
            done: AtomicBool::new(false),
        }))
    }
}

pub struct FaultySink<'a> {
    inner: PgSink,
    commits: usize,
    shard: usize,
    target: &'a Faulty,
}

// The pipeline wants 'static sinks: leak the test's target.
impl Target for &'static Faulty {
    type Sink = FaultySink<'static>;

    fn prepare(&self, resuming: bool) -> Result<(), PgError> {
        self.inner.prepare(resuming)
    }
    fn carry_diverted(&self, diverted: u64) {
        self.inner.carry_diverted(diverted)
    }
    fn open(&self, shard: usize) -> Result<FaultySink<'static>, PgError> {
        let inner = self.inner.open(shard)?;
        Ok(FaultySink {
            inner,
            commits: 0,
            shard,
            target: self,
        })
    }
    fn checkpoints(&self) -> Result<Vec<StoredCheckpoint>, PgError> {
        self.inner.checkpoints()
    }
    fn clear_checkpoints(&self) -> Result<(), PgError> {
        self.inner.clear_checkpoints()
    }
    fn clear_part(&self, import: &ImportIdentity) -> Result<(), PgError> {
        self.inner.clear_part(import)
    }
    fn mark_complete(&self, import: &ImportIdentity) -> Result<(), PgError> {
        self.inner.mark_complete(import)
    }
}

impl Sink for FaultySink<'static> {
    type Error = PgError;
    fn begin(&mut self) -> Result<(), PgError> {
        self.inner.begin()
    }
    fn write(&mut self, row: &Row) -> Result<(), PgError> {
        self.inner.write(row)
    }
    fn commit(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), PgError> {
        let now = (self.shard, self.commits) == self.target.at;
        self.commits += 1;
        // Relaxed: the flag only makes the fault happen once.
        if now && !self.target.done.swap(true, Ordering::Relaxed) {
            match &self.target.kill {
                None => return Err(PgError::Config("injected failure".into())),
                Some(app) => {
                    let mut admin = Client::connect(&url(), NoTls).unwrap();
                    if let Some((flag, hold)) = self.target.read_only {
                        admin
                            .batch_execute(&format!("UPDATE {flag} SET v = 'on'"))
                            .unwrap();
                        std::thread::spawn(move || {
                            std::thread::sleep(hold);
                            let mut admin = Client::connect(&url(), NoTls).unwrap();
                            let sql = format!("UPDATE {flag} SET v = 'off'");
                            admin.batch_execute(&sql).unwrap();
                        });
                    }
                    let sql = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                               WHERE application_name = $1";
                    let killed: i64 = admin.query_one(sql, &[app]).unwrap().get(0);
                    assert!(killed >= 1);
                }
            }
        }
        self.inner.commit(checkpoint)
    }
    fn rollback(&mut self) -> Result<(), PgError> {
        self.inner.rollback()
    }
    fn last_commit_diverted(&self) -> u64 {
        self.inner.last_commit_diverted()
    }
}

fn import<T: Target>(target: T) -> Import<T> {
    Import::new(target)
        .shards(2)
        .batch_rows(1_000)
        .checkpoints("numbered 20000", "id,name")
}

/// The count and hash of an uninterrupted import of the same rows.
fn reference(name: &str) -> (i64, String) {
    let mut table = Table::new(name, DDL);
    let config = PgConfig::new(url(), name, &["id", "name"]);
    import(PgTarget::new(config))
        .run(vec![Rows::numbered(ROWS)])
        .unwrap();
    table.hash()
}

#[test]
fn pg_resume_after_a_failure_is_exact() {
    let name = "pg_resume_failure";
    let mut table = Table::new(name, DDL);
    let config = PgConfig::new(url(), name, &["id", "name"]);
    let faulty: &'static Faulty = Box::leak(Box::new(Faulty {
        inner: PgTarget::new(config.clone()),
        at: (1, 4),
        kill: None,
        read_only: None,
        done: AtomicBool::new(false),
    }));
    let failure = import(faulty).run(vec![Rows::numbered(ROWS)]).unwrap_err();
    assert!(failure.to_string().contains("injected"), "{failure}");
    let (partial, _) = table.hash();
    assert!(partial > 0 && partial < ROWS as i64, "{partial}");
    assert_eq!(table.checkpoints(), 2);
    let summary = import(PgTarget::new(config))
        .resume(true)
        .run(vec![Rows::numbered(ROWS)])
        .unwrap();
    assert_eq!(summary.rows_written as i64 + partial, ROWS as i64);
    assert_eq!(table.hash(), reference("pg_resume_failure_ref"));
    assert_eq!(table.checkpoints(), 0);
    assert_eq!(table.complete(), 2);
}

#[test]
fn pg_resume_a_killed_connection_is_replayed_exactly() {
    let name = "pg_resume_killed";
    let mut table = Table::new(name, DDL);
    let app = "ringpipe_pg_resume_killed";
    let config = PgConfig::new(
        format!("{}?application_name={app}", url()),
        name,
        &["id", "name"],
    );
    let faulty: &'static Faulty = Box::leak(Box::new(Faulty {
        inner: PgTarget::new(config),
        at: (0, 3),
        kill: Some(app.into()),
        read_only: None,
        done: AtomicBool::new(false),
    }));
    let summary = import(faulty).run(vec![Rows::numbered(ROWS)]).unwrap();
    assert!(summary.rewinds >= 1, "{summary:?}");
    // The report counts the new connection the replay opened.
    assert!(faulty.inner.recoveries().reconnects >= 1);
    assert_eq!(faulty.inner.recoveries().conflicts, 0);
    assert_eq!(table.hash(), reference("pg_resume_killed_ref"));
}

/// A server that turns read-only (a standby, as after a failover) refuses
/// the batch with 25006; the sink connects again until a session writes.
/// Here every session started while a flag is on is read-only: the
/// connections are killed with it on, and it goes off a second later.
#[test]
fn pg_resume_a_read_only_server_is_waited_for_on_new_connections() {
    let name = "pg_resume_read_only";
    let flag = "pg_resume_read_only_flag";
    let mut table = Table::new(name, DDL);
    let mut flag_table = Table::new(flag, "CREATE TABLE {t} (v text NOT NULL)");
    flag_table.exec("INSERT INTO {t} VALUES ('off')");
    let app = "ringpipe_pg_resume_read_only";
    let read_flag = format!(
        "SELECT set_config('default_transaction_read_only', (SELECT v FROM {flag}), false)"
    );
    let config = PgConfig::new(
        format!("{}?application_name={app}", url()),
        name,
        &["id", "name"],
    )
    .init_command(read_flag);
    let faulty: &'static Faulty = Box::leak(Box::new(Faulty {
        inner: PgTarget::new(config),
        at: (0, 3),
        kill: Some(app.into()),
        read_only: Some((flag, Duration::from_secs(1))),
        done: AtomicBool::new(false),
    }));
    let started = Instant::now();
    let summary = import(faulty).run(vec![Rows::numbered(ROWS)]).unwrap();
    // Nothing after the kill was written before the flag went off.
    assert!(started.elapsed() >= Duration::from_secs(1), "{summary:?}");
    assert!(faulty.inner.recoveries().reconnects >= 2, "{summary:?}");
    assert_eq!(table.hash(), reference("pg_resume_read_only_ref"));
}

#[test]
fn pg_resume_an_old_checkpoint_table_is_migrated_in_place() {
    // A schema of its own: its checkpoint table is this test's alone.
    let mut admin = Client::connect(&url(), NoTls).unwrap();
    admin
        .batch_execute(
            "DROP SCHEMA IF EXISTS pgsink_mig CASCADE; CREATE SCHEMA pgsink_mig;
             CREATE TABLE pgsink_mig.t (id bigint PRIMARY KEY, name text NOT NULL);
             CREATE TABLE pgsink_mig.ringpipe_checkpoint (
               target_table text NOT NULL, shard integer NOT NULL, shards integer NOT NULL,
               last_record bigint NOT NULL, input text NOT NULL, mapping text NOT NULL,
               updated timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (target_table, shard));
             INSERT INTO pgsink_mig.ringpipe_checkpoint
               (target_table, shard, shards, last_record, input, mapping)
               VALUES ('pgsink_mig.t', 1, 2, 77, 'in', 'm')",
        )
        .unwrap();
    let config = PgConfig::new(url(), "pgsink_mig.t", &["id", "name"]);
    // Two importers at once: one migrates, the other finds it done.
    let stored: Vec<Vec<StoredCheckpoint>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| PgTarget::new(config.clone()).checkpoints().unwrap()))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for checkpoints in stored {
        assert_eq!(checkpoints.len(), 1);
        let c = &checkpoints[0];
        assert_eq!((c.shard, c.last_record, c.complete), (1, 77, false));
        assert_eq!(
            c.region_start, 0,
            "not known before region starts were kept"
        );
        assert_eq!(c.rows_crc, None, "not known before digests were kept");
        assert_eq!(c.diverted, 0, "not known before bad records were counted");
        assert_eq!(c.identity.part, ringpipe_pipeline::Part::WHOLE);
        assert_eq!((c.identity.input.as_str(), c.identity.shards), ("in", 2));
    }
    let key: String = admin
        .query_one(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint \
             WHERE conrelid = 'pgsink_mig.ringpipe_checkpoint'::regclass AND contype = 'p'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(key, "PRIMARY KEY (target_table, input, part, shard)");
    // After `set`, reading the checkpoints fails naming `expected`.
    let mut refused = |set: &str, expected: &str| {
        admin
            .batch_execute(&format!("UPDATE pgsink_mig.ringpipe_checkpoint SET {set}"))
            .unwrap();
        let error = PgTarget::new(config.clone()).checkpoints().unwrap_err();
        assert!(error.to_string().contains(expected), "{error}");
    };
    // A digest no CRC-32 has is refused, not read as "not known".
    refused("rows_crc = -1", "rows_crc -1, out of range");
    // So is a negative record number, which read as 0 would mean "nothing
    // committed".
    refused(
        "rows_crc = NULL, last_record = -5",
        "last_record -5, out of range",
    );
    admin
        .batch_execute("DROP SCHEMA pgsink_mig CASCADE")
        .unwrap();
}

#[test]
fn pg_a_lock_timeout_is_replayed() {
    // Another session holds an uncommitted row with key 7; the import's
    // COPY waits on it past `lock_timeout` (55P03), rolls back and
    // replays until that session lets go.
    let name = "pg_lock_timeout";
    let mut table = Table::new(name, DDL);
    let (held, holding) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let mut session = crate::common::client();
        session
            .batch_execute(&format!(
                "BEGIN; INSERT INTO {name} (id, name) VALUES (7, 'held')"
            ))
            .unwrap();
        held.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        session.batch_execute("ROLLBACK").unwrap();
    });
    holding.recv().unwrap();
    let config =
        PgConfig::new(url(), name, &["id", "name"]).init_command("SET lock_timeout = '100ms'");
    let summary = import(PgTarget::new(config))
        .run(vec![Rows::numbered(100)])
        .unwrap();
    holder.join().unwrap();
    assert!(summary.rewinds >= 1, "{summary:?}");
    assert_eq!(table.hash().0, 100);
}

#[test]
fn pg_resume_waits_for_a_transaction_holding_a_checkpoint() {
    // A batch of a killed import may still be committing on its old
    // connection, holding its shard's checkpoint row. A resume must read
    // the checkpoints after it ends: a read from before would start shard
    // 0 behind the batch and later meet its checkpoint as another
    // import's. Here another session writes the row, as a batch's
    // checkpoint upsert does, and holds it.
    let name = "pg_resume_waits";
    import_waits_for(
        name,
        &[&format!(
            "BEGIN; UPDATE ringpipe_checkpoint SET updated = now() \
             WHERE target_table = '{name}' AND shard = 0"
        )],
        "ROLLBACK",
        true,
    );
}

#[test]
fn pg_resume_waits_for_a_shards_first_checkpoint_still_committing() {
    // A shard's first batch inserts its checkpoint row, which no other
    // session can see or lock before it commits. A resume must wait for
    // such a batch of a killed run as for any other: here another session
    // holds shard 1's row inserted again, uncommitted, over shard 1's rows
    // already stored. Read from before it, the resume would start shard 1
    // from its first record and stop at its checkpoint as another
    // import's.
    let name = "pg_resume_waits_first";
    import_waits_for(name, &first_checkpoint_held(name), "COMMIT", true);
}

#[test]
fn pg_a_fresh_import_waits_for_a_shards_first_checkpoint_still_committing() {
    // The same batch, met by a fresh import of the emptied table: clearing
    // the checkpoints before it commits would leave its row behind, and
    // the import would stop at it as another import's.
    let name = "pg_fresh_waits_first";
    import_waits_for(name, &first_checkpoint_held(name), "COMMIT", false);
}

/// Statements that hold shard 1's checkpoint row of `name` inserted again,
/// uncommitted, as its first batch would.
fn first_checkpoint_held(name: &str) -> [String; 2] {
    let shard_1 = format!("target_table = '{name}' AND shard = 1");
    [
        format!(
            "CREATE TEMP TABLE held AS SELECT * FROM ringpipe_checkpoint WHERE {shard_1}; \
             DELETE FROM ringpipe_checkpoint WHERE {shard_1}"
        ),
        "BEGIN; INSERT INTO ringpipe_checkpoint SELECT * FROM held".to_owned(),
    ]
}

/// Interrupts an import into `name`, runs `hold` in another session (the
/// transaction a batch of the interrupted import would still have open),
/// and starts again, resuming or (`resume` false) afresh on the emptied
/// table: while that session holds it, the import must write nothing
/// (either shard); once `release` ends it, the table must equal an
/// uninterrupted import's.
fn import_waits_for(name: &str, hold: &[impl AsRef<str>], release: &str, resume: bool) {
    let mut table = Table::new(name, DDL);
    let config = PgConfig::new(url(), name, &["id", "name"]);
    let failure = import(Faulty::fail_at(PgTarget::new(config.clone()), (1, 4)))
        .run(vec![Rows::numbered(ROWS)])
        .unwrap_err();
    assert!(failure.to_string().contains("injected"), "{failure}");
    let mut holder = crate::common::client();
    if !resume {
        holder.batch_execute(&format!("TRUNCATE {name}")).unwrap();
    }
    let (before, _) = table.hash();
    for sql in hold {
        holder.batch_execute(sql.as_ref()).unwrap();
    }
    let again = std::thread::spawn(move || {
        import(PgTarget::new(config))
            .resume(resume)
            .run(vec![Rows::numbered(ROWS)])
            .map(|summary| summary.rows_written)
            .map_err(|failure| failure.to_string())
    });
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(!again.is_finished(), "the import did not wait");
    assert_eq!(table.hash().0, before, "rows written while held");
    holder.batch_execute(release).unwrap();
    let written = again.join().unwrap().unwrap();
    assert_eq!(written as i64 + before, ROWS as i64);
    assert_eq!(table.hash(), reference(&format!("{name}_ref")));
}
