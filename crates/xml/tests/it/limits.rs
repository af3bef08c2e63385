//! Depth, attribute-count and value-size limits, and that a huge text
//! node is refused without being read into memory.

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringpipe_xml::{LimitKind, XmlConfig, XmlError, XmlSource};

use crate::common::{drain, failure, rows, values};

fn config() -> XmlConfig {
    XmlConfig::new("p", ["a"])
}

#[test]
fn depth_limit() {
    let xml = "<r><x><y><p><a>1</a></p></y></x></r>";
    assert_eq!(rows(xml, config().max_depth(5)), vec![values(&[Some("1")])]);
    let (message, _) = failure(xml, config().max_depth(4));
    assert_eq!(
        message,
        "t.xml:1:13: record 1: element nesting depth exceeds the limit of 4"
    );
}

#[test]
fn default_depth_limit_is_256() {
    let xml = format!("{}{}", "<d>".repeat(257), "</d>".repeat(257));
    let (message, _) = failure(xml, config());
    assert_eq!(
        message,
        "t.xml:1:769: element nesting depth exceeds the limit of 256"
    );
}

#[test]
fn attribute_limit() {
    assert_eq!(
        rows("<r><p a='1' b='2' c='3'/></r>", config().max_attributes(3)),
        vec![values(&[Some("1")])]
    );
    let (message, _) = failure(
        "<r><x a='1' b='2' c='3' d='4'/></r>",
        config().max_attributes(3),
    );
    assert_eq!(
        message,
        "t.xml:1:4: attribute count of one element exceeds the limit of 3"
    );
}

#[test]
fn value_limit_counts_all_pieces_of_a_value() {
    let ok = "<r><p><a>12345&amp;789</a></p></r>";
    assert_eq!(
        rows(ok, config().max_value_bytes(10)),
        vec![values(&[Some("12345&789")])]
    );
    for xml in [
        "<r><p><a>12345678901</a></p></r>",
        "<r><p><a>12345&amp;6789<![CDATA[0]]></a></p></r>",
        "<r><p><a>1234567890&#65;</a></p></r>",
        "<r><p a='12345678901'/></r>",
    ] {
        let (message, _) = failure(xml, config().max_value_bytes(10));
        assert!(
            message.ends_with("record 1: size in bytes of one value exceeds the limit of 10"),
            "{xml}: {message}"
        );
    }
}

/// Serves `<r><p><a>` + `len` × `x` + `</a></p></r>` without holding it,
/// counting the bytes handed out.
struct Huge {
    head: &'static [u8],
    len: u64,
    served: Arc<AtomicU64>,
}

impl Read for Huge {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let at = self.served.load(Ordering::Relaxed);
        let n = if at < self.head.len() as u64 {
            let head = &self.head[at as usize..];
            let n = head.len().min(out.len());
            out[..n].copy_from_slice(&head[..n]);
            n
        } else {
            let left = (self.head.len() as u64 + self.len).saturating_sub(at);
            let n = (left as usize).min(out.len());
            out[..n].fill(b'x');
            n
        };
        self.served.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn huge(head: &'static [u8]) -> (XmlSource, Arc<AtomicU64>) {
    let served = Arc::new(AtomicU64::new(0));
    let reader = Huge {
        head,
        len: 1 << 30,
        served: Arc::clone(&served),
    };
    let config = config().max_value_bytes(1 << 20);
    (
        XmlSource::from_reader("huge.xml", reader, config).unwrap(),
        served,
    )
}

#[test]
fn a_huge_text_node_is_refused_after_reading_little_more_than_the_limit() {
    for head in [
        &b"<r><p><a>"[..],
        b"<r><p><ignored>",
        b"<r><!--",
        b"<r><p a='",
    ] {
        let (source, served) = huge(head);
        let drained = drain(source);
        match drained.error {
            Some(XmlError::Limit {
                kind: LimitKind::ValueBytes,
                limit,
                ..
            }) => assert_eq!(limit, 1 << 20),
            other => panic!(
                "{}: expected a value limit error, got {other:?}",
                String::from_utf8_lossy(head)
            ),
        }
        let read = served.load(Ordering::Relaxed);
        assert!(
            read < (1 << 20) + (256 << 10),
            "read {read} bytes of a 1 GiB value"
        );
    }
}
