//! Splitting the input into XML tokens: tags, text runs, CDATA sections,
//! comments, processing instructions and the DOCTYPE.
//!
//! Written for the importer's hot loop: each token is found with one or
//! two scans (`crate::scan`, short runs eight bytes at a time) and handed
//! out as a borrowed `&str` straight from the input window, never copied.
//! A text run keeps its references (`&amp;`) in place, so `a &amp; b` is
//! one token, not three; the record reader expands them as it copies the
//! value into the row. The scan that ends a text run also notes whether
//! the run holds a reference or a CR, so that a plain run is copied
//! without a second look. Nesting (end-tag names), the document's shape
//! and references are checked by the callers (`Document`,
//! `RecordReader`), so this module knows only token syntax. Tags and text
//! are here; the tokens that start `<?` or `<!` are in `markup.rs`, and a
//! whole plain field element, read in one step, in `plain.rs`.

use crate::diagnose::{Fault, Located};
use crate::scan;
use crate::tag::Tag;
use crate::window::Window;

mod markup;
mod plain;

pub(crate) use plain::PlainElement;

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
    Text {
        /// The text as written.
        raw: &'a str,
        /// Whether `raw` holds no `&` and no `\r`: its value is `raw`
        /// itself.
        plain: bool,
        /// Whether `raw` holds a `\r` (a line end to normalize).
        cr: bool,
    },
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

    /// Consumes the white space at the window's start when a `<` follows
    /// it in the bytes in hand: the indentation between elements, for a
    /// caller that would ignore it as text. Anything else is left for
    /// [`Lexer::next_token`].
    #[inline]
    pub(crate) fn skip_blank(&mut self) {
        self.window.consume(std::mem::take(&mut self.last_len));
        let data = self.window.data();
        let len = scan::blank_len(data);
        if len > 0 && data.get(len) == Some(&b'<') {
            self.window.consume(len);
        }
    }

    /// The next token. Faults are located from the token's first byte.
    pub(crate) fn next_token(&mut self) -> Result<Token<'_>, Located> {
        self.window.consume(std::mem::take(&mut self.last_len));
        if !self.ensure(1)? {
            return Ok(Token::Eof);
        }
        if self.window.data()[0] != b'<' {
            let (len, plain, cr) = self.text_end()?;
            return self.finish(len, |w| {
                Ok(Token::Text {
                    raw: w.text(0..len)?,
                    plain,
                    cr,
                })
            });
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

    /// The length of the text run at the window's start (up to the next
    /// `<` or the end of input), whether it is plain (no `&`, no `\r`),
    /// and whether it holds a `\r`. A `>` met on the way must not end
    /// `]]>` (XML 1.0 §2.4 [14]); `>`, `&` and `\r` are rare in text, so
    /// the one scan finds all four.
    #[inline]
    fn text_end(&mut self) -> Result<(usize, bool, bool), Located> {
        let mut from = 0;
        let (mut plain, mut cr) = (true, false);
        loop {
            let Some(at) = self.find(from, scan::text_stop)? else {
                return Ok((self.window.data().len(), plain, cr));
            };
            let data = self.window.data();
            match data[at] {
                b'<' => return Ok((at, plain, cr)),
                b'>' if at >= 2 && data[at - 2..at] == *b"]]" => {
                    return Err(Located {
                        fault: Fault::syntax("`]]>` is not allowed in text (write `]]&gt;`)"),
                        offset: at - 2,
                    });
                }
                b'>' => {}
                b'\r' => (plain, cr) = (false, true),
                _ => plain = false,
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
    /// quoted attribute value. On the way it notes whether the text
    /// outside the values (the names) holds a `:` or an `x`, without
    /// which no attribute declares a namespace or has a prefix.
    fn tag(&mut self) -> Result<Token<'_>, Located> {
        let mut from = 1;
        let mut plain_names = true;
        let end = loop {
            let found = match plain_names {
                true => self.find(from, scan::tag_or_name_stop)?,
                false => self.find(from, scan::tag_stop)?,
            };
            let Some(at) = found else {
                return Err(unclosed("a tag", ">"));
            };
            let quote = self.window.data()[at];
            if quote == b'>' {
                break at;
            }
            if matches!(quote, b':' | b'x') {
                plain_names = false;
                from = at + 1;
                continue;
            }
            match self.find(at + 1, |data| scan::byte(quote, data))? {
                Some(close) => from = close + 1,
                None => return Err(unclosed("an attribute value", &(quote as char).to_string())),
            }
        };
        let empty = self.window.data()[end - 1] == b'/' && end > 1;
        let inner_end = if empty { end - 1 } else { end };
        self.finish(end + 1, |w| {
            let tag = Tag::parse(w.text(1..inner_end)?)?.with_plain_names(plain_names);
            Ok(if empty {
                Token::Empty(tag)
            } else {
                Token::Start(tag)
            })
        })
    }

    /// `</name>`.
    fn end_tag(&mut self) -> Result<Token<'_>, Located> {
        let Some(end) = self.find(2, |data| scan::byte(b'>', data))? else {
            return Err(unclosed("a tag", ">"));
        };
        self.finish(end + 1, |w| {
            Ok(Token::End(w.text(2..end)?.trim_ascii_end()))
        })
    }
}

fn unclosed(what: &str, close: &str) -> Located {
    Fault::syntax(format!(
        "unexpected end of input inside {what}: expected `{close}`"
    ))
    .into()
}

#[cfg(test)]
mod tests;
