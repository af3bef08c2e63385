//! How fields map to columns: renames, strictness, mysqldump round trips,
//! record positions.

use ringpipe_xml::gen::{write_catalogue, Catalogue};
use ringpipe_xml::{Repeated, XmlConfig};

use crate::common::{parse, rows, values};

#[test]
fn rename_maps_a_field_to_another_column() {
    let xml = r#"<r><p title="T"><cost>3</cost><name>ignored</name></p></r>"#;
    let config = XmlConfig::new("p", ["name", "price"])
        .rename("title", "name")
        .rename("cost", "price")
        .rename("name", "price")
        .repeated_for("price", Repeated::Last);
    // `name` now feeds `price` too; with `last`, the later field wins.
    assert_eq!(
        rows(xml, config),
        vec![values(&[Some("T"), Some("ignored")])]
    );
}

#[test]
fn unknown_fields_are_skipped_by_default() {
    let xml = r#"<r><p a="1" zz="x"><b>2</b><yy>3</yy><field name="ww">4</field></p></r>"#;
    assert_eq!(
        rows(xml, XmlConfig::new("p", ["a", "b"])),
        vec![values(&[Some("1"), Some("2")])]
    );
}

#[test]
fn row_tag_may_be_written_like_load_xml() {
    let xml = "<r><p a='1'/></r>";
    assert_eq!(
        rows(xml, XmlConfig::new("<p>", ["a"])),
        vec![values(&[Some("1")])]
    );
}

#[test]
fn mysqldump_xml_round_trips_exactly() {
    // The shape `mysqldump --xml` writes, including NULL and the empty string.
    let xml = "<?xml version=\"1.0\"?>
<mysqldump xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">
<database name=\"shop\">
\t<table_data name=\"t\">
\t<row>
\t\t<field name=\"id\">1</field>
\t\t<field name=\"note\" xsi:nil=\"true\" />
\t\t<field name=\"tag\"></field>
\t\t<field name=\"text\">a &lt;b&gt; &amp; &quot;c&quot;
second line</field>
\t</row>
\t</table_data>
</database>
</mysqldump>
";
    let got = rows(xml, XmlConfig::new("row", ["id", "note", "tag", "text"]));
    assert_eq!(
        got,
        vec![values(&[
            Some("1"),
            None,
            Some(""),
            Some("a <b> & \"c\"\nsecond line")
        ])]
    );
}

#[test]
fn field_element_without_a_name_is_a_field_called_field() {
    let xml = "<r><p><field>x</field><field name='a'>y</field></p></r>";
    assert_eq!(
        rows(xml, XmlConfig::new("p", ["field", "a"])),
        vec![values(&[Some("x"), Some("y")])]
    );
}

#[test]
fn stale_values_never_leak_into_the_next_record() {
    let xml = "<r><p a='1'><b>long value</b></p><p><b>x</b></p></r>";
    assert_eq!(
        rows(xml, XmlConfig::new("p", ["a", "b"])),
        vec![
            values(&[Some("1"), Some("long value")]),
            values(&[None, Some("x")])
        ]
    );
}

/// Each record's position equals what a plain scan of the text finds.
#[test]
fn record_positions_are_exact() {
    let catalogue = Catalogue::new(300).seed(5).extras(true);
    let mut xml = Vec::new();
    write_catalogue(&catalogue, &mut xml).unwrap();
    let text = String::from_utf8(xml.clone()).unwrap();
    let drained = parse(&xml, catalogue.config());
    assert!(drained.error.is_none());
    let starts: Vec<usize> = text.match_indices("<product ").map(|(i, _)| i).collect();
    assert_eq!(starts.len(), drained.positions.len());
    for (n, (start, position)) in starts.iter().zip(&drained.positions).enumerate() {
        let before = &text[..*start];
        let line = before.matches('\n').count() as u64 + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() as u64 + 1;
        assert_eq!(position.record, n as u64 + 1);
        assert_eq!(position.byte_offset, *start as u64);
        assert_eq!(
            (position.line, position.column),
            (line, column),
            "record {}",
            n + 1
        );
    }
}
