//! Helpers shared by the behaviour tests: draining a source, and the DOM
//! oracle built on roxmltree.

use ringpipe_pipeline::{RecordPosition, Row, Source};
use ringpipe_xml::{XmlConfig, XmlError, XmlSource};

/// One emitted row's values.
pub type Values = Vec<Option<String>>;

/// Everything a source produced: rows, their positions, and how it ended.
pub struct Drained {
    pub rows: Vec<Values>,
    pub positions: Vec<RecordPosition>,
    pub error: Option<XmlError>,
}

/// Reads every row of `source`, then checks that it stays finished.
pub fn drain(mut source: XmlSource) -> Drained {
    let mut row = Row::with_columns(source.columns().len());
    let mut drained = Drained {
        rows: Vec::new(),
        positions: Vec::new(),
        error: None,
    };
    loop {
        match source.next_row(&mut row) {
            Ok(true) => {
                drained.rows.push(
                    (0..row.len())
                        .map(|i| row.text(i).map(str::to_owned))
                        .collect(),
                );
                drained.positions.push(row.position());
            }
            Ok(false) => break,
            Err(error) => {
                drained.error = Some(error);
                break;
            }
        }
    }
    assert!(
        !source.next_row(&mut row).unwrap(),
        "source emitted after it finished"
    );
    drained
}

/// Parses `xml` with `config`, named `t.xml`.
pub fn parse(xml: impl AsRef<[u8]>, config: XmlConfig) -> Drained {
    let bytes = xml.as_ref().to_vec();
    match XmlSource::from_reader("t.xml", std::io::Cursor::new(bytes), config) {
        Ok(source) => drain(source),
        Err(error) => Drained {
            rows: Vec::new(),
            positions: Vec::new(),
            error: Some(error),
        },
    }
}

/// Hands out its bytes `step` at a time, so that every token boundary
/// falls somewhere across reads.
struct Pieces {
    bytes: Vec<u8>,
    at: usize,
    step: usize,
}

impl std::io::Read for Pieces {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.step).min(self.bytes.len() - self.at);
        out[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Parses `xml` as [`parse`] does, the input read `step` bytes at a time.
pub fn parse_in_pieces(xml: impl AsRef<[u8]>, config: XmlConfig, step: usize) -> Drained {
    let input = Pieces {
        bytes: xml.as_ref().to_vec(),
        at: 0,
        step,
    };
    match XmlSource::from_reader("t.xml", input, config) {
        Ok(source) => drain(source),
        Err(error) => Drained {
            rows: Vec::new(),
            positions: Vec::new(),
            error: Some(error),
        },
    }
}

/// Asserts that two drains emitted the same rows at the same positions and
/// ended the same way.
pub fn assert_same(a: &Drained, b: &Drained, what: &str) {
    assert_eq!(
        a.rows,
        b.rows,
        "{what}: rows differ ({:?} / {:?})",
        a.error.as_ref().map(ToString::to_string),
        b.error.as_ref().map(ToString::to_string)
    );
    assert_eq!(a.positions, b.positions, "{what}: positions differ");
    let message = |d: &Drained| d.error.as_ref().map(ToString::to_string);
    assert_eq!(message(a), message(b), "{what}: endings differ");
}

/// Parses `xml` and expects success.
pub fn rows(xml: impl AsRef<[u8]>, config: XmlConfig) -> Vec<Values> {
    let drained = parse(xml, config);
    if let Some(error) = drained.error {
        panic!("unexpected error: {error}");
    }
    drained.rows
}

/// Parses `xml` and expects an error; returns its message and the rows
/// emitted before it.
pub fn failure(xml: impl AsRef<[u8]>, config: XmlConfig) -> (String, Vec<Values>) {
    let drained = parse(xml, config);
    let error = drained.error.expect("expected an error");
    (error.to_string(), drained.rows)
}

/// Builds a `Values` from string literals; `None` is NULL.
pub fn values(items: &[Option<&str>]) -> Values {
    items.iter().map(|v| v.map(str::to_owned)).collect()
}

const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// The records a DOM extraction finds, by the crate's documented rules:
/// outermost `row_tag` elements; their attributes and direct child
/// elements (or `<field name>`) are fields; a field's value is its direct
/// text; `xsi:nil` means NULL; the later of two equal fields wins.
///
/// Returns `None` when roxmltree rejects the document.
pub fn dom_rows(xml: &str, row_tag: &str, columns: &[&str]) -> Option<Vec<Values>> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, options).ok()?;
    let column = |name: &str| columns.iter().position(|c| *c == name);
    let is_record = |n: &roxmltree::Node| n.is_element() && n.tag_name().name() == row_tag;
    let mut rows = Vec::new();
    for record in doc.descendants().filter(is_record) {
        if record.ancestors().skip(1).any(|a| is_record(&a)) {
            continue;
        }
        let mut row: Values = vec![None; columns.len()];
        for attribute in record.attributes() {
            if let Some(i) = column(attribute.name()) {
                row[i] = Some(attribute.value().to_owned());
            }
        }
        for child in record.children().filter(roxmltree::Node::is_element) {
            let tag = child.tag_name().name();
            let name = match child.attribute("name") {
                Some(name) if tag == "field" => name,
                _ => tag,
            };
            let Some(i) = column(name) else { continue };
            let nil = matches!(
                child.attribute((XSI, "nil")).map(str::trim),
                Some("true" | "1")
            );
            row[i] = (!nil).then(|| {
                child
                    .children()
                    .filter(roxmltree::Node::is_text)
                    .filter_map(|t| t.text())
                    .collect()
            });
        }
        rows.push(row);
    }
    Some(rows)
}
