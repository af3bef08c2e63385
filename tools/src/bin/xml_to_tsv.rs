//! Converts XML records to a TSV that `LOAD DATA INFILE` reads with its
//! default format (tab-separated, `\`-escaped, `\N` for NULL): the ready
//! file the end-to-end benchmark's `LOAD DATA` contender loads.
//!
//! Run: `cargo run --release -p ringpipe-tools --bin xml_to_tsv -- IN.xml ROW_TAG COL1,COL2,... OUT.tsv`

use std::fs::File;
use std::io::{BufWriter, Write};

use ringpipe_pipeline::{Row, Source};
use ringpipe_xml::{XmlConfig, XmlSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, row_tag, columns, output] = args.as_slice() else {
        return Err("usage: xml_to_tsv IN.xml ROW_TAG COL1,COL2,... OUT.tsv".into());
    };
    let columns: Vec<&str> = columns.split(',').collect();
    let mut source = XmlSource::open(input, XmlConfig::new(row_tag.as_str(), columns))?;
    let mut row = Row::with_columns(source.columns().len());
    let mut out = BufWriter::with_capacity(1 << 16, File::create(output)?);
    let mut records = 0u64;
    while source.next_row(&mut row)? {
        write_line(&mut out, &row)?;
        records += 1;
    }
    out.flush()?;
    eprintln!("{records} records → {output}");
    Ok(())
}

/// One row in LOAD DATA's default format.
fn write_line(out: &mut impl Write, row: &Row) -> std::io::Result<()> {
    for column in 0..row.len() {
        if column > 0 {
            out.write_all(b"\t")?;
        }
        match row.get(column) {
            None => out.write_all(b"\\N")?,
            Some(text) => {
                for &byte in text.as_bytes() {
                    match byte {
                        b'\\' => out.write_all(b"\\\\")?,
                        b'\t' => out.write_all(b"\\t")?,
                        b'\n' => out.write_all(b"\\n")?,
                        b'\r' => out.write_all(b"\\r")?,
                        0 => out.write_all(b"\\0")?,
                        _ => out.write_all(&[byte])?,
                    }
                }
            }
        }
    }
    out.write_all(b"\n")
}
