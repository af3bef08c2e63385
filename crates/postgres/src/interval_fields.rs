//! Interval fields a column's field list drops, found by the server.
//!
//! An `interval YEAR TO MONTH` column (or `DAY`, `HOUR TO MINUTE`, any
//! field list) keeps only its fields: the server stores `1 year 3 days` as
//! `1 year` without a word. Which fields a value holds is the server's own
//! reading (a fraction of a day spills into hours, `1.5` alone is read in
//! the column's last field, `4:05` is minutes and seconds in a `MINUTE TO
//! SECOND` column), so rather than mirror that grammar, the server reads
//! each such value twice, in one query per batch: with the column's type
//! modifier (what COPY stores) and as a plain interval. A value whose two
//! readings differ is refused with both; one the server cannot read with
//! the column's modifier is left to COPY, which refuses it with its own
//! message.
//!
//! This refuses a little more than it must: a number without a unit in a
//! column whose last field is not `SECOND` (`5` in an `interval HOUR`:
//! five hours there, five seconds as a plain interval) is refused although
//! nothing would be dropped. Written with its unit (`5 hours`), or as the
//! server prints intervals, it lands.

use postgres::types::ToSql;

use crate::conn::Conn;
use crate::PgError;

/// Reads each value with the column's modifier and as a plain interval
/// (`interval_in` and `array_in` take the type modifier COPY passes) and
/// returns the values read differently: their ordinal (1-based), both
/// readings.
const READINGS: &str = "SELECT i, s, p FROM (SELECT i, \
     CASE WHEN a THEN array_in(v::cstring, 1186, m)::text \
     ELSE interval_in(v::cstring, 1186, m)::text END AS s, \
     CASE WHEN a THEN array_in(v::cstring, 1186, -1)::text \
     ELSE interval_in(v::cstring, 1186, -1)::text END AS p \
     FROM unnest($1::text[], $2::int4[], $3::bool[]) WITH ORDINALITY AS t(v, m, a, i)) r \
     WHERE s IS DISTINCT FROM p ORDER BY i";

/// One value's reading with the modifier `$2` (-1: as a plain interval).
const READING: &str = "SELECT CASE WHEN $3 THEN array_in($1::text::cstring, 1186, $2)::text \
     ELSE interval_in($1::text::cstring, 1186, $2)::text END";

/// A column whose interval values the server reads with a field list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalFields {
    /// The interval's type modifier: its field list and precision.
    pub typmod: i32,
    /// Whether the column holds arrays of such intervals.
    pub array: bool,
}

impl IntervalFields {
    /// For a column of base type `typname` (an array's element type's,
    /// when `array`) with modifier `typmod`: `Some` for an interval with a
    /// field list.
    pub fn for_type(typname: &str, typmod: i32, array: bool) -> Option<IntervalFields> {
        // The field list is the modifier's high 16 bits; 0x7fff is every
        // field (no list). A negative modifier has neither list nor precision.
        let listed = typmod >= 0 && (typmod >> 16) & 0x7fff != 0x7fff;
        (typname == "interval" && listed).then_some(IntervalFields { typmod, array })
    }
}

/// A value the column's field list would alter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Altered {
    /// The value's index in the values checked.
    pub index: usize,
    /// Why it is refused, with the server's readings.
    pub why: String,
}

/// The values (each with its column's [`IntervalFields`]) whose stored
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
    let typmods: Vec<i32> = values.iter().map(|(_, f)| f.typmod).collect();
    let arrays: Vec<bool> = values.iter().map(|(_, f)| f.array).collect();
    let what = "reading interval values with their field lists";
    match conn.query(READINGS, &[&texts, &typmods, &arrays], what) {
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
        let mut read = |typmod: i32| -> Result<Option<String>, PgError> {
            let params: [&(dyn ToSql + Sync); 3] = [&text, &typmod, &fields.array];
            match conn.query_one(READING, &params, what) {
                Ok(row) => Ok(Some(row.get(0))),
                Err(error) if is_value_error(&error) => Ok(None),
                Err(error) => Err(error),
            }
        };
        // Unreadable in its column: COPY refuses it with its own message.
        let Some(stored) = read(fields.typmod)? else {
            continue;
        };
        let plain = read(-1)?;
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
         {plain}: a field below the list's last would be dropped, or a number without a unit \
         read in the list's unit (write the value with its units)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_intervals_with_a_field_list_are_checked() {
        // interval YEAR TO MONTH, HOUR, HOUR[] (as the catalogue has them).
        let year_to_month = 458_751;
        let hour = 67_174_399;
        assert_eq!(
            IntervalFields::for_type("interval", year_to_month, false),
            Some(IntervalFields {
                typmod: year_to_month,
                array: false
            })
        );
        assert!(IntervalFields::for_type("interval", hour, true).is_some_and(|f| f.array));
        // No field list: plain, a precision alone, another type.
        assert_eq!(IntervalFields::for_type("interval", -1, false), None);
        assert_eq!(
            IntervalFields::for_type("interval", 0x7fff << 16 | 3, false),
            None
        );
        assert_eq!(IntervalFields::for_type("time", hour, false), None);
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
