//! `jsonb` keeps one value per object key, the last, without a word: a
//! document with a key twice in one object is refused here instead.
//!
//! The document is walked with `serde_json`, keeping each object's keys;
//! whatever that walk cannot read (bad JSON, a number beyond `f64`, which
//! `jsonb` keeps as numeric) is left for the server to judge.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The marker of the walk's own refusal among `serde_json`'s errors.
const DUPLICATE: &str = "ringpipe: duplicate key ";

/// `Err` naming the key when an object of `text` holds a key twice.
pub fn unique_keys(text: &str) -> Result<(), String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    match Walk.deserialize(&mut reader) {
        Err(e) if e.to_string().starts_with(DUPLICATE) => {
            let key = e.to_string();
            let key = key[DUPLICATE.len()..]
                .split(" at line")
                .next()
                .unwrap_or_default();
            Err(format!(
                "an object has the key {key} twice; jsonb would keep only the last"
            ))
        }
        _ => Ok(()),
    }
}

/// Walks one JSON value, refusing an object with a repeated key.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(Walk)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE}{key:?}")));
            }
            map.next_value_seed(Walk)?;
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_refused_at_any_depth() {
        for ok in [
            "{\"a\": 1, \"b\": [1, {\"a\": 2}]}",
            "[1e400]",
            "null",
            "not json",
            "{\"a\":",
        ] {
            assert_eq!(unique_keys(ok), Ok(()), "{ok}");
        }
        let twice = unique_keys("{\"x\": {\"a\": 1, \"a\": 2}}").unwrap_err();
        assert!(twice.contains("\"a\" twice"), "{twice}");
        // Keys are compared after unescaping, as jsonb does.
        assert!(unique_keys("{\"a\": 1, \"\\u0061\": 2}").is_err());
    }
}
