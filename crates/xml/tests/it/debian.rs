//! Debian's own XML files read with field paths, compared with an
//! independent roxmltree reading of the same files: iso-codes' subdivisions
//! (attributes of the parent and grandparent elements) and
//! shared-mime-info's database (`xml:lang` predicates, repeated globs).
//! `tests/setup/debian-xml.sh` installs the packages or fails.

use std::path::Path;
use std::process::Command;

use ringpipe_xml::{Repeated, XmlConfig, XmlSource};

use crate::common::{drain, Values};

fn install() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/setup/debian-xml.sh");
    let status = Command::new("bash")
        .arg(script)
        .status()
        .expect("run debian-xml.sh");
    assert!(
        status.success(),
        "tests/setup/debian-xml.sh failed: {status}"
    );
}

fn ours(path: &str, config: XmlConfig) -> Vec<Values> {
    let drained = drain(XmlSource::open(path, config).unwrap());
    if let Some(error) = drained.error {
        panic!("{path}: {error}");
    }
    drained.rows
}

fn dom(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn parse(text: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, options).unwrap()
}

#[test]
fn iso_3166_2_subdivisions_with_their_parents_attributes() {
    install();
    let original = "/usr/share/xml/iso-codes/iso_3166-2.xml";
    let config = || {
        XmlConfig::new(
            "iso_3166_2_entry",
            ["code", "name", "parent", "type", "country"],
        )
        .field("type", "../@type")
        .field("country", "../../@code")
    };
    // The file as shipped (iso-codes 4.15) is not well-formed: two names
    // hold a bare `&` ("Enewetak & Ujelang"). It is refused, with where.
    let error = drain(XmlSource::open(original, config()).unwrap()).error;
    let error = error.expect("the bare `&` is refused").to_string();
    assert!(
        error.contains("`&` must start a reference ending in `;`") && error.contains("record"),
        "{error}"
    );
    // Repaired (`&amp;`), both readers must agree on every entry.
    let dir = tempfile::tempdir().unwrap();
    let repaired = dir.path().join("iso_3166-2.xml");
    std::fs::write(&repaired, dom(original).replace(" & ", " &amp; ")).unwrap();
    let path = repaired.to_str().unwrap();
    let got = ours(path, config());
    let text = dom(path);
    let doc = parse(&text);
    let want: Vec<Values> = doc
        .descendants()
        .filter(|n| n.has_tag_name("iso_3166_2_entry"))
        .map(|entry| {
            let subset = entry.parent_element().unwrap();
            let country = subset.parent_element().unwrap();
            vec![
                entry.attribute("code").map(str::to_owned),
                entry.attribute("name").map(str::to_owned),
                entry.attribute("parent").map(str::to_owned),
                subset.attribute("type").map(str::to_owned),
                country.attribute("code").map(str::to_owned),
            ]
        })
        .collect();
    assert!(want.len() > 4_000, "{} entries", want.len());
    assert_eq!(got, want);
}

#[test]
fn shared_mime_info_comments_by_language_and_all_globs() {
    install();
    let path = "/usr/share/mime/packages/freedesktop.org.xml";
    let config = XmlConfig::new("mime-type", ["type", "comment", "de", "acronym", "globs"])
        .field("comment", "comment[not(@xml:lang)]")
        .field("de", "comment[@xml:lang='de']")
        .field("globs", "glob/@pattern")
        .repeated_for("globs", Repeated::Join)
        .join_with(" ");
    let got = ours(path, config);
    let text = dom(path);
    let doc = parse(&text);
    let xml_ns = "http://www.w3.org/XML/1998/namespace";
    let own_text = |n: roxmltree::Node| -> String {
        n.children()
            .filter(|c| c.is_text())
            .filter_map(|c| c.text())
            .collect()
    };
    let want: Vec<Values> = doc
        .descendants()
        .filter(|n| n.has_tag_name("mime-type"))
        .map(|mime| {
            let children: Vec<_> = mime.children().filter(|c| c.is_element()).collect();
            let comment = |lang: Option<&str>| {
                children
                    .iter()
                    .find(|c| c.has_tag_name("comment") && c.attribute((xml_ns, "lang")) == lang)
                    .map(|c| own_text(*c))
            };
            let globs: Vec<&str> = children
                .iter()
                .filter(|c| c.has_tag_name("glob"))
                .filter_map(|c| c.attribute("pattern"))
                .collect();
            vec![
                mime.attribute("type").map(str::to_owned),
                comment(None),
                comment(Some("de")),
                children
                    .iter()
                    .find(|c| c.has_tag_name("acronym"))
                    .map(|c| own_text(*c)),
                (!globs.is_empty()).then(|| globs.join(" ")),
            ]
        })
        .collect();
    assert!(want.len() > 500, "{} MIME types", want.len());
    assert_eq!(got, want);
}

/// Debian's files read in regions give what one source gives: the same
/// rows at the same positions, and the same error where the file as
/// shipped has one (the split plan's scan, with its quick path for plain
/// records, meets records at several depths, a DOCTYPE with an internal
/// subset, comments between records and empty-element records).
#[test]
fn debian_files_split_into_regions_read_as_one_source_does() {
    install();
    let dir = tempfile::tempdir().unwrap();
    let subdivisions = "/usr/share/xml/iso-codes/iso_3166-2.xml";
    let repaired = dir.path().join("iso_3166-2.xml");
    std::fs::write(&repaired, dom(subdivisions).replace(" & ", " &amp; ")).unwrap();
    let entries = || XmlConfig::new("iso_3166_2_entry", ["code", "name", "parent"]);
    let languages = XmlConfig::new("iso_639_3_entry", ["id", "name", "scope", "type"]);
    let mime = XmlConfig::new("mime-type", ["type", "comment", "globs"])
        .field("globs", "glob/@pattern")
        .repeated_for("globs", Repeated::Join)
        .repeated_for("comment", Repeated::First);
    for (path, config) in [
        (Path::new(subdivisions), entries()),
        (repaired.as_path(), entries()),
        (
            Path::new("/usr/share/xml/iso-codes/iso_639-3.xml"),
            languages,
        ),
        (
            Path::new("/usr/share/mime/packages/freedesktop.org.xml"),
            mime,
        ),
    ] {
        let counts = crate::regions::check_file(path, &config, &path.display().to_string());
        assert!(counts[1] == 2, "{}: {counts:?}", path.display());
    }
}
