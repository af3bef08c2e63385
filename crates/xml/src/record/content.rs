//! Character data into the row: text and CDATA of a field, references
//! expanded, line ends normalized.

use ringpipe_pipeline::Row;

use crate::diagnose::{Fault, Located};
use crate::scan;
use crate::text::{self, DeclaredEntities, RefError};

use super::{too_large, RecordReader, Target};

impl RecordReader {
    /// Whether text at `depth` belongs to a field value.
    #[inline]
    pub(super) fn column_at(&self, depth: usize) -> Option<usize> {
        match self.target {
            Target::Column(column) if depth == self.record_depth + 1 => Some(column),
            _ => None,
        }
    }

    /// Whether text at `depth` goes nowhere (no field and no field path
    /// takes it), so that white space there need not be read as a token.
    #[inline]
    pub(crate) fn ignores_text(&self, depth: usize) -> bool {
        self.column_at(depth).is_none() && self.text_targets.is_empty()
    }

    /// Text or CDATA content at `depth`.
    #[inline(always)]
    pub(crate) fn text(&mut self, content: &str, depth: usize, row: &mut Row) -> Result<(), Fault> {
        self.text_of(content, false, depth, row)
    }

    /// [`RecordReader::text`], told whether `content` is known to hold
    /// no `\r` (`plain`), which spares the line-end scan.
    #[inline(always)]
    fn text_of(
        &mut self,
        content: &str,
        plain: bool,
        depth: usize,
        row: &mut Row,
    ) -> Result<(), Fault> {
        match self.target {
            Target::Column(column) if depth == self.record_depth + 1 => {
                self.append_text(column, content, plain, row)?;
            }
            Target::Nil(column) if depth == self.record_depth + 1 && !is_blank(content) => {
                return Err(self.nil_holds(column, "text"));
            }
            _ if depth == self.record_depth && !is_blank(content) => self.own_text(depth)?,
            _ => {}
        }
        if !self.text_targets.is_empty() {
            self.text_to_paths(content, depth, row)?;
        }
        Ok(())
    }

    /// Appends text content to `column`, normalizing line ends unless
    /// `plain` says it has none.
    #[inline(always)]
    pub(super) fn append_text(
        &mut self,
        column: usize,
        content: &str,
        plain: bool,
        row: &mut Row,
    ) -> Result<(), Fault> {
        let value = row.append_mut(column);
        if value.len() + content.len() > self.limits.max_value_bytes {
            return Err(too_large(self.limits.max_value_bytes));
        }
        if plain || self.keep_line_ends {
            value.push_str(content);
        } else {
            text::push_text(content, value);
        }
        Ok(())
    }

    /// Text directly inside the record element (at `depth`), outside any
    /// field: unless a `text()` path takes it, it is counted as the
    /// ignored field `text()`, or refused in strict mode.
    #[cold]
    fn own_text(&mut self, depth: usize) -> Result<(), Fault> {
        if self.record_depth == 0 || self.text_targets.iter().any(|&(d, _)| d == depth) {
            return Ok(());
        }
        if self.strict {
            return Err(Fault::UnknownField("text()".into()));
        }
        self.usage.ignore("text()");
        Ok(())
    }

    /// A run of character data at `depth`, its references still in place
    /// (`a &amp; b`), as the lexer found it: `(raw, plain, cr)`, `plain`
    /// when it holds no `&` and no `\r`, `cr` when it holds a `\r`.
    #[inline(always)]
    pub(crate) fn content(
        &mut self,
        (raw, plain, cr): (&str, bool, bool),
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        if plain {
            return self
                .text_of(raw, true, depth, row)
                .map_err(|fault| Located { fault, offset: 0 });
        }
        self.references(raw, cr, depth, row, declared)
    }

    /// [`RecordReader::content`] of a run that may hold references (and a
    /// `\r` only if `cr`). The pieces between references are short, so
    /// `&` and `;` are found with the short-run scans.
    fn references(
        &mut self,
        raw: &str,
        cr: bool,
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        let at = |offset: usize| move |fault| Located { fault, offset };
        let bytes = raw.as_bytes();
        let mut done = 0;
        while let Some(found) = scan::byte(b'&', &bytes[done..]) {
            let amp = done + found;
            self.text_of(&raw[done..amp], !cr, depth, row)
                .map_err(at(done))?;
            let Some(len) = scan::byte(b';', &bytes[amp + 1..]) else {
                return Err(at(amp)(Fault::syntax(RefError::Unterminated.to_string())));
            };
            let name = &raw[amp + 1..amp + 1 + len];
            self.reference(name, depth, row, declared)
                .map_err(at(amp))?;
            done = amp + len + 2;
        }
        self.text_of(&raw[done..], !cr, depth, row)
            .map_err(at(done))
    }

    /// The reference `&name;` at `depth`.
    fn reference(
        &mut self,
        name: &str,
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Fault> {
        let max_value = self.limits.max_value_bytes;
        if let Target::Nil(column) = self.target {
            if depth == self.record_depth + 1 {
                return Err(self.nil_holds(column, "a reference"));
            }
        }
        if depth == self.record_depth {
            self.own_text(depth)?;
        }
        if !self.text_targets.is_empty() {
            return self.reference_to_paths(name, depth, row, declared);
        }
        let out = match self.column_at(depth) {
            Some(column) => row.append_mut(column),
            None => {
                self.scratch.clear();
                &mut self.scratch
            }
        };
        text::push_reference(name, declared, out).map_err(|e| Fault::entity(name, e))?;
        if out.len() > max_value {
            return Err(too_large(max_value));
        }
        Ok(())
    }
}

/// Whether `text` is only XML white space.
#[inline]
fn is_blank(text: &str) -> bool {
    text.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}
