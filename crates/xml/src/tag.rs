//! A start tag's name and attributes, read in place from the tag's text.

use crate::diagnose::{Fault, Located};
use crate::error::LimitKind;
use crate::names;
use crate::same::same_str;
use crate::scan;

/// Attribute names remembered without allocating, for the duplicate check.
const INLINE_NAMES: usize = 16;

/// The text of a start tag between `<` and `>` (or `/>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tag<'a> {
    /// The element's name.
    name: &'a str,
    /// Everything after the name.
    rest: &'a str,
    /// Whether the name has a namespace prefix.
    prefixed: bool,
    /// Whether the lexer saw that no attribute name holds `:` or `x`, so
    /// that none declares a namespace or has a prefix.
    plain_names: bool,
}

/// One attribute, its value raw (references unexpanded).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attribute<'a> {
    /// The name as written, prefix included (`xsi:nil`).
    pub(crate) key: &'a str,
    /// The value between the quotes.
    pub(crate) value: &'a str,
    /// Byte offset of the name from the tag's `<`.
    pub(crate) key_at: usize,
    /// Whether the name has a prefix (`p:name`).
    pub(crate) prefixed: bool,
}

impl<'a> Tag<'a> {
    /// The tag whose text (after `<`) is `text`.
    ///
    /// # Errors
    ///
    /// A syntax fault when no name follows `<`, or the name is not a
    /// namespace-valid XML name.
    #[inline]
    pub(crate) fn parse(text: &'a str) -> Result<Self, Located> {
        let (name, checked) = names::scan_qname(text);
        let fault = |message: String| Located {
            fault: Fault::Syntax(message),
            offset: 1,
        };
        if name.is_empty() {
            return Err(fault("expected an element name after `<`".into()));
        }
        let prefixed = checked.map_err(|e| fault(e.describe("element name", name)))?;
        Ok(Tag {
            name,
            rest: text.get(name.len()..).unwrap_or_default(),
            prefixed,
            plain_names: false,
        })
    }

    /// Notes that no attribute name holds `:` or `x` (the lexer looked at
    /// the text between the quoted values).
    #[inline]
    pub(crate) fn with_plain_names(mut self, plain: bool) -> Self {
        self.plain_names = plain;
        self
    }

    /// Whether no attribute name can declare a namespace or have a prefix
    /// (`false` when unknown).
    #[inline]
    pub(crate) fn plain_names(&self) -> bool {
        self.plain_names
    }

    /// The element's name, prefix included.
    #[inline]
    pub(crate) fn name(&self) -> &'a str {
        self.name
    }

    /// Whether the name has a namespace prefix (`p:name`).
    #[inline]
    pub(crate) fn prefixed(&self) -> bool {
        self.prefixed
    }

    /// Whether anything (even whitespace) follows the name; cheaper than
    /// [`Tag::has_attributes`].
    #[inline]
    pub(crate) fn has_attribute_text(&self) -> bool {
        !self.rest.is_empty()
    }

    /// Everything after the name, unparsed.
    #[inline]
    pub(crate) fn attributes_raw(&self) -> &'a str {
        self.rest
    }

    /// Whether anything but whitespace follows the name.
    #[inline]
    pub(crate) fn has_attributes(&self) -> bool {
        !self.attributes_raw().trim_ascii().is_empty()
    }

    /// Calls `f` with each attribute and the byte offset of its value from
    /// the tag's `<`, checking syntax, duplicates and that there are at
    /// most `max`.
    ///
    /// # Errors
    ///
    /// The first fault found, or the first error `f` returns; faults are
    /// located from the tag's `<`.
    pub(crate) fn for_each_attribute(
        &self,
        max: usize,
        mut f: impl FnMut(Attribute<'a>, usize) -> Result<(), Located>,
    ) -> Result<(), Located> {
        // Offsets below count from the end of the name; `base` turns them
        // into offsets from the `<`.
        let text = self.rest;
        let base = 1 + self.name.len();
        let bytes = text.as_bytes();
        let fault = |message: &str, at: usize| Located {
            fault: Fault::syntax(message),
            offset: base + at,
        };
        let mut names = [""; INLINE_NAMES];
        let mut marks = 0u64;
        let mut more_names = Vec::new();
        let mut count = 0;
        let mut at = 0;
        loop {
            at = skip_spaces(bytes, at);
            if at == bytes.len() {
                return Ok(());
            }
            if count == max {
                return Err(Fault::Limit(LimitKind::Attributes, max as u64).into());
            }
            let key_start = at;
            let (key, checked) = names::scan_qname(&text[at..]);
            at += key.len();
            at = skip_spaces(bytes, at);
            if key.is_empty() || bytes.get(at) != Some(&b'=') {
                return Err(fault("expected `=` after the attribute name", at));
            }
            let prefixed = match checked {
                Ok(prefixed) => prefixed,
                Err(e) => return Err(fault(&e.describe("attribute name", key), key_start)),
            };
            at = skip_spaces(bytes, at + 1);
            let quote = match bytes.get(at) {
                None => return Err(fault("expected a quoted attribute value after `=`", at)),
                Some(&quote @ (b'"' | b'\'')) => quote,
                Some(_) => return Err(fault("attribute values must be quoted", at)),
            };
            let value_start = at + 1;
            let Some(len) = scan::byte2(quote, b'<', &bytes[value_start..]) else {
                let message = format!(
                    "expected the closing `{}` of the attribute value",
                    quote as char
                );
                return Err(fault(&message, bytes.len()));
            };
            // Names differing in length or last byte differ: a bit for
            // each pair seen lets most attributes skip the comparisons.
            let mark = name_mark(key);
            if marks & mark != 0 {
                let seen = &names[..count.min(INLINE_NAMES)];
                let same = |name: &&str| same_str(name, key);
                if seen.iter().any(same) || more_names.iter().any(same) {
                    return Err(fault("duplicate attribute", key_start));
                }
            }
            marks |= mark;
            match names.get_mut(count) {
                Some(slot) => *slot = key,
                None => more_names.push(key),
            }
            count += 1;
            at = value_start + len;
            if bytes[at] == b'<' {
                return Err(fault("`<` is not allowed in an attribute value", at));
            }
            let value = &text[value_start..at];
            f(
                Attribute {
                    key,
                    value,
                    key_at: base + key_start,
                    prefixed,
                },
                base + value_start,
            )?;
            at += 1;
            if at < bytes.len() && !is_space(&bytes[at]) {
                return Err(fault("expected whitespace between attributes", at));
            }
        }
    }
}

