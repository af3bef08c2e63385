//! Several pipelines run as one (`Regions`): shard numbering across the run,
//! record numbers that count in the whole input, resumption, and one
//! region's failure stopping the others with nothing lost or doubled.

use std::sync::{Arc, Mutex};

use ringpipe_ring::pipeline::{Pipeline, PipelineError, Regions, Row, Sink, SinkError, Source};

/// The ids `from + 1 ..= to` of one region, failing at `fail_at` if set
/// (panicking there instead if `panics`).
struct Region {
    columns: Vec<String>,
    from: u64,
    next: u64,
    to: u64,
    fail_at: Option<u64>,
    panics: bool,
}

fn region(from: u64, to: u64) -> Region {
    Region {
        columns: vec!["id".into()],
        from,
        next: from,
        to,
        fail_at: None,
        panics: false,
    }
}

#[derive(Debug, thiserror::Error)]
#[error("bad record {0}")]
struct BadRecord(u64);

impl Source for Region {
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
        Ok(self.next <= self.to)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

impl SinkError for Never {
    fn is_retryable(&self) -> bool {
        false
    }
}

/// (shard, id, record number) of every committed row.
type Log = Arc<Mutex<Vec<(usize, u64, u64)>>>;

struct Recording {
    shard: usize,
    pending: Vec<(usize, u64, u64)>,
    log: Log,
}

impl Sink for Recording {
    type Error = Never;
    fn write(&mut self, row: &Row) -> Result<(), Never> {
        let id = row.get(0).unwrap().parse().unwrap();
        self.pending.push((self.shard, id, row.position().record));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Never> {
        self.log.lock().unwrap().append(&mut self.pending);
        Ok(())
    }
    fn rollback(&mut self) -> Result<(), Never> {
        self.pending.clear();
        Ok(())
    }
}

fn recording(log: &Log) -> impl Fn(usize) -> Result<Recording, Never> + Sync + '_ {
    move |shard| {
        Ok(Recording {
            shard,
            pending: Vec::new(),
            log: Arc::clone(log),
        })
    }
}

fn sorted(log: &Log) -> Vec<(usize, u64, u64)> {
    let mut rows = log.lock().unwrap().clone();
    rows.sort_by_key(|&(_, id, _)| id);
    rows
}

#[test]
fn shards_are_numbered_across_regions_and_records_across_the_input() {
    let log = Log::default();
    let summary = Regions::new(vec![
        Pipeline::new(region(0, 3_000)).batch_rows(100),
        Pipeline::new(region(3_000, 5_000))
            .shards(2)
            .shard_block(100)
            .batch_rows(100),
        Pipeline::new(region(5_000, 5_001)),
    ])
    .run(recording(&log))
    .unwrap();
    assert_eq!(
        (summary.rows_read, summary.rows_written, summary.shards),
        (5_001, 5_001, 4)
    );
    let rows = sorted(&log);
    assert_eq!(rows.len(), 5_001, "every row once");
    for (i, &(shard, id, record)) in rows.iter().enumerate() {
        assert_eq!(id, i as u64 + 1);
        assert_eq!(record, id, "record numbers count in the whole input");
        let expected = match id {
            1..=3_000 => 0,
            3_001..=5_000 => 1 + ((id - 1) / 100 % 2) as usize,
            _ => 3,
        };
        assert_eq!(shard, expected, "record {id}");
    }
}

#[test]
fn a_resumed_region_skips_what_its_shard_committed() {
    let log = Log::default();
    let summary = Regions::new(vec![
        Pipeline::new(region(0, 1_000)).resume_after(vec![400]),
        Pipeline::new(region(1_000, 2_000)).resume_after(vec![1_700]),
    ])
    .run(recording(&log))
    .unwrap();
    assert_eq!(summary.rows_read, 2_000);
    assert_eq!(summary.rows_skipped, 400 + 700);
    let ids: Vec<u64> = sorted(&log).iter().map(|&(_, id, _)| id).collect();
    let expected: Vec<u64> = (401..=1_000).chain(1_701..=2_000).collect();
    assert_eq!(ids, expected);
}

/// The committed ids of shard `shard`, checked to be a gapless run from
/// `first`, each once.
fn committed_run(rows: &[(usize, u64, u64)], shard: usize, first: u64) -> u64 {
    let ids: Vec<u64> = rows.iter().filter(|r| r.0 == shard).map(|r| r.1).collect();
    let expected: Vec<u64> = (first..first + ids.len() as u64).collect();
    assert_eq!(ids, expected, "shard {shard}: a gapless run from {first}");
    ids.len() as u64
}

#[test]
fn bad_input_stops_the_later_regions_and_its_error_is_reported() {
    let log = Log::default();
    let mut bad = region(0, 100_000);
    bad.fail_at = Some(50_001);
    let failure = Regions::new(vec![
        Pipeline::new(bad).batch_rows(1_000),
        // Far longer than the failing region: it must stop early.
        Pipeline::new(region(100_000, 10_000_000)).batch_rows(1_000),
    ])
    .run(recording(&log))
    .unwrap_err();
    assert!(
        matches!(failure.error, PipelineError::Source(ref e) if e.to_string() == "bad record 50001"),
        "{failure}"
    );
    let rows = sorted(&log);
    assert_eq!(committed_run(&rows, 0, 1), 50_000, "all before the fault");
    let later = committed_run(&rows, 1, 100_001);
    assert!(
        later < 9_900_000,
        "the later region stopped early ({later} rows)"
    );
    assert_eq!(failure.summary.rows_written, rows.len() as u64);
}

#[test]
fn bad_input_lets_the_earlier_regions_finish_and_stops_the_later_ones() {
    let log = Log::default();
    let mut bad = region(200_000, 300_000);
    bad.fail_at = Some(200_101);
    let failure = Regions::new(vec![
        Pipeline::new(region(0, 200_000)).batch_rows(1_000),
        Pipeline::new(bad).batch_rows(1_000),
        // Stopped by the fault before it, it must not stop the first region.
        Pipeline::new(region(300_000, 10_300_000)).batch_rows(1_000),
    ])
    .run(recording(&log))
    .unwrap_err();
    assert!(
        matches!(failure.error, PipelineError::Source(_)),
        "{failure}"
    );
    let rows = sorted(&log);
    assert_eq!(
        committed_run(&rows, 0, 1),
        200_000,
        "every record before the fault is committed"
    );
    assert_eq!(committed_run(&rows, 1, 200_001), 100);
    let later = committed_run(&rows, 2, 300_001);
    assert!(
        later < 9_900_000,
        "the later region stopped early ({later} rows)"
    );
}

/// Fails for good when it is handed `fatal_id`.
struct FailingOn {
    inner: Recording,
    fatal_id: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot store {0}")]
struct Fatal(u64);

impl SinkError for Fatal {
    fn is_retryable(&self) -> bool {
        false
    }
}

impl Sink for FailingOn {
    type Error = Fatal;
    fn write(&mut self, row: &Row) -> Result<(), Fatal> {
        let id: u64 = row.get(0).unwrap().parse().unwrap();
        if id == self.fatal_id {
            return Err(Fatal(id));
        }
        self.inner.write(row).map_err(|_| Fatal(id))
    }
    fn flush(&mut self) -> Result<(), Fatal> {
        self.inner.flush().map_err(|_| Fatal(0))
    }
    fn rollback(&mut self) -> Result<(), Fatal> {
        self.inner.rollback().map_err(|_| Fatal(0))
    }
}

#[test]
fn a_failing_sink_stops_every_region() {
    let log = Log::default();
    let make = recording(&log);
    let failure = Regions::new(vec![
        Pipeline::new(region(0, 10_000_000)).batch_rows(1_000),
        Pipeline::new(region(10_000_000, 10_100_000)).batch_rows(1_000),
    ])
    .run(|shard| {
        let inner = make(shard).unwrap();
        Ok(FailingOn {
            inner,
            fatal_id: 10_050_001,
        })
    })
    .unwrap_err();
    assert!(matches!(failure.error, PipelineError::Sink(_)), "{failure}");
    let rows = sorted(&log);
    let first = committed_run(&rows, 0, 1);
    assert!(
        first < 9_900_000,
        "the earlier region stopped early ({first} rows)"
    );
    // The failing batch rolled back: a prefix of the ids before it stays.
    let second = committed_run(&rows, 1, 10_000_001);
    assert!(second <= 50_000, "{second} rows, some past the failing one");
}

#[test]
fn a_panicking_source_stops_every_region_and_the_panic_goes_on() {
    let log = Log::default();
    let mut buggy = region(10_000_000, 10_100_000);
    buggy.fail_at = Some(10_050_001);
    buggy.panics = true;
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Regions::new(vec![
            Pipeline::new(region(0, 10_000_000)).batch_rows(1_000),
            Pipeline::new(buggy).batch_rows(1_000),
        ])
        .run(recording(&log))
    }));
    let panic = run.expect_err("the source's panic reaches the caller");
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("source bug at 10050001")
    );
    let rows = sorted(&log);
    let first = committed_run(&rows, 0, 1);
    assert!(
        first < 9_900_000,
        "the earlier region stopped early ({first} rows)"
    );
}
