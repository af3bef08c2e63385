//! Passing over an element's content without reading it, for the split
//! plan.
//!
//! The plan (`region`) needs where each record starts and how many came
//! before it; what a record holds does not matter to it. Inside a record it
//! therefore follows only the markup that can hide a `<` or a `>` (comments,
//! CDATA sections, processing instructions, quoted attribute values) and
//! counts nesting, instead of lexing and checking every token: on the
//! generated catalogue the plan costs about a third of what it did with the
//! full lexer. In the common case ([`skip_record`]) not even nesting needs
//! counting: the record's own end tag is the first of its name.
//!
//! Well-formed content is passed over exactly, so the plan's state after
//! the element is the one the parser will have. Malformed content may be
//! misread here, but never silently: the region that parses those bytes
//! meets the fault, or its end where the parser sees no record start, and
//! reports the fault one source reading the whole input finds there.

use crate::namespaces;
use crate::scan;
use crate::window::Window;

/// Passes over the content and end tag of the record named `name` whose
/// start tag the window has just passed, in the common case: the bytes in
/// hand hold all of it, and no element inside it has a name that starts
/// with the record's (which could be a nested one). Whether it did;
/// nothing is consumed when it did not, and [`skip_element`] then takes
/// over.
///
/// Outside comments, CDATA sections and processing instructions, which it
/// steps over, every `<` of well-formed content starts a tag (neither
/// text nor an attribute value can hold one), so only the `<`s are looked
/// at, and the record ends at the first `</name>`: no tag's end, quoting
/// or nesting needs following.
pub(crate) fn skip_record(window: &mut Window, name: &[u8]) -> bool {
    let Some(&first) = name.first() else {
        return false;
    };
    // Whether `bytes` start with the record's name (its first byte tried
    // alone first: most tags' names differ there, and a slice comparison
    // is a call).
    let named = |bytes: &[u8]| bytes.first() == Some(&first) && bytes.starts_with(name);
    let data = window.data();
    let mut at = 0;
    while let Some(found) = scan::byte(b'<', &data[at..]) {
        let rest = &data[at + found + 1..];
        at += found + 1;
        match rest.first() {
            Some(b'/') if named(&rest[1..]) => {
                if rest.get(1 + name.len()) != Some(&b'>') {
                    // `</name …>`, a longer name, or cut by the bytes in hand.
                    return false;
                }
                window.consume(at + 1 + name.len() + 1);
                return true;
            }
            Some(b'/') => {}
            Some(b'!') => {
                let (head, end): (&[u8], &[u8]) = if rest.starts_with(b"![CDATA[") {
                    (b"![CDATA[", b"]]>")
                } else if rest.starts_with(b"!--") {
                    (b"!--", b"-->")
                } else {
                    return false;
                };
                let Some(close) = find_end(&rest[head.len()..], end) else {
                    return false;
                };
                at += head.len() + close + end.len();
            }
            Some(b'?') => {
                let Some(close) = find_end(&rest[1..], b"?>") else {
                    return false;
                };
                at += 1 + close + 2;
            }
            Some(_) if named(rest) => return false,
            Some(_) => {}
            None => return false,
        }
    }
    false
}

/// At the window's start, after white space, the start tag `<name …>` of
/// another record with nothing in it that [`Document::open`] would need
/// to know (no namespace declaration, not empty): consumes the white
/// space and returns the tag's length, leaving the window at its `<`.
/// `None` (nothing consumed) for anything else, which the lexer then
/// reads.
///
/// [`Document::open`]: crate::document::Document::open
pub(crate) fn record_start(window: &mut Window, name: &[u8]) -> Option<usize> {
    let data = window.data();
    let blank = scan::blank_len(data);
    let tag = &data[blank..];
    let after_name = tag.strip_prefix(b"<")?.strip_prefix(name)?;
    if !matches!(
        after_name.first(),
        Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')
    ) {
        return None;
    }
    let mut from = 1 + name.len();
    let end = loop {
        let stop = from + scan::tag_stop(&tag[from..])?;
        match tag[stop] {
            b'>' => break stop,
            quote => from = stop + 1 + scan::byte(quote, &tag[stop + 1..])? + 1,
        }
    };
    if tag[end - 1] == b'/' || namespaces::may_declare(&tag[1 + name.len()..end]) {
        return None;
    }
    window.consume(blank);
    Some(end + 1)
}

