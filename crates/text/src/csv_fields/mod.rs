//! Splitting CSV text into records and fields.
//!
//! A field is quoted when its first byte is `"`: up to the closing quote,
//! `""` is one `"` and the delimiter, `\r` and `\n` are text. A `"` inside
//! an unquoted field is text. A record ends at `\n`, `\r` or `\r\n`; empty
//! lines are skipped; the end of input ends the field and the record it is
//! in. These are the rules of `csv-core`, the `csv` crate's parser, and the
//! tests hold this module to it field by field, position by position, on
//! random inputs.
//!
//! One rule differs when asked ([`Fields::keep_empty_lines`], for a file
//! of one column): an empty line is then a record of one empty unquoted
//! field, as PostgreSQL's `COPY … CSV` reads it, since skipping it would
//! drop a value. Lines are counted as records end them: `\n`, `\r` and
//! `\r\n` each end one line, so a file with `\r` line ends (classic Mac)
//! numbers its lines too, also where a buffer ends between `\r` and `\n`.
//!
//! Two inputs `csv-core` reads leniently are refused here, because a value
//! would land altered: text after a closing quote (`"a"b`, which
//! `csv-core` reads as `ab`; PostgreSQL too, while other readers keep the
//! quote or stop), and a quoted field the input ends inside (`csv-core`
//! would make the rest of the file one value, records included).
//!
//! `csv-core` steps its state machine once per byte; here an unquoted
//! field is found with one `memchr3` (delimiter, `\r`, `\n`) and a quoted
//! one with `memchr` for its quotes, which the profile of a CSV import
//! asked for (the state machine was a quarter of the client's time).
//!
//! Quoting decides `NULL`: as in PostgreSQL's CSV format, only an unquoted
//! field equal to the null string is `NULL`, so `"\N"` (or `""` with an
//! empty null string) stays text. So each field keeps whether it was
//! quoted, and the line it started on for messages.

use std::io::{self, BufRead};
use std::ops::Range;

use memchr::{memchr, memchr3};

use lines::line_ends;

use crate::region::Boundary;

mod lines;
#[cfg(test)]
mod tests;

/// Why a record could not be read.
#[derive(Debug)]
pub(crate) enum FieldError {
    /// The input failed (or is not UTF-8: see [`crate::input::NotUtf8`]).
    Io(io::Error),
    /// A field is longer than the limit.
    TooLong,
    /// A record has more fields than [`Fields::next_record_at_most`] allows.
    TooManyFields,
    /// A field that is not CSV.
    Malformed(Malformed),
}

/// How a field is not CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// Text follows a field's closing quote.
    AfterQuote,
    /// The input ends inside a quoted field.
    OpenQuote,
}

impl From<io::Error> for FieldError {
    fn from(error: io::Error) -> Self {
        FieldError::Io(error)
    }
}

/// One kept field of the current record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kept {
    /// The end of its unquoted bytes in [`Fields::text`].
    end: usize,
    /// Whether its first byte was a quote.
    quoted: bool,
    /// The line of its first byte.
    line: u64,
}

/// The field being read, across the buffers it spans.
struct Field {
    /// Where in the field the next byte is.
    state: State,
    quoted: bool,
    /// Unquoted bytes so far, and the most allowed.
    len: usize,
    max: usize,
    keep: bool,
    /// Line ends read since the caller last took them.
    lines: u64,
    /// The byte read last was a `\r` (a `\n` next ends no other line).
    cr: bool,
}

/// Where in a field the next byte is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At its first byte: a quote here opens quoting.
    Start,
    /// Outside quotes: quotes are text.
    Unquoted,
    /// Inside quotes.
    Quoted,
    /// Right after a quote inside quotes: another quote is text.
    ClosingQuote,
}

impl Field {
    fn new(max: usize, keep: bool) -> Self {
        Field {
            state: State::Start,
            quoted: false,
            len: 0,
            max,
            keep,
            lines: 0,
            cr: false,
        }
    }

