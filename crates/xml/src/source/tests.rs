//! The one-step reading of plain field elements
//! ([`Lexer::plain_element`](crate::lexer::Lexer::plain_element)) changes
//! nothing: random documents full of near-plain fields give the same rows,
//! positions and errors with it and without it, whole and read in pieces.

use ringpipe_pipeline::{RecordPosition, Row, Source};

use super::XmlSource;
use crate::config::{Repeated, XmlConfig};
use crate::gen::rng::SplitMix64;
use crate::window::tests::trickle;

/// Field elements that are plain (most of a real file)...
const PLAIN: &[&str] = &[
    "<a>{}</a>",
    "<b>{}</b>",
    "<c/>",
    "<a></a>",
    "<b><![CDATA[{}]]></b>",
    "<field name=\"a\">{}</field>",
    "<field name=\"c\"/>",
    "<field name=\"b\"><![CDATA[{}]]></field>",
    "\n  ",
];

/// ...nearly plain, or wrong in one way.
const ODD: &[&str] = &[
    "<a><![CDATA[{}]]>{}</a>",
    "<a>{}<![CDATA[{}]]></a>",
    "<a><![CDATA[{}]]><![CDATA[{}]]></a>",
    "<a >{}</a>",
    "<a>{}</a >",
    "<b/ >",
    "<c x=\"{}\">{}</c>",
    "<p:a>{}</p:a>",
    "<q:a>{}</q:a>",
    "<a>{}</b>",
    "<a>{}</aa>",
    "<aa>{}</a>",
    "<z>{}</z>",
    "<a>{}<i>{}</i>{}</a>",
    "<a>{}<!-- {} --></a>",
    "<a><?pi {}?></a>",
    "<row>{}</row>",
    "<a>{}",
    "</row>",
    "<!-- {} -->",
    "{}",
    "<field name=\"a\" >{}</field>",
    "<field name=\"a\" xsi:nil=\"true\" />",
    "<field name=\"c\" />",
    "<field name='a'>{}</field>",
    "<field name=\"&#97;\">{}</field>",
    "<field name=\"p:a\">{}</field>",
    "<field name=\"z\">{}</field>",
    "<field name=\"a\">{}</b>",
    "<field>{}</field>",
    "<field name=\"a\">{}</field >",
    "<field name=\"a\"b{}</field>",
];

/// Text: plain, references, line ends, non-ASCII...
const GOOD: &[&str] = &[
    "",
    "x",
    "plain text",
    "Kofe \u{41a}\u{43e}",
    "\u{1f389}",
    "a &amp; b",
    "&lt;&gt;",
    "&#x41;&#66;",
    "x]y",
    "]]",
    "a\nb",
    "\t",
];

/// ...and text that is wrong, or needs more than a copy.
const BAD: &[&str] = &[
    "&bad;", "&#0;", "&amp", "x]]>y", "a\r\nb", "a\rb", "x>y", "<", "&", "\u{1}",
];

fn document(random: &mut SplitMix64) -> String {
    let root = random.pick(&[
        "<r xmlns:p=\"urn:p\">",
        "<r xmlns:p=\"urn:p\" xmlns=\"urn:d\">",
        "<r xmlns:p=\"urn:p\" xmlns:q=\"urn:q\">",
        "<r xmlns:p=\"urn:p\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">",
    ]);
    let mut xml = format!("<?xml version=\"1.0\"?>\n{root}\n");
    for _ in 0..random.below(6) {
        xml.push_str(random.pick(&["<row>", "<row id=\"7\">", "<row xmlns=\"urn:d\">"]));
        for _ in 0..random.below(6) {
            let forms = if random.percent(85) { PLAIN } else { ODD };
            let mut field = random.pick(forms).to_owned();
            while let Some(at) = field.find("{}") {
                let texts = if random.percent(92) { GOOD } else { BAD };
                field.replace_range(at..at + 2, random.pick(texts));
            }
            xml.push_str(&field);
        }
        xml.push_str("</row>\n");
    }
    xml.push_str("</r>\n");
    xml
}

fn config(random: &mut SplitMix64) -> XmlConfig {
    let mut config = XmlConfig::new("row", ["a", "b", "c"])
        .strict(random.percent(30))
        .repeated(random.pick(&[
            Repeated::Error,
            Repeated::First,
            Repeated::Last,
            Repeated::Join,
        ]))
        .max_value_bytes(random.pick(&[4, 1 << 20]))
        .max_depth(random.pick(&[2, 3, 64]));
    if random.percent(30) {
        config = config.rename("{urn:d}a", "a");
    }
    if random.percent(20) {
        config = config.rename("p:a", "b");
    }
    if random.percent(20) {
        config = config.rename("field", "c");
    }
    config
}

/// The rows read (values and positions), and the error that ended them.
type Outcome = (Vec<(Vec<Option<String>>, RecordPosition)>, Option<String>);

fn read(xml: &str, config: XmlConfig, step: usize, plain: bool) -> Outcome {
    let input = trickle(xml.as_bytes(), step);
    let mut source = match XmlSource::from_reader("t.xml", input, config) {
        Ok(source) => source,
        Err(error) => return (Vec::new(), Some(error.to_string())),
    };
    if !plain {
        source.record.general_path_only();
    }
    let mut row = Row::with_columns(source.columns.len());
    let mut rows = Vec::new();
    loop {
        match source.next_row(&mut row) {
            Ok(true) => {
                let values = row
                    .values()
                    .map(|v| v.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect();
                rows.push((values, row.position()));
            }
            Ok(false) => return (rows, None),
            Err(error) => return (rows, Some(error.to_string())),
        }
    }
}

#[test]
fn plain_fields_read_in_one_step_change_nothing() {
    let mut random = SplitMix64::new(0x91a1, 5);
    let mut taken = 0;
    for case in 0..4_000 {
        let xml = document(&mut random);
        let config = config(&mut random);
        let step = random.pick(&[1, 3, 7, 64 * 1024]);
        let general = read(&xml, config.clone(), step, false);
        let plain = read(&xml, config, step, true);
        assert_eq!(
            plain, general,
            "case {case}, read {step} bytes at a time:\n{xml}"
        );
        taken += usize::from(general.1.is_none() && !general.0.is_empty());
    }
    assert!(taken > 500, "too few documents read through: {taken}");
}