/// One of 64 bits, from a name's length and last byte: equal names get
/// the same bit.
#[inline]
fn name_mark(name: &str) -> u64 {
    let last = name.as_bytes().last().copied().unwrap_or(0);
    1 << ((name.len().wrapping_mul(31) ^ usize::from(last)) & 63)
}

#[inline]
fn is_space(b: &u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn skip_spaces(bytes: &[u8], mut at: usize) -> usize {
    // Every byte above `b' '` ends the run at once.
    while bytes.get(at).is_some_and(|&b| b <= b' ' && is_space(&b)) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes as `key=value@offset`, or the fault and its offset.
    fn attributes(text: &str, max: usize) -> Result<Vec<String>, String> {
        let tag = Tag::parse(text).map_err(|e| format!("{:?}", e.fault))?;
        let mut out = Vec::new();
        tag.for_each_attribute(max, |a, at| {
            out.push(format!("{}={}@{at}", a.key, a.value));
            Ok(())
        })
        .map_err(|e| format!("{:?} at {}", e.fault, e.offset))?;
        Ok(out)
    }

    #[test]
    fn names_values_and_where_values_start() {
        let tag = Tag::parse("p\n a='1' b = \"x'y\"\t").unwrap();
        assert_eq!(tag.name(), "p");
        assert!(tag.has_attributes());
        assert_eq!(
            attributes("p\n a='1' b = \"x'y\"\t", 9).unwrap(),
            ["a=1@7", "b=x'y@15"]
        );
        assert!(!Tag::parse("p  ").unwrap().has_attributes());
    }

    #[test]
    fn malformed_attributes_point_at_the_fault() {
        let fault = |text| attributes(text, 99).unwrap_err();
        assert!(
            fault("p a='1' a='2'").contains("duplicate attribute")
                && fault("p a='1' a='2'").ends_with("at 9")
        );
        assert!(fault("p a=1").contains("must be quoted") && fault("p a=1").ends_with("at 5"));
        assert!(fault("p a").contains("expected `=`"));
        assert!(fault("p =''").contains("expected `=`"));
        assert!(fault("p a=").contains("expected a quoted attribute value"));
        assert!(fault("p a='1").contains("closing `'`"));
        assert!(Tag::parse(" p").is_err());
    }

    #[test]
    fn the_quick_checks_agree_with_the_plain_ones() {
        let names = [
            "", "a", "b", "ab", "ba", "aa", "é", "e", "category", "currency",
        ];
        for a in names {
            for b in names {
                assert_eq!(same_str(a, b), a == b, "{a:?} {b:?}");
            }
        }
        for b in 0..=255u8 {
            let bytes = [b, b'x'];
            assert_eq!(skip_spaces(&bytes, 0), usize::from(is_space(&b)), "{b}");
        }
    }

    #[test]
    fn duplicates_are_found_whatever_the_names_share() {
        // Short names from a small alphabet: many share a length and a
        // last byte (and so a mark) without being equal, and many repeat.
        let mut rng = crate::gen::rng::SplitMix64::new(11, 0);
        for _ in 0..5_000 {
            let names: Vec<String> = (0..rng.below(12))
                .map(|_| {
                    (0..=rng.below(3))
                        .map(|_| rng.pick(&['a', 'b', 'c']))
                        .collect()
                })
                .collect();
            let text: String = names.iter().map(|n| format!(" {n}=''")).collect();
            let mut seen = std::collections::HashSet::new();
            let repeats = !names.iter().all(|n| seen.insert(n));
            let got = attributes(&format!("p{text}"), 99);
            assert_eq!(
                got.as_ref().is_err_and(|e| e.contains("duplicate")),
                repeats,
                "{text}: {got:?}"
            );
        }
    }

    #[test]
    fn duplicates_are_found_beyond_the_inline_names() {
        let many: String = (0..20).map(|i| format!(" a{i}=''")).collect();
        assert_eq!(attributes(&format!("p{many}"), 99).unwrap().len(), 20);
        assert!(attributes(&format!("p{many} a18=''"), 99)
            .unwrap_err()
            .contains("duplicate"));
        assert!(attributes(&format!("p{many}"), 19)
            .unwrap_err()
            .contains("Attributes"));
    }
}
