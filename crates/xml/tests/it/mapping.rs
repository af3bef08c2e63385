//! Nothing matched, repeated fields and namespaces: the cases where an
//! importer could silently lose data.

use ringpipe_xml::{Repeated, XmlConfig, XmlError, XmlSource};

use crate::common::{drain, parse, rows, Values};

fn values(row: &[&str]) -> Values {
    row.iter()
        .map(|v| (*v != "NULL").then(|| (*v).to_owned()))
        .collect()
}

fn error(xml: &str, config: XmlConfig) -> String {
    match parse(xml, config).error {
        Some(error) => error.to_string(),
        None => panic!("no error for {xml}"),
    }
}

#[test]
fn no_record_element_names_what_the_records_look_like() {
    let xml =
        "<catalogue>\n<product><id>1</id></product>\n<product><id>2</id></product>\n</catalogue>\n";
    let message = error(xml, XmlConfig::new("row", ["id"]));
    assert_eq!(
        message,
        "t.xml:5:1: no <row> element; the file's records look like <product> (at depth 2); \
         use --row product"
    );
    assert!(matches!(
        parse(xml, XmlConfig::new("row", ["id"])).error,
        Some(XmlError::NoRecords { .. })
    ));
    // An empty export is fine when allowed; a broken one still is not.
    let empty = parse(
        "<mysqldump><database/></mysqldump>",
        XmlConfig::new("row", ["id"]).allow_empty(true),
    );
    assert!(empty.error.is_none() && empty.rows.is_empty());
    let broken = parse(
        "<a><b></a>",
        XmlConfig::new("row", ["id"]).allow_empty(true),
    );
    assert!(broken.error.is_some());
}

#[test]
fn columns_that_never_got_a_value_are_reported() {
    let xml = r#"<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
        <p><id>1</id><nme>typo</nme><note xsi:nil="true"/></p></r>"#;
    let source = XmlSource::from_reader(
        "t.xml",
        xml.as_bytes(),
        XmlConfig::new("p", ["id", "name", "note"]),
    )
    .unwrap();
    let usage = source.column_usage();
    assert_eq!(usage.unfilled(), ["id", "name", "note"], "before reading");
    let drained = drain(source);
    assert!(drained.error.is_none());
    assert_eq!(usage.unfilled(), ["name"]);
}

#[test]
fn fields_no_column_takes_are_counted() {
    // The record's own attribute `flag`, the child `extra` (twice), the
    // `tag` no path takes (as `--strict` would refuse it) and a `<field
    // name="zz">`; not the `tag` a path reads, nor the grandchild `deep`,
    // which belongs to `extra`.
    let xml = r#"<r><p flag="1"><id>1</id><extra>x<deep/></extra><extra>y</extra></p>
        <p><id>2</id><tag k="name" v="n"/><tag k="other" v="o"/><field name="zz">z</field></p></r>"#;
    let config = XmlConfig::new("p", ["id", "name"]).field("name", "tag[@k='name']/@v");
    let source = XmlSource::from_reader("t.xml", xml.as_bytes(), config).unwrap();
    let usage = source.column_usage();
    assert!(drain(source).error.is_none());
    let ignored = usage.ignored();
    let names: Vec<(&str, u64)> = ignored.names.iter().map(|(n, t)| (&n[..], *t)).collect();
    assert_eq!(names, [("flag", 1), ("extra", 2), ("tag", 1), ("zz", 1)]);
    assert_eq!(ignored.others, 0);
    assert!(usage.unfilled().is_empty());
}

#[test]
fn an_element_inside_a_field_is_counted_or_refused_as_its_text_is_not_taken() {
    let xml = "<r><p><id>1</id><v>a<b>x<i>y</i></b>c</v></p></r>";
    let config = || XmlConfig::new("p", ["id", "v"]);
    let source = XmlSource::from_reader("t.xml", xml.as_bytes(), config()).unwrap();
    let usage = source.column_usage();
    let drained = drain(source);
    assert_eq!(drained.rows, [values(&["1", "ac"])]);
    // `i` is inside `b`, which is counted already.
    assert_eq!(usage.ignored().names, [("v/b".to_owned(), 1)]);
    assert_eq!(
        error(xml, config().strict(true)),
        "t.xml:1:21: record 1: unknown field `v/b` (no column takes it)"
    );
}

