//! The record reader's work for `--field` paths and `--decode`: storing
//! what the paths select, text for path targets, and turning a column's
//! text into bytes.

use ringpipe_pipeline::{Decode, Row};

use crate::diagnose::{Fault, Located};
use crate::document::Document;
use crate::stream::Hit;
use crate::tag::Tag;
use crate::text::{self, DeclaredEntities};

use super::fields::push_value;
use super::Hits;
use super::{too_large, Claim, RecordReader};

impl RecordReader {
    /// Path steps for an element inside a record (or, outside records, the
    /// attributes ancestor paths need); returns whether a path took it.
    pub(super) fn path_element(
        &mut self,
        element: &Tag<'_>,
        depth: usize,
        row: &mut Row,
        document: &Document,
    ) -> Result<bool, Located> {
        let (scope, declared) = (&document.namespaces, &document.declared);
        if self.record_depth == 0 {
            self.paths.outside(element, depth, scope, declared)?;
            return Ok(false);
        }
        let mut hits = Hits::new();
        let taken = self.paths.element(element, depth, scope, declared, |hit| {
            hits.push(hit);
            Ok(())
        })?;
        self.apply(hits, row, declared)?;
        Ok(taken)
    }

    /// Stores what the paths selected.
    pub(super) fn apply(
        &mut self,
        hits: Hits<'_>,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        let max_value = self.limits.max_value_bytes;
        for hit in hits {
            let (column, name, at) = match &hit {
                Hit::Raw {
                    column, name, at, ..
                } => (*column, *name, *at),
                Hit::Ancestor { column, .. } => (*column, "../@", 0),
                Hit::Text { column, name, .. } => (*column, *name, 0),
            };
            let claim = self.claim(column, name, at, row)?;
            let value = match claim {
                Claim::Skip => continue,
                Claim::Fresh => row.value_mut(column),
                Claim::Append => {
                    let value = row.append_mut(column);
                    value.push_str(&self.join_with);
                    value
                }
            };
            match hit {
                Hit::Raw { raw, at, .. } => push_value(raw, at, declared, value)?,
                Hit::Ancestor {
                    depth_index, slot, ..
                } => value.push_str(self.paths.ancestor_value(depth_index, slot).unwrap_or("")),
                Hit::Text { depth, .. } => {
                    self.text_targets.push((depth, column));
                    continue;
                }
            }
            if let Some(mode) = self.decodes[column] {
                self.decode_column(column, mode, name, row)
                    .map_err(|fault| Located { fault, offset: at })?;
            }
            if row.get(column).map_or(0, |v| v.len()) > max_value {
                return Err(too_large(max_value).into());
            }
        }
        Ok(())
    }

    /// Turns column `column`'s text into the bytes it encodes.
    pub(super) fn decode_column(
        &mut self,
        column: usize,
        mode: Decode,
        field: &str,
        row: &mut Row,
    ) -> Result<(), Fault> {
        self.decode_text.clear();
        self.decode_text
            .push_str(row.text(column).unwrap_or_default());
        self.binary.clear();
        mode.decode(&self.decode_text, &mut self.binary)
            .map_err(|e| Fault::BadValue {
                field: field.to_owned(),
                message: format!("column `{}`: {e}", self.columns[column]),
            })?;
        row.set_bytes(column, &self.binary);
        Ok(())
    }

    /// The part of [`RecordReader::text`] for text that paths select.
    #[inline(never)]
    pub(super) fn text_to_paths(
        &mut self,
        content: &str,
        depth: usize,
        row: &mut Row,
    ) -> Result<(), Fault> {
        for i in 0..self.text_targets.len() {
            let (at_depth, column) = self.text_targets[i];
            if at_depth == depth {
                self.append_text(column, content, false, row)?;
            }
        }
        Ok(())
    }

    /// [`RecordReader::reference`] when paths select text too.
    pub(super) fn reference_to_paths(
        &mut self,
        name: &str,
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Fault> {
        let mut expanded = std::mem::take(&mut self.scratch);
        expanded.clear();
        let result = text::push_reference(name, declared, &mut expanded)
            .map_err(|e| Fault::entity(name, e))
            .and_then(|()| {
                let targets = self
                    .text_targets
                    .iter()
                    .filter(|(d, _)| *d == depth)
                    .map(|(_, c)| *c);
                for column in self.column_at(depth).into_iter().chain(targets) {
                    let value = row.append_mut(column);
                    value.push_str(&expanded);
                    if value.len() > self.limits.max_value_bytes {
                        return Err(too_large(self.limits.max_value_bytes));
                    }
                }
                Ok(())
            });
        self.scratch = expanded;
        result
    }
}
