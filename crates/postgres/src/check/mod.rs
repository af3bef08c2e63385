//! Values the server would store altered without a word, refused here
//! with their record and column instead.
//!
//! PostgreSQL's input functions round, cut, guess or drop parts of some
//! values rather than failing: `numeric(p,s)` and `money` round to their
//! decimal places (`money` also skips its digit group separator wherever
//! it stands, so `12,34` is 1234), `real` and `double precision` keep the
//! nearest float (`16777217` is stored as 16777216 in a `real`),
//! `varchar(n)` cuts excess trailing spaces, `name` cuts at 63 bytes and
//! `"char"` keeps one, an `oid` reads `-1` as 4294967295, times keep at
//! most their precision's fractional digits (6 by default) and move a leap
//! second to the next minute, `timestamp` and `time` (without time zone)
//! ignore a zone written in the value, `time` drops a date and `date` a
//! time of day, a zone such as `UTC+2` is read the POSIX way (two hours
//! *behind* UTC), a one- or two-digit year is given a century (`1/2/45` is
//! 2045), `now`, `today`, `tomorrow` and `yesterday` become the moment of
//! the import, `epoch`, `allballs` and `infinity` drop whatever else the
//! value holds, an interval rounds a fraction of a year to whole months,
//! `jsonb` keeps the last of a key repeated in an object and `hstore`
//! (the extension) the first of a key given twice, and PostgreSQL before
//! 17 reads an array whose elements are nested at different depths as
//! another array (`{{{a}},{b}}` as `{}`). Each [`Check`] refuses
//! a value that would lose something that way, a domain's by its base
//! type, an array's element by element, a range's (and a multirange's)
//! bound by bound, a composite type's field by field; what the server
//! refuses itself (out of range, bad syntax, a value too long) is left to
//! it.
//!
//! Not checked: the session's `DateStyle` field order (`01/02/2024` is
//! January 2 under `MDY`, February 1 under `DMY`; set it with an init
//! command), the session's `TimeZone` for a `timestamptz` or `timetz`
//! written without a zone, and an interval's fraction of a month or day
//! (read as 30 days or 24 hours). The fields an `interval YEAR TO MONTH`
//! (or another field list) drops are found by the server itself, per
//! batch (`crate::interval_fields`), wherever such an interval stands in
//! the column's type: [`Check::field_list_values`] takes them out of the
//! column's text.

mod array;
mod hstore;
mod interval;
mod intervals;
mod item;
mod money;
mod range;
mod record;
#[cfg(test)]
mod tests;
mod time;

use ringpipe_pipeline::canonical;
use ringpipe_pipeline::exact::{find_time, float_rounds, within_scale};

use crate::interval_fields::IntervalFields;

use self::array::elements;
use self::interval::interval;
use self::money::{money, single_char};
use self::time::{moment, time, two_digit_year, two_digit_year_reason};

