//! The DOCTYPE's syntax, internal subset included (XML 1.0 §2.8 [28]–[29],
//! §3.2–§3.3, §4.2, §4.7), checked as a non-validating processor must.
//!
//! Declarations are read for their syntax and the names of the general
//! entities they declare; nothing is expanded. A parameter-entity
//! reference (`%name;`) in the subset is refused like any reference to a
//! declared entity: expanding it is what entity bombs are made of.

use crate::cursor::{Cursor, Fail};
use crate::decl;
use crate::names;
use crate::text::{DeclaredEntities, RefError};

mod attlist;
mod elements;
mod entity;

use attlist::attlist_decl;
use elements::element_decl;
use entity::entity_decl;

/// Why a DOCTYPE was refused.
#[derive(Debug)]
pub(crate) enum DtdError {
    /// Not well-formed: where (bytes into the DOCTYPE's content) and what.
    Syntax(Fail),
    /// A reference refused by design, at this offset.
    Reference(usize, String, RefError),
}

impl From<Fail> for DtdError {
    fn from(fail: Fail) -> Self {
        DtdError::Syntax(fail)
    }
}

type Result<T> = std::result::Result<T, DtdError>;

/// A syntax fault at the cursor.
fn bad<T>(c: &Cursor<'_>, message: impl Into<String>) -> Result<T> {
    Err(DtdError::Syntax((c.at, message.into())))
}

/// Checks the content of `<!DOCTYPE…>` (after `<!DOCTYPE`, before `>`);
/// adds the general entities it declares to `declared`.
pub(crate) fn check_doctype(content: &str, declared: &mut DeclaredEntities) -> Result<()> {
    let mut c = Cursor::new(content);
    c.space_before("the DOCTYPE's root element name")?;
    c.name("the DOCTYPE's root element name", names::check_qname)?;
    let spaced = c.space();
    if c.rest().starts_with("SYSTEM") || c.rest().starts_with("PUBLIC") {
        if !spaced {
            return bad(&c, "expected whitespace before the external ID");
        }
        external_id(&mut c, false)?;
        c.space();
    }
    if c.eat("[") {
        subset(&mut c, declared)?;
        c.expect("]")?;
        c.space();
    }
    if !c.at_end() {
        return bad(&c, "unexpected text in the DOCTYPE");
    }
    Ok(())
}

/// `intSubset ::= (markupdecl | S)*`, up to the closing `]`.
fn subset(c: &mut Cursor<'_>, declared: &mut DeclaredEntities) -> Result<()> {
    loop {
        c.space();
        let rest = c.rest();
        if rest.is_empty() || rest.starts_with(']') {
            return Ok(());
        }
        if rest.starts_with('%') {
            let start = c.at;
            c.at += 1;
            let name = c.name_run();
            return Err(DtdError::Reference(
                start,
                format!("%{name};"),
                RefError::Declared,
            ));
        }
        // The closer is looked for after the opener, which it may overlap
        // (`<!-->`, `<?>`).
        if let Some(body) = rest.strip_prefix("<!--") {
            let Some(end) = body.find("-->") else {
                return bad(c, "unclosed comment");
            };
            decl::check_comment(&body[..end]).map_err(|(at, m)| (c.at + 4 + at, m))?;
            c.at += 4 + end + 3;
        } else if let Some(body) = rest.strip_prefix("<?") {
            let Some(end) = body.find("?>") else {
                return bad(c, "unclosed processing instruction");
            };
            decl::check_pi(&body[..end]).map_err(|(at, m)| (c.at + 2 + at, m))?;
            c.at += 2 + end + 2;
        } else if c.eat("<!ELEMENT") {
            element_decl(c)?;
        } else if c.eat("<!ATTLIST") {
            attlist_decl(c, declared)?;
        } else if c.eat("<!ENTITY") {
            entity_decl(c, declared)?;
        } else if c.eat("<!NOTATION") {
            c.space_before("the notation name")?;
            c.name("a notation name", names::check_ncname)?;
            c.space_before("the notation's ID")?;
            external_id(c, true)?;
            close_decl(c)?;
        } else {
            return bad(
                c,
                "expected a markup declaration, comment or PI in the DOCTYPE",
            );
        }
    }
}

