//! The whole import in a few dozen lines of library use: generate a
//! catalogue, stream it in two regions through two rings into
//! MySQL/MariaDB, resumably, and report.
//!
//! Run: `cargo run --release --example import_products -- [URL] [ROWS]`
//! (URL defaults to `$RINGPIPE_MYSQL_URL`, then the local test server).

use ringpipe_mysql::{execute, Mode, MysqlTarget, SinkConfig};
use ringpipe_pipeline::{fingerprint, Import};
use ringpipe_xml::gen::{product_table_ddl, Catalogue, PRODUCT_COLUMNS};
use ringpipe_xml::XmlSource;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("RINGPIPE_MYSQL_URL").ok())
        .unwrap_or_else(|| "mysql://root@127.0.0.1:3306/test".into());
    let rows: u64 = args.next().map_or(Ok(60_000), |n| n.parse())?;

    // A deterministic catalogue: multi-byte text, entities, CDATA, NULLs.
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("products.xml");
    let catalogue = Catalogue::new(rows);
    catalogue.write_file(&file)?;

    // The target table, created if missing and emptied by Mode::Truncate.
    let table = "example_products";
    execute(&url, &product_table_ddl(table))?;
    let config = SinkConfig::new(url, table, &PRODUCT_COLUMNS).mode(Mode::Truncate);

    // The file in two regions, each parsed on its own thread into its own
    // ring and sink, which commits once per batch with its checkpoint: run
    // it again with `.resume(true)` after a crash and it continues exactly.
    let regions = XmlSource::open_regions(&file, catalogue.config(), 2)?;
    let summary = Import::new(MysqlTarget::new(config))
        .shards(2)
        .batch_rows(5_000)
        .checkpoints(fingerprint(&file)?, "example catalogue")
        .run(regions)?;

    println!(
        "imported {} products into table `{table}` (created if it was missing, emptied first) \
         in {} commits, {:.2} s ({:.0} rows/s)",
        summary.rows_written,
        summary.commits,
        summary.elapsed.as_secs_f64(),
        summary.rows_written as f64 / summary.elapsed.as_secs_f64()
    );
    println!("look at them: mariadb -e 'SELECT id, sku, name, price FROM `{table}` LIMIT 5' test");
    println!("remove them:  mariadb -e 'DROP TABLE `{table}`' test");
    assert_eq!(summary.rows_written, rows);
    Ok(())
}
