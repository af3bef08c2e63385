//! Every source into every sink through the library API: the catalogue as
//! XML, CSV and JSON Lines, each read in two regions, into a
//! [`MysqlTarget`] and a [`PgTarget`] with [`Import`]; the first run stops
//! (its sources fail) part-way, the resumed run ends it, and the table
//! equals the XML's clean import.

use std::io;
use std::path::Path;

use ringpipe_mysql::{MysqlTarget, SinkConfig};
use ringpipe_pipeline::{Import, ImportError, ResumeError, Row, Source, SourceProgress, Target};
use ringpipe_postgres::{PgConfig, PgTarget};
use ringpipe_text::{CsvSource, JsonlSource, TextConfig};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

use crate::common::{catalogue_files, leak, Server};

const ROWS: u64 = 12_000;

/// A source that fails after `left` records: an interrupted import.
struct StopAfter<S> {
    inner: S,
    left: u64,
}

impl<S: Source> Source for StopAfter<S> {
    type Error = io::Error;

    fn columns(&self) -> &[String] {
        self.inner.columns()
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, io::Error> {
        if self.left == 0 {
            return Err(io::Error::other("stopped by the test"));
        }
        self.left -= 1;
        self.inner.next_row(row).map_err(io::Error::other)
    }

    fn records_before(&self) -> u64 {
        self.inner.records_before()
    }

    fn progress(&self) -> SourceProgress {
        self.inner.progress()
    }
}

/// A region read as if the split lay one record later: its first record
/// is dropped and counted among the records before it.
struct OneLater<S> {
    inner: S,
    shift: bool,
    dropped: bool,
}

impl<S: Source> Source for OneLater<S> {
    type Error = S::Error;

    fn columns(&self) -> &[String] {
        self.inner.columns()
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, S::Error> {
        if self.shift && !std::mem::replace(&mut self.dropped, true) && !self.inner.next_row(row)? {
            return Ok(false);
        }
        self.inner.next_row(row)
    }

    fn records_before(&self) -> u64 {
        self.inner.records_before() + u64::from(self.shift)
    }
}

/// Imports `sources()` into `target()` once stopped after 2,500 records of
/// each region, then resumed to the end (after a resume that splits the
/// input elsewhere was refused).
fn stopped_then_resumed<T, S>(target: impl Fn() -> T, sources: impl Fn() -> Vec<S>, input: &str)
where
    T: Target,
    S: Source,
{
    let import = || {
        Import::new(target())
            .shards(4)
            .batch_rows(250)
            .checkpoints(input, "ends_api")
    };
    let stopped = sources()
        .into_iter()
        .map(|inner| StopAfter { inner, left: 2_500 })
        .collect();
    let failure = import().run(stopped).expect_err("the stopped run fails");
    assert!(
        matches!(failure.error, ImportError::Source(_)),
        "{}",
        failure.error
    );
    assert!(failure.summary.rows_written > 0);
    // Each checkpoint holds its region's first record, as the target
    // stored and read it back: region 0's shards 0 and 1, region 1's 2 and 3.
    let stored = target().checkpoints().unwrap();
    let starts = |shards: [usize; 2]| -> Vec<u64> {
        let mut starts: Vec<u64> = stored
            .iter()
            .filter(|c| shards.contains(&c.shard))
            .map(|c| c.region_start)
            .collect();
        starts.dedup();
        starts
    };
    assert_eq!(starts([0, 1]), [1], "{input}: {stored:?}");
    // And the digest of its rows, which the resume below checks.
    assert!(
        stored.iter().all(|c| c.rows_crc.is_some()),
        "{input}: {stored:?}"
    );
    let second = starts([2, 3]);
    assert!(
        second.len() == 1 && second[0] > 2_500,
        "{input}: {stored:?}"
    );
    let one_later = sources()
        .into_iter()
        .enumerate()
        .map(|(region, inner)| OneLater {
            inner,
            shift: region == 1,
            dropped: false,
        })
        .collect();
    let refused = import().resume(true).run(one_later).expect_err(input);
    assert!(
        matches!(refused.error, ImportError::Resume(ResumeError::Split(_))),
        "{input}: {}",
        refused.error
    );
    let summary = import().resume(true).run(sources());
    let summary = summary.unwrap_or_else(|f| panic!("{}", f.error));
    assert!(summary.rows_skipped > 0, "{summary:?}");
}

/// The catalogue as XML, CSV and JSON Lines into tables `{prefix}_xml`,
/// `_csv` and `_jsonl` of `server`, each stopped and resumed.
fn land_all<T: Target>(server: Server, prefix: &str, make: impl Fn(&str) -> T) {
    let dir = tempfile::tempdir().unwrap();
    let [xml, csv, jsonl] = catalogue_files(dir.path(), ROWS);
    let names: Vec<String> = ["xml", "csv", "jsonl"]
        .iter()
        .map(|f| format!("{prefix}_{f}"))
        .collect();
    let _tables: Vec<_> = names.iter().map(|n| server.table(leak(n))).collect();
    let target = |table: &str| {
        let table = table.to_owned();
        let make = &make;
        move || make(&table)
    };
    let config = TextConfig::new(PRODUCT_COLUMNS);
    let xml_config = Catalogue::new(ROWS).config();
    let regions = |path: &Path| {
        let path = path.to_owned();
        let config = xml_config.clone();
        move || XmlSource::open_regions(&path, config.clone(), 2).unwrap()
    };
    stopped_then_resumed(target(&names[0]), regions(&xml), "xml");
    let csv_config = config.clone().null_string("\\N");
    let csv_sources = || CsvSource::open_regions(&csv, csv_config.clone(), 2).unwrap();
    stopped_then_resumed(target(&names[1]), csv_sources, "csv");
    let jsonl_sources = || JsonlSource::open_regions(&jsonl, config.clone(), 2).unwrap();
    stopped_then_resumed(target(&names[2]), jsonl_sources, "jsonl");
    let expected = server.content(&names[0]);
    assert!(expected.contains(&ROWS.to_string()), "{expected}");
    assert_eq!(server.content(&names[1]), expected, "CSV");
    assert_eq!(server.content(&names[2]), expected, "JSON Lines");
}

#[test]
fn xml_csv_and_jsonl_into_mariadb_through_the_api_resume_exactly() {
    let url = Server::Mariadb.url();
    land_all(Server::Mariadb, "ends_api_my", |table| {
        MysqlTarget::new(SinkConfig::new(
            url.clone(),
            table.to_owned(),
            &PRODUCT_COLUMNS,
        ))
    });
}

#[test]
fn xml_csv_and_jsonl_into_postgres_through_the_api_resume_exactly() {
    let url = Server::Postgres.url();
    land_all(Server::Postgres, "ends_api_pg", |table| {
        PgTarget::new(PgConfig::new(
            url.clone(),
            table.to_owned(),
            &PRODUCT_COLUMNS,
        ))
    });
}
