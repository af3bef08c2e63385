//! Writing rows as CSV or JSON Lines that the sources read back exactly
//! (for test data, benchmarks and exports).

use std::io::{self, Write};

/// Writes a header and `rows` as RFC 4180 CSV; `None` is written as
/// `null` (which must then be the reader's null string).
///
/// # Errors
///
/// When writing fails.
pub fn write_csv<W, I>(out: W, columns: &[&str], rows: I, null: &str) -> io::Result<()>
where
    W: Write,
    I: IntoIterator<Item = Vec<Option<String>>>,
{
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(columns)?;
    for row in rows {
        writer.write_record(row.iter().map(|v| v.as_deref().unwrap_or(null)))?;
    }
    writer.flush()
}

/// Writes `rows` as JSON Lines, one object per row, `None` as `null`.
///
/// # Errors
///
/// When writing fails.
pub fn write_jsonl<W, I>(mut out: W, columns: &[&str], rows: I) -> io::Result<()>
where
    W: Write,
    I: IntoIterator<Item = Vec<Option<String>>>,
{
    for row in rows {
        let object: serde_json::Map<String, serde_json::Value> = columns
            .iter()
            .zip(row)
            .map(|(c, v)| (c.to_string(), v.map_or(serde_json::Value::Null, Into::into)))
            .collect();
        serde_json::to_writer(&mut out, &object)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
