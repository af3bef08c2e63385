//! `COM_STMT_BULK_EXECUTE` packets built from a batch's text.
//!
//! MariaDB's bulk command runs one prepared single-row statement for many
//! rows: the statement id, the flag that parameter types follow, one type
//! per parameter, then per row and parameter an indicator byte (0: a value
//! follows, 1: NULL) and the value. The types are sent with every packet,
//! so each packet chooses them afresh. Integer, `DATETIME` and `DATE`
//! columns go in their binary form when every value of the packet spells
//! one canonically ([`super::typed`]), which spares the server its string
//! parsers; otherwise, and for every other column, a value is sent as the
//! text the row already holds and the server converts it as it would the
//! same text in an INSERT. A binary value
//! ([`Value::Bytes`](ringpipe_pipeline::Value)) goes as the bytes it holds.
//!
//! The text goes as `MYSQL_TYPE_BLOB` (a binary string) wherever that stores
//! the same bytes as `MYSQL_TYPE_VAR_STRING` in the session's `utf8mb4`:
//! into `utf8mb4` columns and columns without a character set (numbers,
//! dates, binary strings). The server then skips the character-set scan it
//! makes of every text parameter (`my_string_metadata_get`: 2.6% of the
//! server's samples of a 1M-row import, 0.3% with binary parameters,
//! identical `CHECKSUM TABLE`). Into a column of any other character set a
//! binary string would be stored unconverted, so those get text.

use std::ops::Range;

use super::framing::HEADER_ROOM;
use super::typed::ParamKind;
use crate::batch::Batch;
use crate::encode::boolean::BooleanColumn;

/// `COM_STMT_BULK_EXECUTE`.
const COM_STMT_BULK_EXECUTE: u8 = 0xFA;
/// `STMT_BULK_FLAG_SEND_TYPES_TO_SERVER`.
const SEND_TYPES: u16 = 128;
/// `MYSQL_TYPE_VAR_STRING`: text in the session's character set.
const VAR_STRING: u8 = 253;
/// `MYSQL_TYPE_BLOB`: a binary string.
const BLOB: u8 = 252;
/// Indicator: a value follows.
const INDICATOR_VALUE: u8 = 0;
/// Indicator: NULL.
const INDICATOR_NULL: u8 = 1;

/// Builds bulk packets, reusing one buffer.
#[derive(Debug, Default)]
pub(crate) struct BulkEncoder {
    /// The packet being built.
    body: Vec<u8>,
    /// Per column, whether the packet being built sends it as text although
    /// its kind is typed (one of its values is not canonical).
    as_text: Vec<bool>,
}

/// A column of the target table, as the bulk path chooses its parameter
/// type from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnType {
    /// `information_schema.columns.data_type`, lower case (`int`, `varchar`).
    pub(crate) data_type: String,
    /// Its character set, `None` for a column without one (numbers, dates,
    /// binary strings).
    pub(crate) charset: Option<String>,
    /// Fractional digits of seconds a temporal column keeps.
    pub(crate) datetime_precision: Option<u8>,
    /// Decimal places a numeric column keeps.
    pub(crate) numeric_scale: Option<u64>,
    /// The bytes a string column holds at most (a `BINARY(n)`'s `n`).
    pub(crate) octet_length: Option<u64>,
    /// An `ENUM`'s or `SET`'s members, as declared (empty for other
    /// columns, and when the declaration could not be read).
    pub(crate) members: Vec<String>,
    /// Whether and how it takes the words `true` and `false`
    /// ([`crate::encode::boolean`]).
    pub(crate) boolean: Option<BooleanColumn>,
}

