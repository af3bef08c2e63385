//! Every record the source emits equals what a DOM extraction gives, on
//! generated catalogues and on hand-written nasty documents.

use ringpipe_xml::gen::{write_catalogue, Catalogue, Layout, PRODUCT_COLUMNS};
use ringpipe_xml::{Repeated, XmlConfig};

use crate::common::{assert_same, dom_rows, parse, parse_in_pieces, rows, values};

fn generated(catalogue: &Catalogue) -> String {
    let mut xml = Vec::new();
    write_catalogue(catalogue, &mut xml).unwrap();
    String::from_utf8(xml).unwrap()
}

fn check_catalogue(catalogue: Catalogue) {
    let xml = generated(&catalogue);
    let got = rows(&xml, catalogue.config());
    let tag = catalogue.layout_kind().row_tag();
    let dom = dom_rows(&xml, tag, &PRODUCT_COLUMNS).expect("roxmltree rejects the catalogue");
    assert_eq!(got.len(), catalogue.records() as usize);
    for (i, (got, dom)) in got.iter().zip(&dom).enumerate() {
        assert_eq!(got, dom, "record {} differs from the DOM", i + 1);
    }
    assert_eq!(got.len(), dom.len());
    // The generator's own truth is a second oracle.
    for (got, product) in got.iter().zip(catalogue.products()) {
        assert_eq!(got, &product.values().to_vec(), "product {}", product.id);
    }
}

#[test]
fn elements_layout_with_extras_matches_the_dom() {
    check_catalogue(Catalogue::new(600).seed(1).extras(true));
}

#[test]
fn attributes_layout_matches_the_dom() {
    check_catalogue(
        Catalogue::new(400)
            .seed(2)
            .layout(Layout::Attributes)
            .extras(true),
    );
}

#[test]
fn mysqldump_fields_layout_matches_the_dom() {
    check_catalogue(
        Catalogue::new(400)
            .seed(3)
            .layout(Layout::Fields)
            .extras(true),
    );
}

