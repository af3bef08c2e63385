//! Which source and which sink an import uses: the input format (by
//! `--format` or the file's extension) and the server (by the URL's
//! scheme), with the flags that belong to only one of them.

use std::time::Duration;

use ringpipe_mysql::WritePath;
use ringpipe_pipeline::Decode;
use ringpipe_postgres::{is_postgres_url, CopyFormat, PgConfig};
use ringpipe_text::{CsvSource, Format, JsonlSource, TextConfig, TextError};

use super::sniff;
use crate::cli::{FormatArg, ImportArgs, InputArgs, WritePathArg};
use crate::error::CliError;
use crate::hint;

/// The input's format: `--format`, else the extension, else what the
/// first bytes of stdin or a regular file make certain ([`check_input`]
/// refuses an input whose first bytes do not), else (a pipe, which cannot
/// be looked at without consuming it) XML.
pub fn format(input: &InputArgs) -> FormatArg {
    told(input).unwrap_or(FormatArg::Xml)
}

/// [`format()`], `None` for an input whose first bytes do not tell it.
fn told(input: &InputArgs) -> Option<FormatArg> {
    if let Some(format) = input.format {
        return Some(format);
    }
    let file = &input.file;
    match Format::from_path(file) {
        Some(Format::Csv) => Some(FormatArg::Csv),
        Some(Format::Jsonl) => Some(FormatArg::Jsonl),
        None if file.as_os_str() == "-" => sniff::stdin(),
        None if named_xml(file) => Some(FormatArg::Xml),
        None if std::fs::metadata(file).is_ok_and(|m| m.is_file()) => sniff::file(file),
        None => Some(FormatArg::Xml),
    }
}

/// Whether `file`'s name ends in `.xml` (also under `.gz`).
fn named_xml(file: &std::path::Path) -> bool {
    let name = file.to_string_lossy().to_ascii_lowercase();
    name.strip_suffix(".gz").unwrap_or(&name).ends_with(".xml")
}

/// Usage errors of flags that the chosen source or sink does not have.
pub fn check_args(args: &ImportArgs) -> Result<(), CliError> {
    let usage = |why: &str| Err(CliError::Usage(why.into()));
    let postgres = is_postgres_url(&args.url);
    let copy = matches!(
        args.write_path,
        Some(WritePathArg::CopyBinary | WritePathArg::CopyText)
    );
    if postgres && args.write_path.is_some() && !copy {
        return usage("--write-path for PostgreSQL is copy-binary or copy-text");
    }
    if !postgres && copy {
        return usage("--write-path copy-binary|copy-text is for a postgres:// URL");
    }
    if postgres && args.bulk_client.is_some() {
        return usage("--bulk-client is for a mysql:// URL");
    }
    let format = format(&args.input);
    if format != FormatArg::Xml {
        // Given to another format they would be ignored: a mapping, a
        // decoding or a policy the user asked for, silently not applied.
        let xml_only = [
            (
                !args.maps.is_empty() || args.row != "row",
                "--row and --map are",
            ),
            (!args.fields.is_empty(), "--field is"),
            (!args.repeated.is_empty(), "--repeated is"),
        ];
        if let Some((_, flags)) = xml_only.iter().find(|(given, _)| *given) {
            return usage(&format!("{flags} for XML input"));
        }
    }
    check_input(&args.input)
}

/// Usage errors of the CSV flags: given for another format, or a
/// delimiter CSV cannot have.
pub fn check_input(input: &InputArgs) -> Result<(), CliError> {
    let usage = |why: &str| Err(CliError::Usage(why.into()));
    let Some(format) = told(input) else {
        let name = match input.file.as_os_str() == "-" {
            true => "stdin".to_owned(),
            false => input.file.display().to_string(),
        };
        return usage(&format!(
            "{name} starts with neither `<` (XML) nor `{{` (JSON Lines): \
             give its format, --format xml|csv|jsonl"
        ));
    };
    if format != FormatArg::Csv && (input.delimiter.is_some() || input.null_string.is_some()) {
        return usage("--delimiter and --null-string are for CSV input");
    }
    if !delimiter(input).is_ascii() {
        return usage("--delimiter must be one ASCII character");
    }
    if let Err(why) = TextConfig::check_delimiter(delimiter(input) as u8) {
        return usage(&format!("--delimiter: {why}"));
    }
    Ok(())
}

/// Regions parsed at once when `--regions` is not given. MySQL/MariaDB: one
/// per shard, so that each connection writes the keys of its own stretch of
/// the file (the shards of one region, taking blocks in turn, cost the
/// server more there). PostgreSQL: one, its shards taking blocks in turn,
/// which is faster there, and it spares the split plan's scan. Both
/// measured in docs/benchmarks.md.
pub fn default_regions(args: &ImportArgs) -> usize {
    match is_postgres_url(&args.url) {
        true => 1,
        false => args.shards(),
    }
}

/// The environment variable that carries a password to the URL's driver.
pub fn password_var(url: &str) -> &'static str {
    match is_postgres_url(url) {
        true => "PGPASSWORD",
        false => "MYSQL_PWD",
    }
}

