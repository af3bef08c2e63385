//! How a text input maps onto columns.

use std::path::Path;

use ringpipe_pipeline::Decode;

/// Settings shared by the CSV and JSON Lines sources.
#[derive(Debug, Clone)]
pub struct TextConfig {
    /// The columns each row fills, in order (fields are matched by name).
    pub columns: Vec<String>,
    /// A field named by no column is an error instead of being skipped.
    pub strict: bool,
    /// CSV: the field delimiter (default `,`; for a file, see
    /// [`TextConfig::delimiter_for`]).
    pub delimiter: u8,
    /// CSV: an unquoted field equal to this is `NULL` (default: none; an
    /// empty field is the empty string). A quoted field is always text.
    pub null_string: Option<String>,
    /// The longest CSV field and JSON line, in bytes (default 64 MiB): a
    /// longer one is an error, so no input can take unbounded memory.
    pub max_value_bytes: usize,
    /// An input without any record (a CSV header alone, no JSON object) is
    /// accepted instead of being an error (default: an error).
    pub allow_empty: bool,
    /// Columns whose text encodes bytes (hex, base64), decoded before the
    /// row leaves the source; see [`TextConfig::decode`].
    pub decodes: Vec<(String, Decode)>,
}

impl TextConfig {
    /// Fill `columns` from the fields of the same names.
    pub fn new<I, S>(columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        TextConfig {
            columns: columns.into_iter().map(Into::into).collect(),
            strict: false,
            delimiter: b',',
            null_string: None,
            max_value_bytes: 64 << 20,
            allow_empty: false,
            decodes: Vec::new(),
        }
    }

    /// Sets strictness about unknown fields.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets the CSV delimiter.
    pub fn delimiter(mut self, delimiter: u8) -> Self {
        self.delimiter = delimiter;
        self
    }

    /// Whether `delimiter` can separate CSV fields: `"` quotes fields, and
    /// CR and LF end records, so those are refused with the reason.
    ///
    /// # Errors
    ///
    /// Why the delimiter cannot be used.
    pub fn check_delimiter(delimiter: u8) -> Result<(), String> {
        match delimiter {
            b'"' | b'\r' | b'\n' => Err(format!(
                "the delimiter cannot be {:?}: it quotes fields or ends records",
                delimiter as char
            )),
            _ => Ok(()),
        }
    }

    /// The delimiter a file's name implies: a tab for `.tsv` (also under
    /// `.gz`), else `,`. The command line uses it unless `--delimiter` is
    /// given, so that a TSV file is not read as one field per line.
    pub fn delimiter_for(path: &Path) -> u8 {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let name = name.to_ascii_lowercase();
        match name.strip_suffix(".gz").unwrap_or(&name).ends_with(".tsv") {
            true => b'\t',
            false => b',',
        }
    }

    /// Sets the CSV null string.
    pub fn null_string(mut self, null: impl Into<String>) -> Self {
        self.null_string = Some(null.into());
        self
    }

    /// Sets the longest CSV field and JSON line.
    pub fn max_value_bytes(mut self, bytes: usize) -> Self {
        self.max_value_bytes = bytes;
        self
    }

    /// Accepts an input without any record.
    pub fn allow_empty(mut self, allow: bool) -> Self {
        self.allow_empty = allow;
        self
    }

    /// Decodes `column`'s text (hex, PostgreSQL's `\\x` hex included, or
    /// base64) into the bytes it encodes: a binary column's value as an
    /// export writes it. A value that does not decode is an error naming
    /// its record and field; `NULL` stays `NULL`.
    pub fn decode(mut self, column: impl Into<String>, decode: Decode) -> Self {
        let column = column.into();
        self.decodes.retain(|(c, _)| *c != column);
        self.decodes.push((column, decode));
        self
    }

    /// How each column's text is decoded, in column order.
    ///
    /// # Errors
    ///
    /// When a decoding names no column.
    pub(crate) fn column_decodes(&self) -> Result<Vec<Option<Decode>>, String> {
        if let Some((column, _)) = (self.decodes.iter()).find(|(c, _)| !self.columns.contains(c)) {
            return Err(format!("a decoding for {column:?}, which is not a column"));
        }
        let decode = |column: &String| {
            (self.decodes.iter())
                .find(|(c, _)| c == column)
                .map(|&(_, d)| d)
        };
        Ok(self.columns.iter().map(decode).collect())
    }
}

/// The text formats, as a file's extension names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma- (or otherwise) separated values with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl Format {
    /// The format a file name says (`.csv` and `.tsv`, `.jsonl` and
    /// `.ndjson`, also under `.gz`), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".csv") || name.ends_with(".tsv") {
            Some(Format::Csv)
        } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
            Some(Format::Jsonl)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::from_path(Path::new("a.CSV")), Some(Format::Csv));
        assert_eq!(
            Format::from_path(Path::new("d/a.jsonl.gz")),
            Some(Format::Jsonl)
        );
        assert_eq!(Format::from_path(Path::new("a.xml")), None);
        assert_eq!(Format::from_path(Path::new("a.tsv.gz")), Some(Format::Csv));
    }

    #[test]
    fn a_tsv_file_is_tab_separated() {
        for (name, delimiter) in [
            ("a.tsv", b'\t'),
            ("d/A.TSV.gz", b'\t'),
            ("a.csv", b','),
            ("a.csv.gz", b','),
            ("tsv", b','),
            ("-", b','),
        ] {
            assert_eq!(
                TextConfig::delimiter_for(Path::new(name)),
                delimiter,
                "{name}"
            );
        }
    }
}
