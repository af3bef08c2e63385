//! One JSON Lines object, parsed by `serde_json` into the raw value of each
//! column its keys name.
//!
//! Each key is checked as it is read: given twice (also a key no column
//! takes, and one spelled with an escape), naming no column (an error when
//! strict), or naming a column only when case is ignored (see
//! [`crate::names`]). A key that names no column is kept only to find it
//! given twice, and its value is parsed without being kept, so a line of
//! many such keys costs a set of them, not a list of entries as well.
//!
//! Such a fault is the object's, not JSON's: `serde_json` can only carry
//! its message, so the key it is at is left in [`ObjectSeed::refusal`] for
//! the source to give the key's column.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::names::{Named, Names};

/// An object's values by column.
pub(crate) struct Object<'de> {
    /// Per column, the raw value of the key that names it.
    pub(crate) values: Vec<Option<&'de RawValue>>,
    /// How many columns its keys name.
    pub(crate) filled: usize,
    /// The keys that name no column, in order.
    pub(crate) unknown: Vec<Cow<'de, str>>,
}

/// A fault of the object, not of its JSON.
pub(crate) struct Refusal<'de> {
    /// The raw key it is at (a slice of the parsed text).
    pub(crate) at: &'de str,
    /// What was expected, and what was found.
    pub(crate) expected: String,
}

/// Parses an object whose keys are matched to `names`.
pub(crate) struct ObjectSeed<'a, 'de> {
    pub(crate) names: &'a Names,
    /// A key that names no column is refused.
    pub(crate) strict: bool,
    /// Where the parse failed for a fault of the object, if it did.
    pub(crate) refusal: &'a Cell<Option<Refusal<'de>>>,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_, 'de> {
    type Value = Object<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Object<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> ObjectSeed<'_, 'de> {
    /// Fails the parse for a fault at the raw key `at`.
    fn refuse<E: de::Error>(&self, at: &'de str, expected: String) -> E {
        self.refusal.set(Some(Refusal { at, expected }));
        E::custom("refused")
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_, 'de> {
    type Value = Object<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
        let mut object = Object {
            values: vec![None; self.names.len()],
            filled: 0,
            unknown: Vec::new(),
        };
        let mut seen = Seen::default();
        // The first key that names a column only when case is ignored:
        // refused at the object's end unless the column's own key comes,
        // which is refused at once.
        let mut resembling: Option<(&'de str, Cow<'de, str>, usize)> = None;
        // Keys are read raw, so that a fault can name where its key is.
        while let Some(raw) = map.next_key::<&'de RawValue>()? {
            let raw = raw.get();
            let key = string_text(raw).map_err(|e| {
                self.refuse(raw, format!("a JSON string as the key ({})", message(&e)))
            })?;
            match self.names.find(&key) {
                Named::Column(column) => {
                    if object.values[column].is_some() {
                        return Err(self.refuse(raw, twice(&key)));
                    }
                    if let Some((_, other, _)) = resembling.as_ref().filter(|r| r.2 == column) {
                        return Err(self.refuse(raw, one_column(&key, other)));
                    }
                    object.values[column] = Some(map.next_value()?);
                    object.filled += 1;
                }
                Named::Resembles(column) => {
                    let name = self.names.name(column);
                    if object.values[column].is_some() {
                        return Err(self.refuse(raw, one_column(name, &key)));
                    }
                    if !seen.insert(key.clone()) {
                        return Err(self.refuse(raw, twice(&key)));
                    }
                    resembling.get_or_insert((raw, key, column));
                    map.next_value::<IgnoredAny>()?;
                }
                Named::Nothing if self.strict => {
                    let why = format!("no key {key:?}, which is not a column");
                    return Err(self.refuse(raw, why));
                }
                Named::Nothing => {
                    if !seen.insert(key.clone()) {
                        return Err(self.refuse(raw, twice(&key)));
                    }
                    object.unknown.push(key);
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let Some((raw, key, column)) = resembling {
            let column = self.names.name(column);
            return Err(self.refuse(
                raw,
                format!(
                    "a key naming a column exactly, found {key:?}, which differs from the \
                     column {column:?} only in case"
                ),
            ));
        }
        Ok(object)
    }
}

/// The message of a key given twice.
fn twice(key: &str) -> String {
    format!("a JSON object (the key {key:?} twice)")
}

/// The message of keys `a` and `b` that name one column to MySQL.
fn one_column(a: &str, b: &str) -> String {
    format!(
        "each column named once, found the keys {a:?} and {b:?}, one column to MySQL, whose \
         column names ignore case"
    )
}

/// `serde_json`'s message without its position (which is relative to the
/// text it parsed, not the line).
pub(crate) fn message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.find(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    }
}

/// Keys that name no column, to find one given twice: searched while few,
/// hashed once many, so that no line costs more than linear time.
#[derive(Default)]
struct Seen<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    /// Adds `key`: whether it was new.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        const FEW: usize = 16;
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < FEW {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

/// The text of the JSON string `raw` (its quotes included), borrowed when
/// it holds no escape. The parse that found `raw` refused control
/// characters in it.
pub(crate) fn string_text(raw: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
    match inner {
        Some(text) if memchr::memchr(b'\\', text.as_bytes()).is_none() => Ok(Cow::Borrowed(text)),
        _ => serde_json::from_str::<Text<'_>>(raw).map(|t| t.0),
    }
}

/// A JSON string, borrowed when it holds no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}