/// The offset in `data` of the first `end` (`-->`, `]]>` or `?>`): a byte
/// search for its last byte, `>`, which content seldom holds, with a look
/// behind, cheaper than a substring search set up for every section.
fn find_end(data: &[u8], end: &[u8]) -> Option<usize> {
    let (&last, head) = end.split_last()?;
    let mut from = 0;
    while let Some(found) = scan::byte(last, &data[from..]) {
        let at = from + found;
        if at >= head.len() && data[at - head.len()..at] == *head {
            return Some(at - head.len());
        }
        from = at + 1;
    }
    None
}

/// Consumes the content and end tag of the element whose start tag the
/// window has just passed. `None` at the end of input, on a read fault or
/// on markup that cannot occur in content (`<!DOCTYPE` and the like).
///
/// Text, end tags and tags without quoted values are passed over in the
/// bytes in hand ([`pass`]), the window moved once per read; the rest
/// (comments, CDATA sections, processing instructions, tags with quoted
/// values) one at a time by [`markup`].
pub(crate) fn skip_element(window: &mut Window) -> Option<()> {
    let mut depth = 1usize;
    loop {
        let data = window.data();
        let (at, stop) = pass(data, &mut depth);
        match stop {
            Stop::Closed => {
                window.consume(at);
                return Some(());
            }
            Stop::Markup => {
                window.consume(at);
                if markup(window, &mut depth)? {
                    return Some(());
                }
            }
            Stop::Short => {
                window.consume(at);
                if !window.fill().ok()? {
                    return None;
                }
            }
        }
    }
}

/// Why [`pass`] stopped.
enum Stop {
    /// The element's end tag ended just before the offset.
    Closed,
    /// Markup [`pass`] leaves to [`markup`] starts at the offset.
    Markup,
    /// The bytes in hand end inside the tag starting at the offset, or in
    /// text, whose bytes from the offset on may hold the start of a
    /// character a read cut.
    Short,
}

/// Passes over text, end tags and tags without quoted values in `data`,
/// counting nesting in `depth`; where it stopped, and why.
#[inline]
fn pass(data: &[u8], depth: &mut usize) -> (usize, Stop) {
    let mut at = 0;
    loop {
        let Some(lt) = scan::byte(b'<', &data[at..]).map(|found| at + found) else {
            return (
                at.max(data.len().saturating_sub(CUT_CHARACTER)),
                Stop::Short,
            );
        };
        match data.get(lt + 1) {
            None => return (lt, Stop::Short),
            Some(b'/') => {
                // An end tag holds no quoted value: its first `>` ends it.
                let Some(gt) = scan::byte(b'>', &data[lt + 2..]) else {
                    return (lt, Stop::Short);
                };
                at = lt + 2 + gt + 1;
                *depth -= 1;
                if *depth == 0 {
                    return (at, Stop::Closed);
                }
            }
            Some(b'!' | b'?') => return (lt, Stop::Markup),
            Some(_) => {
                let Some(found) = scan::tag_stop(&data[lt + 1..]) else {
                    return (lt, Stop::Short);
                };
                let end = lt + 1 + found;
                if data[end] != b'>' {
                    return (lt, Stop::Markup);
                }
                *depth += usize::from(data[end - 1] != b'/');
                at = end + 1;
            }
        }
    }
}

/// Consumes the one piece of markup at the window's start (which is `<`):
/// a comment, CDATA section, processing instruction or tag. Whether it
/// closed the element, `None` as for [`skip_element`].
fn markup(window: &mut Window, depth: &mut usize) -> Option<bool> {
    let head = ensure(window, 9)?;
    match head.get(1) {
        Some(b'!') if head.starts_with(b"<!--") => {
            window.consume(4);
            skip_past(window, b"-->")?;
        }
        Some(b'!') if head.starts_with(b"<![CDATA[") => {
            window.consume(9);
            skip_past(window, b"]]>")?;
        }
        Some(b'?') => {
            window.consume(2);
            skip_past(window, b"?>")?;
        }
        Some(b'!') | None => return None,
        Some(b'/') => {
            seek(window, |data| scan::byte(b'>', data), 0)?;
            window.consume(1);
            *depth -= 1;
            return Some(*depth == 0);
        }
        Some(_) => {
            let end = tag_end(window)?;
            let empty = window.data()[end - 1] == b'/';
            window.consume(end + 1);
            *depth += usize::from(!empty);
        }
    }
    Some(false)
}

/// Reads until the window holds `n` bytes or the input ends; the window's
/// data, `None` on a read fault or when not even two bytes are left.
fn ensure(window: &mut Window, n: usize) -> Option<&[u8]> {
    while window.data().len() < n {
        if !window.fill().ok()? {
            break;
        }
    }
    let data = window.data();
    (data.len() >= 2).then_some(data)
}

