//! The field-path language of `--field COLUMN=PATH`: a small subset of
//! XPath 1.0 that can be evaluated while streaming, relative to the record
//! element, with memory bounded by one record.
//!
//! ```text
//! path      ::= ancestor | relative
//! ancestor  ::= ('../')+ '@' name               an enclosing element's attribute
//! relative  ::= terminal | step ('/' step)* ('/' terminal)?
//! step      ::= name predicate*                 a child element
//! terminal  ::= '@' name | 'text()'
//! predicate ::= '[' '@' name '=' literal ']' | '[' 'not(' '@' name ')' ']'
//! name      ::= NCName | prefix ':' NCName | '{' uri '}' NCName
//! literal   ::= "'" [^']* "'" | '"' [^"]* '"'
//! ```
//!
//! Whitespace is allowed around `=` in predicates only. An element step's
//! value is its own text (as for plain fields); `text()` is the same, and
//! alone it is the record element's own text.

use std::fmt;

use crate::qname::NameTest;

/// A parsed field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path {
    /// Levels above the record (`../`), for an ancestor's attribute.
    pub(crate) up: usize,
    /// Child steps from the record (or from the ancestor: none).
    pub(crate) steps: Vec<Step>,
    /// What the last step gives.
    pub(crate) terminal: Terminal,
}

/// One child step: a name and conditions on the element's attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) name: NameTest,
    pub(crate) predicates: Vec<Predicate>,
}

/// A condition on an element's attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Predicate {
    /// `[@name='value']`: present with exactly this (normalized) value.
    Equals(NameTest, String),
    /// `[not(@name)]`: absent.
    Absent(NameTest),
}

/// The value a path selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Terminal {
    /// The element's own text.
    Text,
    /// One of the element's attributes.
    Attribute(NameTest),
}

/// Why a path was refused: the byte offset and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathError {
    pub(crate) at: usize,
    pub(crate) message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.message)
    }
}

type Result<T> = std::result::Result<T, PathError>;

/// Forms of XPath this language leaves out, with what to say about them.
const UNSUPPORTED: [(&str, &str); 8] = [
    (
        "//",
        "`//` (any depth) is not supported: write each step, `a/b/c`",
    ),
    ("::", "axes (`child::`, `ancestor::`) are not supported"),
    ("*", "wildcards are not supported: name the element"),
    (
        "|",
        "unions (`|`) are not supported: map one column per path",
    ),
    ("$", "variables are not supported"),
    (
        "(",
        "functions other than `text()` and `not(@…)` are not supported",
    ),
    (
        ".",
        "`.` and `..` are supported only as leading `../` before `@attribute`",
    ),
    (
        "/",
        "a path starts at the record: leave out the leading `/`",
    ),
];

impl Path {
    /// Parses `text`.
    pub(crate) fn parse(text: &str) -> Result<Path> {
        let mut p = Parser { text, at: 0 };
        let path = p.path()?;
        if p.at != text.len() {
            return Err(p.unsupported());
        }
        Ok(path)
    }

