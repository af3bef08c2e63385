//! CSV fields one at a time, through `csv-core` (the `csv` crate's own
//! state machine), with what the `csv` crate hides: whether a field was
//! quoted, and where each record and field starts.
//!
//! Quoting decides `NULL`: as in PostgreSQL's CSV format, only an unquoted
//! field equal to the null string is `NULL`, so `"\N"` (or `""` with an
//! empty null string) stays text.

use std::io::{self, BufRead};

use csv_core::{ReadFieldResult, ReadRecordResult};

use crate::region::Boundary;

/// Why a field could not be read.
#[derive(Debug)]
pub(crate) enum FieldError {
    /// The input failed (or is not UTF-8: see [`crate::input::NotUtf8`]).
    Io(io::Error),
    /// The field is longer than the limit.
    TooLong,
}

/// Reads the fields of CSV text.
pub(crate) struct Fields {
    reader: Box<dyn BufRead + Send>,
    core: csv_core::Reader,
    /// The first byte was fed alone, so that `csv-core` never takes a
    /// region's first bytes for a byte-order mark (the input skipped the
    /// file's own).
    fed: bool,
    /// Offset of the next unread byte.
    offset: u64,
    /// The last field's unquoted bytes: `value[..len]`.
    value: Vec<u8>,
    len: usize,
    max: usize,
    quoted: bool,
    /// The next field starts a record.
    record_start: bool,
    /// Offset and line of the current record's first byte.
    record_at: (u64, u64),
    /// Line of the current field's first byte.
    field_line: u64,
}

impl Fields {
    /// The fields of `reader`, whose first byte is at offset `offset` on
    /// line `line`; `delimiter` separates fields, none may exceed `max`
    /// bytes.
    pub(crate) fn new(
        reader: Box<dyn BufRead + Send>,
        delimiter: u8,
        offset: u64,
        line: u64,
        max: usize,
    ) -> Self {
        let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
        core.set_line(line);
        Fields {
            reader,
            core,
            fed: false,
            offset,
            value: Vec::new(),
            len: 0,
            max,
            quoted: false,
            record_start: true,
            record_at: (offset, line),
            field_line: line,
        }
    }

    /// Reads the next field: `Some(true)` if it ends its record, `None` at
    /// the end of input.
    pub(crate) fn next(&mut self) -> Result<Option<bool>, FieldError> {
        if self.record_start {
            self.skip_empty_lines()?;
            self.record_at = (self.offset, self.core.line());
        }
        self.field_line = self.core.line();
        self.len = 0;
        let first = self.reader.fill_buf().map_err(FieldError::Io)?;
        self.quoted = first.first() == Some(&b'"');
        loop {
            if self.len == self.value.len() {
                // One byte over the limit tells a field of exactly the
                // limit (csv-core fills the output before it looks at the
                // delimiter) from a longer one.
                let cap = self.max.saturating_add(1);
                if self.len >= cap {
                    return Err(FieldError::TooLong);
                }
                let grown = (self.value.len() * 2).max(256).min(cap);
                self.value.resize(grown, 0);
            }
            let input = self.reader.fill_buf().map_err(FieldError::Io)?;
            let input = match self.fed {
                true => input,
                false => &input[..input.len().min(1)],
            };
            let (result, nin, nout) = self.core.read_field(input, &mut self.value[self.len..]);
            self.fed |= nin > 0;
            self.reader.consume(nin);
            self.offset += nin as u64;
            self.len += nout;
            match result {
                ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => {}
                ReadFieldResult::Field { record_end } => {
                    self.record_start = record_end;
                    if self.len > self.max {
                        return Err(FieldError::TooLong);
                    }
                    return Ok(Some(record_end));
                }
                ReadFieldResult::End => return Ok(None),
            }
        }
    }

    /// Consumes the newlines before a record (`csv-core` skips empty lines
    /// too; skipping them here puts the record's position on its first
    /// byte).
    fn skip_empty_lines(&mut self) -> Result<(), FieldError> {
        loop {
            let input = self.reader.fill_buf().map_err(FieldError::Io)?;
            let skip = input
                .iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count();
            if skip == 0 {
                return Ok(());
            }
            let lines = input[..skip].iter().filter(|&&b| b == b'\n').count();
            self.core.set_line(self.core.line() + lines as u64);
            self.reader.consume(skip);
            self.offset += skip as u64;
        }
    }

    /// The last field's bytes, unquoted.
    pub(crate) fn value(&self) -> &[u8] {
        &self.value[..self.len]
    }

    /// Whether the last field was quoted.
    pub(crate) fn quoted(&self) -> bool {
        self.quoted
    }

    /// Offset and line of the current record's first byte.
    pub(crate) fn record_at(&self) -> (u64, u64) {
        self.record_at
    }

    /// Line of the last field's first byte.
    pub(crate) fn field_line(&self) -> u64 {
        self.field_line
    }

    /// The current line (of the next unread byte).
    pub(crate) fn line(&self) -> u64 {
        self.core.line()
    }

    /// Offset of the next unread byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }
}

/// Hands `found` the first record boundary at or after each of `targets`
/// (ascending) of the CSV text `reader` whose first byte is at `start`
/// (the header's): the scan of a region plan.
pub(crate) fn scan(
    delimiter: u8,
    reader: &mut dyn BufRead,
    start: u64,
    targets: &[u64],
    found: &mut dyn FnMut(Boundary),
) {
    let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let (mut out, mut ends) = (vec![0u8; 64 * 1024], vec![0usize; 1024]);
    let (mut offset, mut records, mut fed) = (start, 0u64, false);
    let mut targets = targets.iter().copied().peekable();
    let mut last = None;
    while let Some(&target) = targets.peek() {
        let Ok(input) = reader.fill_buf() else { return };
        let input = match fed {
            true => input,
            false => &input[..input.len().min(1)],
        };
        let (result, nin, _, _) = core.read_record(input, &mut out, &mut ends);
        fed |= nin > 0;
        reader.consume(nin);
        offset += nin as u64;
        match result {
            ReadRecordResult::InputEmpty
            | ReadRecordResult::OutputFull
            | ReadRecordResult::OutputEndsFull => {}
            ReadRecordResult::Record => {
                records += 1;
                // The first record is the header.
                if offset >= target && records > 1 && last != Some(offset) {
                    last = Some(offset);
                    targets.next();
                    found(Boundary {
                        offset,
                        line: core.line(),
                        records_before: records - 1,
                    });
                }
            }
            ReadRecordResult::End => return,
        }
    }
}
