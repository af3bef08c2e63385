//! `<!ENTITY …>`: general and parameter entity declarations (XML 1.0
//! §4.2); the names of general entities are noted, nothing is expanded.

use crate::cursor::Cursor;
use crate::names;
use crate::text::{self, DeclaredEntities, RefError};

use super::{bad, close_decl, external_id, DtdError, Result};

/// `<!ENTITY` S (`%` S)? Name S (EntityValue | ExternalID NDataDecl?) S? `>`.
pub(super) fn entity_decl(c: &mut Cursor<'_>, declared: &mut DeclaredEntities) -> Result<()> {
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