    /// The attribute names a path needs from elements outside the record.
    pub(crate) fn ancestor_attribute(&self) -> Option<&NameTest> {
        match (&self.terminal, self.up) {
            (Terminal::Attribute(name), 1..) => Some(name),
            _ => None,
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn eat(&mut self, s: &str) -> bool {
        let found = self.rest().starts_with(s);
        if found {
            self.at += s.len();
        }
        found
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(PathError {
            at: self.at,
            message: message.into(),
        })
    }

    /// The error for whatever stands here.
    fn unsupported(&self) -> PathError {
        let rest = self.rest();
        let message = match UNSUPPORTED.iter().find(|(s, _)| rest.starts_with(s)) {
            Some((_, message)) => (*message).to_owned(),
            None if rest.starts_with('[') => "predicates are `[@name='value']` or \
                 `[not(@name)]` (positions and other tests are not supported)"
                .to_owned(),
            None if rest.is_empty() => "the path ends too early".to_owned(),
            None => format!("unexpected {:?}", rest.chars().next().unwrap_or_default()),
        };
        PathError {
            at: self.at,
            message,
        }
    }

    fn path(&mut self) -> Result<Path> {
        let mut up = 0;
        while self.eat("../") {
            up += 1;
        }
        if up > 0 {
            if !self.eat("@") {
                return self
                    .fail("`.` and `..` are supported only as leading `../` before `@attribute`");
            }
            let name = self.name()?;
            return Ok(Path {
                up,
                steps: Vec::new(),
                terminal: Terminal::Attribute(name),
            });
        }
        let mut steps = Vec::new();
        loop {
            if let Some(terminal) = self.terminal()? {
                return Ok(Path {
                    up,
                    steps,
                    terminal,
                });
            }
            steps.push(self.step()?);
            if self.at == self.text.len() {
                return Ok(Path {
                    up,
                    steps,
                    terminal: Terminal::Text,
                });
            }
            if self.rest().starts_with("//") || !self.eat("/") {
                return Err(self.unsupported());
            }
        }
    }

    /// `@name` or `text()`, which must end the path.
    fn terminal(&mut self) -> Result<Option<Terminal>> {
        let terminal = if self.eat("@") {
            Terminal::Attribute(self.name()?)
        } else if self.eat("text()") {
            Terminal::Text
        } else {
            return Ok(None);
        };
        if self.at != self.text.len() {
            return self.fail("`@attribute` and `text()` must end the path");
        }
        Ok(Some(terminal))
    }

    fn step(&mut self) -> Result<Step> {
        let name = self.name()?;
        let mut predicates = Vec::new();
        while self.eat("[") {
            predicates.push(self.predicate()?);
        }
        Ok(Step { name, predicates })
    }

    fn predicate(&mut self) -> Result<Predicate> {
        if self.eat("not(@") {
            let name = self.name()?;
            if !self.eat(")]") {
                return self.fail("expected `)]` after `not(@name`");
            }
            return Ok(Predicate::Absent(name));
        }
        if !self.eat("@") {
            self.at -= 1; // back to the `[`
            return Err(self.unsupported());
        }
        let name = self.name()?;
        self.space();
        if !self.eat("=") {
            return self
                .fail("expected `=` in `[@name='value']` (other comparisons are not supported)");
        }
        self.space();
        let value = self.literal()?;
        if !self.eat("]") {
            return self.fail("expected `]`");
        }
        Ok(Predicate::Equals(name, value))
    }

    fn space(&mut self) {
        while self.eat(" ") {}
    }

    fn literal(&mut self) -> Result<String> {
        let Some(quote) = self
            .rest()
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"'))
        else {
            return self.fail("expected a quoted value");
        };
        let start = self.at + 1;
        let Some(len) = self.text[start..].find(quote) else {
            return self.fail("the quoted value is not closed");
        };
        self.at = start + len + 1;
        Ok(self.text[start..start + len].to_owned())
    }

    /// `NCName`, `prefix:NCName` or `{uri}NCName`.
    fn name(&mut self) -> Result<NameTest> {
        let start = self.at;
        if self.rest().starts_with('.') {
            return Err(self.unsupported());
        }
        let part = |rest: &str| {
            rest.find(|c: char| c == ':' || !crate::names::is_name_char(c))
                .unwrap_or(rest.len())
        };
        let braced = self.rest().starts_with('{');
        if braced {
            match self.rest().find('}') {
                Some(end) => self.at += end + 1,
                None => return self.fail("`{` without its `}`"),
            }
        }
        self.at += part(self.rest());
        if !braced && self.rest().starts_with(':') && !self.rest().starts_with("::") {
            self.at += 1;
            self.at += part(self.rest());
        }
        if self.at == start {
            return Err(self.unsupported());
        }
        NameTest::parse(&self.text[start..self.at])
            .map_err(|message| PathError { at: start, message })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> NameTest {
        NameTest::parse(text).unwrap()
    }

    fn step(text: &str) -> Step {
        Step {
            name: name(text),
            predicates: Vec::new(),
        }
    }

    fn parse(text: &str) -> Path {
        Path::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn fails(text: &str, want: &str) {
        let error = Path::parse(text).unwrap_err().to_string();
        assert!(error.contains(want), "{text:?}: {error}");
    }

    #[test]
    fn a_child_element() {
        let path = parse("price");
        assert_eq!(
            (path.up, path.steps, path.terminal),
            (0, vec![step("price")], Terminal::Text)
        );
    }

    #[test]
    fn an_attribute_of_the_record() {
        assert_eq!(parse("@id").terminal, Terminal::Attribute(name("id")));
        assert!(parse("@id").steps.is_empty());
        assert_eq!(
            parse("@xml:lang").terminal,
            Terminal::Attribute(name("xml:lang"))
        );
    }

    #[test]
    fn an_attribute_of_a_child() {
        let path = parse("tag/@v");
        assert_eq!(path.steps, [step("tag")]);
        assert_eq!(path.terminal, Terminal::Attribute(name("v")));
    }

    #[test]
    fn descendants_step_by_step() {
        assert_eq!(
            parse("price/amount/value").steps,
            [step("price"), step("amount"), step("value")]
        );
        assert_eq!(
            parse("g:item/{urn:x}id").steps,
            [step("g:item"), step("{urn:x}id")]
        );
    }

    #[test]
    fn an_ancestors_attribute() {
        let path = parse("../../@type");
        assert_eq!(
            (path.up, path.terminal.clone()),
            (2, Terminal::Attribute(name("type")))
        );
        assert_eq!(path.ancestor_attribute(), Some(&name("type")));
    }

    #[test]
    fn predicates() {
        let path = parse("tag[@k='name']/@v");
        assert_eq!(
            path.steps[0].predicates,
            [Predicate::Equals(name("k"), "name".into())]
        );
        let path = parse(r#"comment[not(@xml:lang)][@a = "x y"]"#);
        assert_eq!(
            path.steps[0].predicates,
            [
                Predicate::Absent(name("xml:lang")),
                Predicate::Equals(name("a"), "x y".into())
            ]
        );
    }

    #[test]
    fn text_nodes() {
        assert_eq!(parse("text()").terminal, Terminal::Text);
        assert!(parse("text()").steps.is_empty());
        assert_eq!(parse("name/text()"), parse("name"));
    }

    #[test]
    fn unsupported_forms_say_so() {
        fails("a//b", "`//` (any depth) is not supported");
        fails("//a", "`//` (any depth)");
        fails("/a", "leave out the leading `/`");
        fails("child::a", "axes");
        fails("*", "wildcards");
        fails("a/*", "wildcards");
        fails("a|b", "unions");
        fails("a[1]", "predicates are `[@name='value']`");
        fails("a[b='x']", "predicates are");
        fails("a[@b!='x']", "expected `=`");
        fails("a[@b='x]", "not closed");
        fails("count(a)", "functions other than");
        fails("../a", "only as leading `../` before `@attribute`");
        fails(".", "`.` and `..`");
        fails("a/..", "`.` and `..`");
        fails("@a/b", "must end the path");
        fails("text()/a", "must end the path");
        fails("", "ends too early");
        fails("a/", "ends too early");
        fails("$x", "variables");
        fails("{u", "without its `}`");
        fails("9a", "does not start with a name character");
    }
}
