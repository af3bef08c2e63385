//! `hstore` (the extension's key/value type) keeps one value per key, the
//! first, without a word: a value with a key twice is refused instead.
//!
//! The keys are read as the extension's input function reads them
//! (`hstore_io.c`): pairs `key => value` separated by commas, each key or
//! value either double-quoted or a run of characters up to white space
//! (a key also up to `=`, a value up to `,`), a backslash taking the next
//! character as it is. Text that does not read that way is left for the
//! server to refuse.

use std::collections::HashSet;

/// `Err` naming the key when `text` gives a key twice.
pub(super) fn unique_keys(text: &str) -> Result<(), String> {
    let Some(keys) = keys(text.as_bytes()) else {
        return Ok(());
    };
    let mut seen = HashSet::with_capacity(keys.len());
    for key in keys {
        if !seen.insert(key.clone()) {
            return Err(format!(
                "{text:?} has the key {:?} twice; hstore would keep only the first",
                String::from_utf8_lossy(&key)
            ));
        }
    }
    Ok(())
}

/// The keys of `text`, unescaped, in order; `None` when the server would
/// refuse it.
fn keys(text: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut scan = Scan { text, at: 0 };
    let mut keys = Vec::new();
    loop {
        let Some(key) = scan.token(false)? else {
            return Some(keys);
        };
        scan.skip_space();
        scan.expect(b'=')?;
        // No white space between `=` and `>`.
        scan.expect(b'>')?;
        scan.token(true)??;
        keys.push(key);
        scan.skip_space();
        match scan.text.get(scan.at) {
            None => return Some(keys),
            Some(b',') => scan.at += 1,
            Some(_) => return None,
        }
    }
}

/// A cursor over an hstore's text.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    /// The server's `scanner_isspace`.
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.text.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// The byte after a backslash, taken as it is.
    fn escaped(&mut self, out: &mut Vec<u8>) -> Option<()> {
        out.push(*self.text.get(self.at + 1)?);
        self.at += 2;
        Some(())
    }

    /// The next key (`value`: value) after white space: `Some(None)` at
    /// the end of the text, `None` where the server would refuse it.
    fn token(&mut self, value: bool) -> Option<Option<Vec<u8>>> {
        self.skip_space();
        let mut out = Vec::new();
        match self.text.get(self.at) {
            None => return Some(None),
            Some(b'"') => {
                self.at += 1;
                loop {
                    match *self.text.get(self.at)? {
                        b'\\' => self.escaped(&mut out)?,
                        b'"' => {
                            self.at += 1;
                            return Some(Some(out));
                        }
                        byte => {
                            out.push(byte);
                            self.at += 1;
                        }
                    }
                }
            }
            Some(b'=') if !value => return None,
            Some(b'\\') => self.escaped(&mut out)?,
            // Any other first character is taken, a value's `,` too.
            Some(&byte) => {
                out.push(byte);
                self.at += 1;
            }
        }
        loop {
            match self.text.get(self.at) {
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') => return Some(Some(out)),
                Some(b'=') if !value => return Some(Some(out)),
                Some(b',') if value => return Some(Some(out)),
                Some(b'\\') => self.escaped(&mut out)?,
                Some(&byte) => {
                    out.push(byte);
                    self.at += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(text: &str) -> Option<Vec<String>> {
        keys(text.as_bytes()).map(|keys| {
            keys.into_iter()
                .map(|k| String::from_utf8(k).unwrap())
                .collect()
        })
    }

    #[test]
    fn keys_are_read_as_the_extension_reads_them() {
        assert_eq!(keys_of(""), Some(vec![]));
        assert_eq!(
            keys_of(" a=>1, b => NULL ,"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            keys_of(r#""a b"=>"x,y", c\=d=>e, "q\"u"=>1"#),
            Some(vec!["a b".into(), "c=d".into(), "q\"u".into()])
        );
        // A value may start with `,` or hold `=`; a key may hold `,`.
        assert_eq!(
            keys_of("a=>,b, c,d=>x=y"),
            Some(vec!["a".into(), "c,d".into()])
        );
        // What the server refuses: left to it.
        for bad in ["a", "a=>", "a= >1", "=>1", "a=>1 b=>2", "\"a=>1", "a\\"] {
            assert_eq!(keys_of(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_key_twice_is_refused() {
        assert!(unique_keys("a=>1, b=>2").is_ok());
        assert!(unique_keys("a=>1, A=>2").is_ok());
        let why = unique_keys(r#"a=>1, "a"=>2"#).unwrap_err();
        assert!(why.contains("the key \"a\" twice"), "{why}");
        assert!(unique_keys(r"a\b=>1, ab=>2").is_err());
        // Unreadable text is the server's to refuse.
        assert!(unique_keys("a=>1, a").is_ok());
    }
}
