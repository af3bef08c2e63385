//! A record bigger than the sink's statement limit (library level): the
//! import stops on it, naming it, with the earlier batches committed.

use std::collections::BTreeSet;

use ringpipe_mysql::{prepare, SinkConfig, WritePath};
use ringpipe_pipeline::{Import, ImportError};
use ringpipe_xml::gen::{Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

use super::{assert_committed_exactly, reference, Input, Parts, SEED, SHARDS, SHARD_BLOCK};
use crate::common::{fresh_table, url};

#[test]
fn record_larger_than_a_statement_stops_after_earlier_batches() {
    const ROWS: u64 = 3_000;
    const BIG: u64 = 2_001;
    let dir = tempfile::tempdir().unwrap();
    let parts = Parts::new(ROWS, SEED);
    let mut records = parts.records.clone();
    records[BIG as usize - 1] = format!(
        "  <product id=\"{BIG}\">\n    <sku>BIG-{BIG}</sku>\n    <name>big</name>\n    <description>{}</description>\n  </product>\n",
        "d".repeat(10 << 10)
    );
    let input = Input::write(
        dir.path().join("big.xml"),
        &parts.header,
        &records,
        parts.footer.as_bytes(),
    );
    let reference = reference(ROWS, SEED);
    let (line, column) = input.record_at(BIG);
    let skip = BTreeSet::from([BIG]);
    for path in [
        WritePath::Insert,
        WritePath::Prepared,
        WritePath::LoadData,
        WritePath::Bulk,
    ] {
        let table = format!("rel_packet_{path:?}").to_lowercase();
        let _table = fresh_table(&table);
        let config = SinkConfig::new(url(), &table, &PRODUCT_COLUMNS)
            .write_path(path)
            .max_statement_bytes(4096);
        let target = prepare(&config).unwrap();
        let source = XmlSource::open(&input.path, Catalogue::new(ROWS).config()).unwrap();
        let failure = Import::new(|shard| target.connect_sink(shard))
            .shards(SHARDS as usize)
            .batch_rows(200)
            .shard_block(SHARD_BLOCK)
            .run(vec![source])
            .unwrap_err();
        let message = failure.to_string();
        assert!(
            matches!(failure.error, ImportError::Sink { .. }),
            "{path:?}: not a sink failure: {message}"
        );
        let record = format!("record {BIG} (line {line}, column {column}) needs");
        assert!(
            message.contains(&record),
            "{path:?}: want {record:?} in: {message}"
        );
        assert!(message.contains("the limit is 4096"), "{path:?}: {message}");
        let (stored, _) = assert_committed_exactly(&table, &reference, BIG, &skip);
        eprintln!("{table}: {} rows kept exactly: {message}", stored.len());
        assert_eq!(
            failure.summary.rows_written,
            stored.len() as u64,
            "{path:?}"
        );
    }
}
