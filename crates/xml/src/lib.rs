//! A streaming, bounded-memory XML record source for ringpipe.
//!
//! [`XmlSource`] reads an XML document as a stream of tokens (never a DOM)
//! and fills one reused [`Row`](ringpipe_pipeline::Row) per record
//! element, accepting the three row forms of MySQL's `LOAD XML`, mixed
//! freely within a record:
//!
//! * attributes of the record element: `<product id="1">`;
//! * its child elements: `<product><id>1</id></product>`;
//! * `<field name="id">1</field>` children, as `mysqldump --xml` writes
//!   them, where `xsi:nil="true"` is `NULL`.
//!
//! ```
//! use ringpipe_pipeline::{Row, Source};
//! use ringpipe_xml::{XmlConfig, XmlSource};
//!
//! let xml = r#"<?xml version="1.0"?>
//! <catalogue>
//!   <product id="1" currency="EUR">
//!     <name>Caf&#xE9; &amp; Cr&#232;me</name>
//!     <price>19.99</price>
//!     <description/>
//!   </product>
//!   <product id="2"><name><![CDATA[<b>Bold</b>]]></name></product>
//! </catalogue>"#;
//!
//! let config = XmlConfig::new("product", ["id", "name", "price", "description", "currency"]);
//! let mut source = XmlSource::from_reader("catalogue.xml", xml.as_bytes(), config)?;
//! let mut row = Row::with_columns(source.columns().len());
//!
//! assert!(source.next_row(&mut row)?);
//! assert_eq!(row.text(0), Some("1"));
//! assert_eq!(row.text(1), Some("Café & Crème"));
//! assert_eq!(row.text(2), Some("19.99"));
//! assert_eq!(row.text(3), Some("")); // empty element: empty string
//! assert_eq!(row.text(4), Some("EUR"));
//! assert_eq!((row.position().line, row.position().column), (3, 3));
//!
//! assert!(source.next_row(&mut row)?);
//! assert_eq!(row.text(1), Some("<b>Bold</b>"));
//! assert_eq!(row.text(2), None); // missing: NULL
//!
//! assert!(!source.next_row(&mut row)?);
//! # Ok::<(), ringpipe_xml::XmlError>(())
//! ```
//!
//! # How it reads
//!
//! The input streams through a 64 KiB window; the lexer finds each token
//! (tag, text run, CDATA, comment) with short byte scans and hands it out as
//! a `&str` borrowed from the window, so nothing is copied until a value
//! lands in its row. UTF-8 is checked once per chunk as it arrives, line
//! numbers are counted once as bytes leave, and a text run keeps its
//! references (`a &amp; b` is one token), expanded as the value is copied.
//! Its throughput against quick-xml's event loop and a roxmltree DOM parse
//! is in docs/benchmarks.md, "XML parsing".
//!
//! # Inputs
//!
//! [`XmlSource::open`] reads a path (`-` is stdin); gzip is unwrapped when
//! the name ends in `.gz` or the data starts with the gzip magic number.
//! UTF-8 is the default (a BOM is skipped); UTF-16 (by BOM or by its first
//! bytes) and any encoding named in the XML declaration that `encoding_rs`
//! knows (ISO-8859-1, windows-1252, Shift_JIS, ...) are transcoded while
//! streaming. An unknown encoding is refused before the first record. For
//! transcoded input, byte offsets count UTF-8 bytes after transcoding.
//!
//! [`XmlSource::open_regions`] splits a plain UTF-8 file into regions, one
//! source each, to be parsed at once (the importer runs one pipeline per
//! region). Each region starts at a record's start tag; a scan with the
//! same lexer finds the parser's exact state there (open elements, line
//! and column, records before it), so every region's rows, positions and
//! errors are those one source gives for the whole file.
//!
//! # Records and fields
//!
//! * The record element may sit at any depth. A record element inside a
//!   record is content of the outer record, not a record of its own.
//! * Only the record's attributes and direct child elements are fields.
//!   A field's value is its own text (character data, references and CDATA
//!   concatenated); text inside the field's child elements is not merged
//!   in: `<name>a<b>x</b>c</name>` is `ac`.
//! * A missing field is `NULL`; an empty element (`<x/>`, `<x></x>`) or an
//!   empty attribute is the empty string; `xsi:nil="true"` (or `"1"`) on a
//!   field element is `NULL`, whatever its content (`xsi` is whatever
//!   prefix the document binds to the XML Schema instance namespace).
//! * Values are kept exactly: no whitespace is trimmed.
//! * A column given two values in one record (a repeated field, or two
//!   fields mapped to one column) is an error, unless
//!   [`XmlConfig::repeated`] says to keep the first, the last or to join
//!   them.
//! * Names match by local name; `p:name` and `{uri}name` in the mapping
//!   pin the namespace. `xmlns` attributes are namespace declarations,
//!   never fields.
//! * Fields map to columns by name, or through [`XmlConfig::rename`];
//!   unknown fields are skipped, or are an error with
//!   [`XmlConfig::strict`].
//! * A well-formed document without any record element is an error that
//!   names what its records look like, unless [`XmlConfig::allow_empty`];
//!   [`XmlSource::column_usage`] tells which columns never got a value.
//!
//! # Safety limits
//!
//! No external entity is ever fetched and no entity declared in a DOCTYPE
//! is ever expanded: a reference to one is an error, so entity-expansion
//! bombs cannot go off. Nesting depth, attributes per element and the size
//! of any value (and of any single piece of markup or text) are bounded by
//! [`Limits`]; memory use does not grow with the input's size.
//!
//! # Errors
//!
//! Malformed input stops the source with an [`XmlError`] that names the
//! input, `line:column`, the record and what was expected, for example
//! `products.xml:120:7: record 42: expected </name>, found </price>`.
//! Records before the error were complete and correct; nothing after it is
//! emitted.
//!
//! # Differences from LOAD XML
//!
//! MySQL's `LOAD XML` is a hand-written scanner, not an XML parser. Where
//! it departs from XML, this crate does the XML thing:
//!
//! * **Empty values.** `LOAD XML` loads an empty element or attribute as
//!   `NULL`; here it is the empty string, and only a missing field or
//!   `xsi:nil="true"` is `NULL`, so a `mysqldump --xml` file round-trips
//!   exactly.
//! * **Character references.** `LOAD XML` decodes only the five predefined
//!   entities and leaves `&#233;` / `&#xE9;` as literal text; here both are
//!   decoded (and an invalid one, like `&#0;`, is an error).
//! * **Nested elements.** `LOAD XML` can take a nested element of the same
//!   name as a field (`<product><variant><name>…` overriding the product's
//!   `<name>`); here only direct children of the record are fields.
//! * **Malformed input.** `LOAD XML` skips or mis-assigns what it cannot
//!   read (rows are lost silently); here the first error stops the import
//!   with its position.
//! * **Line ends and attributes.** Text line ends are normalized to `\n`
//!   and literal tabs/newlines in attribute values become spaces, as XML
//!   requires (`&#13;`, `&#9;`, `&#10;` keep them); `LOAD XML` keeps raw
//!   CR-LF. The one exception is a `mysqldump --xml` file (root element
//!   `mysqldump`): mysqldump writes a stored CR as a raw byte, so there
//!   line ends are kept as written ([`XmlConfig::keep_line_ends`]) and the
//!   dump round-trips exactly.
//! * **CDATA.** `LOAD XML` drops the content of a CDATA section (the field
//!   loads as an empty string, and in pretty-printed files neighbouring
//!   rows are mixed up or lost: 588 of 2,000 generated records here); here
//!   CDATA is text like any other.
//! * **Encodings.** The XML declaration's `encoding` is honoured; `LOAD
//!   XML` uses the statement's `CHARACTER SET` instead.
//!
//! # Well-formedness
//!
//! Every well-formedness constraint of XML 1.0 (5th edition) and
//! Namespaces 1.0 that a non-validating processor checks is checked, in
//! records and outside them: the XML declaration's syntax, the DOCTYPE and
//! its internal subset (declarations are read for syntax, never expanded),
//! comments (no `--`), PI targets, names (5th-edition `Name`, namespace
//! `QName`), characters (no C0 control but tab, LF, CR; no U+FFFE/U+FFFF),
//! references, `<` in attribute values, `]]>` in text, attribute
//! uniqueness (also by namespace and local name), declared prefixes,
//! end-tag match and trailing content. The W3C conformance suite's
//! standalone XML 1.0 cases are the test (tests/it/conformance.rs).
//!
//! # Generator
//!
//! The [`gen`] module writes deterministic, realistic product catalogues
//! for tests and benchmarks.

mod binary;
mod chars;
mod config;
mod cursor;
mod decl;
mod diagnose;
mod document;
mod dtd;
mod encoding;
mod error;
mod fields;
pub mod gen;
mod input;
mod lexer;
mod names;
mod namespaces;
mod path;
mod position;
mod qname;
mod record;
mod region;
mod same;
mod scan;
mod shape;
mod skim;
mod source;
mod stream;
mod tag;
mod text;
mod window;

pub use config::{Limits, Repeated, XmlConfig};
pub use error::{ErrorPosition, LimitKind, XmlError};
pub use ringpipe_pipeline::ColumnUsage;
pub use ringpipe_pipeline::Decode;
pub use source::XmlSource;
