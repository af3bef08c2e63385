//! Bounds that keep a hostile or broken input from exhausting memory.

/// Slack over [`Limits::max_value_bytes`] for the markup around a value
/// (CDATA brackets, a tag's name) before a token is refused.
pub(crate) const TOKEN_SLACK: usize = 64 * 1024;

/// Bounds that keep a hostile or broken input from exhausting memory.
///
/// Each is checked while streaming; crossing one stops the source with
/// [`XmlError::Limit`](crate::XmlError::Limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest element nesting allowed (the root element is depth 1).
    pub max_depth: usize,
    /// Most attributes allowed on any one element.
    pub max_attributes: usize,
    /// Largest field value, in UTF-8 bytes. Also bounds any single piece of
    /// text or markup (a tag, comment, DOCTYPE) so that a huge text node
    /// outside a field cannot fill memory either.
    pub max_value_bytes: usize,
}

impl Default for Limits {
    /// 256 levels, 256 attributes, 64 MiB per value.
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_attributes: 256,
            max_value_bytes: 64 << 20,
        }
    }
}