/// A check of one column's values, from its type and type modifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// `varchar(n)`: at most `n` characters (excess spaces would be cut).
    Chars(usize),
    /// `char(n)`: at most `n` characters before trailing spaces (which
    /// char(n) ignores).
    PaddedChars(usize),
    /// `name`: at most 63 bytes (the server cuts the rest).
    Name,
    /// `"char"`: one byte, or its `\ooo` octal escape (the server keeps
    /// the first byte).
    Byte,
    /// `oid`: no minus sign (`-1` would be stored as 4294967295).
    Unsigned,
    /// `numeric(p,s)`: no nonzero digit beyond `s` decimal places.
    Scale(i32),
    /// `real` (`single`) or `double precision`: no significant digit that
    /// the nearest float does not keep.
    Float {
        /// Whether the column is `real` (float4).
        single: bool,
    },
    /// `money` as the session's `lc_monetary` spells it: no nonzero digit
    /// beyond its decimal places, digit group separators only between
    /// groups of digits before the decimal point.
    Money {
        /// Decimal places kept.
        digits: usize,
        /// The decimal point.
        point: char,
        /// The digit group separator (which the server skips).
        separator: char,
    },
    /// A time type: at most `digits` fractional digits of a second, no
    /// leap second, no moment of the server's own (`now`, ...), and no
    /// zone written in the value unless the column keeps it (then none
    /// read the POSIX way).
    Time {
        /// Fractional digits the column keeps.
        digits: usize,
        /// Whether the column keeps a zone (timestamptz, timetz).
        zone: bool,
        /// Whether the column keeps a date (timestamp, timestamptz; a
        /// time drops it), which then has a year of three digits or more.
        date: bool,
    },
    /// `date`: no time of day other than midnight, no moment of the
    /// server's own, a year of three digits or more.
    Date,
    /// `interval`: at most `digits` fractional digits of a second, no
    /// fraction of a year that is not whole months.
    Interval {
        /// Fractional digits of a second the column keeps.
        digits: usize,
        /// Its field list, if it has one: the fields it drops are the
        /// server's to find, per batch (`crate::interval_fields`).
        fields: Option<IntervalFields>,
    },
    /// `jsonb`: no object with a key twice (jsonb keeps the last).
    UniqueKeys,
    /// `hstore`: no key twice (hstore keeps the first).
    UniqueHstoreKeys,
    /// An array: each element by its type's check, and its nesting.
    Elements(Box<Check>),
    /// An array whose elements need no check: its nesting alone (see
    /// [`Check::Elements`]).
    Nesting,
    /// A row of a composite type: each field by its attribute's check
    /// (`None`: that attribute's values are not altered).
    Fields(Vec<Option<Check>>),
    /// A range (`multi`: a multirange): each finite bound by its
    /// subtype's check.
    Bounds {
        /// The subtype's check.
        inner: Box<Check>,
        /// Whether the column is a multirange (`{[a,b), [c,d)}`).
        multi: bool,
    },
}

impl Check {
    /// The check of a column of base type `typname` with modifier `typmod`
    /// (`atttypmod`, -1 for none), if its values can be altered. `money`
    /// depends on the session: see [`Check::money`].
    pub fn for_type(typname: &str, typmod: i32) -> Option<Check> {
        let modifier = (typmod >= 4).then(|| typmod - 4);
        let precision = |default: usize| match typmod {
            0..=6 => typmod as usize,
            _ => default,
        };
        let time = |zone: bool, date: bool| Check::Time {
            digits: precision(6),
            zone,
            date,
        };
        Some(match typname {
            "varchar" => Check::Chars(modifier? as usize),
            "bpchar" => Check::PaddedChars(modifier? as usize),
            "name" => Check::Name,
            "char" => Check::Byte,
            "oid" => Check::Unsigned,
            // The scale is the low 11 bits, signed (PostgreSQL 15 allows
            // -1000..=1000).
            "numeric" => Check::Scale(((modifier? & 0x7ff) ^ 1024) - 1024),
            "float4" => Check::Float { single: true },
            "float8" => Check::Float { single: false },
            "timestamp" => time(false, true),
            "timestamptz" => time(true, true),
            "time" => time(false, false),
            "timetz" => time(true, false),
            "date" => Check::Date,
            // The precision is the low 16 bits (0xffff: the default, 6).
            "interval" => Check::Interval {
                digits: match typmod {
                    0.. if typmod & 0xffff <= 6 => (typmod & 0xffff) as usize,
                    _ => 6,
                },
                fields: IntervalFields::for_typmod(typmod),
            },
            "jsonb" => Check::UniqueKeys,
            "hstore" => Check::UniqueHstoreKeys,
            _ => return None,
        })
    }

    /// The check of `money` values from the session's spelling of
    /// 1234567 as money (`SELECT 1234567::numeric::money::text`, such as
    /// `$1,234,567.00`); `None` when it cannot be read.
    pub fn money(spelled: &str) -> Option<Check> {
        let runs: Vec<(usize, usize)> = digit_runs(spelled).collect();
        let mut whole = String::new();
        let mut used = 0;
        while whole.len() < 7 {
            let &(start, end) = runs.get(used)?;
            whole.push_str(&spelled[start..end]);
            used += 1;
        }
        if whole != "1234567" {
            return None;
        }
        let between = |i: usize| single_char(&spelled[runs[i - 1].1..runs[i].0]);
        let separator = match used {
            1 => None,
            _ => Some(between(1)?),
        };
        let (digits, point) = match runs.get(used) {
            Some(&(start, end)) if spelled[start..end].bytes().all(|b| b == b'0') => {
                (end - start, between(used)?)
            }
            Some(_) => return None,
            None => (0, if separator == Some('.') { ',' } else { '.' }),
        };
        let separator = separator.unwrap_or(if point == ',' { '.' } else { ',' });
        Some(Check::Money {
            digits,
            point,
            separator,
        })
    }

