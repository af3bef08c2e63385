//! The shortest way through the commonest element of a record: a field
//! written `<name>text</name>`, `<name><![CDATA[text]]></name>` or
//! `<name/>`, or as `mysqldump --xml` writes it, `<field name="name">…`,
//! with no other attribute, no other white space inside its tags, and
//! text that holds no `>` or CR.
//!
//! Such an element means exactly what its tokens would (a start tag, one
//! text run or CDATA section, an end tag), so the caller may apply it in
//! one step. It is recognised in the bytes already checked as UTF-8 and
//! XML characters, without reading more; anything else (an element cut
//! by the window's end, an attribute, mixed text and CDATA, a comment, a
//! child element, an end tag with white space) is left to
//! [`Lexer::next_token`], which reads it as usual. The name is not
//! checked here: the caller takes the element only when the name is one
//! it knows, and every name it knows is a valid XML name.

use std::ops::Range;

use crate::scan;

use super::Lexer;

/// What opens a CDATA section.
const CDATA: &[u8] = b"<![CDATA[";

/// `<name>text</name>`, `<name><![CDATA[text]]></name>` or `<name/>`
/// (with empty `text`) at the window's start, or the same with
/// `<field name="name">` and `</field>` (the `mysqldump --xml` form).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlainElement<'a> {
    /// The field's name as written: the element name, or the `name`
    /// attribute's value in the `<field>` form. Unchecked: the caller
    /// takes the element only if this matches a field's name.
    pub(crate) name: &'a str,
    /// Whether `name` is a `<field name="…">`'s attribute value.
    pub(crate) named: bool,
    /// The text between the tags as written (without the CDATA markers
    /// when the content is one CDATA section).
    pub(crate) text: &'a str,
    /// Whether `text` holds references (`&amp;`) to expand.
    pub(crate) references: bool,
    /// Bytes from `<` through the end tag's `>`.
    pub(crate) len: usize,
}

/// What opens a `mysqldump --xml` field, up to its name.
const FIELD: &[u8] = b"<field name=\"";

impl Lexer {
    /// The element at the window's start, if it is a plain one held whole
    /// in the checked bytes in hand. Nothing is consumed: see
    /// [`Lexer::consume_plain`].
    #[inline]
    pub(crate) fn plain_element(&mut self) -> Option<PlainElement<'_>> {
        self.window.consume(std::mem::take(&mut self.last_len));
        let window = &self.window;
        let data = window.checked();
        if data.first() != Some(&b'<') || matches!(data.get(1), Some(b'/' | b'!' | b'?') | None) {
            return None;
        }
        // The field's name, whether the `name` attribute gives it, the
        // start tag's `>`, and the element's name.
        let (name, named, gt, tag) = if data.starts_with(FIELD) {
            let quote = FIELD.len() + scan::byte(b'"', &data[FIELD.len()..])?;
            let gt = quote + 1 + usize::from(data.get(quote + 1) == Some(&b'/'));
            (FIELD.len()..quote, true, gt, 1.."<field".len())
        } else {
            let gt = 1 + scan::byte(b'>', &data[1..])?;
            let name_end = gt - usize::from(data[gt - 1] == b'/');
            (1..name_end, false, gt, 1..name_end)
        };
        if data.get(gt) != Some(&b'>') {
            return None;
        }
        if data[gt - 1] == b'/' {
            return Some(PlainElement {
                name: window.text(name).ok()?,
                named,
                text: "",
                references: false,
                len: gt + 1,
            });
        }
        let (text, references, close) = match data[gt + 1..].starts_with(CDATA) {
            true => cdata(data, gt + 1 + CDATA.len())?,
            false => text(data, gt + 1)?,
        };
        let end = close + 2 + tag.len();
        if data.get(close..close + 2) != Some(b"</")
            || data.get(close + 2..end) != Some(&data[tag])
            || data.get(end) != Some(&b'>')
        {
            return None;
        }
        // Both ranges lie in the checked bytes and end beside an ASCII
        // `<`, `>`, `/`, `"` or `[`, as `Window::text` requires.
        Some(PlainElement {
            name: window.text(name).ok()?,
            named,
            text: window.text(text).ok()?,
            references,
            len: end + 1,
        })
    }

    /// Consumes the plain element [`Lexer::plain_element`] returned, of
    /// `len` bytes, once the caller has applied it.
    #[inline]
    pub(crate) fn consume_plain(&mut self, len: usize) {
        debug_assert_eq!(self.last_len, 0);
        self.window.consume(len);
    }
}

/// Text from `from` to the next `<`: its range, whether it holds `&`, and
/// where the `<` is. `None` if the text holds `>` (which could end `]]>`)
/// or CR (a line end to normalize), or the `<` is not in `data`.
#[inline]
fn text(data: &[u8], from: usize) -> Option<(Range<usize>, bool, usize)> {
    let mut references = false;
    let mut at = from;
    loop {
        at += scan::text_stop(&data[at..])?;
        match data[at] {
            b'<' => return Some((from..at, references, at)),
            b'&' => references = true,
            _ => return None,
        }
        at += 1;
    }
}

/// The content of a CDATA section from `from` (after `<![CDATA[`) to its
/// `]]>`, and where the bytes after the section start. `None` if the
/// content holds a CR or the section does not end in `data`.
#[inline]
fn cdata(data: &[u8], from: usize) -> Option<(Range<usize>, bool, usize)> {
    let mut at = from;
    loop {
        at += scan::byte2(b']', b'\r', &data[at..])?;
        if data[at] == b'\r' {
            return None;
        }
        if data.get(at..at + 3) == Some(b"]]>") {
            return Some((from..at, false, at + 3));
        }
        at += 1;
    }
}
