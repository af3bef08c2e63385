//! Measuring tools of the benchmark scripts: `xml_to_tsv` (the ready TSV
//! the LOAD DATA contenders load), `xml_to_csv` (the same rows as CSV, for
//! ringpipe's own run on a ready file) and `bulk_wire_probe` (what the
//! server gives a client with no driver at all). See `src/bin/`.
