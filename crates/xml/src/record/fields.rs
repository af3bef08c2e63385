//! Which column an element or attribute feeds: the record's own
//! attributes, a field child (element name or `<field name="…">`, nil,
//! `xsi:type`), and the attribute checks of elements that feed none.

use ringpipe_pipeline::{Decode, Row};

use crate::binary::from_xsi_type;
use crate::diagnose::{ref_fault, Fault, Located};
use crate::document::Document;
use crate::lexer::PlainElement;
use crate::tag::Tag;
use crate::text::{self, DeclaredEntities};

use super::{too_large, Claim, RecordReader, Target, XSI_NS};

impl RecordReader {
    /// Loads the record element's own attributes as fields.
    pub(super) fn record_attributes(
        &mut self,
        element: &Tag<'_>,
        row: &mut Row,
        document: &Document,
    ) -> Result<(), Located> {
        let max_value = self.limits.max_value_bytes;
        let declared = &document.declared;
        element.for_each_attribute(self.limits.max_attributes, |attribute, at| {
            let key = attribute.key;
            let column = match attribute.prefixed {
                true if key.starts_with("xmlns:") => return Ok(()),
                true => self.fields.lookup(key, true, &document.namespaces),
                false if key == "xmlns" => return Ok(()),
                false => self
                    .fields
                    .lookup_split("", key, true, &document.namespaces),
            };
            match column {
                Some(column) => {
                    let value = match self.claim(column, key, attribute.key_at, row)? {
                        Claim::Skip => {
                            return check_value(attribute.value, at, declared, &mut self.scratch)
                        }
                        Claim::Fresh => row.value_mut(column),
                        Claim::Append => {
                            let value = row.append_mut(column);
                            value.push_str(&self.join_with);
                            value
                        }
                    };
                    push_value(attribute.value, at, declared, value)?;
                    if value.len() > max_value {
                        return Err(too_large(max_value).into());
                    }
                    if let Some(mode) = self.decodes[column] {
                        self.decode_column(column, mode, key, row)
                            .map_err(|fault| Located { fault, offset: at })?;
                    }
                    Ok(())
                }
                None if self.paths.takes_record_attribute(key, &document.namespaces) => {
                    check_value(attribute.value, at, declared, &mut self.scratch)
                }
                None if self.strict => Err(Fault::UnknownField(key.to_owned()).into()),
                None => {
                    self.usage.ignore(key);
                    check_value(attribute.value, at, declared, &mut self.scratch)
                }
            }
        })
    }

    /// A direct child of the record opened: finds its field name (element
    /// name, or the `name` attribute of a `<field>`) and whether it is nil.
    pub(super) fn field_start(
        &mut self,
        element: &Tag<'_>,
        row: &mut Row,
        document: &Document,
        taken: bool,
    ) -> Result<Target, Located> {
        if !element.has_attributes() {
            // No `name` to expand (and `String::new` allocates nothing).
            return self.field_start_in(element, row, document, taken, &mut String::new());
        }
        // The `name` buffer is reused from field to field (no allocation
        // per field in the mysqldump form).
        let mut name = std::mem::take(&mut self.field_name);
        let target = self.field_start_in(element, row, document, taken, &mut name);
        self.field_name = name;
        target
    }

    /// [`RecordReader::field_start`], with `name_buf` to expand a
    /// `<field name="…">` into.
    fn field_start_in(
        &mut self,
        element: &Tag<'_>,
        row: &mut Row,
        document: &Document,
        taken: bool,
        name_buf: &mut String,
    ) -> Result<Target, Located> {
        let element_name = element.name();
        let declared = &document.declared;
        let scope = &document.namespaces;
        name_buf.clear();
        let mut named = false;
        let mut nil = false;
        let mut typed: Option<Decode> = None;
        if element.has_attributes() {
            let scratch = &mut self.scratch;
            let is_field = !element.prefixed() && element_name == "field";
            element.for_each_attribute(self.limits.max_attributes, |attribute, at| {
                match attribute.key {
                    "name" if is_field => {
                        push_value(attribute.value, at, declared, name_buf)?;
                        named = true;
                    }
                    key if is_xsi(key, "nil", scope) => {
                        nil = matches!(attribute.value.trim(), "true" | "1")
                    }
                    key if is_xsi(key, "type", scope) => typed = from_xsi_type(attribute.value),
                    _ => check_value(attribute.value, at, declared, scratch)?,
                }
                Ok(())
            })?;
        }
        let field_name = named.then_some(name_buf.as_str());
        let column = match field_name {
            // `<field name="…">` names a column as the server spells it, in
            // no namespace: a colon in it is part of the name (the column
            // `a:name` is not `name` with a prefix).
            Some(name) => self.fields.lookup_spelled(name),
            None => match element.prefixed() {
                true => self.fields.lookup(element_name, false, scope),
                false => self.fields.lookup_split("", element_name, false, scope),
            },
        };
        let name = field_name.unwrap_or(element_name);
        let Some(column) = column else {
            if !taken {
                if self.strict {
                    return Err(Fault::UnknownField(name.to_owned()).into());
                }
                self.usage.ignore(name);
            }
            return Ok(Target::Nowhere);
        };
        let claim = self.claim(column, name, 0, row)?;
        match (claim, nil) {
            (Claim::Skip, _) | (Claim::Append, true) => Ok(Target::Nowhere),
            (Claim::Fresh, true) => {
                row.set_null(column);
                Ok(Target::Nil(column))
            }
            (Claim::Append, false) => {
                row.append_mut(column).push_str(&self.join_with);
                Ok(Target::Column(column))
            }
            (Claim::Fresh, false) => {
                // Marks the column present and empty: `<name/>` is the empty string.
                row.value_mut(column);
                if let Some(mode) = typed.or(self.decodes[column]) {
                    self.pending = Some((column, mode, name.to_owned()));
                }
                Ok(Target::Column(column))
            }
        }
    }

