//! Filling a row from one record element: its attributes, its direct child
//! elements, and `<field name="…">` children (the `mysqldump --xml` form).
//!
//! Only the record's attributes and direct children are fields. Text inside
//! a field's own child elements is not part of the value, and a record tag
//! met inside a record is just content of the outer one.

use ringpipe_pipeline::Row;

mod paths;

use crate::binary::Decode;
use crate::config::{Limits, Repeated, XmlConfig};
use crate::diagnose::{ref_fault, Fault, Located};
use crate::document::Document;
use crate::error::LimitKind;
use crate::fields::FieldMap;
use crate::names::split_qname;
use crate::qname::NameTest;
use crate::shape::Shape;
use crate::stream::PathEval;
use crate::tag::Tag;
use crate::text::{self, DeclaredEntities, RefError};
use crate::usage::ColumnUsage;

/// The XML Schema instance namespace (`xsi:nil`, `xsi:type`).
pub(crate) const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// Where text read now goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nowhere: not inside a field, or inside an unmapped or nil field.
    Nowhere,
    /// Appended to this column.
    Column(usize),
}

/// What an opened element turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opened {
    /// A new record started.
    Record,
    /// Anything else.
    Other,
}

/// The record being read and how its fields map to columns.
#[derive(Debug)]
pub(crate) struct RecordReader {
    row_test: NameTest,
    fields: FieldMap,
    columns: Vec<String>,
    /// What a second value for each column does.
    policies: Vec<Repeated>,
    join_with: String,
    /// `filled[c] == serial` when column `c` has a value in this record.
    filled: Vec<u64>,
    /// Counts records started, so that `filled` needs no reset.
    serial: u64,
    /// Which columns ever received a value.
    usage: ColumnUsage,
    /// The document's element names, until the first record matches.
    shape: Shape,
    /// The `--field` paths.
    paths: PathEval,
    /// How each column's text turns into bytes (`--decode`), if it does.
    decodes: Vec<Option<Decode>>,
    /// The open field whose text is decoded when it closes: column, how,
    /// and the field's name.
    pending: Option<(usize, Decode, String)>,
    /// Reused buffers for decoding.
    decode_text: String,
    binary: Vec<u8>,
    /// `(depth, column)`: the text of the element open at `depth` goes to
    /// `column` (selected by a path).
    text_targets: Vec<(usize, usize)>,
    strict: bool,
    keep_line_ends: bool,
    limits: Limits,
    /// Depth of the open record element; 0 outside records.
    record_depth: usize,
    target: Target,
    /// Reused for attribute values that are checked but not kept.
    scratch: String,
    /// Reused for the `name` of a `<field name="…">`.
    field_name: String,
}

impl RecordReader {
    /// A reader for records as `config` describes them.
    pub(crate) fn new(config: &XmlConfig, usage: ColumnUsage) -> Self {
        RecordReader {
            row_test: config.row_test(),
            fields: FieldMap::new(config.field_tests()),
            columns: config.columns().to_vec(),
            policies: config.repeated_policies(),
            join_with: config.join_separator().to_owned(),
            filled: vec![0; config.columns().len()],
            serial: 0,
            usage,
            shape: Shape::default(),
            paths: PathEval::new(config.field_paths(), config.limits().max_attributes),
            text_targets: Vec::new(),
            decodes: config.column_decodes(),
            pending: None,
            decode_text: String::new(),
            binary: Vec::new(),
            strict: config.is_strict(),
            keep_line_ends: config.keeps_line_ends(),
            limits: config.limits(),
            record_depth: 0,
            target: Target::Nowhere,
            scratch: String::new(),
            field_name: String::new(),
        }
    }

    /// Keeps raw line ends, as for a `mysqldump` root (for a region read
    /// from the middle, which never sees the root's start tag).
    pub(crate) fn keep_line_ends(&mut self) {
        self.keep_line_ends = true;
    }

    /// Whether a record is open.
    #[inline]
    pub(crate) fn in_record(&self) -> bool {
        self.record_depth != 0
    }

    /// The message for a document in which no record element matched.
    pub(crate) fn no_records_message(&self) -> String {
        let name = match &self.row_test.ns {
            crate::qname::NsTest::Any => self.row_test.local.clone(),
            crate::qname::NsTest::Prefix(p) => format!("{p}:{}", self.row_test.local),
            crate::qname::NsTest::Uri(u) => format!("{{{u}}}{}", self.row_test.local),
        };
        self.shape.no_records_message(&name)
    }

