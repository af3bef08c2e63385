//! Malformed input: the exact message (input, line:column, record, what
//! was expected), and nothing emitted after the error.

use ringpipe_xml::{XmlConfig, XmlError};

use crate::common::{failure, parse, rows, values};

fn config() -> XmlConfig {
    XmlConfig::new("product", ["id", "name"])
}

/// Asserts the full message and how many rows came before the error.
fn check(xml: &[u8], message: &str, rows_before: usize) {
    let (got, rows) = failure(xml, config());
    assert_eq!(got, message);
    assert_eq!(rows.len(), rows_before, "rows emitted before: {message}");
}

const FIRST: &str = "<catalogue>\n<product id=\"1\"><name>a</name></product>\n";

#[test]
fn mismatched_end_tag() {
    let xml = format!("{FIRST}<product id=\"2\"><name>b</price></product>\n</catalogue>");
    check(
        xml.as_bytes(),
        "t.xml:3:24: record 2: expected </name>, found </price>",
        1,
    );
}

#[test]
fn truncated_inside_a_tag() {
    let xml = format!("{FIRST}<product id=\"2\"><name>b</na");
    check(
        xml.as_bytes(),
        "t.xml:3:24: record 2: unexpected end of input inside a tag: expected `>`",
        1,
    );
}

#[test]
fn truncated_between_tags() {
    let xml = format!("{FIRST}<product id=\"2\"><name>b</name>");
    check(
        xml.as_bytes(),
        "t.xml:3:31: record 2: unexpected end of input: expected </product>",
        1,
    );
}

#[test]
fn truncated_after_a_record() {
    check(
        FIRST.as_bytes(),
        "t.xml:3:1: after record 1: unexpected end of input: expected </catalogue>",
        1,
    );
}

#[test]
fn truncated_in_cdata_and_comment() {
    check(
        b"<c><product><name><![CDATA[abc",
        "t.xml:1:19: record 1: unexpected end of input inside a CDATA section: expected `]]>`",
        0,
    );
    check(
        b"<c><product/>\n  <!-- abc",
        "t.xml:2:3: after record 1: unexpected end of input inside a comment: expected `-->`",
        1,
    );
}

#[test]
fn invalid_utf8_points_at_the_bad_byte() {
    let xml = b"<c>\n<product id=\"1\"><name>ab\xFFcd</name></product>\n</c>";
    let (message, rows) = failure(xml, config());
    assert!(
        message.starts_with("t.xml:2:25: record 1: invalid UTF-8"),
        "{message}"
    );
    assert!(rows.is_empty());
}

#[test]
fn invalid_utf8_in_a_tag() {
    let (message, _) = failure(b"<c>\n <product id=\"\xC3\x28\"/></c>", config());
    assert!(
        message.starts_with("t.xml:2:15: invalid UTF-8"),
        "{message}"
    );
}

#[test]
fn undefined_entity() {
    check(
        b"<c><product id=\"1\"><name>a&nbsp;b</name></product></c>",
        "t.xml:1:27: record 1: undefined entity: &nbsp;",
        0,
    );
}

#[test]
fn undefined_entity_in_an_attribute() {
    check(
        b"<c><product id=\"1\"/>\n<product id=\"x&y;\"/></c>",
        "t.xml:2:15: record 2: undefined entity: &y;",
        1,
    );
}

#[test]
fn undefined_entity_outside_any_field_still_stops() {
    check(
        b"<c>&foo;<product/></c>",
        "t.xml:1:4: undefined entity: &foo;",
        0,
    );
    check(
        b"<c><x a='&foo;'/></c>",
        "t.xml:1:10: undefined entity: &foo;",
        0,
    );
}

#[test]
fn entity_declared_in_the_doctype_is_refused() {
    check(
        b"<!DOCTYPE c [<!ENTITY bomb \"boom\">]>\n<c><product><name>&bomb;</name></product></c>",
        "t.xml:2:19: record 1: entity declared in the DOCTYPE: custom entities are refused, never expanded: &bomb;",
        0,
    );
}

#[test]
fn billion_laughs_is_refused_at_once() {
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n");
    for i in 1..=9 {
        let previous = if i == 1 {
            "lol".to_string()
        } else {
            format!("lol{}", i - 1)
        };
        xml.push_str(&format!(
            " <!ENTITY lol{i} \"{}\">\n",
            format!("&{previous};").repeat(10)
        ));
    }
    xml.push_str("]>\n<lolz><product><name>&lol9;</name></product></lolz>");
    let (message, rows) = failure(xml, config());
    assert!(
        message.ends_with("custom entities are refused, never expanded: &lol9;"),
        "{message}"
    );
    assert!(rows.is_empty());
}

