//! The DOCTYPE's syntax, internal subset included (XML 1.0 §2.8 [28]–[29],
//! §3.2–§3.3, §4.2, §4.7), checked as a non-validating processor must.
//!
//! Declarations are read for their syntax and the names of the general
//! entities they declare; nothing is expanded. A parameter-entity
//! reference (`%name;`) in the subset is refused like any reference to a
//! declared entity: expanding it is what entity bombs are made of.

use crate::cursor::{Cursor, Fail};
use crate::decl;
use crate::names::{self, NameError};
use crate::text::{self, DeclaredEntities, RefError};

/// Deepest nesting of content-model groups (`((a,b)|c)`) accepted.
const MAX_GROUP_DEPTH: usize = 64;

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
        if rest.starts_with("<!--") {
            let Some(end) = rest.find("-->") else {
                return bad(c, "unclosed comment");
            };
            decl::check_comment(&rest[4..end]).map_err(|(at, m)| (c.at + 4 + at, m))?;
            c.at += end + 3;
        } else if rest.starts_with("<?") {
            let Some(end) = rest.find("?>") else {
                return bad(c, "unclosed processing instruction");
            };
            decl::check_pi(&rest[2..end]).map_err(|(at, m)| (c.at + 2 + at, m))?;
            c.at += end + 2;
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

/// `<!ELEMENT` S Name S contentspec S? `>`.
fn element_decl(c: &mut Cursor<'_>) -> Result<()> {
    c.space_before("the element name")?;
    c.name("an element name", names::check_qname)?;
    c.space_before("the content model")?;
    if !(c.eat("EMPTY") || c.eat("ANY")) {
        if !c.eat("(") {
            return bad(c, "expected EMPTY, ANY or `(`");
        }
        c.space();
        if c.eat("#PCDATA") {
            mixed(c)?;
        } else {
            group(c, 1)?;
        }
    }
    close_decl(c)
}

/// The rest of `(#PCDATA (| Name)*)*` after `#PCDATA`.
fn mixed(c: &mut Cursor<'_>) -> Result<()> {
    let mut names = 0;
    loop {
        c.space();
        if c.eat(")") {
            if names > 0 || c.peek() == Some(b'*') {
                c.expect("*")?;
            }
            return Ok(());
        }
        c.expect("|")?;
        c.space();
        c.name("an element name", names::check_qname)?;
        names += 1;
    }
}

/// A `choice` or `seq` group after its `(`, with its occurrence mark.
fn group(c: &mut Cursor<'_>, depth: usize) -> Result<()> {
    if depth > MAX_GROUP_DEPTH {
        return bad(c, "content model nested too deeply");
    }
    let mut separator = None;
    loop {
        c.space();
        if c.eat("(") {
            group(c, depth + 1)?;
        } else {
            c.name("an element name or `(`", names::check_qname)?;
            occurrence(c);
        }
        c.space();
        if c.eat(")") {
            occurrence(c);
            return Ok(());
        }
        let here = match c.peek() {
            Some(s @ (b'|' | b',')) => s,
            _ => return bad(c, "expected `|`, `,` or `)`"),
        };
        if separator.is_some_and(|s| s != here) {
            return bad(c, "`|` and `,` mixed in one group");
        }
        separator = Some(here);
        c.at += 1;
    }
}

fn occurrence(c: &mut Cursor<'_>) {
    if matches!(c.peek(), Some(b'?' | b'*' | b'+')) {
        c.at += 1;
    }
}

/// `<!ATTLIST` S Name (S Name S AttType S DefaultDecl)* S? `>`.
fn attlist_decl(c: &mut Cursor<'_>, declared: &DeclaredEntities) -> Result<()> {
    c.space_before("the element name")?;
    c.name("an element name", names::check_qname)?;
    loop {
        let spaced = c.space();
        if c.eat(">") {
            return Ok(());
        }
        if !spaced {
            return bad(c, "expected whitespace before the attribute name");
        }
        c.name("an attribute name", names::check_qname)?;
        c.space_before("the attribute type")?;
        att_type(c)?;
        c.space_before("the attribute default")?;
        if c.eat("#REQUIRED") || c.eat("#IMPLIED") {
            continue;
        }
        if c.eat("#FIXED") {
            c.space_before("the fixed value")?;
        }
        let (value, at) = c.quoted("attribute default")?;
        att_value(value, at, declared)?;
    }
}

fn att_type(c: &mut Cursor<'_>) -> Result<()> {
    const TYPES: [&str; 8] = [
        "CDATA", "IDREFS", "IDREF", "ID", "ENTITY", "ENTITIES", "NMTOKENS", "NMTOKEN",
    ];
    let word = c.name_run();
    if TYPES.contains(&word) {
        return Ok(());
    }
    let check: fn(&str) -> std::result::Result<(), NameError> = match word {
        "NOTATION" => {
            c.space_before("the notation list")?;
            names::check_ncname
        }
        "" => names::check_nmtoken,
        _ => return bad(c, format!("unknown attribute type {word:?}")),
    };
    c.expect("(")?;
    loop {
        c.space();
        c.name("a name token", check)?;
        c.space();
        if c.eat(")") {
            return Ok(());
        }
        c.expect("|")?;
    }
}

/// An attribute default: no `<`, references well-formed and predefined.
fn att_value(value: &str, at: usize, declared: &DeclaredEntities) -> Result<()> {
    if let Some(lt) = value.find('<') {
        return Err(DtdError::Syntax((
            at + lt,
            "`<` is not allowed in an attribute value".into(),
        )));
    }
    let mut scratch = String::new();
    text::push_attribute_value(value, declared, &mut scratch)
        .map_err(|(offset, error)| reference_error(value, at, offset, error))
}

fn reference_error(value: &str, at: usize, offset: usize, error: RefError) -> DtdError {
    let after = &value[offset + 1..];
    let name = after.find(';').map_or(after, |end| &after[..end]);
    match error {
        RefError::Declared | RefError::Undefined => {
            DtdError::Reference(at + offset, format!("&{name};"), error)
        }
        _ => DtdError::Syntax((at + offset, format!("{error}: &{name};"))),
    }
}

/// `<!ENTITY` S (`%` S)? Name S (EntityValue | ExternalID NDataDecl?) S? `>`.
fn entity_decl(c: &mut Cursor<'_>, declared: &mut DeclaredEntities) -> Result<()> {
    c.space_before("the entity name")?;
    let parameter = c.eat("%");
    if parameter {
        c.space_before("the parameter entity's name")?;
    }
    let name = c.name("an entity name", names::check_ncname)?;
    c.space_before("the entity's value")?;
    if matches!(c.peek(), Some(b'"' | b'\'')) {
        let (value, at) = c.quoted("entity value")?;
        entity_value(value, at)?;
    } else {
        external_id(c, false)?;
        let save = c.at;
        if c.space() && c.eat("NDATA") {
            if parameter {
                return bad(c, "a parameter entity cannot have NDATA");
            }
            c.space_before("the notation name")?;
            c.name("a notation name", names::check_ncname)?;
        } else {
            c.at = save;
        }
    }
    if !parameter {
        declared.add(name);
    }
    close_decl(c)
}

/// An entity's literal value in the internal subset: references
/// well-formed, and no parameter-entity reference (WFC: PEs in Internal
/// Subset).
fn entity_value(value: &str, at: usize) -> Result<()> {
    let bytes = value.as_bytes();
    let mut i = 0;
    while let Some(found) = memchr::memchr2(b'%', b'&', &bytes[i..]) {
        let pos = i + found;
        if bytes[pos] == b'%' {
            return Err(DtdError::Syntax((
                at + pos,
                "a parameter-entity reference is not allowed in an entity value \
                 of the internal subset"
                    .into(),
            )));
        }
        let Some(len) = value[pos + 1..].find(';') else {
            return Err(DtdError::Syntax((
                at + pos,
                RefError::Unterminated.to_string(),
            )));
        };
        let name = &value[pos + 1..pos + 1 + len];
        let ok = match name.strip_prefix('#') {
            Some(_) => {
                text::push_reference(name, &DeclaredEntities::default(), &mut String::new()).is_ok()
            }
            None => names::check_ncname(name).is_ok(),
        };
        if !ok {
            return Err(DtdError::Syntax((
                at + pos,
                format!("invalid reference &{name};"),
            )));
        }
        i = pos + len + 2;
    }
    Ok(())
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
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
        assert!(check(" r [%p;]").unwrap_err().contains("ref %p;"));
    }
}