/// How each of `columns` travels in a bulk packet: integers, `DATETIME` and
/// `DATE` typed where their text is canonical ([`super::typed`]), other
/// columns as text (see the module docs for which text type).
pub(crate) fn param_kinds(columns: &[ColumnType]) -> Vec<ParamKind> {
    columns
        .iter()
        .map(|column| match column.data_type.as_str() {
            "tinyint" | "smallint" | "mediumint" | "int" | "bigint" => ParamKind::Integer,
            "datetime" => ParamKind::DateTime {
                precision: column.datetime_precision.unwrap_or(0).min(6),
            },
            "date" => ParamKind::Date,
            _ => ParamKind::Text(match column.charset.as_deref() {
                None | Some("utf8mb4") => BLOB,
                Some(_) => VAR_STRING,
            }),
        })
        .collect()
}

impl BulkEncoder {
    /// The bulk command running `statement` for `rows` of `batch`, one
    /// parameter kind per column from `kinds`, behind [`HEADER_ROOM`] bytes
    /// left for the packet header
    /// ([`WireConn::send_packet`](super::WireConn::send_packet)).
    ///
    /// A typed column goes binary when every value of these rows is
    /// canonical for it; at its first value that is not, the packet is
    /// built again with that column as text (at most once per column).
    pub(crate) fn encode(
        &mut self,
        statement: u32,
        kinds: &[ParamKind],
        batch: &Batch,
        rows: Range<usize>,
    ) -> &mut [u8] {
        debug_assert_eq!(kinds.len(), batch.width(), "a kind per column");
        self.as_text.clear();
        self.as_text.resize(kinds.len(), false);
        while let Err(column) = self.try_encode(statement, kinds, batch, rows.clone()) {
            self.as_text[column] = true;
        }
        &mut self.body
    }

    /// One attempt of [`BulkEncoder::encode`] with the columns marked in
    /// `as_text` as text: the first typed column met with a value that is
    /// not canonical, if any.
    fn try_encode(
        &mut self,
        statement: u32,
        kinds: &[ParamKind],
        batch: &Batch,
        rows: Range<usize>,
    ) -> Result<(), usize> {
        let body = &mut self.body;
        body.clear();
        body.resize(HEADER_ROOM, 0);
        body.push(COM_STMT_BULK_EXECUTE);
        body.extend_from_slice(&statement.to_le_bytes());
        body.extend_from_slice(&SEND_TYPES.to_le_bytes());
        for (&kind, &as_text) in kinds.iter().zip(&self.as_text) {
            let param_type = match (kind, kind.binary_type()) {
                (_, Some(binary)) if !as_text => binary,
                (ParamKind::Text(text), _) => text,
                // A typed column's text: it has no character set.
                _ => BLOB,
            };
            body.extend_from_slice(&[param_type, 0]);
        }
        let width = kinds.len();
        for (index, value) in batch.values(rows).enumerate() {
            let column = index % width;
            match value {
                None => body.push(INDICATOR_NULL),
                Some(value) => {
                    let bytes = value.as_bytes();
                    body.push(INDICATOR_VALUE);
                    let kind = kinds[column];
                    if kind.binary_type().is_some() && !self.as_text[column] {
                        if !kind.push_binary(bytes, body) {
                            return Err(column);
                        }
                        continue;
                    }
                    push_lenenc_int(body, bytes.len() as u64);
                    body.extend_from_slice(bytes);
                }
            }
        }
        Ok(())
    }
}

