//! Binary values in XML: the decoding an `xsi:type` names
//! (`xsi:type="xs:hexBinary"`, as `mariadb-dump --xml --hex-blob` writes
//! them); `--decode COLUMN=hex|base64` names one for producers that do not
//! annotate, such as PostgreSQL's `table_to_xml` for `bytea`.

use ringpipe_pipeline::Decode;

/// The decoding an `xsi:type` value names (`xs:hexBinary`,
/// `xsd:base64Binary`, ...), by its local part.
pub(crate) fn from_xsi_type(value: &str) -> Option<Decode> {
    let local = value.trim().rsplit(':').next().unwrap_or_default();
    match local {
        "hexBinary" => Some(Decode::Hex),
        "base64Binary" => Some(Decode::Base64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xsi_types() {
        assert_eq!(from_xsi_type("xs:hexBinary"), Some(Decode::Hex));
        assert_eq!(from_xsi_type("xsd:base64Binary"), Some(Decode::Base64));
        assert_eq!(from_xsi_type("xs:string"), None);
    }
}
