//! Turning a located fault into the [`XmlError`] the caller sees.

use crate::diagnose::{Fault, Located};
use crate::error::{ErrorPosition, XmlError};
use crate::position::LineCounter;

use super::XmlSource;

impl XmlSource {
    /// Attaches the position to a fault found in the current token.
    pub(super) fn fail(&mut self, located: Located) -> XmlError {
        let window = self.lexer.window();
        let start = window.position();
        let token = window.data();
        let at: LineCounter = start.advanced(&token[..located.offset.min(token.len())]);
        let position = ErrorPosition {
            input: self.name.clone(),
            line: at.line(),
            column: at.column(),
            byte_offset: at.offset(),
            records_emitted: self.records,
            inside_record: self.record.in_record(),
        };
        match located.fault {
            Fault::Syntax(message) => XmlError::Syntax { position, message },
            Fault::Encoding(message) => XmlError::Encoding { position, message },
            Fault::BadUtf8 => {
                let message = format!(
                    "invalid UTF-8 at byte offset {}{}",
                    position.byte_offset,
                    self.raw_bytes_hint(
                        " (declare the encoding in `<?xml … encoding=\"…\"?>` \
                         if the input is not UTF-8)"
                    )
                );
                XmlError::Encoding { position, message }
            }
            Fault::Forbidden(message) => {
                let message = format!("{message}{}", self.raw_bytes_hint(""));
                XmlError::Syntax { position, message }
            }
            Fault::Entity { reference, error } => XmlError::Entity {
                position,
                message: format!("{error}: {reference}"),
                reference,
            },
            Fault::Limit(kind, limit) => XmlError::Limit {
                position,
                kind,
                limit,
            },
            Fault::UnknownField(field) => XmlError::UnknownField { position, field },
            Fault::NoRecords(message) => XmlError::NoRecords { position, message },
            Fault::BadValue { field, message } => XmlError::BadValue {
                position,
                field,
                message,
            },
            Fault::Repeated { field, column } => XmlError::RepeatedField {
                position,
                field,
                column,
            },
            Fault::Io(source) => XmlError::Io { position, source },
        }
    }
    /// What to say after bytes that cannot be XML text: in a mysqldump
    /// file they are a binary column dumped without `--hex-blob`.
    fn raw_bytes_hint(&self, otherwise: &'static str) -> &'static str {
        let open = self.document.open_elements();
        match open.first().is_some_and(|root| root == "mysqldump") {
            true => {
                "; this is a mysqldump/mariadb-dump --xml file: binary columns need \
                 `--hex-blob` when dumping (the importer then decodes them)"
            }
            false => otherwise,
        }
    }
}
