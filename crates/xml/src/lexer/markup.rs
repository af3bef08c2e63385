//! The tokens that start `<?` or `<!`: processing instructions (and the
//! XML declaration), comments, CDATA sections and the DOCTYPE.

use memchr::{memchr, memmem};

use crate::decl;
use crate::diagnose::{Fault, Located};

use super::{unclosed, Lexer, Token};

impl Lexer {
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

    /// `<?…?>`: the declaration if its target is `xml`, else an ignored PI.
    pub(super) fn pi(&mut self) -> Result<Token<'_>, Located> {
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
    pub(super) fn bang(&mut self) -> Result<Token<'_>, Located> {
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
