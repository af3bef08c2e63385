//! Writing rows as CSV or JSON Lines that the sources read back exactly
//! (for test data, benchmarks and exports).

use std::io::{self, Write};

/// Writes a header and `rows` as RFC 4180 CSV; `None` is written as
/// `null` unquoted (which must then be the reader's null string), and a
/// value equal to it quoted, so it reads back as text.
///
/// # Errors
///
/// When writing fails.
pub fn write_csv<W, I>(mut out: W, columns: &[&str], rows: I, null: &str) -> io::Result<()>
where
    W: Write,
    I: IntoIterator<Item = Vec<Option<String>>>,
{
    let record = |out: &mut W, fields: &mut dyn Iterator<Item = Option<&str>>| {
        for (i, field) in fields.enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            match field {
                None => out.write_all(null.as_bytes())?,
                Some(value) => {
                    let plain = !value.is_empty()
                        && value != null
                        && !value.contains([',', '"', '\r', '\n']);
                    match plain {
                        true => out.write_all(value.as_bytes())?,
                        false => write!(out, "\"{}\"", value.replace('"', "\"\""))?,
                    }
                }
            }
        }
        out.write_all(b"\n")
    };
    record(&mut out, &mut columns.iter().map(|c| Some(*c)))?;
    for row in rows {
        record(&mut out, &mut row.iter().map(Option::as_deref))?;
    }
    out.flush()
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