/// Every column of the target table.
pub fn table_columns(args: &ImportArgs) -> Result<Vec<String>, CliError> {
    Ok(match is_postgres_url(&args.url) {
        true => ringpipe_postgres::table_columns(&args.url, &args.table)
            .map_err(|e| CliError::Described(hint::postgres(&e, &args.url, &args.table)))?,
        false => ringpipe_mysql::table_columns(&args.url, &args.table)
            .map_err(|e| CliError::Described(hint::database(&e, &args.url, &args.table)))?,
    })
}

/// `--delimiter`, else the one the file's name implies (a tab for `.tsv`).
fn delimiter(input: &InputArgs) -> char {
    input
        .delimiter
        .unwrap_or_else(|| TextConfig::delimiter_for(&input.file) as char)
}

/// How the text formats read `input` into `columns`: its delimiter and
/// NULL string.
pub fn input_config(input: &InputArgs, columns: &[String]) -> TextConfig {
    let config = TextConfig::new(columns.iter().cloned()).delimiter(delimiter(input) as u8);
    match &input.null_string {
        Some(null) => config.null_string(null.clone()),
        None => config,
    }
}

/// [`input_config`] with the import's policies and decodings.
fn text_config(args: &ImportArgs, columns: &[String]) -> Result<TextConfig, CliError> {
    let mut config = input_config(&args.input, columns)
        .strict(args.strict)
        .allow_empty(args.allow_empty);
    for (column, decode) in decodes(args)? {
        config = config.decode(column, decode);
    }
    Ok(config)
}

/// `--decode COLUMN=hex|base64`, for any input format.
pub fn decodes(args: &ImportArgs) -> Result<Vec<(String, Decode)>, CliError> {
    let parse = |decode: &String| {
        let usage = |m: String| CliError::Usage(format!("--decode {decode}: {m}"));
        let (column, how) = decode
            .split_once('=')
            .ok_or_else(|| usage("expected COLUMN=hex|base64".into()))?;
        Ok((column.to_owned(), how.parse().map_err(usage)?))
    };
    args.decodes.iter().map(parse).collect()
}

/// The CSV source of `args`, as `regions` regions when it can be split.
pub fn csv(
    args: &ImportArgs,
    columns: &[String],
    regions: usize,
) -> Result<Vec<CsvSource>, CliError> {
    let config = text_config(args, columns)?;
    CsvSource::open_regions(&args.input.file, config, regions).map_err(text_error)
}

/// The JSON Lines source of `args`, as `regions` regions when it can be
/// split.
pub fn jsonl(
    args: &ImportArgs,
    columns: &[String],
    regions: usize,
) -> Result<Vec<JsonlSource>, CliError> {
    let config = text_config(args, columns)?;
    JsonlSource::open_regions(&args.input.file, config, regions).map_err(text_error)
}

/// A header that does not fit the columns is a usage error (the columns
/// come from the arguments or the table); anything else an input error.
pub fn text_error(error: TextError) -> CliError {
    match error {
        TextError::Mapping { .. } | TextError::Config { .. } => CliError::Usage(error.to_string()),
        error => CliError::Text(error),
    }
}

/// What the text formats add to the import's mapping (resume identity).
pub fn mapping(args: &ImportArgs) -> String {
    match format(&args.input) {
        FormatArg::Xml => String::new(),
        FormatArg::Csv => format!(
            ";format=csv;delimiter={};null={:?}",
            delimiter(&args.input),
            args.input.null_string
        ),
        FormatArg::Jsonl => ";format=jsonl".into(),
    }
}

/// The MySQL write path `--write-path` names (`None`: a PostgreSQL one).
pub fn mysql_write_path(path: WritePathArg) -> Option<WritePath> {
    Some(match path {
        WritePathArg::Insert => WritePath::Insert,
        WritePathArg::Prepared => WritePath::Prepared,
        WritePathArg::LoadData => WritePath::LoadData,
        WritePathArg::Bulk => WritePath::Bulk,
        WritePathArg::CopyBinary | WritePathArg::CopyText => return None,
    })
}

/// The COPY format `--write-path` names (auto when none is named).
pub fn copy_format(path: Option<WritePathArg>) -> CopyFormat {
    match path {
        Some(WritePathArg::CopyBinary) => CopyFormat::Binary,
        Some(WritePathArg::CopyText) => CopyFormat::Text,
        _ => CopyFormat::Auto,
    }
}

/// The PostgreSQL target of `args`.
pub fn pg_config(args: &ImportArgs, columns: &[String]) -> PgConfig {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut config = PgConfig::new(args.url.clone(), args.table.clone(), &names)
        .mode(args.mode.into())
        .format(copy_format(args.write_path))
        .max_bad(args.max_bad);
    if let Some(file) = &args.reject_file {
        config = config.reject_file(file.clone());
    }
    for sql in &args.init_commands {
        config = config.init_command(sql.clone());
    }
    if let Some(secs) = args.connect_timeout {
        config = config.connect_timeout(Duration::from_secs(secs));
    }
    if let Some(secs) = args.net_timeout {
        config = config.net_timeout(Duration::from_secs(secs));
    }
    config
}
