//! Interval fields a field list drops, found by the server.
//!
//! An `interval YEAR TO MONTH` column (or `DAY`, `HOUR TO MINUTE`, any
//! field list) keeps only its fields: the server stores `1 year 3 days` as
//! `1 year` without a word, and so it does with such an interval anywhere
//! in a column's type: an array's element, a composite type's attribute,
//! the bound of a range over a domain with a field list. The column's
//! [`Check`](crate::Check) takes those intervals out of its text. Which
//! fields a value holds is the server's own reading (a fraction of a day
//! spills into hours, `4:05` is minutes and seconds in a `MINUTE TO
//! SECOND` column), so rather than mirror that grammar, the server reads
//! each such interval twice, in one query per batch: with its type
//! modifier (what COPY stores) and as a plain interval. A value whose two
//! readings differ is refused with both; one the server cannot read with
//! its modifier is left to COPY, which refuses it with its own message.
//!
//! A number alone (`5`, `1.5`) is read in the list's last field (five
//! hours in an `interval HOUR`), so its plain reading is of the number
//! with that unit (`5 hour`): `1.5` there is refused (half an hour would be
//! dropped), `5` lands. Other spellings whose reading depends on the list
//! (`4:05` as minutes and seconds, `1 2` as a day and hours) are refused
//! although nothing may be dropped; written with their units, or as the
//! server prints intervals, they land.

use postgres::types::ToSql;

use crate::conn::Conn;
use crate::PgError;

/// Reads each value `v` with its modifier (`interval_in` takes the one
/// COPY passes) and its plain spelling `w` as a plain interval, and
/// returns the values read differently: their ordinal (1-based), both
/// readings.
const READINGS: &str = "SELECT i, s, p FROM (SELECT i, \
     interval_in(v::cstring, 1186, m)::text AS s, \
     interval_in(w::cstring, 1186, -1)::text AS p \
     FROM unnest($1::text[], $2::text[], $3::int4[]) \
     WITH ORDINALITY AS t(v, w, m, i)) r \
     WHERE s IS DISTINCT FROM p ORDER BY i";

/// One value's reading with the modifier `$2` (-1: as a plain interval).
const READING: &str = "SELECT interval_in($1::text::cstring, 1186, $2)::text";

/// An interval type's field list, with which the server reads its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalFields {
    /// The interval's type modifier: its field list and precision.
    pub typmod: i32,
}

impl IntervalFields {
    /// For an interval with modifier `typmod`: `Some` when it has a field
    /// list.
    pub fn for_typmod(typmod: i32) -> Option<IntervalFields> {
        // The field list is the modifier's high 16 bits; 0x7fff is every
        // field (no list). A negative modifier has neither list nor precision.
        let listed = typmod >= 0 && (typmod >> 16) & 0x7fff != 0x7fff;
        listed.then_some(IntervalFields { typmod })
    }

    /// The unit a number alone is read in: the list's last field (the
    /// server's `DecodeInterval`). The list is a mask of the fields
    /// `MONTH` = 1, `YEAR` = 2, `DAY` = 3, `HOUR` = 10, `MINUTE` = 11 and
    /// `SECOND` = 12 (its `datetime.h`).
    fn last_unit(self) -> &'static str {
        let list = (self.typmod >> 16) & 0x7fff;
        [
            (12, "second"),
            (11, "minute"),
            (10, "hour"),
            (3, "day"),
            (1, "month"),
            (2, "year"),
        ]
        .into_iter()
        .find(|&(field, _)| list & 1 << field != 0)
        .map_or("second", |(_, unit)| unit)
    }

    /// `text` as a plain interval would read it as this column does: a
    /// number alone with the unit of the list's last field, anything else
    /// as it is.
    fn plain(self, text: &str) -> String {
        match is_number(text) {
            true => format!("{} {}", trim(text), self.last_unit()),
            false => text.to_owned(),
        }
    }
}

/// `text` without the white space the server skips around it.
fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Whether `text` is a number alone: a sign, digits with at most one
/// point, white space around.
fn is_number(text: &str) -> bool {
    let digits = trim(text).trim_start_matches(['+', '-']);
    let mut parts = digits.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next().unwrap_or_default();
    !(whole.is_empty() && fraction.is_empty())
        && trim(text).len() - digits.len() <= 1
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
}

/// A value the column's field list would alter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Altered {
    /// The value's index in the values checked.
    pub index: usize,
    /// Why it is refused, with the server's readings.
    pub why: String,
}