#[test]
fn text_of_the_record_itself_is_counted_unless_a_path_takes_it() {
    let xml = "<r>between<p>own<id>1</id><![CDATA[more]]>&amp;</p><p> <id>2</id> </p></r>";
    let config = || XmlConfig::new("p", ["id", "note"]);
    let source = XmlSource::from_reader("t.xml", xml.as_bytes(), config()).unwrap();
    let usage = source.column_usage();
    assert!(drain(source).error.is_none());
    // Three runs of the first record's own text; white space and the text
    // between records are not fields.
    assert_eq!(usage.ignored().names, [("text()".to_owned(), 3)]);
    assert_eq!(
        error(xml, config().strict(true)),
        "t.xml:1:14: record 1: unknown field `text()` (no column takes it)"
    );
    let taken = parse(xml, config().field("note", "text()"));
    assert!(taken.error.is_none());
    assert_eq!(taken.rows[0], values(&["1", "ownmore&"]));
}

#[test]
fn a_nil_field_that_holds_content_is_refused() {
    let xsi = r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#;
    let record = |field: &str| format!("<r {xsi}><p><id>1</id>{field}</p></r>");
    let config = || XmlConfig::new("p", ["id", "v"]);
    for (field, what) in [
        (r#"<v xsi:nil="true">abc</v>"#, "text"),
        (r#"<v xsi:nil="1">&amp;</v>"#, "a reference"),
        (r#"<v xsi:nil="true"><b/></v>"#, "an element"),
    ] {
        let message = error(&record(field), config());
        let expected = format!(
            "field `v`: bad value: it is marked xsi:nil=\"true\" (no value) but holds {what}"
        );
        assert!(message.ends_with(&expected), "{field}: {message}");
    }
    // Empty, or white space only: NULL.
    for field in [r#"<v xsi:nil="true"/>"#, "<v xsi:nil=\"true\"> \n </v>"] {
        let drained = parse(record(field), config());
        assert!(drained.error.is_none(), "{field}");
        assert_eq!(drained.rows, [values(&["1", "NULL"])], "{field}");
    }
}

#[test]
fn a_repeated_field_is_an_error_by_default_with_its_position() {
    let xml = "<r>\n<p><c>a</c></p>\n<p><c>b</c>\n  <c xml:lang=\"de\">c</c></p></r>";
    assert_eq!(
        error(xml, XmlConfig::new("p", ["c"])),
        "t.xml:4:3: record 2: field `c` gives column `c` a second value in this record \
         (use --repeated first|last|join, or map the fields apart)"
    );
    // An attribute and a child of the same name are two values too.
    let both = r#"<r><p id="1"><id>2</id></p></r>"#;
    assert!(error(both, XmlConfig::new("p", ["id"])).contains("field `id` gives column `id`"));
}

#[test]
fn repeated_policies_first_last_join_and_per_column() {
    let xml = r#"<r><p a="1"><c>x</c><c>y</c><c>z</c><a>2</a></p></r>"#;
    let with = |config: XmlConfig| rows(xml, config);
    let config = || XmlConfig::new("p", ["a", "c"]);
    assert_eq!(
        with(config().repeated(Repeated::First)),
        [values(&["1", "x"])]
    );
    assert_eq!(
        with(config().repeated(Repeated::Last)),
        [values(&["2", "z"])]
    );
    assert_eq!(
        with(config().repeated(Repeated::Join)),
        [values(&["1\n2", "x\ny\nz"])]
    );
    assert_eq!(
        with(
            config()
                .repeated(Repeated::Join)
                .join_with(", ")
                .repeated_for("a", Repeated::First)
        ),
        [values(&["1", "x, y, z"])]
    );
    assert!(
        parse(xml, config().repeated_for("c", Repeated::Last))
            .error
            .is_some(),
        "a stays error"
    );
    // A nil value joins nothing and replaces under `last`.
    let nil = r#"<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><p><c>x</c><c xsi:nil="true"/></p></r>"#;
    assert_eq!(
        rows(nil, XmlConfig::new("p", ["c"]).repeated(Repeated::Join)),
        [values(&["x"])]
    );
    assert_eq!(
        rows(nil, XmlConfig::new("p", ["c"]).repeated(Repeated::Last)),
        [values(&["NULL"])]
    );
}

#[test]
fn names_match_by_local_name_prefix_or_uri() {
    let xml = r#"<feed xmlns="urn:atom" xmlns:g="urn:google" xmlns:h="urn:google">
        <entry><title>T</title><g:price>9</g:price></entry>
        <g:entry><h:title>U</h:title></g:entry></feed>"#;
    assert_eq!(
        rows(xml, XmlConfig::new("entry", ["title", "price"])),
        [values(&["T", "9"]), values(&["U", "NULL"])]
    );
    assert_eq!(
        rows(xml, XmlConfig::new("g:entry", ["title"])),
        [values(&["U"])],
        "g: is urn:google, also under the prefix h:"
    );
    assert_eq!(
        rows(xml, XmlConfig::new("{urn:atom}entry", ["title"])),
        [values(&["T"])]
    );
    // Same local name in two namespaces: repeated, unless mapped apart.
    let two = r#"<r xmlns:a="urn:a" xmlns:b="urn:b"><p><a:id>1</a:id><b:id>2</b:id></p></r>"#;
    assert!(error(two, XmlConfig::new("p", ["id"])).contains("field `b:id` gives column `id`"));
    let apart = XmlConfig::new("p", ["id", "other"])
        .rename("a:id", "id")
        .rename("{urn:b}id", "other");
    assert_eq!(rows(two, apart), [values(&["1", "2"])]);
}

#[test]
fn a_namespace_pinned_mapping_wins_over_a_plain_name_whatever_the_flag_order() {
    let xml = r#"<r xmlns:a="urn:a" xmlns:b="urn:b">
        <p><a:id>1</a:id><b:id>2</b:id></p><p><id>3</id><a:id>4</a:id></p></r>"#;
    let plain_first = XmlConfig::new("p", ["x", "y"])
        .rename("id", "x")
        .rename("a:id", "y");
    let pinned_first = XmlConfig::new("p", ["x", "y"])
        .rename("a:id", "y")
        .rename("id", "x");
    for config in [plain_first, pinned_first] {
        assert_eq!(
            rows(xml, config),
            [values(&["2", "1"]), values(&["3", "4"])]
        );
    }
}

#[test]
fn namespace_declarations_are_never_fields() {
    let xml = r#"<r><p xmlns="urn:x" xmlns:q="urn:q" q:xmlns="1" id="7"/></r>"#;
    let config = XmlConfig::new("p", ["xmlns", "q", "id"]).strict(true);
    assert_eq!(
        rows(xml, config),
        [values(&["1", "NULL", "7"])],
        "q:xmlns is an attribute named xmlns in urn:q"
    );
}

#[test]
fn joining_a_repeated_binary_field_is_refused_not_half_lost() {
    let typed = r#"<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><p><b xsi:type="xs:hexBinary">00</b><b xsi:type="xs:hexBinary">01</b></p></r>"#;
    let config = || XmlConfig::new("p", ["b"]).repeated(Repeated::Join);
    let message = error(typed, config());
    assert!(message.contains("--repeated join joins text"), "{message}");
    let decoded = "<r><p><b>00</b><b>01</b></p></r>";
    let message = error(decoded, config().decode("b", ringpipe_xml::Decode::Hex));
    assert!(message.contains("holds decoded bytes"), "{message}");
}

#[test]
fn white_space_a_field_holds_is_kept_and_indentation_is_not_a_value() {
    let xml = "<?xml version=\"1.0\"?>\n<r>\n  <row>\n    <a>   </a>\n    <b>\r\n    </b>\n    \
               <c> x <i>\n</i> y </c>\n  </row>\n  \t\r\n<row><a/><b> </b><c/></row>\n</r>\n";
    assert_eq!(
        rows(xml, XmlConfig::new("row", ["a", "b", "c"])),
        [values(&["   ", "\n    ", " x  y "]), values(&["", " ", ""])]
    );
    // Before the XML declaration, white space is still refused.
    let message = error(
        " \n<?xml version=\"1.0\"?><r><row><a/></row></r>",
        XmlConfig::new("row", ["a"]),
    );
    assert!(message.contains("XML declaration"), "{message}");
}

#[test]
fn a_mysqldump_field_name_is_a_column_name_not_a_qualified_name() {
    // mariadb-dump --xml writes each column's name as an attribute value,
    // and a column's name may hold a colon: `a:name` and `:name` are
    // columns of their own, not prefixed forms of `name`.
    let xml = r#"<mysqldump><database name="d"><table_data name="t">
        <row><field name="id">1</field><field name="a:name">x</field><field name="name">y</field></row>
        <row><field name="id">2</field><field name=":name">z</field></row>
        </table_data></database></mysqldump>"#;
    assert_eq!(
        rows(xml, XmlConfig::new("row", ["id", "name"])),
        [values(&["1", "y"]), values(&["2", "NULL"])]
    );
    let strict = XmlConfig::new("row", ["id", "name"]).strict(true);
    assert!(
        error(xml, strict).contains("a:name"),
        "an unmapped dump column is an unknown field in strict mode"
    );
    // Such a column is reached by its own name, or mapped by it.
    assert_eq!(
        rows(xml, XmlConfig::new("row", ["id", "a:name"])),
        [values(&["1", "x"]), values(&["2", "NULL"])]
    );
    assert_eq!(
        rows(
            xml,
            XmlConfig::new("row", ["id", "other"]).rename("a:name", "other")
        ),
        [values(&["1", "x"]), values(&["2", "NULL"])]
    );
}