/// `S? '>'` ending a declaration.
fn close_decl(c: &mut Cursor<'_>) -> Result<()> {
    c.space();
    Ok(c.expect(">")?)
}

/// `'SYSTEM' S SystemLiteral | 'PUBLIC' S PubidLiteral S SystemLiteral`;
/// with `public_only`, the system literal after PUBLIC may be left out.
fn external_id(c: &mut Cursor<'_>, public_only: bool) -> Result<()> {
    if c.eat("SYSTEM") {
        c.space_before("the system literal")?;
        c.quoted("system literal")?;
        return Ok(());
    }
    if !c.eat("PUBLIC") {
        return bad(c, "expected SYSTEM or PUBLIC");
    }
    c.space_before("the public ID")?;
    let (pubid, at) = c.quoted("public ID")?;
    if let Some(bad) = pubid.bytes().position(|b| !is_pubid_char(b)) {
        return Err(DtdError::Syntax((
            at + bad,
            "character not allowed in a public ID".into(),
        )));
    }
    let save = c.at;
    let spaced = c.space();
    if matches!(c.peek(), Some(b'"' | b'\'')) {
        if !spaced {
            return bad(c, "expected whitespace before the system literal");
        }
        c.quoted("system literal")?;
    } else if public_only {
        c.at = save;
    } else {
        return bad(c, "expected the system literal");
    }
    Ok(())
}

fn is_pubid_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b" \r\n-'()+,./:=?;!*#@$_%".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(content: &str) -> std::result::Result<Vec<String>, String> {
        let mut declared = DeclaredEntities::default();
        match check_doctype(content, &mut declared) {
            Ok(()) => Ok(declared.names().to_vec()),
            Err(DtdError::Syntax((at, m))) => Err(format!("{at}: {m}")),
            Err(DtdError::Reference(at, r, _)) => Err(format!("{at}: ref {r}")),
        }
    }

    #[test]
    fn well_formed_doctypes() {
        for good in [
            " r",
            " r SYSTEM 'r.dtd'",
            " r PUBLIC '-//A//B' \"r.dtd\" [ ]",
            " r [<!ELEMENT r (a|b)*><!ELEMENT a (#PCDATA)><!ELEMENT b (#PCDATA|a)*>\
             <!ELEMENT c ((a,b)?,c+)><!ELEMENT d EMPTY><!ELEMENT e ANY>]",
            " r [<!ATTLIST r a CDATA #IMPLIED b (x|y) 'x' c NOTATION (n) #REQUIRED d ID #FIXED 'q&amp;'>]",
            " r [<!ENTITY e 'v&#60;&f;'><!ENTITY % p 'x'><!ENTITY u SYSTEM 'u' NDATA n>\
             <!NOTATION n PUBLIC 'n'><!-- c --><?pi x?>]",
            " r [<!----><?pi?>]",
        ] {
            assert!(check(good).is_ok(), "{good:?}: {:?}", check(good));
        }
        assert_eq!(
            check(" r [<!ENTITY e 'v'><!ENTITY % p 'x'>]").unwrap(),
            ["e"]
        );
    }

    #[test]
    fn malformed_doctypes() {
        for bad in [
            "r",
            " r SYSTEM",
            " r PUBLIC 'a'",
            " r [<!ELEMENT r (a|b,c)>]",
            " r [<!ELEMENT r (#PCDATA|a)>]",
            " r [<!ELEMENT r (a) >x]",
            " r [<!element r ANY>]",
            " r [<!ATTLIST r a CDATA>]",
            " r [<!ATTLIST r a CDATA '<'>]",
            " r [<!ENTITY e 'a%b;'>]",
            " r [<!ENTITY % e SYSTEM 'a' NDATA n>]",
            " r [<!-- a -- b -->]",
            " r [<?xml version='1.0'?>]",
            " r [<![INCLUDE[ ]]>]",
            " r [] x",
            " r PUBLIC '{' 's'",
            // A closer that overlaps its opener closes nothing.
            " r [<?>]",
            " r [<!-->]",
            " r [<!--->]",
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
        assert!(check(" r [%p;]").unwrap_err().contains("ref %p;"));
    }
}
