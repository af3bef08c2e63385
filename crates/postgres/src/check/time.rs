//! Dates and times the server would read otherwise than written: its own
//! moments (`now`), a century added to a two-digit year, a date or a
//! leap second dropped, a zone read the POSIX way.

use ringpipe_pipeline::exact::{find_time, time_fraction_within};

use super::digit_runs;

/// Refuses the words the server reads as a moment of its own: `now`,
/// `today`, `tomorrow` and `yesterday` (the time of the import), and
/// `epoch`, `allballs` or `infinity` beside anything else (which the
/// server then drops).
pub(super) fn moment(text: &str) -> Result<(), String> {
    let words = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty());
    for word in words {
        match word.to_ascii_lowercase().as_str() {
            "now" | "today" | "tomorrow" | "yesterday" => {
                return Err(format!(
                    "{text:?}: the server reads {word:?} as the time of the import, not a value \
                     of the data"
                ))
            }
            "epoch" | "allballs" | "infinity"
                if !text
                    .trim()
                    .trim_start_matches(['+', '-'])
                    .eq_ignore_ascii_case(word) =>
            {
                return Err(format!(
                    "{text:?} has more than {word:?}, which the server reads alone, dropping the rest"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether the year of a date's text has one or two digits (`1/2/45`,
/// `Jan 2 45`, `450102`), which the server completes with a century of
/// its choice (00–69 as 20xx, 70–99 as 19xx). Its fields are the runs of
/// digits outside the time of day, not after a letter (`J2451187`,
/// `EST5EDT`) nor, after the time, a sign or colon (a zone's offset): a
/// year has three digits or more, or the only field is six digits
/// (YYMMDD). A year before Christ is taken as written.
pub(super) fn two_digit_year(text: &str) -> bool {
    let bytes = text.as_bytes();
    let time = find_time(bytes);
    let (mut fields, mut long, mut six) = (0, 0, false);
    for (start, end) in digit_runs(text) {
        let before = start.checked_sub(1).map(|at| bytes[at]);
        let in_time = time.is_some_and(|(s, e)| (s..e).contains(&start));
        let offset =
            time.is_some_and(|(_, e)| start >= e) && matches!(before, Some(b'+' | b'-' | b':'));
        if in_time || offset || before.is_some_and(|b| b.is_ascii_alphabetic()) {
            continue;
        }
        fields += 1;
        if end - start >= 3 {
            long += 1;
            six = end - start == 6;
        }
    }
    let bc = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| w.eq_ignore_ascii_case("bc"));
    fields > 0 && !bc && (long == 0 || fields == 1 && six)
}

/// Why a value with a two-digit year is refused.
pub(super) fn two_digit_year_reason(text: &str) -> String {
    format!(
        "{text:?} has a one- or two-digit year, to which the server would add a century \
         (00-69: 20xx, 70-99: 19xx)"
    )
}

/// A time (or timestamp) value: its fraction within `digits`, no leap
/// second, no date unless the column keeps it (`date`), and no zone after
/// the time unless the column keeps it (`zone`), then none read the POSIX
/// way.
pub(super) fn time(text: &str, digits: usize, zone: bool, date: bool) -> Result<(), String> {
    let Some((start, end)) = find_time(text.as_bytes()) else {
        return Ok(());
    };
    if text[start..end]
        .split(':')
        .nth(2)
        .is_some_and(|s| s.starts_with("60"))
    {
        return Err(format!(
            "{text:?} has a leap second, which the server moves to the next minute"
        ));
    }
    if !date && text[..start].bytes().any(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} has a date, which a time column drops"));
    }
    // `10:00.5` is minutes and seconds to the server: a fraction too.
    if !time_fraction_within(text, digits) {
        return Err(format!(
            "{text:?} has more fractional digits than the column's {digits}: it would be rounded"
        ));
    }
    let rest = text[end..].trim();
    let words_ok = rest.split_whitespace().all(|w| {
        matches!(
            w.to_ascii_uppercase().as_str(),
            "AM" | "PM" | "A.M." | "P.M." | "BC" | "AD"
        )
    });
    let first = rest.bytes().next();
    let is_zone = !words_ok
        && match first {
            Some(b'+' | b'-') => rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit),
            Some(b) => b.is_ascii_alphabetic(),
            None => false,
        };
    if is_zone && !zone {
        return Err(format!(
            "{text:?} names a time zone, which a column without time zone ignores"
        ));
    }
    match posix_zone(rest) {
        Some(name) if zone => Err(format!(
            "{text:?} has the zone {name:?}, which the server reads the POSIX way, as hours \
             west of UTC (UTC+2 is two hours behind UTC): write the offset alone (+02, -02)"
        )),
        _ => Ok(()),
    }
}

/// A zone written as letters and a nonzero offset (`UTC+2`, `GMT-05:00`),
/// which the server reads as a POSIX zone: an offset west of UTC, the
/// opposite of `+02` alone. Not a tz database name (`Etc/GMT+2` means
/// what it says) nor AM/PM or an era followed by an offset.
fn posix_zone(rest: &str) -> Option<&str> {
    let bytes = rest.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_alphabetic() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_alphabetic() {
            at += 1;
        }
        let word = &rest[start..at];
        let keyword = ["am", "pm", "m", "bc", "ad"]
            .iter()
            .any(|k| word.eq_ignore_ascii_case(k));
        let Some(offset) = rest[at..].strip_prefix(['+', '-']) else {
            continue;
        };
        let len = offset
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b':')
            .count();
        let number = &offset[..len];
        let nonzero = number.bytes().any(|b| (b'1'..=b'9').contains(&b));
        let tz_name = start > 0 && bytes[start - 1] == b'/';
        if number.starts_with(|c: char| c.is_ascii_digit()) && nonzero && !keyword && !tz_name {
            return Some(&rest[start..at + 1 + len]);
        }
    }
    None
}
