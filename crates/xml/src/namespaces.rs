//! Namespaces 1.0: the prefix bindings in scope, and the constraints on
//! declaring and using them (§3 NSC: Reserved Prefixes, No Prefix
//! Undeclaring, Prefix Declared; §6.3 Attributes Unique).
//!
//! Bindings live on a stack; an element that declares none costs nothing
//! beyond a look at its attribute names (not values) for `xmlns` and `:`.

use crate::diagnose::{Fault, Located};
use crate::names::split_qname;
use crate::scan;
use crate::tag::Tag;
use crate::text::{self, DeclaredEntities};

/// The namespace the `xml` prefix is bound to.
pub(crate) const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
/// The namespace of `xmlns` attributes, which nothing may be bound to.
const XMLNS_NS: &str = "http://www.w3.org/2000/xmlns/";

/// The bindings in scope.
#[derive(Debug, Clone, Default)]
pub(crate) struct Namespaces {
    /// `(prefix, uri)`, innermost last; the prefix `""` is the default
    /// namespace, and an empty URI undeclares it.
    bindings: Vec<(String, String)>,
    /// `(depth, bindings before)` for each open element that declared any.
    scopes: Vec<(usize, usize)>,
    /// Reused for attribute values.
    scratch: String,
}

impl Namespaces {
    /// The URI `prefix` is bound to (`""` is the default namespace; `None`
    /// for no namespace or an undeclared prefix).
    pub(crate) fn resolve(&self, prefix: &str) -> Option<&str> {
        if prefix == "xml" {
            return Some(XML_NS);
        }
        let (_, uri) = self.bindings.iter().rev().find(|(p, _)| p == prefix)?;
        (!uri.is_empty()).then_some(uri.as_str())
    }

    /// An element at `depth` opened: takes its declarations and checks its
    /// own prefixes and its attributes' expanded names.
    #[inline]
    pub(crate) fn open(
        &mut self,
        tag: &Tag<'_>,
        depth: usize,
        max_attributes: usize,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        if tag.has_attribute_text() {
            self.open_attributes(tag, depth, max_attributes, declared)?;
        }
        if tag.prefixed() {
            let (prefix, _) = split_qname(tag.name());
            self.check_prefix(prefix, "element", 1)?;
        }
        Ok(())
    }

    /// The attribute part of [`Namespaces::open`].
    fn open_attributes(
        &mut self,
        tag: &Tag<'_>,
        depth: usize,
        max_attributes: usize,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        if tag.plain_names() {
            return Ok(());
        }
        let (declares, colon) = name_kinds(tag.attributes_raw().as_bytes());
        if declares {
            self.declare(tag, depth, max_attributes, declared)?;
        }
        if colon {
            self.check_attributes(tag, max_attributes)?;
        }
        Ok(())
    }

    /// The element at `depth` closed: its declarations go out of scope.
    #[inline]
    pub(crate) fn close(&mut self, depth: usize) {
        if let Some(&(d, before)) = self.scopes.last() {
            if d == depth {
                self.bindings.truncate(before);
                self.scopes.pop();
            }
        }
    }

    fn declare(
        &mut self,
        tag: &Tag<'_>,
        depth: usize,
        max_attributes: usize,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        let before = self.bindings.len();
        let mut added = Vec::new();
        tag.for_each_attribute(max_attributes, |attribute, at| {
            let prefix = match attribute.key.strip_prefix("xmlns") {
                Some("") => "",
                Some(rest) => match rest.strip_prefix(':') {
                    Some(prefix) => prefix,
                    None => return Ok(()),
                },
                None => return Ok(()),
            };
            self.scratch.clear();
            text::push_attribute_value(attribute.value, declared, &mut self.scratch).map_err(
                |(offset, _)| fault("invalid reference in a namespace URI", at + offset),
            )?;
            check_binding(prefix, &self.scratch).map_err(|m| fault(&m, at))?;
            added.push((prefix.to_owned(), self.scratch.clone()));
            Ok(())
        })?;
        if !added.is_empty() {
            self.scopes.push((depth, before));
            self.bindings.extend(added);
        }
        Ok(())
    }

    fn check_prefix(&self, prefix: &str, what: &str, at: usize) -> Result<(), Located> {
        if prefix == "xmlns" {
            return Err(fault(
                &format!("an {what} name must not use the prefix `xmlns`"),
                at,
            ));
        }
        if self.resolve(prefix).is_none() {
            return Err(fault(
                &format!("namespace prefix `{prefix}` is not declared"),
                at,
            ));
        }
        Ok(())
    }

    /// Prefixed attributes: declared prefixes, and no two with the same
    /// namespace and local name.
    fn check_attributes(&self, tag: &Tag<'_>, max_attributes: usize) -> Result<(), Located> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        tag.for_each_attribute(max_attributes, |attribute, _| {
            let (prefix, local) = split_qname(attribute.key);
            if prefix.is_empty() || prefix == "xmlns" {
                return Ok(());
            }
            let name_at = attribute.key_at;
            self.check_prefix(prefix, "attribute", name_at)?;
            let uri = self.resolve(prefix).unwrap_or_default();
            if seen.contains(&(uri, local)) {
                return Err(fault(
                    &format!(
                        "attribute `{}` repeats a namespace and local name",
                        attribute.key
                    ),
                    name_at,
                ));
            }
            seen.push((uri, local));
            Ok(())
        })
    }
}

