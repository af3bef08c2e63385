//! XML 1.0 (5th edition) `Name` and Namespaces 1.0 `QName` / `NCName`
//! checks (XML §2.3 [4]–[5], Namespaces §3 [4], [7]).
//!
//! Names are checked once, where the lexer hands them out; the ASCII
//! common case is a byte loop, other characters go through the production.

/// Why a name is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameError {
    /// Empty, or a character that may not start a name.
    BadStart,
    /// A character that may not appear in a name.
    BadChar,
    /// A colon where Namespaces 1.0 forbids it in a qualified name
    /// (leading, trailing, twice).
    Colon,
    /// A colon in a name that must be an NCName (a processing-instruction
    /// target, a prefix or local part), which may hold none.
    NcColon,
}

impl NameError {
    /// What is wrong, for a message about `what` (`element name`, ...).
    pub(crate) fn describe(self, what: &str, name: &str) -> String {
        match self {
            NameError::BadStart => format!("{what} {name:?} does not start with a name character"),
            NameError::BadChar => {
                format!("{what} {name:?} contains a character not allowed in names")
            }
            NameError::Colon => format!(
                "{what} {name:?} is not a namespace-valid name (at most one `:`, \
                 with a name on each side)"
            ),
            NameError::NcColon => {
                format!("{what} {name:?} holds a `:`, which namespaces do not allow there")
            }
        }
    }
}

/// XML 1.0 5th edition `NameStartChar`.
pub(crate) fn is_name_start(c: char) -> bool {
    matches!(c,
        ':' | 'A'..='Z' | '_' | 'a'..='z'
        | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2FF}'
        | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
        | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// XML 1.0 5th edition `NameChar`.
pub(crate) fn is_name_char(c: char) -> bool {
    is_name_start(c)
        || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// Byte classes for the ASCII fast path of [`check_name`].
const NAME: u8 = 1;
const START: u8 = 2;
const COLON: u8 = 4;
const WIDE: u8 = 8;
/// Ends a name in a tag: whitespace or `=`.
const STOP: u8 = 16;
/// Neither a name character nor [`STOP`].
const BAD: u8 = 32;

/// The class of each byte: which may appear in or start a name, and
/// which need a closer look (`:`, and bytes of non-ASCII characters).
static CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        class[b] = match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => NAME | START,
            b'0'..=b'9' | b'-' | b'.' => NAME,
            b':' => NAME | START | COLON,
            0x80.. => NAME | START | WIDE,
            b' ' | b'\t' | b'\r' | b'\n' | b'=' => STOP,
            _ => BAD,
        };
        b += 1;
    }
    class
};

/// Checks the XML `Name` production; returns the number of colons.
#[inline]
pub(crate) fn check_name(name: &str) -> Result<usize, NameError> {
    let bytes = name.as_bytes();
    let Some(&first) = bytes.first() else {
        return Err(NameError::BadStart);
    };
    if CLASS[first as usize] & START == 0 {
        return Err(NameError::BadStart);
    }
    // Branch-free over the name: every byte a name byte, and which
    // rarer kinds occur.
    let (all, any) = bytes.iter().fold((NAME, 0), |(all, any), &b| {
        let class = CLASS[b as usize];
        (all & class, any | class)
    });
    if all & NAME == 0 {
        return Err(NameError::BadChar);
    }
    if any & WIDE != 0 {
        let mut chars = name.chars();
        if !chars.next().is_some_and(is_name_start) {
            return Err(NameError::BadStart);
        }
        if !chars.all(is_name_char) {
            return Err(NameError::BadChar);
        }
    }
    if any & COLON == 0 {
        return Ok(0);
    }
    Ok(bytes.iter().filter(|&&b| b == b':').count())
}

/// Checks a Namespaces 1.0 `QName`: a `Name` with at most one colon, not
/// at either end (`p:local` or `local`).
pub(crate) fn check_qname(name: &str) -> Result<(), NameError> {
    match check_name(name)? {
        0 => Ok(()),
        _ => check_prefixed(name),
    }
}

