//! Turning parser failures into messages that say what was expected and
//! what was found.
//!
//! The parts of the source find a [`Fault`] without knowing where they are;
//! the source adds the position (see `XmlSource::fail`).

use quick_xml::encoding::EncodingError;
use quick_xml::errors::{Error as QuickError, IllFormedError, SyntaxError};
use quick_xml::events::attributes::AttrError;

use crate::encoding::DecodeError;
use crate::error::LimitKind;
use crate::text::RefError;

/// What went wrong, before its position is known.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Not well-formed.
    Syntax(String),
    /// Bad bytes for the encoding.
    Encoding(String),
    /// A refused or undefined reference, as written (`&name;`).
    Entity { reference: String, error: RefError },
    /// A configured limit crossed, with the limit's value.
    Limit(LimitKind, u64),
    /// A field with no column (strict mode).
    UnknownField(String),
    /// Reading the input failed.
    Io(std::io::Error),
}

impl Fault {
    /// A syntax fault.
    pub(crate) fn syntax(message: impl Into<String>) -> Self {
        Fault::Syntax(message.into())
    }

    /// A fault for the reference `&name;`.
    pub(crate) fn entity(name: &str, error: RefError) -> Self {
        Fault::Entity {
            reference: format!("&{name};"),
            error,
        }
    }
}

/// A fault and how many bytes into the current event it lies.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) fault: Fault,
    /// Bytes from the event's first byte (its `<` or `&`, or the first
    /// byte of a text run) to the fault.
    pub(crate) offset: usize,
}

impl From<Fault> for Located {
    fn from(fault: Fault) -> Self {
        Located { fault, offset: 0 }
    }
}

/// Classifies a quick-xml error. `event_limit` says whether the reader
/// stopped because one event grew past the value limit.
pub(crate) fn from_parser(error: QuickError, event_limit: Option<u64>) -> Located {
    let fault = match error {
        QuickError::Io(_) if event_limit.is_some() => {
            Fault::Limit(LimitKind::ValueBytes, event_limit.unwrap_or_default())
        }
        QuickError::Io(io) => {
            match io.get_ref().and_then(|e| e.downcast_ref::<DecodeError>()) {
                Some(decode) => Fault::Encoding(decode.message.clone()),
                None => Fault::Io(std::sync::Arc::try_unwrap(io).unwrap_or_else(|shared| {
                    std::io::Error::new(shared.kind(), shared.to_string())
                })),
            }
        }
        QuickError::Encoding(EncodingError::Utf8(utf8)) => {
            return Located {
                fault: Fault::Encoding(
                    "invalid UTF-8 (declare the encoding in `<?xml … encoding=\"…\"?>` \
                     if the input is not UTF-8)"
                        .into(),
                ),
                offset: utf8.valid_up_to(),
            };
        }
        QuickError::Syntax(syntax) => Fault::Syntax(syntax_message(&syntax)),
        QuickError::IllFormed(ill) => Fault::Syntax(ill_formed_message(ill)),
        QuickError::InvalidAttr(attr) => return from_attribute(attr),
        other => Fault::Syntax(other.to_string()),
    };
    fault.into()
}

/// Classifies an attribute error, positioned from the tag's `<`.
pub(crate) fn from_attribute(error: AttrError) -> Located {
    // quick-xml counts from the byte after `<`.
    let (message, at) = match error {
        AttrError::ExpectedEq(at) => ("expected `=` after the attribute name".into(), at),
        AttrError::ExpectedValue(at) => ("expected a quoted attribute value after `=`".into(), at),
        AttrError::UnquotedValue(at) => ("attribute values must be quoted".into(), at),
        AttrError::ExpectedQuote(at, quote) => (
            format!(
                "expected the closing `{}` of the attribute value",
                quote as char
            ),
            at,
        ),
        AttrError::Duplicated(at, _) => ("duplicate attribute".into(), at),
    };
    Located {
        fault: Fault::Syntax(message),
        offset: at + 1,
    }
}

fn syntax_message(error: &SyntaxError) -> String {
    let eof = "unexpected end of input inside";
    match error {
        SyntaxError::UnclosedTag => format!("{eof} a tag: expected `>`"),
        SyntaxError::UnclosedComment => format!("{eof} a comment: expected `-->`"),
        SyntaxError::UnclosedCData => format!("{eof} a CDATA section: expected `]]>`"),
        SyntaxError::UnclosedPI | SyntaxError::UnclosedXmlDecl => {
            format!("{eof} a processing instruction: expected `?>`")
        }
        SyntaxError::UnclosedDoctype => format!("{eof} the DOCTYPE: expected `>`"),
        SyntaxError::UnclosedSingleQuotedAttributeValue => {
            format!("{eof} an attribute value: expected `'`")
        }
        SyntaxError::UnclosedDoubleQuotedAttributeValue => {
            format!("{eof} an attribute value: expected `\"`")
        }
        SyntaxError::InvalidBangMarkup => {
            "`<!` must start a comment, a CDATA section or the DOCTYPE".into()
        }
    }
}

fn ill_formed_message(error: IllFormedError) -> String {
    match error {
        IllFormedError::MismatchedEndTag { expected, found } => {
            format!("expected </{expected}>, found </{found}>")
        }
        IllFormedError::UnmatchedEndTag(found) => {
            format!("found </{found}> but no element is open")
        }
        IllFormedError::UnclosedReference => RefError::Unterminated.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(error: QuickError) -> String {
        match from_parser(error, None).fault {
            Fault::Syntax(message) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mismatched_end_tag_names_both_tags() {
        let error = QuickError::IllFormed(IllFormedError::MismatchedEndTag {
            expected: "name".into(),
            found: "price".into(),
        });
        assert_eq!(message(error), "expected </name>, found </price>");
    }

    #[test]
    fn truncated_tag_says_what_is_missing() {
        assert_eq!(
            message(QuickError::Syntax(SyntaxError::UnclosedCData)),
            "unexpected end of input inside a CDATA section: expected `]]>`"
        );
    }

    #[test]
    fn event_limit_becomes_a_limit_fault() {
        let io = std::io::Error::other("too big");
        let located = from_parser(QuickError::Io(io.into()), Some(99));
        assert!(matches!(
            located.fault,
            Fault::Limit(LimitKind::ValueBytes, 99)
        ));
    }
}