    /// A plain field element (`<name>text</name>`, `<name/>` or
    /// `<field name="name">text</field>`, see [`PlainElement`]) read
    /// directly inside the record at `depth`: fills
    /// its column as its start tag, text and end tag would, and returns
    /// `true`. Returns `false`, having changed nothing the tokens would
    /// not, when the element needs the general path: the name is no
    /// field of this record (or has a prefix), the column already has a
    /// value in this record, the text is over the value limit, or a path
    /// or decoding is configured.
    ///
    /// Field names were checked as XML names when the configuration was
    /// built, so a name that matches one is well-formed.
    #[inline]
    pub(crate) fn plain_field(
        &mut self,
        element: PlainElement<'_>,
        depth: usize,
        row: &mut Row,
        document: &Document,
    ) -> bool {
        if !self.plain_fields
            || self.record_depth == 0
            || depth != self.record_depth
            || element.text.len() > self.limits.max_value_bytes
        {
            return false;
        }
        debug_assert!(self.target == Target::Nowhere && self.pending.is_none());
        // A name with a prefix, a reference or white space matches no
        // entry's local name (those are names without `:`), so it falls
        // to the general path here. `<field name="…">` names a plain column
        // name, in no namespace, as in `field_start_in`.
        let scope = &document.namespaces;
        let found = self
            .fields
            .lookup_split("", element.name, element.named, scope);
        let Some(column) = found else {
            return false;
        };
        let before = self.filled[column];
        if before == self.serial {
            return false;
        }
        self.filled[column] = self.serial;
        let value = row.value_mut(column);
        if !element.references {
            value.push_str(element.text);
        } else {
            // As the text token would: its references expanded into the
            // field's value. A bad one is left to the general path, which
            // reports it where it stands (and clears the value first).
            self.target = Target::Column(column);
            let text = (element.text, false, false);
            let expanded = self.content(text, depth + 1, row, &document.declared);
            self.target = Target::Nowhere;
            if expanded.is_err() {
                self.filled[column] = before;
                return false;
            }
        }
        self.usage.mark(column);
        true
    }

    /// Turns [`RecordReader::plain_field`] off, for tests that compare
    /// with the general path.
    #[cfg(test)]
    pub(crate) fn general_path_only(&mut self) {
        self.plain_fields = false;
    }

    /// Validates the attributes of an element that holds no field.
    pub(super) fn check_attributes(
        &mut self,
        element: &Tag<'_>,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        let scratch = &mut self.scratch;
        element.for_each_attribute(self.limits.max_attributes, |attribute, at| {
            check_value(attribute.value, at, declared, scratch)
        })
    }
}

/// Whether the attribute `key` is `xsi:<local>` (by namespace, whatever
/// the prefix).
#[inline]
fn is_xsi(key: &str, local: &str, scope: &crate::namespaces::Namespaces) -> bool {
    match key.split_once(':') {
        Some((prefix, l)) => l == local && scope.resolve(prefix) == Some(XSI_NS),
        None => false,
    }
}

/// Appends a raw attribute value, positioning a bad reference.
pub(super) fn push_value(
    raw: &str,
    at: usize,
    declared: &DeclaredEntities,
    out: &mut String,
) -> Result<(), Located> {
    text::push_attribute_value(raw, declared, out)
        .map_err(|(offset, error)| ref_fault(raw, offset, at, error))
}

/// Checks a raw attribute value that is not kept.
fn check_value(
    raw: &str,
    at: usize,
    declared: &DeclaredEntities,
    scratch: &mut String,
) -> Result<(), Located> {
    text::check_attribute_value(raw, declared, scratch)
        .map_err(|(offset, error)| ref_fault(raw, offset, at, error))
}