/// Bytes of a character that a read may cut: the window checks UTF-8 from
/// its first unchecked byte, so the start of a cut character must stay in
/// it until the next read completes the character.
const CUT_CHARACTER: usize = 3;

/// Consumes input up to the first place `find` reports, keeping the last
/// `keep` bytes of each window across reads (a pattern split by a read).
fn seek(window: &mut Window, find: impl Fn(&[u8]) -> Option<usize>, keep: usize) -> Option<()> {
    loop {
        let data = window.data();
        if let Some(at) = find(data) {
            window.consume(at);
            return Some(());
        }
        window.consume(data.len().saturating_sub(keep.max(CUT_CHARACTER)));
        if !window.fill().ok()? {
            return None;
        }
    }
}

/// Consumes input up to and including the first `end` (`-->`, `]]>` or
/// `?>`). Each ends in `>`, which content seldom holds, so a byte search
/// for it with a look behind is cheaper than a substring search set up
/// for every section.
fn skip_past(window: &mut Window, end: &[u8]) -> Option<()> {
    seek(window, |data| find_end(data, end), end.len() - 1)?;
    window.consume(end.len());
    Some(())
}

/// The offset of the `>` ending the tag at the window's start, passing over
/// quoted attribute values (which may hold `>`); the tag stays in the
/// window while more input is read.
fn tag_end(window: &mut Window) -> Option<usize> {
    let mut from = 1;
    loop {
        let data = window.data();
        match scan::tag_stop(&data[from..]).map(|at| from + at) {
            Some(at) if data[at] == b'>' => return Some(at),
            Some(quote) => match scan::byte(data[quote], &data[quote + 1..]) {
                Some(close) => from = quote + 1 + close + 1,
                None => {
                    // The value goes on past the data read so far.
                    if !window.fill().ok()? {
                        return None;
                    }
                }
            },
            None => {
                from = data.len();
                if !window.fill().ok()? {
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes left after skipping the element that starts `xml`'s
    /// content, read in steps of `step` bytes.
    fn rest_after(xml: &str, step: usize) -> Option<String> {
        let input = crate::window::tests::trickle(xml.as_bytes(), step);
        let mut window = Window::new(input, 0, 1 << 20, 1 << 20);
        skip_element(&mut window)?;
        // What follows is still checked text: a character cut by a read
        // was kept whole.
        assert!(window.text(0..window.data().len()).is_ok(), "step {step}");
        let mut rest = Vec::new();
        loop {
            rest.extend_from_slice(window.data());
            let len = window.data().len();
            window.consume(len);
            if !window.fill().unwrap() {
                break;
            }
        }
        Some(String::from_utf8(rest).unwrap())
    }

    #[test]
    fn markup_that_hides_angle_brackets_is_passed_over() {
        let content = "<a x='>' y=\"/>\">t\u{e9}</a><b/><!-- </r> \u{6f22}<x> -->\
                       <![CDATA[</r><y>\u{1f389}]]><?pi </r> ?><r><r/></r>caf\u{e9} \u{1f389}\
                       text &amp; more</r>tail";
        for step in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(rest_after(content, step).as_deref(), Some("tail"), "{step}");
        }
    }

    #[test]
    fn nesting_is_counted_once_whatever_the_reads() {
        let content = "<a><b>x</b><c/><d e='1'><f/></d>\n  <g>\u{e9}</g></a><h/></r>tail";
        for step in 1..=24 {
            assert_eq!(rest_after(content, step).as_deref(), Some("tail"), "{step}");
        }
    }

    #[test]
    fn characters_cut_by_reads_stay_whole_while_the_window_moves() {
        // Longer than the window's buffer, so it moves its bytes while the
        // skim passes over them, with reads that cut characters.
        let text = "caf\u{e9} \u{6f22}\u{5b57} \u{1f389} ".repeat(20_000);
        let content = format!("<a>{text}<b/>{text}</a></r>tail");
        for step in [7, 4093, 65_537] {
            assert_eq!(
                rest_after(&content, step).as_deref(),
                Some("tail"),
                "{step}"
            );
        }
    }

    #[test]
    fn unfinished_or_foreign_markup_ends_the_skim() {
        for xml in [
            "<a>",
            "<!-- never closed",
            "<![CDATA[ never closed",
            "<a title='never closed",
            "<!DOCTYPE r></r>",
            "no end",
        ] {
            assert_eq!(rest_after(xml, 3), None, "{xml}");
        }
    }
}
