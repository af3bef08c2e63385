//! The server's replies: OK and ERR packets, text result sets, and the
//! errors they become.

use std::io;

use mysql::consts::CapabilityFlags;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{CommonOkPacket, ErrPacket, OkPacketDeserializer};

use crate::MysqlError;

/// Most columns a result set may have: MariaDB's own limit for a table.
pub(super) const MAX_COLUMNS: usize = 4096;

/// What a statement reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Done {
    /// Rows inserted, updated or deleted.
    pub(crate) affected_rows: u64,
    /// Warnings the statement left (`SHOW WARNINGS` lists them).
    pub(crate) warnings: u16,
}

/// A reply that is not an error.
#[derive(Debug)]
pub(super) enum Reply {
    /// An OK packet.
    Ok(Done),
    /// Anything else (a result set's header, an EOF, ...), for the caller.
    Other,
}

/// Reads `payload` as OK, ERR or something else.
///
/// # Errors
///
/// [`MysqlError::Server`] for an ERR packet; a protocol error for an
/// unreadable OK.
pub(super) fn parse(
    payload: &[u8],
    capabilities: CapabilityFlags,
    context: &'static str,
) -> Result<Reply, MysqlError> {
    match payload.first() {
        Some(0x00) => {
            let ok = ParseBuf(payload)
                .parse::<OkPacketDeserializer<'_, CommonOkPacket>>(capabilities)
                .map_err(|_| protocol("an unreadable OK packet", context))?
                .into_inner();
            Ok(Reply::Ok(Done {
                affected_rows: ok.affected_rows(),
                warnings: ok.warnings(),
            }))
        }
        Some(0xFF) => Err(server_error(payload, capabilities, context)),
        _ => Ok(Reply::Other),
    }
}

/// The error an ERR packet carries.
fn server_error(
    payload: &[u8],
    capabilities: CapabilityFlags,
    context: &'static str,
) -> MysqlError {
    match ParseBuf(payload).parse::<ErrPacket<'_>>(capabilities) {
        Ok(ErrPacket::Error(error)) => {
            MysqlError::driver(mysql::Error::MySqlError(error.into()), context)
        }
        _ => protocol("an unreadable error packet", context),
    }
}

/// Whether `payload` is an EOF packet (it ends column lists and rows).
pub(super) fn is_eof(payload: &[u8]) -> bool {
    payload.first() == Some(&0xFE) && payload.len() < 9
}

/// The warnings count of an EOF packet.
pub(super) fn eof_warnings(payload: &[u8]) -> u16 {
    match payload {
        [0xFE, a, b, ..] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    }
}

/// One text-protocol row of `columns` values (`None`: NULL).
pub(super) fn text_row(
    payload: &[u8],
    columns: usize,
    context: &'static str,
) -> Result<Vec<Option<String>>, MysqlError> {
    let mut rest = payload;
    let mut row = Vec::with_capacity(columns);
    for _ in 0..columns {
        if let [0xFB, tail @ ..] = rest {
            row.push(None);
            rest = tail;
            continue;
        }
        let (len, tail) = lenenc_int(rest).ok_or_else(|| protocol("a truncated row", context))?;
        let len = usize::try_from(len).map_err(|_| protocol("a huge value", context))?;
        let value = tail
            .get(..len)
            .ok_or_else(|| protocol("a truncated value", context))?;
        row.push(Some(String::from_utf8_lossy(value).into_owned()));
        rest = &tail[len..];
    }
    Ok(row)
}

/// A length-encoded integer at the start of `bytes`, and what follows it.
pub(super) fn lenenc_int(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (&first, rest) = bytes.split_first()?;
    let width = match first {
        0..=250 => return Some((u64::from(first), rest)),
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        _ => return None,
    };
    let digits = rest.get(..width)?;
    let mut value = [0; 8];
    value[..width].copy_from_slice(digits);
    Some((u64::from_le_bytes(value), &rest[width..]))
}

/// A broken connection: retryable, and the session is dropped.
pub(super) fn io_error(error: io::Error, context: &'static str) -> MysqlError {
    MysqlError::io(&error, context)
}