/// The values (each with its type's [`IntervalFields`]) whose stored
/// reading differs from their plain one, in order.
///
/// # Errors
///
/// Any error of the server but a value's own (bad syntax, out of range).
pub(crate) fn altered(
    conn: &mut Conn,
    values: &[(&str, IntervalFields)],
) -> Result<Vec<Altered>, PgError> {
    if values.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<&str> = values.iter().map(|(text, _)| *text).collect();
    let plain: Vec<String> = values.iter().map(|(text, f)| f.plain(text)).collect();
    let typmods: Vec<i32> = values.iter().map(|(_, f)| f.typmod).collect();
    let what = "reading interval values with their field lists";
    match conn.query(READINGS, &[&texts, &plain, &typmods], what) {
        Ok(rows) => Ok(rows
            .iter()
            .filter_map(|row| {
                let index = usize::try_from(row.get::<_, i64>(0)).ok()?.checked_sub(1)?;
                let (text, _) = values.get(index)?;
                Some(Altered {
                    index,
                    why: reason(text, row.get(1), row.get(2)),
                })
            })
            .collect()),
        // A value the server cannot read failed the whole query: read
        // them one by one.
        Err(error) if is_value_error(&error) => one_by_one(conn, values),
        Err(error) => Err(error),
    }
}

/// [`altered`], a query per value, when one of them cannot be read.
fn one_by_one(conn: &mut Conn, values: &[(&str, IntervalFields)]) -> Result<Vec<Altered>, PgError> {
    let what = "reading an interval value with its field list";
    let mut found = Vec::new();
    for (index, &(text, fields)) in values.iter().enumerate() {
        let mut read = |text: &str, typmod: i32| -> Result<Option<String>, PgError> {
            let params: [&(dyn ToSql + Sync); 2] = [&text, &typmod];
            match conn.query_one(READING, &params, what) {
                Ok(row) => Ok(Some(row.get(0))),
                Err(error) if is_value_error(&error) => Ok(None),
                Err(error) => Err(error),
            }
        };
        // Unreadable in its column: COPY refuses it with its own message.
        let Some(stored) = read(text, fields.typmod)? else {
            continue;
        };
        let plain = read(&fields.plain(text), -1)?;
        if plain.as_deref() != Some(stored.as_str()) {
            found.push(Altered {
                index,
                why: reason(text, stored, plain),
            });
        }
    }
    Ok(found)
}

/// Whether `error` is a value's own: a data exception (class 22).
fn is_value_error(error: &PgError) -> bool {
    !error.lost_connection() && error.sqlstate().is_some_and(|code| code.starts_with("22"))
}

/// Why `text` is refused: read as `stored` in its column, as `plain`
/// (`None`: not at all) without the field list.
fn reason(text: &str, stored: String, plain: Option<String>) -> String {
    let plain = match plain {
        Some(plain) => format!("as a plain interval it reads {plain:?}"),
        None => "it is no plain interval".to_owned(),
    };
    format!(
        "{text:?} would be stored as {stored:?} by the column's interval field list, but \
         {plain}: a field below the list's last would be dropped, or the value is read \
         otherwise in this column (write it with its units)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_intervals_with_a_field_list_are_checked() {
        // interval YEAR TO MONTH, HOUR (as the catalogue has them).
        let year_to_month = 458_751;
        let hour = 67_174_399;
        assert_eq!(
            IntervalFields::for_typmod(year_to_month),
            Some(IntervalFields {
                typmod: year_to_month
            })
        );
        assert!(IntervalFields::for_typmod(hour).is_some());
        // No field list: plain, a precision alone.
        assert_eq!(IntervalFields::for_typmod(-1), None);
        assert_eq!(IntervalFields::for_typmod(0x7fff << 16 | 3), None);
    }

    #[test]
    fn a_number_alone_is_read_in_the_lists_last_field() {
        // Modifiers as the catalogue has them.
        let unit = |typmod| IntervalFields { typmod }.last_unit();
        assert_eq!(unit(0x0004_ffff), "year");
        assert_eq!(unit(0x0006_ffff), "month"); // YEAR TO MONTH
        assert_eq!(unit(0x0008_ffff), "day");
        assert_eq!(unit(0x0408_ffff), "hour"); // DAY TO HOUR
        assert_eq!(unit(0x0c08_ffff), "minute"); // DAY TO MINUTE
        assert_eq!(unit(0x1800_ffff), "second"); // MINUTE TO SECOND
        let hour = IntervalFields {
            typmod: 0x0400_ffff,
        };
        assert_eq!(hour.plain(" 5 "), "5 hour");
        assert_eq!(hour.plain("-1.5"), "-1.5 hour");
        assert_eq!(hour.plain(".5"), ".5 hour");
        for other in [
            "5 hours", "4:05", "1 2", "", ".", "+-5", "- 5", "1.2.3", "1e3", "P1D", "\u{a0}5",
        ] {
            assert_eq!(hour.plain(other), other, "{other:?}");
        }
    }

    #[test]
    fn the_reason_quotes_both_readings() {
        let why = reason(
            "1 year 3 days",
            "1 year".into(),
            Some("1 year 3 days".into()),
        );
        assert!(why.starts_with("\"1 year 3 days\" would be stored as \"1 year\""));
        assert!(why.contains("as a plain interval it reads \"1 year 3 days\""));
        assert!(reason("1 2.5", "1 day 02:00:00".into(), None).contains("no plain interval"));
    }
}
