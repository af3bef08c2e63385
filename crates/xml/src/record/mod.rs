//! Filling a row from one record element: its attributes, its direct child
//! elements, and `<field name="…">` children (the `mysqldump --xml` form).
//!
//! Only the record's attributes and direct children are fields. Text inside
//! a field's own child elements is not part of the value, and a record tag
//! met inside a record is just content of the outer one.

use ringpipe_pipeline::{ColumnUsage, Decode, Row};
use smallvec::SmallVec;

mod content;
mod fields;
mod paths;

use crate::config::{Limits, Repeated, XmlConfig};
use crate::diagnose::{Fault, Located};
use crate::document::Document;
use crate::error::LimitKind;
use crate::fields::FieldMap;
use crate::names::split_qname;
use crate::qname::NameTest;
use crate::same::same_str;
use crate::shape::Shape;
use crate::stream::{Hit, PathEval};
use crate::tag::Tag;

/// The XML Schema instance namespace (`xsi:nil`, `xsi:type`).
pub(crate) const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// Where text read now goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nowhere: not inside a field, or inside an unmapped or nil field.
    Nowhere,
    /// Appended to this column.
    Column(usize),
    /// A field of this column marked `xsi:nil="true"`: it holds no value,
    /// so content in it is an error.
    Nil(usize),
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
    /// Whether a plain field element may be taken in one step
    /// ([`RecordReader::plain_field`]): no field path and no decoding
    /// watches what a field's tokens do.
    plain_fields: bool,
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
            plain_fields: config.field_paths().is_empty()
                && config.column_decodes().iter().all(Option::is_none),
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
                let mut hits = Hits::new();
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
        } else {
            if depth == self.record_depth + 2 {
                match (self.target, taken) {
                    (Target::Column(column), false) => self.inside_field(column, name)?,
                    (Target::Nil(column), _) => {
                        return Err(self.nil_holds(column, "an element").into())
                    }
                    _ => {}
                }
            }
            if element.has_attributes() {
                self.check_attributes(element, declared)?;
            }
        }
        if self.serial == 0 {
            self.shape.note(name, depth);
        }
        Ok(Opened::Other)
    }

    /// An element `name` opened inside a field that feeds `column`: its
    /// text is not the field's (`<v>a<b>x</b>c</v>` gives `ac`), so it is
    /// counted as an ignored field `column/name`, or refused in strict
    /// mode.
    #[cold]
    fn inside_field(&mut self, column: usize, name: &str) -> Result<(), Located> {
        let field = format!("{}/{name}", self.columns[column]);
        if self.strict {
            return Err(Fault::UnknownField(field).into());
        }
        self.usage.ignore(&field);
        Ok(())
    }

    /// The error for content (`what`) inside a field of `column` marked
    /// `xsi:nil="true"`, which says the field has no value.
    #[cold]
    fn nil_holds(&self, column: usize, what: &str) -> Fault {
        Fault::BadValue {
            field: self.columns[column].clone(),
            message: format!("it is marked xsi:nil=\"true\" (no value) but holds {what}"),
        }
    }

    /// Whether `element` is a record element.
    #[inline]
    fn is_record(&self, element: &Tag<'_>, document: &Document) -> bool {
        let (prefix, local) = match element.prefixed() {
            true => split_qname(element.name()),
            false => ("", element.name()),
        };
        same_str(local, &self.row_test.local)
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
}

/// What the paths select at one element: a few at most, kept inline so
/// that a path hit costs no allocation per record.
pub(crate) type Hits<'a> = SmallVec<[Hit<'a>; 4]>;

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

fn too_large(max_value: usize) -> Fault {
    Fault::Limit(LimitKind::ValueBytes, max_value as u64)
}
