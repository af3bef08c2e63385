//! The XML declaration (XML 1.0 §2.8 [23]–[26], §4.3.3 [80]–[81], §2.9 [32]),
//! comments (§2.5 [15]) and processing-instruction targets (§2.6 [16]–[17]).

use crate::cursor::{Cursor, Fail};
use crate::names;

/// Checks the content of `<?…?>` that starts with the target `xml`:
/// `xml version="1.x" (encoding="…")? (standalone="yes|no")? S?`.
pub(crate) fn check_xml_decl(content: &str) -> Result<(), Fail> {
    let mut c = Cursor::new(content);
    c.expect("xml")?;
    for (index, key) in ["version", "encoding", "standalone"]
        .into_iter()
        .enumerate()
    {
        let save = c.at;
        let spaced = c.space();
        if !c.rest().starts_with(key) {
            c.at = save;
            if index == 0 {
                return c.fail("the XML declaration must start with `version=\"1.0\"`");
            }
            continue;
        }
        if !spaced {
            return c.fail(format!("expected whitespace before `{key}`"));
        }
        c.at += key.len();
        c.eq()?;
        let (value, at) = c.quoted(key)?;
        let ok = match key {
            "version" => value
                .strip_prefix("1.")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
            "encoding" => {
                let mut bytes = value.bytes();
                bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
                    && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            }
            _ => matches!(value, "yes" | "no"),
        };
        if !ok {
            return Err((
                at,
                format!("invalid {key} {value:?} in the XML declaration"),
            ));
        }
    }
    c.space();
    if !c.at_end() {
        return c.fail(
            "unexpected text in the XML declaration (only version, encoding and \
             standalone, in this order)",
        );
    }
    Ok(())
}

/// Checks a PI's content (after `<?`): a target that is an NCName and not
/// `xml` in any case, then whitespace before any data.
pub(crate) fn check_pi(content: &str) -> Result<(), Fail> {
    let mut c = Cursor::new(content);
    let target = c.name("a processing-instruction target", names::check_ncname)?;
    if target.eq_ignore_ascii_case("xml") {
        return Err((
            0,
            format!("the processing-instruction target {target:?} is reserved"),
        ));
    }
    if !c.at_end() && !c.space() {
        return c.fail("expected whitespace after the processing-instruction target");
    }
    Ok(())
}

/// Checks a comment's content (between `<!--` and `-->`): no `--` inside,
/// and no `-` just before the end.
pub(crate) fn check_comment(content: &str) -> Result<(), Fail> {
    if let Some(at) = memchr::memmem::find(content.as_bytes(), b"--") {
        return Err((at, "`--` is not allowed inside a comment".into()));
    }
    if content.ends_with('-') {
        return Err((
            content.len() - 1,
            "a comment must not end with `--->`".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations() {
        for good in [
            "xml version='1.0'",
            "xml version=\"1.0\" encoding='UTF-8' standalone='yes' ",
            "xml version = '1.1'\nstandalone='no'",
        ] {
            assert!(check_xml_decl(good).is_ok(), "{good:?}");
        }
        for bad in [
            "xml",
            "xml encoding='UTF-8'",
            "xml version='1.0' standalone='yes' encoding='UTF-8'",
            "xml version='2.0'",
            "xml version='1.'",
            "xml version='1.0'encoding='UTF-8'",
            "xml version='1.0' standalone='YES'",
            "xml version='1.0' encoding='-x'",
            "xml version='1.0' foo='x'",
            "xml version=1.0",
        ] {
            assert!(check_xml_decl(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn pis_and_comments() {
        assert!(check_pi("pi data").is_ok());
        assert!(check_pi("xml-stylesheet href='a'").is_ok());
        assert!(check_pi("pi").is_ok());
        assert!(check_pi("XML x").is_err());
        assert!(check_pi("a:b x").is_err());
        assert!(check_pi(" pi").is_err());
        assert!(check_pi("pi\u{1}").is_err());
        assert!(check_comment(" a - b ").is_ok());
        assert_eq!(check_comment(" a -- b ").unwrap_err().0, 3);
        assert!(check_comment("a-").is_err());
    }
}
