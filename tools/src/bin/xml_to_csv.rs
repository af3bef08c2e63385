//! Converts XML records to RFC 4180 CSV with a header row, NULL written as
//! an unquoted `\N`: the same rows as `xml_to_tsv`'s TSV, as the input of
//! the benchmarks' "ringpipe of the ready CSV" contender (`ringpipe import
//! OUT.csv --null-string '\N'`).
//!
//! Run: `cargo run --release -p ringpipe-tools --bin xml_to_csv -- IN.xml ROW_TAG COL1,COL2,... OUT.csv`

use std::fs::File;
use std::io::BufWriter;

use ringpipe_pipeline::{Row, Source};
use ringpipe_text::write_csv;
use ringpipe_xml::{XmlConfig, XmlSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, row_tag, columns, output] = args.as_slice() else {
        return Err("usage: xml_to_csv IN.xml ROW_TAG COL1,COL2,... OUT.csv".into());
    };
    let columns: Vec<&str> = columns.split(',').collect();
    let mut source = XmlSource::open(input, XmlConfig::new(row_tag.as_str(), columns.clone()))?;
    let mut row = Row::with_columns(source.columns().len());
    let mut failure = None;
    let rows = std::iter::from_fn(|| match source.next_row(&mut row) {
        Ok(true) => Some(
            (0..row.len())
                .map(|c| row.text(c).map(str::to_owned))
                .collect(),
        ),
        Ok(false) => None,
        Err(e) => {
            failure = Some(e);
            None
        }
    });
    let out = BufWriter::with_capacity(1 << 16, File::create(output)?);
    write_csv(out, &columns, rows, "\\N")?;
    if let Some(e) = failure {
        return Err(e.into());
    }
    eprintln!("{input} → {output}");
    Ok(())
}