/// A reply this client cannot read: not retryable. The connection is then
/// out of step and the caller closes it.
pub(super) fn protocol(what: impl Into<String>, context: &'static str) -> MysqlError {
    MysqlError::Protocol {
        what: what.into(),
        context,
    }
}

/// The column count of a result set's header, checked against
/// [`MAX_COLUMNS`] before anything is sized by it.
pub(super) fn column_count(payload: &[u8], context: &'static str) -> Result<usize, MysqlError> {
    let (columns, _) =
        lenenc_int(payload).ok_or_else(|| protocol("an unreadable column count", context))?;
    match usize::try_from(columns) {
        Ok(n) if (1..=MAX_COLUMNS).contains(&n) => Ok(n),
        _ => Err(protocol(
            format!("a result set of {columns} columns (the limit is {MAX_COLUMNS})"),
            context,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_ints_of_every_width() {
        assert_eq!(lenenc_int(&[250, 9]), Some((250, &[9][..])));
        assert_eq!(lenenc_int(&[0xFC, 1, 2]), Some((0x0201, &[][..])));
        assert_eq!(lenenc_int(&[0xFD, 1, 2, 3]), Some((0x03_0201, &[][..])));
        assert_eq!(
            lenenc_int(&[0xFE, 1, 0, 0, 0, 0, 0, 0, 1]).unwrap().0,
            (1 << 56) + 1
        );
        assert_eq!(lenenc_int(&[0xFC, 1]), None);
        assert_eq!(lenenc_int(&[0xFF]), None);
    }

    #[test]
    fn ok_packets_give_affected_rows_and_warnings() {
        let caps = CapabilityFlags::CLIENT_PROTOCOL_41;
        // header, affected 0xFC 0x88 0x13 (5000), insert id 0, status 2, warnings 3
        let ok = [0x00, 0xFC, 0x88, 0x13, 0x00, 0x02, 0x00, 0x03, 0x00];
        match parse(&ok, caps, "t").unwrap() {
            Reply::Ok(done) => assert_eq!(
                done,
                Done {
                    affected_rows: 5000,
                    warnings: 3
                }
            ),
            Reply::Other => panic!("an OK packet"),
        }
    }

    #[test]
    fn err_packets_become_classified_server_errors() {
        let caps = CapabilityFlags::CLIENT_PROTOCOL_41;
        let mut err = vec![0xFF, 0xBD, 0x04, b'#'];
        err.extend_from_slice(b"40001Deadlock found");
        let e = match parse(&err, caps, "bulk") {
            Err(e) => e,
            Ok(_) => panic!("an error"),
        };
        assert_eq!(e.code(), Some(1213));
        assert!(ringpipe_pipeline::Retryable::is_retryable(&e));
        assert!(e.to_string().contains("Deadlock found"));
    }

    #[test]
    fn text_rows_hold_nulls_and_values() {
        let row = [0xFB, 3, b'a', b'b', b'c', 0];
        assert_eq!(
            text_row(&row, 3, "t").unwrap(),
            vec![None, Some("abc".to_owned()), Some(String::new())]
        );
        assert!(text_row(&row[..3], 2, "t").is_err());
    }

    #[test]
    fn column_counts_are_bounded_before_use() {
        assert_eq!(column_count(&[3], "t").unwrap(), 3);
        assert_eq!(column_count(&[0xFC, 0x00, 0x10], "t").unwrap(), 4096);
        for huge in [
            &[0xFC, 0x01, 0x10][..],
            &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            &[0],
            &[0xFF],
        ] {
            let e = column_count(huge, "t").unwrap_err();
            assert!(matches!(e, MysqlError::Protocol { .. }), "{e}");
        }
    }

    #[test]
    fn eof_packets_are_short_and_carry_warnings() {
        assert!(is_eof(&[0xFE, 2, 0, 2, 0]));
        assert_eq!(eof_warnings(&[0xFE, 2, 0, 2, 0]), 2);
        assert!(!is_eof(&[0xFE; 9]));
    }
}