/// Whether an attribute name in `raw` (a tag's text after its name) may
/// declare a namespace: the first half of [`name_kinds`].
#[inline]
pub(crate) fn may_declare(raw: &[u8]) -> bool {
    name_kinds(raw).0
}

/// What the attribute names in `raw` (a tag's text after its name) ask
/// of the namespace checks: whether one may declare a namespace (holds
/// `xmlns`) and whether one has a colon. Only the text between quoted
/// values is looked at, so a `:` or `xmlns` in a value (a time, a URL)
/// costs no second pass over the attributes. The lexer has matched the
/// quotes; should one be unmatched, the attribute parse that every tag
/// with attributes gets reports it.
#[inline]
fn name_kinds(raw: &[u8]) -> (bool, bool) {
    let (mut declares, mut colon) = (false, false);
    let mut at = 0;
    while let Some(found) = scan::byte4(b'"', b'\'', b':', b'x', &raw[at..]) {
        at += found;
        match raw[at] {
            b':' => colon = true,
            b'x' => declares |= raw[at..].starts_with(b"xmlns"),
            quote => match scan::byte(quote, &raw[at + 1..]) {
                Some(len) => at += len + 1,
                None => break,
            },
        }
        if declares && colon {
            break;
        }
        at += 1;
    }
    (declares, colon)
}

/// The reserved-prefix and no-undeclaring rules for `xmlns:prefix="uri"`.
fn check_binding(prefix: &str, uri: &str) -> Result<(), String> {
    if prefix == "xmlns" {
        return Err("the prefix `xmlns` must not be declared".into());
    }
    if (prefix == "xml") != (uri == XML_NS) {
        return Err(format!(
            "the prefix `xml` is bound to {XML_NS} and that namespace to no other prefix"
        ));
    }
    if uri == XMLNS_NS {
        return Err(format!("no prefix may be bound to {XMLNS_NS}"));
    }
    if !prefix.is_empty() && uri.is_empty() {
        return Err(format!(
            "`xmlns:{prefix}=\"\"` cannot undeclare a prefix in XML 1.0 namespaces"
        ));
    }
    Ok(())
}

fn fault(message: &str, offset: usize) -> Located {
    Located {
        fault: Fault::syntax(message),
        offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(ns: &mut Namespaces, text: &str, depth: usize) -> Result<(), String> {
        let tag = Tag::parse(text).map_err(|e| format!("{:?}", e.fault))?;
        ns.open(&tag, depth, 99, &DeclaredEntities::default())
            .map_err(|e| format!("{:?}", e.fault))
    }

    #[test]
    fn bindings_scope_and_resolve() {
        let mut ns = Namespaces::default();
        open(&mut ns, "r xmlns='d' xmlns:p='u'", 1).unwrap();
        assert_eq!(ns.resolve(""), Some("d"));
        assert_eq!(ns.resolve("p"), Some("u"));
        open(&mut ns, "p:a xmlns:p='v' p:x='1'", 2).unwrap();
        assert_eq!(ns.resolve("p"), Some("v"));
        ns.close(2);
        assert_eq!(ns.resolve("p"), Some("u"));
        assert_eq!(ns.resolve("xml"), Some(XML_NS));
        ns.close(1);
        assert_eq!(ns.resolve("p"), None);
    }

    #[test]
    fn only_names_ask_for_namespace_checks() {
        for (raw, want) in [
            (" a='x:y' b=\"xmlns\"", (false, false)),
            (" a='1' xmlns='u'", (true, false)),
            (" xmlns:p='u'", (true, true)),
            (" p:a='1' b='2'", (false, true)),
            ("\n  max='9'\n  text=\"x\"", (false, false)),
            (" a='unclosed", (false, false)),
            (" a='1'xmlns:p='u'", (true, true)),
        ] {
            assert_eq!(name_kinds(raw.as_bytes()), want, "{raw:?}");
        }
    }

    #[test]
    fn namespace_constraints() {
        let mut ns = Namespaces::default();
        for bad in [
            "q:a",
            "a q:x='1'",
            "a xmlns:p=''",
            "a xmlns:xmlns='u'",
            "a xmlns:xml='u'",
            "a xmlns:x='http://www.w3.org/XML/1998/namespace'",
            "a xmlns='http://www.w3.org/2000/xmlns/'",
            "a xmlns:p='u' xmlns:q='u' p:x='1' q:x='2'",
            "xmlns:a xmlns:xmlns='u'",
        ] {
            assert!(open(&mut ns, bad, 1).is_err(), "{bad:?}");
        }
        assert!(open(&mut ns, "a xmlns='' xml:lang='en' x='1'", 1).is_ok());
    }
}