/// The colon rule of a `Name` that has colons.
#[cold]
fn check_prefixed(name: &str) -> Result<(), NameError> {
    let Some((prefix, local)) = name.split_once(':') else {
        return Ok(());
    };
    let local_starts = local.chars().next().is_some_and(is_name_start);
    if prefix.is_empty() || !local_starts || local.contains(':') {
        return Err(NameError::Colon);
    }
    Ok(())
}

/// Scans the QName that starts `text` and ends at whitespace, `=` or the
/// end: the name, and whether it has a prefix (or why it is no QName).
///
/// A name of one to seven lowercase ASCII letters followed by more text
/// (most attribute names) is recognised in one eight-byte word
/// ([`short_lowercase`]);
/// other names take one pass that finds the end and classifies the bytes,
/// and only names with a colon or a non-ASCII character get a closer look.
/// Always inlined: it runs for every tag and attribute name, from two
/// places.
#[inline(always)]
pub(crate) fn scan_qname(text: &str) -> (&str, Result<bool, NameError>) {
    match short_lowercase(text.as_bytes()) {
        Some(len) => (&text[..len], Ok(false)),
        None => scan_qname_bytes(text),
    }
}

/// The length of the name at the start of `bytes` if it is one to seven
/// lowercase ASCII letters followed by whitespace or `=` within the first
/// eight bytes; `None` for anything else (and for text shorter than eight
/// bytes), which [`scan_qname_bytes`] then reads.
#[inline(always)]
fn short_lowercase(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut word = [0; 8];
    word.copy_from_slice(bytes.get(..8)?);
    let w = u64::from_le_bytes(word);
    // Bit 7 of a byte below 0x80 plus 0x80 - c is set when the byte is at
    // least c, with no carry out of the byte. A byte of 0x80 or more is
    // marked by `w` itself; the carry it may cause only disturbs the bytes
    // after it, and the first marked byte is all that is read.
    let at_least_a = w.wrapping_add(ONES * u64::from(0x80 - b'a'));
    let above_z = w.wrapping_add(ONES * u64::from(0x80 - b'z' - 1));
    let not_lower = (!at_least_a | above_z | w) & HIGHS;
    let len = (not_lower.trailing_zeros() / 8) as usize;
    let stop = *word.get(len)?;
    (len > 0 && CLASS[stop as usize] & STOP != 0).then_some(len)
}

/// [`scan_qname`] for any name: one classifying pass over the bytes.
#[inline]
fn scan_qname_bytes(text: &str) -> (&str, Result<bool, NameError>) {
    let bytes = text.as_bytes();
    let (mut any, mut len) = (0, 0);
    while let Some(&b) = bytes.get(len) {
        let class = CLASS[b as usize];
        if class & STOP != 0 {
            break;
        }
        any |= class;
        len += 1;
    }
    let name = &text[..len];
    let checked = match bytes.first() {
        _ if len == 0 => Err(NameError::BadStart),
        Some(&first) if CLASS[first as usize] & START == 0 => Err(NameError::BadStart),
        _ if any & BAD != 0 => Err(NameError::BadChar),
        _ if any & (WIDE | COLON) == 0 => Ok(false),
        _ => check_qname(name).map(|()| any & COLON != 0),
    };
    (name, checked)
}

/// Checks a Namespaces 1.0 `NCName`: a `Name` without colons (PI targets,
/// entity and notation names).
pub(crate) fn check_ncname(name: &str) -> Result<(), NameError> {
    match check_name(name)? {
        0 => Ok(()),
        _ => Err(NameError::NcColon),
    }
}

/// Checks an `Nmtoken`: one or more name characters.
pub(crate) fn check_nmtoken(token: &str) -> Result<(), NameError> {
    if token.is_empty() {
        return Err(NameError::BadStart);
    }
    if token.chars().all(is_name_char) {
        Ok(())
    } else {
        Err(NameError::BadChar)
    }
}

