//! Document-level well-formedness that the event parser leaves to its
//! caller: one root element, nothing but whitespace, comments and PIs
//! outside it, the declaration first, every element closed by the end, and
//! the nesting depth bounded.

use crate::decl;
use crate::diagnose::{Fault, Located};
use crate::dtd::{self, DtdError};
use crate::error::LimitKind;
use crate::namespaces::Namespaces;
use crate::same::same_str;
use crate::tag::Tag;
use crate::text::DeclaredEntities;

/// Where the parser stands in the document as a whole.
#[derive(Debug, Default)]
pub(crate) struct Document {
    /// Elements currently open.
    depth: usize,
    max_depth: usize,
    /// Names of the open elements, back to back (for "expected `</x>`").
    open_names: String,
    /// Start of each open element's name in `open_names`.
    open_starts: Vec<usize>,
    root_seen: bool,
    root_closed: bool,
    doctype_seen: bool,
    /// Most attributes one element may have (for the namespace checks).
    max_attributes: usize,
    /// The namespace bindings in scope.
    pub(crate) namespaces: Namespaces,
    /// Whether any event came before the current one.
    started: bool,
    /// Entities declared in a DOCTYPE, to word their refusal.
    pub(crate) declared: DeclaredEntities,
}

impl Document {
    /// A document allowing `max_depth` levels of nesting and
    /// `max_attributes` attributes per element.
    pub(crate) fn new(max_depth: usize, max_attributes: usize) -> Self {
        Document {
            max_depth,
            max_attributes,
            ..Document::default()
        }
    }

    /// A document read from the middle: `open` are the elements open there
    /// (root first), `declared` the entities its DOCTYPE declared and
    /// `namespaces` the bindings in scope.
    pub(crate) fn resumed(
        max_depth: usize,
        max_attributes: usize,
        open: &[String],
        declared: DeclaredEntities,
        namespaces: Namespaces,
    ) -> Self {
        let mut document = Document {
            max_depth,
            max_attributes,
            root_seen: true,
            doctype_seen: true,
            started: true,
            declared,
            namespaces,
            ..Document::default()
        };
        for name in open {
            document.open_starts.push(document.open_names.len());
            document.open_names.push_str(name);
        }
        document.depth = open.len();
        document
    }

    /// Names of the open elements, root first.
    pub(crate) fn open_elements(&self) -> Vec<String> {
        let ends = self.open_starts.iter().skip(1).copied();
        self.open_starts
            .iter()
            .zip(ends.chain([self.open_names.len()]))
            .map(|(&start, end)| self.open_names[start..end].to_owned())
            .collect()
    }

    /// Number of open elements.
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Whether one more element may open inside the current one.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.depth < self.max_depth
    }

    /// Notes that one more event was read (for the declaration-first rule).
    #[inline]
    pub(crate) fn event(&mut self) {
        self.started = true;
    }

    /// A start tag `<name …>`: nesting, and namespaces (bindings, declared
    /// prefixes, unique expanded attribute names).
    #[inline]
    pub(crate) fn open(&mut self, tag: &Tag<'_>) -> Result<(), Located> {
        self.open_name(tag.name())?;
        self.namespaces
            .open(tag, self.depth, self.max_attributes, &self.declared)
    }

    /// The nesting part of [`Document::open`].
    #[inline]
    fn open_name(&mut self, name: &str) -> Result<(), Fault> {
        if self.depth == 0 {
            if self.root_closed {
                return Err(Fault::syntax(format!(
                    "found a second root element <{name}>; a document has exactly one"
                )));
            }
            self.root_seen = true;
        }
        if self.depth == self.max_depth {
            return Err(Fault::Limit(LimitKind::Depth, self.max_depth as u64));
        }
        self.depth += 1;
        self.open_starts.push(self.open_names.len());
        self.open_names.push_str(name);
        Ok(())
    }

    /// An end tag `</name>`, which must close the innermost open element.
    pub(crate) fn close(&mut self, name: &str) -> Result<(), Fault> {
        let Some(&start) = self.open_starts.last() else {
            return Err(Fault::syntax(format!(
                "found </{name}> but no element is open"
            )));
        };
        let expected = &self.open_names[start..];
        if !same_str(expected, name) {
            return Err(Fault::syntax(format!(
                "expected </{expected}>, found </{name}>"
            )));
        }
        self.open_starts.pop();
        self.open_names.truncate(start);
        self.namespaces.close(self.depth);
        self.depth -= 1;
        self.root_closed |= self.depth == 0;
        Ok(())
    }

    /// Text (or CDATA, or a reference) read at the current depth.
    #[inline]
    pub(crate) fn text(&self, text: &str, what: &str) -> Result<(), Fault> {
        if self.depth == 0 {
            return outside_root(text, what, self.root_seen);
        }
        Ok(())
    }

    /// An XML declaration `<?xml …?>`, `content` after the `<?`.
    pub(crate) fn declaration(&self, content: &str) -> Result<(), Located> {
        if self.started {
            return Err(Fault::syntax(
                "the XML declaration `<?xml …?>` is allowed only at the very start",
            )
            .into());
        }
        decl::check_xml_decl(content).map_err(|(at, message)| Located {
            fault: Fault::Syntax(message),
            offset: 2 + at,
        })
    }

    /// A `<!DOCTYPE …>`, `content` after `<!DOCTYPE`.
    pub(crate) fn doctype(&mut self, content: &str) -> Result<(), Located> {
        if self.root_seen {
            return Err(Fault::syntax("DOCTYPE after the root element").into());
        }
        if self.doctype_seen {
            return Err(Fault::syntax("a second DOCTYPE").into());
        }
        self.doctype_seen = true;
        dtd::check_doctype(content, &mut self.declared).map_err(|e| match e {
            DtdError::Syntax((at, message)) => Located {
                fault: Fault::Syntax(message),
                offset: 9 + at,
            },
            DtdError::Reference(at, reference, error) => Located {
                fault: Fault::Entity { reference, error },
                offset: 9 + at,
            },
        })
    }

    /// The end of a region that stops where the next one starts: the same
    /// elements must be open as the split plan found there.
    pub(crate) fn end_of_region(&self, expected: &[String]) -> Result<(), Fault> {
        let open = self.open_elements();
        if open != expected {
            return Err(Fault::syntax(format!(
                "the region ends inside <{}>, where the split plan found <{}>; \
                 read the file as one region to see why",
                open.join("><"),
                expected.join("><"),
            )));
        }
        Ok(())
    }

    /// The end of input.
    pub(crate) fn end(&self) -> Result<(), Fault> {
        if let Some(&start) = self.open_starts.last() {
            let name = &self.open_names[start..];
            return Err(Fault::syntax(format!(
                "unexpected end of input: expected </{name}>"
            )));
        }
        if !self.root_seen {
            return Err(Fault::syntax(
                "no root element: the input is empty or has only a prolog",
            ));
        }
        Ok(())
    }
}