#[test]
fn external_entity_is_never_resolved() {
    let xml = b"<!DOCTYPE c [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><c><product><name>&xxe;</name></product></c>";
    let drained = parse(xml, config());
    match drained.error {
        Some(XmlError::Entity { reference, .. }) => assert_eq!(reference, "&xxe;"),
        other => panic!("expected an entity error, got {other:?}"),
    }
    assert!(drained.rows.is_empty());
}

#[test]
fn invalid_character_reference() {
    check(
        b"<c><product><name>&#0;</name></product></c>",
        "t.xml:1:19: record 1: invalid character reference: &#0;",
        0,
    );
}

#[test]
fn lone_ampersand() {
    let (message, _) = failure(b"<c><product><name>a & b</name></product></c>", config());
    assert!(
        message.starts_with("t.xml:1:21: record 1: `&` must start a reference"),
        "{message}"
    );
}

#[test]
fn second_root_element() {
    check(
        b"<a/><b/>",
        "t.xml:1:5: found a second root element <b>; a document has exactly one",
        0,
    );
}

#[test]
fn text_after_the_root() {
    check(
        b"<c><product/></c>\njunk",
        "t.xml:1:18: after record 1: text after the root element",
        1,
    );
}

#[test]
fn end_tag_with_nothing_open() {
    check(
        b"<c></c></d>",
        "t.xml:1:8: found </d> but no element is open",
        0,
    );
}

#[test]
fn empty_input() {
    check(
        b"",
        "t.xml:1:1: no root element: the input is empty or has only a prolog",
        0,
    );
    check(
        b"<?xml version='1.0'?>\n<!-- only a prolog -->\n",
        "t.xml:3:1: no root element: the input is empty or has only a prolog",
        0,
    );
}

#[test]
fn declaration_not_at_the_start() {
    check(
        b"\n<?xml version='1.0'?><c/>",
        "t.xml:2:1: the XML declaration `<?xml …?>` is allowed only at the very start",
        0,
    );
}

#[test]
fn duplicate_and_malformed_attributes() {
    check(
        b"<c>\n<product id=\"1\" id=\"2\"/></c>",
        "t.xml:2:17: record 1: duplicate attribute",
        0,
    );
    check(
        b"<c><product id=1/></c>",
        "t.xml:1:16: record 1: attribute values must be quoted",
        0,
    );
}

#[test]
fn unknown_field_in_strict_mode() {
    let xml = b"<c><product id=\"1\"><name>a</name></product>\n<product id=\"2\"><colour>red</colour></product></c>";
    let (message, rows) = failure(xml, config().strict(true));
    assert_eq!(
        message,
        "t.xml:2:17: record 2: unknown field `colour` (no column takes it)"
    );
    assert_eq!(rows, vec![values(&[Some("1"), Some("a")])]);
    let (message, _) = failure(b"<c><product sku=\"1\"/></c>", config().strict(true));
    assert_eq!(
        message,
        "t.xml:1:4: record 1: unknown field `sku` (no column takes it)"
    );
}

#[test]
fn positions_count_characters_not_bytes() {
    check(
        "<c>\n<product><name>é🚀é</nome></product></c>".as_bytes(),
        "t.xml:2:19: record 1: expected </name>, found </nome>",
        0,
    );
}

#[test]
fn invalid_configuration_is_reported_before_reading() {
    let (message, _) = failure(b"<c/>", XmlConfig::new("p", ["a", "a"]));
    assert_eq!(
        message,
        "t.xml: invalid configuration: column `a` is listed twice"
    );
}

#[test]
fn a_closer_overlapping_its_opener_in_the_doctype_closes_nothing() {
    // `<?>` and `<!-->` are not a whole PI or comment: their closers are
    // looked for after the opener (found by libFuzzer, a panic before).
    check(
        b"<!DOCTYPE c [<?>?>]><c><product/></c>",
        "t.xml:1:16: expected a processing-instruction target",
        0,
    );
    // Here the comment is `>x`, which is well-formed.
    let read = rows(b"<!DOCTYPE c [<!-->x-->]><c><product/></c>", config());
    assert_eq!(read.len(), 1);
}