    /// An element opened; `depth` counts it. Returns whether it starts a
    /// record (the caller then records the position).
    pub(crate) fn open(
        &mut self,
        element: &Tag<'_>,
        depth: usize,
        row: &mut Row,
        document: &Document,
    ) -> Result<Opened, Located> {
        let name = element.name();
        let declared = &document.declared;
        if depth == 1 && name == "mysqldump" {
            // mysqldump writes a stored CR as a raw byte: keep it (see
            // `XmlConfig::keep_line_ends`), or the dump would not round-trip.
            self.keep_line_ends = true;
        }
        if self.record_depth == 0 && self.is_record(element, document) {
            self.record_depth = depth;
            self.target = Target::Nowhere;
            self.serial += 1;
            self.record_attributes(element, row, document)?;
            if !self.paths.is_empty() {
                let mut hits = Vec::new();
                self.paths
                    .record(element, depth, &document.namespaces, |hit| {
                        hits.push(hit);
                        Ok(())
                    })?;
                self.apply(hits, row, declared)?;
            }
            return Ok(Opened::Record);
        }
        let mut taken = false;
        if !self.paths.is_empty() {
            taken = self.path_element(element, depth, row, document)?;
        }
        if self.record_depth != 0 && depth == self.record_depth + 1 {
            self.target = self.field_start(element, row, document, taken)?;
        } else if element.has_attributes() {
            self.check_attributes(element, declared)?;
        }
        if self.serial == 0 {
            self.shape.note(name, depth);
        }
        Ok(Opened::Other)
    }

    /// Whether `element` is a record element.
    #[inline]
    fn is_record(&self, element: &Tag<'_>, document: &Document) -> bool {
        let (prefix, local) = match element.prefixed() {
            true => split_qname(element.name()),
            false => ("", element.name()),
        };
        local == self.row_test.local
            && self
                .row_test
                .matches_ns(prefix, false, &document.namespaces)
    }

    /// Column `column` receives a value from field `field` (at the fault
    /// offset `at`): whether to take it, after the repeated-value policy.
    #[inline(always)]
    fn claim(
        &mut self,
        column: usize,
        field: &str,
        at: usize,
        row: &mut Row,
    ) -> Result<Claim, Located> {
        if self.filled[column] != self.serial {
            self.filled[column] = self.serial;
            self.usage.mark(column);
            return Ok(Claim::Fresh);
        }
        match self.policies[column] {
            Repeated::Error => Err(Located {
                fault: Fault::Repeated {
                    field: field.to_owned(),
                    column: self.columns[column].clone(),
                },
                offset: at,
            }),
            Repeated::First => Ok(Claim::Skip),
            Repeated::Last => Ok(Claim::Fresh),
            // Joining is for text: a decoded (binary) value would lose the
            // values before it, or decode the separator with them.
            Repeated::Join
                if self.decodes[column].is_some()
                    || row.get(column).is_some_and(|value| value.is_binary()) =>
            {
                Err(Located {
                    fault: Fault::BadValue {
                        field: field.to_owned(),
                        message: format!(
                            "repeats in column {}, which holds decoded bytes; \
                             --repeated join joins text: use first or last",
                            self.columns[column]
                        ),
                    },
                    offset: at,
                })
            }
            Repeated::Join if row.get(column).is_some() => Ok(Claim::Append),
            Repeated::Join => Ok(Claim::Fresh),
        }
    }

    /// The element at `depth` closed; returns whether that ends the record.
    #[inline(always)]
    pub(crate) fn close(&mut self, depth: usize, row: &mut Row) -> Result<bool, Fault> {
        if self.pending.is_some() && depth == self.record_depth + 1 {
            if let Some((column, mode, field)) = self.pending.take() {
                self.decode_column(column, mode, &field, row)?;
            }
        }
        if !self.paths.is_empty() {
            self.paths.close(depth);
            while let Some(&(d, column)) = self.text_targets.last().filter(|(d, _)| *d >= depth) {
                self.text_targets.pop();
                if let (true, Some(mode)) = (d == depth, self.decodes[column]) {
                    let field = format!("--field {}", self.columns[column]);
                    self.decode_column(column, mode, &field, row)?;
                }
            }
        }
        if depth == self.record_depth + 1 {
            self.target = Target::Nowhere;
        }
        let ends_record = depth == self.record_depth;
        if ends_record {
            self.record_depth = 0;
        }
        Ok(ends_record)
    }

