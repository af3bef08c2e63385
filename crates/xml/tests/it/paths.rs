//! `XmlConfig::field` paths, evaluated while streaming.

use ringpipe_xml::{Repeated, XmlConfig};

use crate::common::{parse, rows, Values};

fn values(row: &[&str]) -> Values {
    row.iter()
        .map(|v| (*v != "NULL").then(|| (*v).to_owned()))
        .collect()
}

const OSM: &str = r#"<osm version="0.6">
  <node id="1" lat="52.52" lon="13.40">
    <tag k="name" v="Berlin"/><tag k="name:de" v="Berlin"/><tag k="population" v="3&#x2009;600&#x2009;000"/>
  </node>
  <node id="2" lat="48.85" lon="2.35"><tag k="place" v="city"/></node>
</osm>"#;

#[test]
fn openstreetmap_tags_by_key() {
    let config = XmlConfig::new("node", ["id", "lat", "name", "population"])
        .field("name", "tag[@k='name']/@v")
        .field("population", "tag[@k=\"population\"]/@v");
    assert_eq!(
        rows(OSM, config),
        [
            values(&["1", "52.52", "Berlin", "3\u{2009}600\u{2009}000"]),
            values(&["2", "48.85", "NULL", "NULL"])
        ]
    );
}

#[test]
fn nested_children_attributes_and_own_text() {
    let xml = r#"<shop><item sku="a1">Widget <b>bold</b>!
        <price currency="EUR"><amount>9.50</amount><amount>1</amount></price>
    </item></shop>"#;
    let config = XmlConfig::new("item", ["sku", "amount", "currency", "label"])
        .field("amount", "price/amount")
        .field("currency", "price/@currency")
        .field("label", "text()")
        .repeated_for("amount", Repeated::First);
    assert_eq!(
        rows(xml, config),
        [values(&["a1", "9.50", "EUR", "Widget !\n        \n    "])]
    );
}

#[test]
fn an_ancestors_attribute_and_language_predicates() {
    let xml = r#"<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <group type="text">
    <mime-type type="text/plain">
      <comment>plain text document</comment>
      <comment xml:lang="de">Einfaches Textdokument</comment>
    </mime-type>
  </group>
  <group>
    <mime-type type="image/png"><comment xml:lang="en">PNG image</comment></mime-type>
  </group>
</mime-info>"#;
    let config = XmlConfig::new("mime-type", ["type", "group", "comment", "de", "en"])
        .field("group", "../@type")
        .field("comment", "comment[not(@xml:lang)]")
        .field("de", "comment[@xml:lang='de']")
        .field(
            "en",
            "{http://www.freedesktop.org/standards/shared-mime-info}comment[@xml:lang='en']",
        );
    assert_eq!(
        rows(xml, config),
        [
            values(&[
                "text/plain",
                "text",
                "plain text document",
                "Einfaches Textdokument",
                "NULL"
            ]),
            values(&["image/png", "NULL", "NULL", "NULL", "PNG image"])
        ]
    );
}

#[test]
fn paths_count_for_strict_and_repeated() {
    let xml = r#"<r><p a="1"><x k="1">one</x><x k="2">two</x></p></r>"#;
    let strict = || XmlConfig::new("p", ["first", "second", "key"]).strict(true);
    let config = strict()
        .field("first", "x[@k='1']")
        .field("second", "x[@k='2']")
        .field("key", "@a");
    assert_eq!(rows(xml, config), [values(&["one", "two", "1"])]);
    let both = XmlConfig::new("p", ["v"]).field("v", "x");
    let error = parse(xml, both).error.unwrap().to_string();
    assert!(
        error.contains("field `x` gives column `v` a second value"),
        "{error}"
    );
    let joined = XmlConfig::new("p", ["v"])
        .field("v", "x/@k")
        .repeated(Repeated::Join)
        .join_with(",");
    assert_eq!(rows(xml, joined), [values(&["1,2"])]);
}

#[test]
fn a_column_with_a_name_and_a_path_is_refused() {
    let config = XmlConfig::new("p", ["v"]).rename("w", "v").field("v", "x");
    let error = parse("<p/>", config).error.unwrap().to_string();
    assert!(
        error.contains("both a field name (--map) and a path (--field)"),
        "{error}"
    );
    let config = XmlConfig::new("p", ["v"]).field("v", "a//b");
    let error = parse("<p/>", config).error.unwrap().to_string();
    assert!(
        error.contains("`//` (any depth) is not supported"),
        "{error}"
    );
}