/// Rows written out by hand; `None` is NULL.
type Expected = &'static [&'static [Option<&'static str>]];

/// Hand-written documents (what, XML, rows), each checked against the DOM
/// and against the rows written out by hand.
const NASTY: &[(&str, &str, Expected)] = &[
    (
        "record at depth, and beside it",
        r#"<a><b><c><product id="1"><name>x</name></product></c></b><product id="2"/></a>"#,
        &[&[Some("1"), Some("x"), None], &[Some("2"), None, None]],
    ),
    (
        "same-named nested child is not the field",
        r#"<r><product id="1"><name>outer</name><v><name>inner</name></v></product>
           <product id="2"><v><name>inner</name></v></product></r>"#,
        &[&[Some("1"), Some("outer"), None], &[Some("2"), None, None]],
    ),
    (
        "record inside a record belongs to the outer one",
        r#"<r><product id="1"><rel><product id="2"><name>in</name></product></rel><name>out</name></product></r>"#,
        &[&[Some("1"), Some("out"), None]],
    ),
    (
        "entities and character references",
        r#"<r><product><name>&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#x1F600;&#233;</name></product></r>"#,
        &[&[None, Some("<>&'\"AB😀é"), None]],
    ),
    (
        "CDATA split in pieces, next to text",
        r#"<r><product><name>a<![CDATA[b<&>]]>c<![CDATA[]]>d<![CDATA[]]]]><![CDATA[>]]></name></product></r>"#,
        &[&[None, Some("ab<&>cd]]>"), None]],
    ),
    (
        "byte-order mark, comments and PIs between and inside records",
        "\u{FEFF}<?xml version=\"1.0\"?><!-- c --><?pi x?><r><!-- c --><product><?pi?><name>a<!-- c -->b<?pi x?>c</name><!----></product><?pi?></r><!-- end -->",
        &[&[None, Some("abc"), None]],
    ),
    (
        "mixed forms in one record",
        r#"<r><product id="1"><field name="name">n</field><price>2.50</price></product></r>"#,
        &[&[Some("1"), Some("n"), Some("2.50")]],
    ),
    (
        "field text around child elements, not inside them",
        r#"<r><product><name>a<b>x</b>c<i><name>y</name></i></name></product></r>"#,
        &[&[None, Some("ac"), None]],
    ),
    (
        "empty, missing and nil",
        r#"<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><product id=""><name/><price xsi:nil="true"></price></product><product><name></name><price xsi:nil="false">1</price></product></r>"#,
        &[&[Some(""), Some(""), None], &[None, Some(""), Some("1")]],
    ),
    (
        "line ends in text, whitespace in attributes",
        "<r><product id=\"a\tb\r\nc&#10;d\"><name>l1\r\nl2\rl3\n&#13;</name><price>  </price></product></r>",
        &[&[Some("a b c\nd"), Some("l1\nl2\nl3\n\r"), Some("  ")]],
    ),
    (
        "DOCTYPE without entities",
        "<!DOCTYPE r [<!ELEMENT r ANY><!ATTLIST product id CDATA #IMPLIED>]><r><product id='1' name='q&quot;\"'/></r>",
        &[&[Some("1"), Some("q\"\""), None]],
    ),
    (
        "DOCTYPE subset with comments and a PI holding quotes and `>`",
        "<!DOCTYPE r [\n <!-- the catalogue's types ] > -->\n <?note \" > ?>\n <!ELEMENT r ANY>\n]>\n<r><product id='1'><name>n</name></product></r>",
        &[&[Some("1"), Some("n"), None]],
    ),
    (
        "a later field wins, child over attribute",
        r#"<r><product id="1"><name>a</name><name>b</name><id>2</id></product></r>"#,
        &[&[Some("2"), Some("b"), None]],
    ),
    (
        "xmlns attributes are not fields; attributes hold `>`",
        r#"<r><product xmlns="urn:x" id='1>0'><name>n</name></product></r>"#,
        &[&[Some("1>0"), Some("n"), None]],
    ),
    (
        "empty records",
        r#"<r><product/><product></product><product> </product></r>"#,
        &[&[None, None, None], &[None, None, None], &[None, None, None]],
    ),
];

#[test]
fn nasty_documents_match_the_dom_and_the_expected_values() {
    let columns = ["id", "name", "price"];
    for (what, xml, want) in NASTY {
        let got = rows(
            xml,
            XmlConfig::new("product", columns).repeated(Repeated::Last),
        );
        let dom = dom_rows(xml, "product", &columns).expect(what);
        let want: Vec<_> = want.iter().map(|row| values(row)).collect();
        assert_eq!(
            dom, want,
            "{what}: the oracle disagrees with the hand-written values"
        );
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn a_lone_cr_before_a_reference_or_a_tag_is_a_line_feed() {
    // XML's end-of-line handling turns every CR not followed by LF into
    // LF, wherever it stands; roxmltree keeps one before a reference or a
    // tag, so these are checked against the values alone.
    let xml =
        "<r><product id=\"1\"><name>x\r&#65;\r</name><price>\r&amp;\r\n</price></product></r>";
    assert_eq!(
        rows(xml, XmlConfig::new("product", ["id", "name", "price"])),
        [values(&[Some("1"), Some("x\nA\n"), Some("\n&\n")])]
    );
}

#[test]
fn deep_nesting_below_the_limit_matches_the_dom() {
    let depth = 200;
    let xml = format!(
        "<r>{}<product><name>deep</name></product>{}</r>",
        "<d>".repeat(depth),
        "</d>".repeat(depth)
    );
    let got = rows(&xml, XmlConfig::new("product", ["name"]));
    assert_eq!(Some(got.clone()), dom_rows(&xml, "product", &["name"]));
    assert_eq!(got, vec![values(&[Some("deep")])]);
}

/// Documents several times the parser's read chunk (64 KiB), read whole and
/// in odd-sized pieces: the window drops, moves and refills its bytes many
/// times, and rows, positions and errors must not notice.
#[test]
fn reading_in_pieces_changes_nothing() {
    for layout in [Layout::Elements, Layout::Attributes, Layout::Fields] {
        let catalogue = Catalogue::new(2_000).seed(9).layout(layout).extras(true);
        let xml = generated(&catalogue).into_bytes();
        assert!(xml.len() > 4 * 65_536, "only {} bytes", xml.len());
        let whole = parse(&xml, catalogue.config());
        assert!(whole.error.is_none(), "{:?}", whole.error);
        assert_eq!(whole.rows.len(), 2_000);
        // A bad byte near the end: everything before it is still emitted.
        let mut bad = xml.clone();
        let at = bad.len() - 300;
        bad[at] = 0xFF;
        let bad_whole = parse(&bad, catalogue.config());
        assert!(bad_whole.error.is_some());
        for step in [7, 4_099, 65_537] {
            let what = format!("{layout:?} read {step} at a time");
            assert_same(
                &whole,
                &parse_in_pieces(&xml, catalogue.config(), step),
                &what,
            );
            let pieces = parse_in_pieces(&bad, catalogue.config(), step);
            assert_same(&bad_whole, &pieces, &format!("{what}, bad byte"));
        }
    }
}
