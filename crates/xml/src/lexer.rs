//! Splitting the input into XML tokens: tags, text runs, CDATA sections,
//! comments, processing instructions and the DOCTYPE.
//!
//! Written for the importer's hot loop: each token is found with one or
//! two `memchr` scans and handed out as a borrowed `&str` straight from the
//! input window, never copied. A text run keeps its references (`&amp;`)
//! in place, so `a &amp; b` is one token, not three; the record reader
//! expands them as it copies the value into the row. Nesting (end-tag
//! names), the document's shape and references are checked by the callers
//! (`Document`, `RecordReader`), so this file knows only token syntax.

use memchr::{memchr, memchr2, memchr3, memmem};

use crate::decl;
use crate::diagnose::{Fault, Located};
use crate::tag::Tag;
use crate::window::Window;

/// One token of the input, borrowed from the window.
#[derive(Debug)]
pub(crate) enum Token<'a> {
    /// `<name …>`.
    Start(Tag<'a>),
    /// `<name …/>`.
    Empty(Tag<'a>),
    /// `</name>`: the name, without surrounding whitespace.
    End(&'a str),
    /// Character data up to the next `<`, references unexpanded.
    Text(&'a str),
    /// The contents of `<![CDATA[…]]>`.
    CData(&'a str),
    /// The XML declaration `<?xml …?>`: its content after `<?`.
    Decl(&'a str),
    /// The contents of `<!DOCTYPE …>`.
    DocType(&'a str),
    /// A processing instruction or a comment.
    Ignored,
    /// The end of input.
    Eof,
}

/// Pulls tokens from a [`Window`].
pub(crate) struct Lexer {
    window: Window,
    /// Length of the token handed out last, consumed on the next call.
    last_len: usize,
}

impl Lexer {
    /// Tokens of the input `window` reads.
    pub(crate) fn new(window: Window) -> Self {
        Lexer {
            window,
            last_len: 0,
        }
    }

    /// The window, for the current token's position and bytes.
    pub(crate) fn window(&mut self) -> &mut Window {
        &mut self.window
    }

    /// The window past the token handed out last, for a caller that reads
    /// on without tokens (the split plan's [`skim`](crate::skim)).
    pub(crate) fn window_after_token(&mut self) -> &mut Window {
        self.window.consume(std::mem::take(&mut self.last_len));
        &mut self.window
    }

    /// The next token. Faults are located from the token's first byte.
    pub(crate) fn next_token(&mut self) -> Result<Token<'_>, Located> {
        self.window.consume(std::mem::take(&mut self.last_len));
        if !self.ensure(1)? {
            return Ok(Token::Eof);
        }
        if self.window.data()[0] != b'<' {
            let len = self.text_end()?;
            return self.finish(len, |w| Ok(Token::Text(w.text(0..len)?)));
        }
        if !self.ensure(2)? {
            return Err(unclosed("a tag", ">"));
        }
        match self.window.data()[1] {
            b'/' => self.end_tag(),
            b'!' => self.bang(),
            b'?' => self.pi(),
            _ => self.tag(),
        }
    }

    /// The length of the text run at the window's start: up to the next
    /// `<` or the end of input. A `>` met on the way must not end `]]>`
    /// (XML 1.0 §2.4 [14]); `>` is rare in text, so the one scan finds
    /// both.
    #[inline]
    fn text_end(&mut self) -> Result<usize, Located> {
        let mut from = 0;
        loop {
            let Some(at) = self.find(from, |data| memchr2(b'<', b'>', data))? else {
                return Ok(self.window.data().len());
            };
            let data = self.window.data();
            if data[at] == b'<' {
                return Ok(at);
            }
            if at >= 2 && data[at - 2..at] == *b"]]" {
                return Err(Located {
                    fault: Fault::syntax("`]]>` is not allowed in text (write `]]&gt;`)"),
                    offset: at - 2,
                });
            }
            from = at + 1;
        }
    }

    /// Reads until the window holds `n` bytes; `false` if the input ends
    /// first.
    #[inline]
    fn ensure(&mut self, n: usize) -> Result<bool, Located> {
        while self.window.data().len() < n {
            if !self.window.fill()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The position `find` reports in the token's bytes from `from`,
    /// reading more while it finds nothing.
    #[inline]
    fn find(
        &mut self,
        mut from: usize,
        find: impl Fn(&[u8]) -> Option<usize>,
    ) -> Result<Option<usize>, Located> {
        loop {
            let data = self.window.data();
            if let Some(at) = data.get(from..).and_then(&find) {
                return Ok(Some(from + at));
            }
            from = from.max(data.len());
            if !self.window.fill()? {
                return Ok(None);
            }
        }
    }

    /// Where the first `tail` followed by `>` starts, at or after `from`
    /// (`tail` is `]]`, `--` or `?`).
    fn find_close(&mut self, from: usize, tail: &[u8]) -> Result<Option<usize>, Located> {
        let mut at = from + tail.len();
        loop {
            match self.find(at, |data| memchr(b'>', data))? {
                None => return Ok(None),
                Some(gt) if self.window.data()[gt - tail.len()..gt] == *tail => {
                    return Ok(Some(gt - tail.len()))
                }
                Some(gt) => at = gt + 1,
            }
        }
    }

    /// Hands out the token of `len` bytes that `make` builds.
    #[inline]
    fn finish<'a>(
        &'a mut self,
        len: usize,
        make: impl FnOnce(&'a Window) -> Result<Token<'a>, Located>,
    ) -> Result<Token<'a>, Located> {
        self.last_len = len;
        make(&self.window)
    }

    /// `<name …>` or `<name …/>`: finds the `>` that is not inside a
    /// quoted attribute value.
    fn tag(&mut self) -> Result<Token<'_>, Located> {
        let mut from = 1;
        let end = loop {
            let found = self.find(from, |data| memchr3(b'>', b'"', b'\'', data))?;
            let Some(at) = found else {
                return Err(unclosed("a tag", ">"));
            };
            let quote = self.window.data()[at];
            if quote == b'>' {
                break at;
            }
            match self.find(at + 1, |data| memchr(quote, data))? {
                Some(close) => from = close + 1,
                None => return Err(unclosed("an attribute value", &(quote as char).to_string())),
            }
        };
        let empty = self.window.data()[end - 1] == b'/' && end > 1;
        let inner_end = if empty { end - 1 } else { end };
        self.finish(end + 1, |w| {
            let tag = Tag::parse(w.text(1..inner_end)?)?;
            Ok(if empty {
                Token::Empty(tag)
            } else {
                Token::Start(tag)
            })
        })
    }

    /// `</name>`.
    fn end_tag(&mut self) -> Result<Token<'_>, Located> {
        let Some(end) = self.find(2, |data| memchr(b'>', data))? else {
            return Err(unclosed("a tag", ">"));
        };
        self.finish(end + 1, |w| {
            Ok(Token::End(w.text(2..end)?.trim_ascii_end()))
        })
    }

    /// `<?…?>`: the declaration if its target is `xml`, else an ignored PI.
    fn pi(&mut self) -> Result<Token<'_>, Located> {
        let Some(end) = self.find_close(2, b"?")? else {
            return Err(unclosed("a processing instruction", "?>"));
        };
        self.finish(end + 2, |w| {
            let content = w.text(2..end)?;
            let target = content.split_ascii_whitespace().next().unwrap_or_default();
            if target == "xml" {
                return Ok(Token::Decl(content));
            }
            decl::check_pi(content).map_err(|(at, message)| Located {
                fault: Fault::Syntax(message),
                offset: 2 + at,
            })?;
            Ok(Token::Ignored)
        })
    }

    /// `<!--…-->`, `<![CDATA[…]]>` or `<!DOCTYPE …>`.
    fn bang(&mut self) -> Result<Token<'_>, Located> {
        const COMMENT: &[u8] = b"<!--";
        const CDATA: &[u8] = b"<![CDATA[";
        const DOCTYPE: &[u8] = b"<!DOCTYPE";
        self.ensure(CDATA.len())?;
        let data = self.window.data();
        let head = &data[..data.len().min(CDATA.len())];
        if head.starts_with(COMMENT) {
            let Some(end) = self.find_close(4, b"--")? else {
                return Err(unclosed("a comment", "-->"));
            };
            return self.finish(end + 3, |w| {
                decl::check_comment(w.text(4..end)?).map_err(|(at, message)| Located {
                    fault: Fault::Syntax(message),
                    offset: 4 + at,
                })?;
                Ok(Token::Ignored)
            });
        }
        if head.starts_with(CDATA) {
            let Some(end) = self.find_close(9, b"]]")? else {
                return Err(unclosed("a CDATA section", "]]>"));
            };
            return self.finish(end + 3, |w| Ok(Token::CData(w.text(9..end)?)));
        }
        if head.starts_with(DOCTYPE) {
            let Some(end) = self.doctype_end()? else {
                return Err(unclosed("the DOCTYPE", ">"));
            };
            return self.finish(end + 1, |w| Ok(Token::DocType(w.text(9..end)?)));
        }
        // A truncated opening still says what it was opening.
        if self.window.at_eof() {
            for (opening, what, close) in [
                (COMMENT, "a comment", "-->"),
                (CDATA, "a CDATA section", "]]>"),
                (DOCTYPE, "the DOCTYPE", ">"),
            ] {
                if opening.starts_with(head) {
                    return Err(unclosed(what, close));
                }
            }
        }
        Err(Fault::syntax("`<!` must start a comment, a CDATA section or the DOCTYPE").into())
    }

    /// The `>` closing a DOCTYPE: not inside quotes or the `[…]` internal
    /// subset, where comments and processing instructions are skipped
    /// whole (an apostrophe in `<!-- the catalogue's types -->` opens no
    /// quote, and a `]` or `>` there closes nothing).
    fn doctype_end(&mut self) -> Result<Option<usize>, Located> {
        let mut at = 9;
        let mut within = Within::Markup;
        let mut subset = false;
        loop {
            let data = self.window.data();
            while at < data.len() {
                match within {
                    Within::Quote(quote) => {
                        if data[at] == quote {
                            within = Within::Markup;
                        }
                        at += 1;
                    }
                    Within::Skipped(close) => match memmem::find(&data[at..], close) {
                        Some(found) => {
                            at += found + close.len();
                            within = Within::Markup;
                        }
                        // Keep the bytes that may begin `close` for the next look.
                        None => {
                            at = at.max(data.len().saturating_sub(close.len() - 1));
                            break;
                        }
                    },
                    Within::Markup => {
                        match data[at] {
                            quote @ (b'"' | b'\'') => within = Within::Quote(quote),
                            b'[' => subset = true,
                            b']' => subset = false,
                            b'>' if !subset => return Ok(Some(at)),
                            b'<' if subset => {
                                let rest = &data[at..];
                                if let Some((open, close)) =
                                    SKIPPED.into_iter().find(|(open, _)| rest.starts_with(open))
                                {
                                    within = Within::Skipped(close);
                                    at += open.len();
                                    continue;
                                }
                                if SKIPPED.iter().any(|(open, _)| open.starts_with(rest)) {
                                    break; // too few bytes yet to tell
                                }
                            }
                            _ => {}
                        }
                        at += 1;
                    }
                }
            }
            if !self.window.fill()? {
                return Ok(None);
            }
        }
    }
}

/// Where [`Lexer::doctype_end`] is inside the DOCTYPE.
#[derive(Clone, Copy)]
enum Within {
    /// Declarations, names and brackets.
    Markup,
    /// A quoted literal, until this quote.
    Quote(u8),
    /// A comment or processing instruction in the subset, until this.
    Skipped(&'static [u8]),
}

/// What the internal subset skips whole: (opening, closing).
const SKIPPED: [(&[u8], &[u8]); 2] = [(b"<!--", b"-->"), (b"<?", b"?>")];

fn unclosed(what: &str, close: &str) -> Located {
    Fault::syntax(format!(
        "unexpected end of input inside {what}: expected `{close}`"
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::tests::trickle;

    /// Each token as a short string, reading `step` bytes at a time.
    fn tokens(xml: &str, step: usize) -> Result<Vec<String>, String> {
        let input = trickle(xml.as_bytes(), step);
        let mut lexer = Lexer::new(Window::new(input, 0, 1 << 20, 1 << 20));
        let mut out = Vec::new();
        loop {
            let token = match lexer.next_token() {
                Ok(token) => token,
                Err(located) => return Err(format!("{:?} at {}", located.fault, located.offset)),
            };
            out.push(match token {
                Token::Start(tag) => format!("<{}|{}>", tag.name(), tag.attributes_raw()),
                Token::Empty(tag) => format!("<{}|{}/>", tag.name(), tag.attributes_raw()),
                Token::End(name) => format!("</{name}>"),
                Token::Text(text) => format!("T({text})"),
                Token::CData(text) => format!("C({text})"),
                Token::Decl(_) => "decl".into(),
                Token::DocType(content) => format!("D({content})"),
                Token::Ignored => "-".into(),
                Token::Eof => return Ok(out),
            });
        }
    }

    /// Same tokens whatever the read size.
    fn check(xml: &str, want: &[&str]) {
        for step in [1, 2, 3, 7, 1 << 16] {
            assert_eq!(
                tokens(xml, step).unwrap(),
                want,
                "{xml:?} read {step} at a time"
            );
        }
    }

    fn fails(xml: &str, want: &str) {
        for step in [1, 5, 1 << 16] {
            let got = tokens(xml, step).unwrap_err();
            assert!(got.contains(want), "{xml:?} read {step} at a time: {got}");
        }
    }

    #[test]
    fn every_kind_of_token() {
        check(
            "<?xml version='1.0'?><!DOCTYPE r [<!ENTITY e 'a>b'>]><?pi x?><!-- c -->\
             <r a='1>2' b=\"'\">x &amp; y<![CDATA[<]]]>é<e/></r >\n",
            &[
                "decl",
                "D( r [<!ENTITY e 'a>b'>])",
                "-",
                "-",
                "<r| a='1>2' b=\"'\">",
                "T(x &amp; y)",
                "C(<])",
                "T(é)",
                "<e|/>",
                "</r>",
                "T(\n)",
            ],
        );
    }

    #[test]
    fn comments_and_pis_in_the_doctype_subset_hide_quotes_and_brackets() {
        let doctype = " r [<!-- it's ] > --><?p \" > ?><!ENTITY e '<!--'>]";
        check(
            &format!("<!DOCTYPE{doctype}><r/>"),
            &[&format!("D({doctype})"), "<r|/>"],
        );
        // Outside the subset, `<!--` means nothing to the DOCTYPE.
        check(
            "<!DOCTYPE r SYSTEM 'x<!--'><r/>",
            &["D( r SYSTEM 'x<!--')", "<r|/>"],
        );
        fails("<!DOCTYPE r [<!-- ]> -", "inside the DOCTYPE: expected `>`");
        fails("<!DOCTYPE r [<? ]> ?", "inside the DOCTYPE: expected `>`");
    }

    #[test]
    fn near_misses_of_the_declaration_are_pis() {
        check("<?xml-stylesheet a?><?xml?>", &["-", "decl"]);
    }

    #[test]
    fn truncated_tokens_say_what_is_missing() {
        fails("<r><!-- x", "inside a comment: expected `-->`");
        fails("<r><!-", "inside a comment");
        fails("<r><![CDATA[x]]", "inside a CDATA section: expected `]]>`");
        fails("<r><![CDA", "inside a CDATA section");
        fails("<r a='x", "inside an attribute value: expected `'`");
        fails("<r", "inside a tag: expected `>`");
        fails("<r></r", "inside a tag: expected `>`");
        fails("<?pi ?", "inside a processing instruction: expected `?>`");
        fails("<!DOCTYPE r [ > ", "inside the DOCTYPE: expected `>`");
        fails("<!x>", "`<!` must start a comment");
        fails("<r><", "inside a tag: expected `>`");
    }

    #[test]
    fn a_start_tag_needs_a_name() {
        fails("<>", "expected an element name");
        fails("< r>", "expected an element name");
        check("</>", &["</>"]);
    }
}
