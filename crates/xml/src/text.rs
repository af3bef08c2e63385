//! Character data: entity and character references, line-end and
//! attribute-value normalization (XML 1.0 §2.11, §3.3.3, §4.1, §4.6).
//!
//! Only the five predefined entities and character references are ever
//! expanded. Entities declared in a DOCTYPE are refused, never expanded, so
//! neither external entities nor expansion bombs can be reached.

use std::fmt;

use crate::scan;

/// Why a reference could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// `&name;` that is neither predefined nor declared.
    Undefined,
    /// `&name;` declared in the DOCTYPE: refused, not expanded.
    Declared,
    /// `&#…;` that is malformed or names a code point XML forbids.
    BadCharRef,
    /// `&` without a name and `;` after it.
    Unterminated,
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefError::Undefined => "undefined entity",
            RefError::Declared => {
                "entity declared in the DOCTYPE: custom entities are refused, never expanded"
            }
            RefError::BadCharRef => "invalid character reference",
            RefError::Unterminated => {
                "`&` must start a reference ending in `;` (write `&amp;` for a literal `&`)"
            }
        })
    }
}

/// Entity names a DOCTYPE declared; kept only to word the refusal.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeclaredEntities(Vec<String>);

impl DeclaredEntities {
    /// Notes a general entity the DOCTYPE declares.
    pub(crate) fn add(&mut self, name: &str) {
        self.0.push(name.to_owned());
    }

    /// The declared names, in order.
    #[cfg(test)]
    pub(crate) fn names(&self) -> &[String] {
        &self.0
    }

    fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }
}

/// Appends the expansion of the reference `&name;` (`name` without `&`
/// and `;`) to `out`.
pub(crate) fn push_reference(
    name: &str,
    declared: &DeclaredEntities,
    out: &mut String,
) -> Result<(), RefError> {
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => match name.strip_prefix('#') {
            Some(number) => char_reference(number).ok_or(RefError::BadCharRef)?,
            None if declared.contains(name) => return Err(RefError::Declared),
            None => return Err(RefError::Undefined),
        },
    };
    out.push(c);
    Ok(())
}

/// The character of `&#number;`, if it is well-formed and a legal XML Char.
fn char_reference(number: &str) -> Option<char> {
    let (digits, radix) = match number.strip_prefix('x') {
        Some(hex) => (hex, 16),
        None => (number, 10),
    };
    // `from_str_radix` would accept a leading `+`, which XML does not.
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let code = u32::from_str_radix(digits, radix).ok()?;
    char::from_u32(code).filter(|&c| is_xml_char(c))
}

/// XML 1.0 `Char`: tab, LF, CR, and U+0020 up, minus surrogates (already
/// excluded by `char`) and U+FFFE/U+FFFF.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Appends text content, turning `\r\n` and lone `\r` into `\n` (§2.11).
///
/// A line break is never split between two calls: markup or a reference
/// always lies between the pieces of text given here.
pub(crate) fn push_text(text: &str, out: &mut String) {
    let Some(first_cr) = memchr::memchr(b'\r', text.as_bytes()) else {
        out.push_str(text);
        return;
    };
    out.push_str(&text[..first_cr]);
    let mut rest = &text[first_cr..];
    while let Some(cr) = rest.find('\r') {
        out.push_str(&rest[..cr]);
        out.push('\n');
        rest = &rest[cr + 1..];
        rest = rest.strip_prefix('\n').unwrap_or(rest);
    }
    out.push_str(rest);
}

/// Appends a raw attribute value: references expanded, each literal tab,
/// LF, CR or CR-LF turned into one space (§3.3.3). Returns the byte offset
/// of a bad reference within `raw` with the error.
pub(crate) fn push_attribute_value(
    raw: &str,
    declared: &DeclaredEntities,
    out: &mut String,
) -> Result<(), (usize, RefError)> {
    let bytes = raw.as_bytes();
    let mut done = 0;
    while let Some(found) = scan::attribute_stop(&bytes[done..]) {
        let at = done + found;
        out.push_str(&raw[done..at]);
        done = at + 1;
        match bytes[at] {
            b'&' => {
                let end = scan::byte(b';', &bytes[done..]).ok_or((at, RefError::Unterminated))?;
                push_reference(&raw[done..done + end], declared, out).map_err(|e| (at, e))?;
                done += end + 1;
            }
            b'\r' if bytes.get(done) == Some(&b'\n') => {
                out.push(' ');
                done += 1;
            }
            _ => out.push(' '),
        }
    }
    out.push_str(&raw[done..]);
    Ok(())
}

/// Checks the references in a raw attribute value that is not kept.
pub(crate) fn check_attribute_value(
    raw: &str,
    declared: &DeclaredEntities,
    scratch: &mut String,
) -> Result<(), (usize, RefError)> {
    if memchr::memchr(b'&', raw.as_bytes()).is_none() {
        return Ok(());
    }
    scratch.clear();
    push_attribute_value(raw, declared, scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str) -> Result<String, RefError> {
        let mut declared = DeclaredEntities::default();
        declared.add("bomb");
        let mut out = String::new();
        push_reference(name, &declared, &mut out).map(|()| out)
    }

    fn attribute(raw: &str) -> Result<String, (usize, RefError)> {
        let mut out = String::new();
        push_attribute_value(raw, &DeclaredEntities::default(), &mut out).map(|()| out)
    }

    #[test]
    fn predefined_and_numeric_references() {
        for (name, want) in [
            ("lt", "<"),
            ("gt", ">"),
            ("amp", "&"),
            ("apos", "'"),
            ("quot", "\""),
            ("#233", "é"),
            ("#xE9", "é"),
            ("#x1F680", "🚀"),
            ("#x1f680", "🚀"),
            ("#13", "\r"),
            ("#0009", "\t"),
        ] {
            assert_eq!(reference(name).as_deref(), Ok(want), "&{name};");
        }
    }

    #[test]
    fn refused_references() {
        assert_eq!(reference("bomb"), Err(RefError::Declared));
        assert_eq!(reference("nbsp"), Err(RefError::Undefined));
        assert_eq!(reference("p"), Err(RefError::Undefined));
        for bad in [
            "#", "#x", "#0", "#1", "#xD800", "#xFFFE", "#x110000", "#+65", "#X41", "#12a",
        ] {
            assert_eq!(reference(bad), Err(RefError::BadCharRef), "&{bad};");
        }
    }

    #[test]
    fn text_line_ends_become_newlines() {
        let mut out = String::from(">");
        push_text("a\r\nb\rc\n\r\r\nd\r", &mut out);
        assert_eq!(out, ">a\nb\nc\n\n\nd\n");
    }

    #[test]
    fn attribute_values_are_normalized() {
        assert_eq!(attribute("a\tb\nc\r\nd\re").as_deref(), Ok("a b c d e"));
        assert_eq!(
            attribute("x&#10;y&#9;z&amp;&lt;").as_deref(),
            Ok("x\ny\tz&<")
        );
        assert_eq!(attribute("plain").as_deref(), Ok("plain"));
        assert_eq!(attribute("ab&c").unwrap_err(), (2, RefError::Unterminated));
        assert_eq!(attribute("ab&zz;").unwrap_err(), (2, RefError::Undefined));
    }
}
