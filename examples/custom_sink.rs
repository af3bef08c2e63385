//! A user-defined [`Sink`]: the XML records as CSV on stdout.
//!
//! A sink only has to buffer rows in `write`, make them durable in `flush`
//! (here: write them out), and forget them in `rollback`. The pipeline does
//! the rest: sharding, batching, rewinding on retryable errors.
//!
//! Run: `cargo run --example custom_sink | head`

use std::io::{self, Write};

use ringpipe_ring::pipeline::{Pipeline, Row, Sink, SinkError};
use ringpipe_xml::gen::Catalogue;
use ringpipe_xml::XmlSource;

/// CSV to stdout; one shard, so lines keep the input order.
struct CsvSink {
    buffer: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout: {0}")]
struct CsvError(#[from] io::Error);

impl SinkError for CsvError {
    fn is_retryable(&self) -> bool {
        // An interrupted write can be tried again; a closed pipe cannot.
        self.0.kind() == io::ErrorKind::Interrupted
    }
}

impl Sink for CsvSink {
    type Error = CsvError;

    fn write(&mut self, row: &Row) -> Result<(), CsvError> {
        for column in 0..row.len() {
            if column > 0 {
                self.buffer.push(b',');
            }
            // NULL is an empty field; text is quoted with "" doubled.
            if let Some(text) = row.get(column) {
                self.buffer.push(b'"');
                self.buffer
                    .extend_from_slice(text.replace('"', "\"\"").as_bytes());
                self.buffer.push(b'"');
            }
        }
        self.buffer.push(b'\n');
        Ok(())
    }

    fn flush(&mut self) -> Result<(), CsvError> {
        let mut out = io::stdout().lock();
        out.write_all(&self.buffer)?;
        out.flush()?;
        self.buffer.clear();
        Ok(())
    }

    fn rollback(&mut self) -> Result<(), CsvError> {
        self.buffer.clear();
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalogue = Catalogue::new(1_000);
    let mut xml = Vec::new();
    ringpipe_xml::gen::write_catalogue(&catalogue, &mut xml)?;
    let source = XmlSource::from_reader("catalogue.xml", io::Cursor::new(xml), catalogue.config())?;
    println!("{}", ringpipe_xml::gen::PRODUCT_COLUMNS.join(","));
    match Pipeline::new(source).run(|_| Ok(CsvSink { buffer: Vec::new() })) {
        Ok(summary) => eprintln!("{} rows", summary.rows_written),
        // `| head` closes the pipe: that is how a CSV consumer says "enough".
        Err(failure) if failure.to_string().contains("Broken pipe") => {}
        Err(failure) => return Err(failure.into()),
    }
    Ok(())
}
