//! `<!ATTLIST …>`: attribute-list declarations, their types and default
//! values (XML 1.0 §3.3).

use crate::cursor::Cursor;
use crate::names::{self, NameError};
use crate::text::{self, DeclaredEntities, RefError};

use super::{bad, DtdError, Result};

/// `<!ATTLIST` S Name (S Name S AttType S DefaultDecl)* S? `>`.
pub(super) fn attlist_decl(c: &mut Cursor<'_>, declared: &DeclaredEntities) -> Result<()> {
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
