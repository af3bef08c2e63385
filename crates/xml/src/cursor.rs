//! A small cursor over markup text for the declaration and DOCTYPE
//! grammars: whitespace, names, keywords and quoted literals, each fault
//! located by its byte offset in the text.

use crate::names::{self, NameError};

/// A syntax fault: where (bytes into the text) and what.
pub(crate) type Fail = (usize, String);

/// Reads a piece of markup text from left to right.
pub(crate) struct Cursor<'a> {
    pub(crate) text: &'a str,
    pub(crate) at: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Cursor { text, at: 0 }
    }

    /// What is left.
    pub(crate) fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// A fault at the current place.
    pub(crate) fn fail<T>(&self, message: impl Into<String>) -> Result<T, Fail> {
        Err((self.at, message.into()))
    }

    pub(crate) fn at_end(&self) -> bool {
        self.at == self.text.len()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips `S`; returns whether there was any.
    pub(crate) fn space(&mut self) -> bool {
        let start = self.at;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
        self.at > start
    }

    /// Requires `S` before `what`.
    pub(crate) fn space_before(&mut self, what: &str) -> Result<(), Fail> {
        if self.space() {
            Ok(())
        } else {
            self.fail(format!("expected whitespace before {what}"))
        }
    }

    /// Consumes `s` if the text continues with it.
    pub(crate) fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.at += s.len();
            true
        } else {
            false
        }
    }

    /// Requires `s` next.
    pub(crate) fn expect(&mut self, s: &str) -> Result<(), Fail> {
        if self.eat(s) {
            Ok(())
        } else {
            self.fail(format!("expected `{s}`"))
        }
    }

    /// The run of name characters here (possibly empty).
    pub(crate) fn name_run(&mut self) -> &'a str {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(_, c)| !names::is_name_char(c))
            .map_or(rest.len(), |(i, _)| i);
        self.at += len;
        &rest[..len]
    }

    /// A name checked by `check` (QName, NCName, Nmtoken).
    pub(crate) fn name(
        &mut self,
        what: &str,
        check: fn(&str) -> Result<(), NameError>,
    ) -> Result<&'a str, Fail> {
        let start = self.at;
        let name = self.name_run();
        if name.is_empty() {
            return self.fail(format!("expected {what}"));
        }
        check(name).map_err(|e| (start, e.describe(what, name)))?;
        Ok(name)
    }

    /// A quoted literal; returns its content and the offset where it starts.
    pub(crate) fn quoted(&mut self, what: &str) -> Result<(&'a str, usize), Fail> {
        let quote = match self.peek() {
            Some(q @ (b'"' | b'\'')) => q as char,
            _ => return self.fail(format!("expected a quoted {what}")),
        };
        let start = self.at + 1;
        let Some(len) = self.text[start..].find(quote) else {
            return self.fail(format!("the quoted {what} is not closed"));
        };
        self.at = start + len + 1;
        Ok((&self.text[start..start + len], start))
    }

    /// `Eq ::= S? '=' S?`.
    pub(crate) fn eq(&mut self) -> Result<(), Fail> {
        self.space();
        self.expect("=")?;
        self.space();
        Ok(())
    }
}
