//! `<!ELEMENT …>`: element type declarations and their content models
//! (XML 1.0 §3.2).

use crate::cursor::Cursor;
use crate::names;

use super::{bad, close_decl, Result};

/// Deepest nesting of content-model groups (`((a,b)|c)`) accepted.
const MAX_GROUP_DEPTH: usize = 64;

/// `<!ELEMENT` S Name S contentspec S? `>`.
pub(super) fn element_decl(c: &mut Cursor<'_>) -> Result<()> {
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
