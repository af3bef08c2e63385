//! The lexer on every kind of token, read in pieces of every size.

use super::*;
use crate::window::tests::trickle;

/// Each token as a short string, reading `step` bytes at a time.
fn tokens(xml: &str, step: usize) -> Result<Vec<String>, String> {
    let input = trickle(xml.as_bytes(), step);
    let mut lexer = Lexer::new(Window::new(input, 0, 1 << 20, 1 << 20));
    let mut out = Vec::new();
    loop {
        let token = match lexer.next_token() {
            Ok(token) => token,
            Err(located) => return Err(format!("{:?} at {}", located.fault, located.offset)),
        };
        out.push(match token {
            Token::Start(tag) => format!("<{}|{}>", tag.name(), tag.attributes_raw()),
            Token::Empty(tag) => format!("<{}|{}/>", tag.name(), tag.attributes_raw()),
            Token::End(name) => format!("</{name}>"),
            Token::Text { raw, .. } => format!("T({raw})"),
            Token::CData(text) => format!("C({text})"),
            Token::Decl(_) => "decl".into(),
            Token::DocType(content) => format!("D({content})"),
            Token::Ignored => "-".into(),
            Token::Eof => return Ok(out),
        });
    }
}

/// Same tokens whatever the read size.
fn check(xml: &str, want: &[&str]) {
    for step in [1, 2, 3, 7, 1 << 16] {
        assert_eq!(
            tokens(xml, step).unwrap(),
            want,
            "{xml:?} read {step} at a time"
        );
    }
}

fn fails(xml: &str, want: &str) {
    for step in [1, 5, 1 << 16] {
        let got = tokens(xml, step).unwrap_err();
        assert!(got.contains(want), "{xml:?} read {step} at a time: {got}");
    }
}

#[test]
fn every_kind_of_token() {
    check(
        "<?xml version='1.0'?><!DOCTYPE r [<!ENTITY e 'a>b'>]><?pi x?><!-- c -->\
         <r a='1>2' b=\"'\">x &amp; y<![CDATA[<]]]>é<e/></r >\n",
        &[
            "decl",
            "D( r [<!ENTITY e 'a>b'>])",
            "-",
            "-",
            "<r| a='1>2' b=\"'\">",
            "T(x &amp; y)",
            "C(<])",
            "T(é)",
            "<e|/>",
            "</r>",
            "T(\n)",
        ],
    );
}

#[test]
fn comments_and_pis_in_the_doctype_subset_hide_quotes_and_brackets() {
    let doctype = " r [<!-- it's ] > --><?p \" > ?><!ENTITY e '<!--'>]";
    check(
        &format!("<!DOCTYPE{doctype}><r/>"),
        &[&format!("D({doctype})"), "<r|/>"],
    );
    // Outside the subset, `<!--` means nothing to the DOCTYPE.
    check(
        "<!DOCTYPE r SYSTEM 'x<!--'><r/>",
        &["D( r SYSTEM 'x<!--')", "<r|/>"],
    );
    fails("<!DOCTYPE r [<!-- ]> -", "inside the DOCTYPE: expected `>`");
    fails("<!DOCTYPE r [<? ]> ?", "inside the DOCTYPE: expected `>`");
}

#[test]
fn text_is_plain_without_references_and_carriage_returns() {
    for (text, want, want_cr) in [
        ("a b > c", true, false),
        ("a &amp; b", false, false),
        ("a\r\nb", false, true),
        ("a &amp;\r b", false, true),
        (&format!("{}&lt;", "x".repeat(70)), false, false),
        (&format!("{}&lt;\r", "x".repeat(70)), false, true),
        (&format!("{}>\n", "x".repeat(70)), true, false),
    ] {
        for step in [1, 3, 1 << 16] {
            let input = trickle(format!("{text}<r/>").as_bytes(), step);
            let mut lexer = Lexer::new(Window::new(input, 0, 1 << 20, 1 << 20));
            match lexer.next_token() {
                Ok(Token::Text { raw, plain, cr }) => assert_eq!(
                    (raw, plain, cr),
                    (text, want, want_cr),
                    "read {step} at a time"
                ),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
    fails("<r>a]]>", "`]]>` is not allowed in text");
}

#[test]
fn near_misses_of_the_declaration_are_pis() {
    check("<?xml-stylesheet a?><?xml?>", &["-", "decl"]);
}

#[test]
fn truncated_tokens_say_what_is_missing() {
    fails("<r><!-- x", "inside a comment: expected `-->`");
    fails("<r><!-", "inside a comment");
    fails("<r><![CDATA[x]]", "inside a CDATA section: expected `]]>`");
    fails("<r><![CDA", "inside a CDATA section");
    fails("<r a='x", "inside an attribute value: expected `'`");
    fails("<r", "inside a tag: expected `>`");
    fails("<r></r", "inside a tag: expected `>`");
    fails("<?pi ?", "inside a processing instruction: expected `?>`");
    fails("<!DOCTYPE r [ > ", "inside the DOCTYPE: expected `>`");
    fails("<!x>", "`<!` must start a comment");
    fails("<r><", "inside a tag: expected `>`");
}

#[test]
fn a_start_tag_needs_a_name() {
    fails("<>", "expected an element name");
    fails("< r>", "expected an element name");
    check("</>", &["</>"]);
}
