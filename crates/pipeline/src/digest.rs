//! What a shard committed, as one number: the CRC-32 of its rows in
//! record order.
//!
//! A resume recognises its input by a fingerprint that reads only the
//! file's size and ends ([`fingerprint`](crate::fingerprint)), so an input
//! edited in its middle would pass. Each checkpoint therefore also carries
//! the digest of every row its shard committed
//! ([`Checkpoint::rows_crc`](crate::Checkpoint::rows_crc)); a resume reads
//! those records again on its way to where it continues, digests them
//! the same way, and refuses to continue when they differ
//! ([`ResumeError::InputChanged`](crate::ResumeError::InputChanged)).
//! Rows, not bytes, are digested, so every source is covered alike.

use crate::Row;

/// The running digest of one shard's rows.
#[derive(Debug, Clone)]
pub(crate) struct RowsDigest {
    crc: crc32fast::Hasher,
    /// One row's encoding, hashed in one call: the CRC's vector path needs
    /// long runs, and a row's values are mostly short.
    scratch: Vec<u8>,
}

impl RowsDigest {
    /// Continues the digest `committed` of the rows before (0: none).
    pub(crate) fn after(committed: u32) -> Self {
        RowsDigest {
            crc: crc32fast::Hasher::new_with_initial(committed),
            scratch: Vec::new(),
        }
    }

    /// Adds `row`: for each column a tag (0 NULL, 1 text, 2 binary), then
    /// for a value its length (8 bytes, little-endian) and its bytes.
    pub(crate) fn add(&mut self, row: &Row) {
        self.scratch.clear();
        for value in row.values() {
            match value {
                None => self.scratch.push(0),
                Some(value) => {
                    let bytes = value.as_bytes();
                    self.scratch.push(1 + u8::from(value.is_binary()));
                    self.scratch
                        .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                    self.scratch.extend_from_slice(bytes);
                }
            }
        }
        self.crc.update(&self.scratch);
    }

    /// The digest of every row added so far, and of those before.
    pub(crate) fn value(&self) -> u32 {
        self.crc.clone().finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(values: &[Option<&str>]) -> Row {
        let mut row = Row::with_columns(values.len());
        for (i, value) in values.iter().enumerate() {
            match value {
                Some(text) => row.set(i, text),
                None => row.set_null(i),
            }
        }
        row
    }

    fn digest(rows: &[Row], from: u32) -> u32 {
        let mut digest = RowsDigest::after(from);
        rows.iter().for_each(|r| digest.add(r));
        digest.value()
    }

    #[test]
    fn a_digest_continues_across_commits_and_runs() {
        let rows = [row(&[Some("1"), None]), row(&[Some("2"), Some("b")])];
        let whole = digest(&rows, 0);
        assert_eq!(digest(&rows[1..], digest(&rows[..1], 0)), whole);
        assert_eq!(digest(&[], 0), 0, "nothing committed");
    }

    #[test]
    fn values_nulls_and_boundaries_all_count() {
        let one = |values: &[Option<&str>]| digest(&[row(values)], 0);
        let base = one(&[Some("ab"), Some("c")]);
        assert_ne!(base, one(&[Some("a"), Some("bc")]), "a moved boundary");
        assert_ne!(base, one(&[Some("ab"), None]), "NULL");
        assert_ne!(one(&[Some("")]), one(&[None]), "empty is not NULL");
        assert_ne!(base, one(&[Some("ab"), Some("d")]), "a changed byte");
        let mut binary = row(&[Some("ab"), Some("c")]);
        binary.set_bytes(1, b"c");
        assert_ne!(base, digest(&[binary], 0), "binary is not text");
    }
}