    /// Reads the field on from the start of `buf`, appending its unquoted
    /// bytes to `text`: the bytes used, and whether the field ended its
    /// record, if it ended in `buf`.
    fn read(
        &mut self,
        buf: &[u8],
        delimiter: u8,
        text: &mut Vec<u8>,
    ) -> Result<(usize, Option<bool>), FieldError> {
        let mut at = 0;
        while at < buf.len() {
            match self.state {
                State::Start if buf[at] == b'"' => {
                    self.quoted = true;
                    at += 1;
                    self.state = State::Quoted;
                }
                State::Start => self.state = State::Unquoted,
                State::Quoted => {
                    let rest = &buf[at..];
                    let end = memchr(b'"', rest).unwrap_or(rest.len());
                    self.append(&rest[..end], text)?;
                    self.lines += line_ends(&rest[..end], &mut self.cr);
                    at += end;
                    if end < rest.len() {
                        at += 1;
                        self.cr = false;
                        self.state = State::ClosingQuote;
                    }
                }
                State::ClosingQuote if buf[at] == b'"' => {
                    self.append(b"\"", text)?;
                    at += 1;
                    self.state = State::Quoted;
                }
                State::ClosingQuote => match buf[at] {
                    b'\n' | b'\r' => self.state = State::Unquoted,
                    b if b == delimiter => self.state = State::Unquoted,
                    _ => return Err(FieldError::Malformed(Malformed::AfterQuote)),
                },
                State::Unquoted => {
                    let rest = &buf[at..];
                    let Some(end) = memchr3(delimiter, b'\n', b'\r', rest) else {
                        self.append(rest, text)?;
                        return Ok((buf.len(), None));
                    };
                    self.append(&rest[..end], text)?;
                    // One byte of a `\r\n` record end: the `\r` ends the
                    // line, and [`Fields::finish_line_end`] takes the `\n`.
                    // No field starts with that `\n` (the record before it
                    // takes it), so a line end here is always a new one.
                    let stop = rest[end];
                    self.lines += u64::from(stop != delimiter);
                    self.cr = stop == b'\r';
                    return Ok((at + end + 1, Some(stop != delimiter)));
                }
            }
        }
        Ok((at, None))
    }

    /// Appends `bytes` to the field, refusing it once it is too long.
    fn append(&mut self, bytes: &[u8], text: &mut Vec<u8>) -> Result<(), FieldError> {
        self.len += bytes.len();
        if self.len > self.max {
            return Err(FieldError::TooLong);
        }
        if self.keep {
            text.extend_from_slice(bytes);
        }
        Ok(())
    }
}

/// Reads the records of CSV text, one at a time.
pub(crate) struct Fields<R> {
    reader: R,
    delimiter: u8,
    /// Offset and line of the next unread byte.
    offset: u64,
    line: u64,
    /// The longest field, in bytes.
    max: usize,
    /// The current record's kept fields, unquoted, back to back.
    text: Vec<u8>,
    fields: Vec<Kept>,
    /// Fields of the current record, kept or not.
    count: usize,
    /// Offset and line of the current record's first byte.
    record_at: (u64, u64),
    /// Line of the first byte of the field read last (or failing).
    field_line: u64,
    /// The record read last ended at a `\r`: a `\n` next is its line end's.
    cr: bool,
    /// An empty line is a record of one empty field instead of skipped.
    keep_empty_lines: bool,
}

impl<R: BufRead> Fields<R> {
    /// The records of `reader`, whose first byte is at offset `offset` on
    /// line `line`; `delimiter` separates fields (not `"`, `\r` or `\n`:
    /// [`crate::TextConfig`] refuses those), none may exceed `max` bytes.
    pub(crate) fn new(reader: R, delimiter: u8, offset: u64, line: u64, max: usize) -> Self {
        debug_assert!(!matches!(delimiter, b'"' | b'\r' | b'\n'));
        Fields {
            reader,
            delimiter,
            offset,
            line,
            max,
            text: Vec::new(),
            fields: Vec::new(),
            count: 0,
            record_at: (offset, line),
            field_line: line,
            cr: false,
            keep_empty_lines: false,
        }
    }

    /// Reads an empty line as a record of one empty unquoted field instead
    /// of skipping it (for a file of one column, whose empty line is a
    /// value; a wider file's would be a record of the wrong width). Either
    /// way, the end of input after a line end is no record.
    pub(crate) fn keep_empty_lines(&mut self, keep: bool) {
        self.keep_empty_lines = keep;
    }

    /// Reads the next record, keeping its first `keep` fields (the rest
    /// are read and counted, so a record's memory stays bounded by `keep`
    /// fields); `Ok(false)` at the end of input.
    pub(crate) fn next_record(&mut self, keep: usize) -> Result<bool, FieldError> {
        self.record(keep, usize::MAX)
    }

    /// Reads the next record, keeping every field, and refuses it at its
    /// field `most + 1` ([`FieldError::TooManyFields`], with
    /// [`Fields::count`] at `most` and [`Fields::line`] that field's
    /// line) before reading that field: memory and time stay bounded by
    /// `most` fields.
    pub(crate) fn next_record_at_most(&mut self, most: usize) -> Result<bool, FieldError> {
        self.record(most, most)
    }