/// The prefix and local part of a checked QName (`("", name)` if none).
/// Names are short: a byte loop beats a vectorised search here.
#[inline]
pub(crate) fn split_qname(name: &str) -> (&str, &str) {
    match name.bytes().position(|b| b == b':') {
        Some(at) => (&name[..at], &name[at + 1..]),
        None => ("", name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_fifth_edition() {
        for good in [
            "a", "_x", "a-b.c9", "é", "名前", "a\u{300}", "x\u{B7}y", ":a",
        ] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
        assert_eq!(check_name(""), Err(NameError::BadStart));
        assert_eq!(check_name(".a"), Err(NameError::BadStart));
        assert_eq!(check_name("-a"), Err(NameError::BadStart));
        assert_eq!(check_name("9a"), Err(NameError::BadStart));
        assert_eq!(check_name("\u{300}a"), Err(NameError::BadStart));
        assert_eq!(check_name("a b"), Err(NameError::BadChar));
        assert_eq!(check_name("a/"), Err(NameError::BadChar));
        assert_eq!(check_name("a\u{D7}"), Err(NameError::BadChar));
    }

    /// The one-word path agrees with the byte loop: every byte value at
    /// every position of names up to nine bytes long, then random names.
    #[test]
    fn the_lowercase_fast_path_agrees_with_the_full_scan() {
        let check = |text: &[u8]| {
            let Ok(text) = std::str::from_utf8(text) else {
                return;
            };
            assert_eq!(scan_qname(text), scan_qname_bytes(text), "{text:?}");
        };
        for len in 0..=9 {
            for at in 0..len {
                for b in 0..=0x7Fu8 {
                    let mut name = vec![b'a'; len];
                    name[at] = b;
                    check(&name);
                    name.push(b'=');
                    check(&name);
                }
            }
        }
        for text in [
            "é",
            "aé",
            "abcdefgé",
            "abcdefg\u{300}",
            "ab\u{A0}",
            "z{",
            "a`",
        ] {
            check(text.as_bytes());
        }
        let mut rng = crate::gen::rng::SplitMix64::new(3, 1);
        let alphabet: Vec<char> = "az`{@[AZ09_-.: \t\n\r=/>\"'\u{B7}\u{300}é名"
            .chars()
            .collect();
        for _ in 0..20_000 {
            let len = rng.below(12) as usize;
            let text: String = (0..len)
                .map(|_| match rng.below(3) {
                    0 => alphabet[rng.below(alphabet.len() as u64) as usize],
                    _ => char::from(b'a' + rng.below(26) as u8),
                })
                .collect();
            check(text.as_bytes());
        }
    }

    #[test]
    fn qnames_have_one_colon_inside() {
        assert!(check_qname("xsi:nil").is_ok());
        assert!(check_qname("nil").is_ok());
        for bad in [":a", "a:", "a:b:c", "a:9"] {
            assert_eq!(check_qname(bad), Err(NameError::Colon), "{bad:?}");
        }
        assert_eq!(check_ncname("a:b"), Err(NameError::NcColon));
        assert_eq!(split_qname("p:x"), ("p", "x"));
        assert_eq!(split_qname("x"), ("", "x"));
        assert_eq!(scan_qname("p:a b").0, "p:a");
        assert_eq!(scan_qname("p:a b").1, Ok(true));
        assert_eq!(scan_qname("a=").1, Ok(false));
        assert_eq!(scan_qname("é:x").1, Ok(true));
        assert_eq!(scan_qname("a:b:c").1, Err(NameError::Colon));
        assert_eq!(scan_qname(".a").1, Err(NameError::BadStart));
        assert_eq!(scan_qname("a/").1, Err(NameError::BadChar));
        assert_eq!(scan_qname(" a").1, Err(NameError::BadStart));
        assert!(check_nmtoken("9a").is_ok());
        assert!(check_nmtoken("").is_err());
    }
}