/// Appends `n` as a length-encoded integer.
fn push_lenenc_int(out: &mut Vec<u8>, n: u64) {
    let bytes = n.to_le_bytes();
    match n {
        0..=250 => out.push(bytes[0]),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&bytes[..2]);
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&bytes[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reply::lenenc_int;
    use super::*;
    use ringpipe_pipeline::Row;

    #[test]
    fn lenenc_ints_round_trip_at_every_width_boundary() {
        for n in [
            0,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_lenenc_int(&mut out, n);
            assert_eq!(lenenc_int(&out), Some((n, &[][..])), "{n}");
        }
    }

    fn column(data_type: &str, charset: Option<&str>, precision: Option<u8>) -> ColumnType {
        ColumnType {
            data_type: data_type.into(),
            charset: charset.map(str::to_owned),
            datetime_precision: precision,
            numeric_scale: None,
            octet_length: None,
            members: Vec::new(),
            boolean: None,
        }
    }

    #[test]
    fn binary_parameters_only_where_they_store_the_same_bytes() {
        let columns = [
            column("decimal", None, None),
            column("varchar", Some("utf8mb4"), None),
            column("text", Some("latin1"), None),
            column("bigint", None, None),
            column("datetime", None, Some(3)),
            column("date", None, None),
            column("timestamp", None, Some(0)),
        ];
        assert_eq!(
            param_kinds(&columns),
            vec![
                ParamKind::Text(BLOB),
                ParamKind::Text(BLOB),
                ParamKind::Text(VAR_STRING),
                ParamKind::Integer,
                ParamKind::DateTime { precision: 3 },
                ParamKind::Date,
                ParamKind::Text(BLOB),
            ]
        );
    }

    #[test]
    fn a_typed_column_goes_binary_until_one_value_of_the_packet_is_not_canonical() {
        let mut batch = Batch::new(2);
        let mut row = Row::with_columns(2);
        row.set(0, "5");
        row.set(1, "2021-08-24 11:14:03");
        batch.push(&row);
        row.set(0, "007");
        batch.push(&row);
        let kinds = [ParamKind::Integer, ParamKind::DateTime { precision: 0 }];
        let mut encoder = BulkEncoder::default();
        // Row 0 alone: both binary.
        let body = encoder.encode(1, &kinds, &batch, 0..1)[HEADER_ROOM..].to_vec();
        let mut expected = vec![0xFA, 1, 0, 0, 0, 128, 0, 8, 0, 12, 0, 0];
        expected.extend_from_slice(&5i64.to_le_bytes());
        expected.extend_from_slice(&[0, 7, 0xE5, 0x07, 8, 24, 11, 14, 3]);
        assert_eq!(body, expected);
        // Both rows: "007" sends the first column as text, the second stays binary.
        let body = encoder.encode(1, &kinds, &batch, 0..2)[HEADER_ROOM..].to_vec();
        let mut expected = vec![0xFA, 1, 0, 0, 0, 128, 0, BLOB, 0, 12, 0];
        for id in ["5", "007"] {
            expected.extend_from_slice(&[0, id.len() as u8]);
            expected.extend_from_slice(id.as_bytes());
            expected.extend_from_slice(&[0, 7, 0xE5, 0x07, 8, 24, 11, 14, 3]);
        }
        assert_eq!(body, expected);
        // The next packet chooses afresh.
        assert_eq!(encoder.encode(1, &kinds, &batch, 0..1)[HEADER_ROOM + 7], 8);
    }

    #[test]
    fn a_packet_holds_types_then_indicators_and_values_row_by_row() {
        let mut batch = Batch::new(2);
        let mut row = Row::with_columns(2);
        row.set(0, "ab");
        batch.push(&row); // second value NULL
        row.set(1, &"é".repeat(200)); // 400 bytes: a 3-byte length
        batch.push(&row);
        let mut encoder = BulkEncoder::default();
        let body = encoder.encode(
            7,
            &[ParamKind::Text(BLOB), ParamKind::Text(VAR_STRING)],
            &batch,
            0..2,
        )[HEADER_ROOM..]
            .to_vec();
        let mut expected = vec![0xFA, 7, 0, 0, 0, 128, 0, 252, 0, 253, 0];
        expected.extend_from_slice(&[0, 2, b'a', b'b', 1]);
        expected.extend_from_slice(&[0, 2, b'a', b'b', 0, 0xFC, 0x90, 0x01]);
        expected.extend_from_slice("é".repeat(200).as_bytes());
        assert_eq!(body, expected);
        // Only the rows asked for.
        let tail = &encoder.encode(7, &[ParamKind::Text(BLOB); 2], &batch, 1..2)[HEADER_ROOM..];
        assert_eq!(&tail[11..15], &[0, 2, b'a', b'b']);
    }
}