    /// Whether text at `depth` belongs to a field value.
    #[inline]
    fn column_at(&self, depth: usize) -> Option<usize> {
        match self.target {
            Target::Column(column) if depth == self.record_depth + 1 => Some(column),
            _ => None,
        }
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
        if let Some(column) = self.column_at(depth) {
            self.append_text(column, content, plain, row)?;
        }
        if !self.text_targets.is_empty() {
            self.text_to_paths(content, depth, row)?;
        }
        Ok(())
    }

    /// Appends text content to `column`, normalizing line ends unless
    /// `plain` says it has none.
    #[inline(always)]
    fn append_text(
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

    /// A run of character data at `depth`, its references still in place
    /// (`a &amp; b`); `plain` when the lexer found no `&` and no `\r` in it.
    #[inline(always)]
    pub(crate) fn content(
        &mut self,
        raw: &str,
        plain: bool,
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        if plain {
            return self
                .text_of(raw, true, depth, row)
                .map_err(|fault| Located { fault, offset: 0 });
        }
        self.references(raw, depth, row, declared)
    }

    /// [`RecordReader::content`] of a run that may hold references.
    fn references(
        &mut self,
        raw: &str,
        depth: usize,
        row: &mut Row,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        let at = |offset: usize| move |fault| Located { fault, offset };
        let mut done = 0;
        while let Some(found) = memchr::memchr(b'&', &raw.as_bytes()[done..]) {
            let amp = done + found;
            self.text(&raw[done..amp], depth, row).map_err(at(done))?;
            let Some(len) = raw[amp + 1..].find(';') else {
                return Err(at(amp)(Fault::syntax(RefError::Unterminated.to_string())));
            };
            let name = &raw[amp + 1..amp + 1 + len];
            self.reference(name, depth, row, declared)
                .map_err(at(amp))?;
            done = amp + len + 2;
        }
        self.text(&raw[done..], depth, row).map_err(at(done))
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

    /// Loads the record element's own attributes as fields.
    fn record_attributes(
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
                None if self.strict
                    && !self.paths.takes_record_attribute(key, &document.namespaces) =>
                {
                    Err(Fault::UnknownField(key.to_owned()).into())
                }
                None => check_value(attribute.value, at, declared, &mut self.scratch),
            }
        })
    }

    /// A direct child of the record opened: finds its field name (element
    /// name, or the `name` attribute of a `<field>`) and whether it is nil.
    fn field_start(
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
                    key if is_xsi(key, "type", scope) => {
                        typed = Decode::from_xsi_type(attribute.value)
                    }
                    _ => check_value(attribute.value, at, declared, scratch)?,
                }
                Ok(())
            })?;
        }
        let field_name = named.then_some(name_buf.as_str());
        let column = match field_name {
            // `<field name="…">` names a plain column name, in no namespace.
            Some(name) => self.fields.lookup(name, true, scope),
            None => match element.prefixed() {
                true => self.fields.lookup(element_name, false, scope),
                false => self.fields.lookup_split("", element_name, false, scope),
            },
        };
        let name = field_name.unwrap_or(element_name);
        let Some(column) = column else {
            if self.strict && !taken {
                return Err(Fault::UnknownField(name.to_owned()).into());
            }
            return Ok(Target::Nowhere);
        };
        let claim = self.claim(column, name, 0, row)?;
        match (claim, nil) {
            (Claim::Skip, _) | (Claim::Append, true) => Ok(Target::Nowhere),
            (Claim::Fresh, true) => {
                row.set_null(column);
                Ok(Target::Nowhere)
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

    /// Validates the attributes of an element that holds no field.
    fn check_attributes(
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

/// What a column does with a value it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// The first value in this record, or one that replaces it.
    Fresh,
    /// Appended after a separator ([`Repeated::Join`]).
    Append,
    /// Dropped ([`Repeated::First`]).
    Skip,
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

fn too_large(max_value: usize) -> Fault {
    Fault::Limit(LimitKind::ValueBytes, max_value as u64)
}

/// Appends a raw attribute value, positioning a bad reference.
fn push_value(
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