/// Only whitespace text may stand outside the root element.
fn outside_root(text: &str, what: &str, root_seen: bool) -> Result<(), Fault> {
    let blank = text
        .bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if blank && what == "text" {
        return Ok(());
    }
    let place = if root_seen { "after" } else { "before" };
    Err(Fault::syntax(format!("{what} {place} the root element")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(fault: Fault) -> String {
        match fault {
            Fault::Syntax(message) => message,
            other => panic!("not a syntax fault: {other:?}"),
        }
    }

    #[test]
    fn one_root_and_all_closed() {
        let mut doc = Document::new(8, 8);
        doc.open_name("a").unwrap();
        doc.open_name("b").unwrap();
        assert_eq!(
            message(doc.end().unwrap_err()),
            "unexpected end of input: expected </b>"
        );
        assert_eq!(
            message(doc.close("a").unwrap_err()),
            "expected </b>, found </a>"
        );
        doc.close("b").unwrap();
        doc.close("a").unwrap();
        assert!(doc.end().is_ok());
        assert_eq!(
            message(doc.close("a").unwrap_err()),
            "found </a> but no element is open"
        );
        assert_eq!(
            message(doc.open_name("c").unwrap_err()),
            "found a second root element <c>; a document has exactly one"
        );
    }

    #[test]
    fn only_whitespace_text_outside_the_root() {
        let doc = Document::new(8, 8);
        assert!(doc.text(" \r\n\t", "text").is_ok());
        assert_eq!(
            message(doc.text("x", "text").unwrap_err()),
            "text before the root element"
        );
        assert_eq!(
            message(doc.text("", "CDATA").unwrap_err()),
            "CDATA before the root element"
        );
        assert_eq!(
            message(doc.end().unwrap_err()),
            "no root element: the input is empty or has only a prolog"
        );
    }

    #[test]
    fn resumed_in_the_middle_knows_what_is_open() {
        let mut doc = Document::new(8, 8);
        doc.open_name("catalog").unwrap();
        doc.open_name("group").unwrap();
        let open = doc.open_elements();
        assert_eq!(open, ["catalog", "group"]);
        let mut resumed = Document::resumed(
            8,
            8,
            &open,
            DeclaredEntities::default(),
            Namespaces::default(),
        );
        assert_eq!(resumed.depth(), 2);
        assert!(resumed.end_of_region(&open).is_ok());
        assert_eq!(
            message(resumed.close("catalog").unwrap_err()),
            "expected </group>, found </catalog>"
        );
        resumed.close("group").unwrap();
        assert_eq!(
            message(resumed.end_of_region(&open).unwrap_err()),
            "the region ends inside <catalog>, where the split plan found <catalog><group>; \
             read the file as one region to see why"
        );
        resumed.close("catalog").unwrap();
        assert!(resumed.end().is_ok());
        assert!(resumed.open_name("second").is_err(), "the root was seen");
    }

    #[test]
    fn depth_is_bounded() {
        let mut doc = Document::new(2, 8);
        doc.open_name("a").unwrap();
        doc.open_name("b").unwrap();
        assert!(matches!(
            doc.open_name("c"),
            Err(Fault::Limit(LimitKind::Depth, 2))
        ));
    }

    #[test]
    fn declaration_only_first() {
        let mut doc = Document::new(2, 8);
        assert!(doc.declaration("xml version='1.0'").is_ok());
        doc.event();
        assert!(doc.declaration("xml version='1.0'").is_err());
    }
}
