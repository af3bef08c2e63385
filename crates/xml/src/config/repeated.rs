//! The policy for a column given a value more than once in a record.

/// What to do when one record gives a column a value more than once (the
/// same field twice, or two fields that map to one column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Repeated {
    /// Stop with [`XmlError::RepeatedField`](crate::XmlError::RepeatedField),
    /// naming the record, the field and where it occurs the second time.
    #[default]
    Error,
    /// Keep the first value, skip the later ones.
    First,
    /// Keep the last value.
    Last,
    /// Join the values with [`XmlConfig::join_with`](super::XmlConfig::join_with)'s separator.
    Join,
}

impl std::str::FromStr for Repeated {
    type Err = String;

    /// `error`, `first`, `last` or `join`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "error" => Ok(Repeated::Error),
            "first" => Ok(Repeated::First),
            "last" => Ok(Repeated::Last),
            "join" => Ok(Repeated::Join),
            _ => Err(format!(
                "unknown policy {text:?} for repeated fields (error, first, last or join)"
            )),
        }
    }
}