    /// `Err` with the reason when the server would alter `text`.
    pub fn check(&self, text: &str) -> Result<(), String> {
        match *self {
            // n bytes are at most n characters: no count needed.
            Check::Chars(n) if text.len() > n && text.chars().count() > n => {
                Err(format!("longer than the column's {n} characters"))
            }
            Check::PaddedChars(n)
                if text.len() > n && text.trim_end_matches(' ').chars().count() > n =>
            {
                Err(format!("longer than the column's {n} characters"))
            }
            Check::Name if text.len() > 63 => Err(format!(
                "{text:?} is longer than a name's 63 bytes: the server would cut it"
            )),
            Check::Byte if text.len() > 1 && !is_octal_escape(text) => Err(format!(
                "{text:?} is more than one byte, of which a \"char\" column keeps the first"
            )),
            Check::Unsigned
                if text.trim_start().starts_with('-')
                    && text.bytes().any(|b| (b'1'..=b'9').contains(&b)) =>
            {
                Err(format!(
                    "{text:?} is negative, which an oid column stores as 4294967296 minus it"
                ))
            }
            Check::Scale(scale) if !within_scale(text, scale) => Err(format!(
                "{text:?} has more decimal places than the column's {scale}: it would be rounded"
            )),
            Check::Float { single } => match float_rounds(text, single) {
                Some(shown) => Err(format!(
                    "{text:?} has more significant digits than {} keeps: it would be stored as \
                     {shown}",
                    if single { "real" } else { "double precision" }
                )),
                None => Ok(()),
            },
            Check::Money {
                digits,
                point,
                separator,
            } => money(text, digits, point, separator),
            // A canonical datetime has no zone, no leap second and a
            // four-digit year, and no more fractional digits written than
            // kept: nothing to refuse.
            Check::Time { digits, date, .. }
                if date
                    && canonical::datetime(text.as_bytes())
                        .is_some_and(|t| usize::from(t.fraction_digits) <= digits) =>
            {
                Ok(())
            }
            Check::Time { digits, zone, date } => {
                moment(text)?;
                if date && two_digit_year(text) {
                    return Err(two_digit_year_reason(text));
                }
                time(text, digits, zone, date)
            }
            Check::Date if canonical::date(text.as_bytes()).is_some() => Ok(()),
            Check::Date => {
                moment(text)?;
                if let Some((start, end)) = find_time(text.as_bytes()) {
                    if text[start..end]
                        .bytes()
                        .any(|b| b.is_ascii_digit() && b != b'0')
                    {
                        return Err(format!(
                            "{text:?} has a time of day, which a date column drops"
                        ));
                    }
                }
                match two_digit_year(text) {
                    true => Err(two_digit_year_reason(text)),
                    false => Ok(()),
                }
            }
            Check::Interval { digits, .. } => interval(text, digits),
            Check::UniqueKeys => crate::json::unique_keys(text),
            Check::UniqueHstoreKeys => hstore::unique_keys(text),
            Check::Elements(ref inner) => elements(text, Some(inner)),
            Check::Nesting => elements(text, None),
            Check::Bounds { ref inner, multi } => range::bounds(text, inner, multi),
            Check::Fields(ref checks) => record::fields(text, checks),
            _ => Ok(()),
        }
    }
}

/// Whether `text` is `\ooo`, the octal escape `"char"` reads as one byte
/// (up to `\377`).
fn is_octal_escape(text: &str) -> bool {
    matches!(
        text.as_bytes(),
        [b'\\', b'0'..=b'3', b'0'..=b'7', b'0'..=b'7']
    )
}

/// Where the runs of ASCII digits of `text` start and end.
fn digit_runs(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + bytes[at..].iter().position(u8::is_ascii_digit)?;
        let end = bytes[start..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(bytes.len(), |n| start + n);
        at = end;
        Some((start, end))
    })
}
