//! Names as the configuration writes them (`--row`, `--map`, field paths):
//! `local` matches that local name in any namespace, `p:local` the
//! namespace the document binds `p` to, `{uri}local` exactly that one.

use crate::names::{self, split_qname};
use crate::namespaces::Namespaces;

/// The namespace part of a [`NameTest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NsTest {
    /// Any namespace, or none.
    Any,
    /// The namespace the document binds this prefix to where the name
    /// occurs.
    Prefix(String),
    /// Exactly this namespace URI (`{}local`: no namespace).
    Uri(String),
}

/// A name to match against element and attribute names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameTest {
    pub(crate) local: String,
    pub(crate) ns: NsTest,
}

impl NameTest {
    /// Parses `local`, `prefix:local` or `{uri}local`.
    ///
    /// # Errors
    ///
    /// What is wrong with the name, for a usage message.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (ns, local) = match text.strip_prefix('{') {
            Some(rest) => {
                let (uri, local) = rest
                    .split_once('}')
                    .ok_or_else(|| format!("{text:?}: `{{` without its `}}`"))?;
                (NsTest::Uri(uri.to_owned()), local)
            }
            None => match text.split_once(':') {
                None => (NsTest::Any, text),
                Some((prefix, local)) => (NsTest::Prefix(prefix.to_owned()), local),
            },
        };
        names::check_ncname(local)
            .map_err(|e| e.describe("the name", local))
            .map_err(|m| format!("{text:?}: {m}"))?;
        if let NsTest::Prefix(prefix) = &ns {
            names::check_ncname(prefix)
                .map_err(|e| format!("{text:?}: {}", e.describe("the prefix", prefix)))?;
        }
        Ok(NameTest {
            local: local.to_owned(),
            ns,
        })
    }

    /// Whether the name `qname` (as written in the document) matches; an
    /// attribute's unprefixed name is in no namespace, an element's in the
    /// default one.
    #[inline]
    pub(crate) fn matches(&self, qname: &str, attribute: bool, scope: &Namespaces) -> bool {
        let (prefix, local) = split_qname(qname);
        local == self.local && self.matches_ns(prefix, attribute, scope)
    }

    /// Whether `name`, taken as written (a colon is part of it), is this
    /// test's own spelling: `id` for `id` and for `{}id`, `p:id` for
    /// `p:id`; never for a test of a namespace URI.
    pub(crate) fn is_spelled(&self, name: &str) -> bool {
        match &self.ns {
            NsTest::Any => name == self.local,
            NsTest::Uri(uri) => uri.is_empty() && name == self.local,
            NsTest::Prefix(prefix) => {
                name.strip_prefix(prefix.as_str())
                    .and_then(|rest| rest.strip_prefix(':'))
                    == Some(self.local.as_str())
            }
        }
    }

    /// The namespace half of [`NameTest::matches`], for a name whose local
    /// part is known to match.
    #[inline]
    pub(crate) fn matches_ns(&self, prefix: &str, attribute: bool, scope: &Namespaces) -> bool {
        let uri = || match (prefix, attribute) {
            ("", true) => None,
            _ => scope.resolve(prefix),
        };
        match &self.ns {
            NsTest::Any => true,
            NsTest::Prefix(p) => scope.resolve(p).is_some_and(|want| uri() == Some(want)),
            NsTest::Uri(u) => uri().unwrap_or_default() == u,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tag::Tag;
    use crate::text::DeclaredEntities;

    #[test]
    fn local_prefix_and_uri_tests() {
        let mut scope = Namespaces::default();
        let tag = Tag::parse("r xmlns:a='u1' xmlns:b='u1' xmlns:c='u2' xmlns='d'").unwrap();
        scope
            .open(&tag, 1, 9, &DeclaredEntities::default())
            .unwrap();
        let any = NameTest::parse("item").unwrap();
        assert!(any.matches("item", false, &scope) && any.matches("c:item", false, &scope));
        assert!(!any.matches("items", false, &scope));
        let a = NameTest::parse("a:item").unwrap();
        assert!(
            a.matches("b:item", false, &scope),
            "same URI through another prefix"
        );
        assert!(!a.matches("c:item", false, &scope) && !a.matches("item", false, &scope));
        let u = NameTest::parse("{u2}item").unwrap();
        assert!(u.matches("c:item", false, &scope) && !u.matches("a:item", false, &scope));
        let d = NameTest::parse("{d}item").unwrap();
        assert!(d.matches("item", false, &scope), "the default namespace");
        assert!(
            !d.matches("item", true, &scope),
            "attributes have no default namespace"
        );
        assert!(NameTest::parse("{}id").unwrap().matches("id", true, &scope));
        assert!(!NameTest::parse("z:item")
            .unwrap()
            .matches("item", false, &scope));
        let spelled = |test: &str, name: &str| NameTest::parse(test).unwrap().is_spelled(name);
        assert!(spelled("id", "id") && spelled("{}id", "id") && spelled("a:id", "a:id"));
        assert!(!spelled("id", "a:id") && !spelled("id", ":id") && !spelled("a:id", "id"));
        assert!(!spelled("a:id", "b:id") && !spelled("{u2}id", "id") && !spelled("a:id", "a:idx"));
        for bad in ["", "a:", ":a", "{u", "{u}", "a:b:c", "9"] {
            assert!(NameTest::parse(bad).is_err(), "{bad:?}");
        }
    }
}