    /// Reads the next record, keeping `keep` fields and refusing one of
    /// more than `most`.
    fn record(&mut self, keep: usize, most: usize) -> Result<bool, FieldError> {
        self.text.clear();
        self.fields.clear();
        self.count = 0;
        self.finish_line_end()?;
        if !self.keep_empty_lines {
            self.skip_empty_lines()?;
        }
        self.record_at = (self.offset, self.line);
        if self.reader.fill_buf()?.is_empty() {
            return Ok(false);
        }
        loop {
            self.field_line = self.line;
            let kept = self.count < keep;
            let start = self.text.len();
            let (quoted, record_end) = self.field(kept)?;
            self.count += 1;
            if kept {
                let (end, line) = (self.text.len(), self.field_line);
                self.fields.push(Kept { end, quoted, line });
            } else {
                debug_assert_eq!(start, self.text.len());
            }
            if record_end {
                return Ok(true);
            }
            if self.count >= most {
                return Err(FieldError::TooManyFields);
            }
        }
    }

    /// Reads one field from its first byte, appending its unquoted bytes
    /// to `text` if `keep`: whether it was quoted, and whether it ended its
    /// record. Works on the bytes in hand, consuming them once per buffer.
    fn field(&mut self, keep: bool) -> Result<(bool, bool), FieldError> {
        let mut field = Field::new(self.max, keep);
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if field.state == State::Quoted {
                    return Err(FieldError::Malformed(Malformed::OpenQuote));
                }
                self.cr = false;
                return Ok((field.quoted, true));
            }
            let read = field.read(buf, self.delimiter, &mut self.text);
            // Counted before a fault too, whose line is the current one.
            self.line += std::mem::take(&mut field.lines);
            let (used, end) = read?;
            self.reader.consume(used);
            self.offset += used as u64;
            if let Some(end) = end {
                self.cr = field.cr;
                return Ok((field.quoted, end));
            }
        }
    }

    /// Consumes the `\n` of a `\r\n` whose `\r` ended the record read
    /// last (and counted its line), so that the line end is whole: the next
    /// record, or a split point, starts after it.
    pub(crate) fn finish_line_end(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.cr) && self.reader.fill_buf()?.first() == Some(&b'\n') {
            self.reader.consume(1);
            self.offset += 1;
        }
        Ok(())
    }

    /// Consumes the line ends before a record, so that its position is
    /// that of its first byte.
    fn skip_empty_lines(&mut self) -> Result<(), FieldError> {
        loop {
            let input = self.reader.fill_buf()?;
            let skip = input
                .iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count();
            if skip == 0 {
                return Ok(());
            }
            self.line += line_ends(&input[..skip], &mut self.cr);
            self.reader.consume(skip);
            self.offset += skip as u64;
        }
    }

    /// Fields of the current record (kept or not).
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Fields of the current record kept.
    pub(crate) fn kept(&self) -> usize {
        self.fields.len()
    }

    /// The kept fields' unquoted bytes, back to back.
    pub(crate) fn text(&self) -> &[u8] {
        &self.text
    }

    /// Kept field `index`: its range in [`Fields::text`], whether it was
    /// quoted, and its line.
    pub(crate) fn field_at(&self, index: usize) -> (Range<usize>, bool, u64) {
        let start = index.checked_sub(1).map_or(0, |i| self.fields[i].end);
        let field = self.fields[index];
        (start..field.end, field.quoted, field.line)
    }

    /// Offset and line of the current record's first byte.
    pub(crate) fn record_at(&self) -> (u64, u64) {
        self.record_at
    }

    /// Line of the first byte of the field read last, or of the one that
    /// could not be read.
    pub(crate) fn field_line(&self) -> u64 {
        self.field_line
    }

    /// The current line (of the next unread byte).
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Offset of the next unread byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }
}

/// Hands `found` the first record boundary at or after each of `targets`
/// (ascending) of the CSV text `reader` whose first byte is at `start`
/// (the header's): the scan of a region plan. It reads records as the
/// regions do, copying nothing, so a quoted newline never ends a record.
pub(crate) fn scan(
    delimiter: u8,
    reader: &mut dyn BufRead,
    start: u64,
    targets: &[u64],
    found: &mut dyn FnMut(Boundary),
) {
    let mut fields = Fields::new(reader, delimiter, start, 1, usize::MAX);
    let (mut records, mut last) = (0u64, None);
    for &target in targets {
        loop {
            // A fault ends the scan: the region that reads on finds it.
            let Ok(true) = fields.next_record(0) else {
                return;
            };
            records += 1;
            if records == 1 {
                // The header: the regions read empty lines as its width says.
                fields.keep_empty_lines(fields.count() == 1);
            }
            // A boundary follows a whole line end, so that a region never
            // starts with the `\n` of a `\r\n`.
            if fields.finish_line_end().is_err() {
                return;
            }
            let offset = fields.offset();
            // The first record is the header.
            if offset >= target && records > 1 && last != Some(offset) {
                last = Some(offset);
                found(Boundary {
                    offset,
                    line: fields.line(),
                    records_before: records - 1,
                });
                break;
            }
        }
    }
}
