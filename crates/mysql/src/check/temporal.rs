//! Dates and times spelled so that MariaDB reads them otherwise than
//! written: a two-digit year given a century, a time of day read as a
//! date, fractional digits dropped from a time spelled as a number.

/// The reason for a time with more fractional digits than a column's `digits`.
pub(super) fn dropped_digits(text: &str, digits: usize) -> String {
    format!(
        "{text:?} has more fractional digits than the column's {digits}: they would be \
         dropped"
    )
}

/// The white space the server skips around a date or time (`my_isspace`
/// of latin1).
pub(super) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// The first character of `text` (leading space aside) that ends its first
/// run of digits, if the run is followed by one.
pub(super) fn first_delimiter(text: &str) -> Option<char> {
    text.trim_start_matches(is_space)
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .chars()
        .next()
}

/// Whether a `DATE`, `DATETIME` or `TIMESTAMP` column would read `text`
/// with a two-digit year, adding a century (`70`–`99`: 19xx, else 20xx):
/// `YY-MM-DD…` with any delimiters (a time of day alone among them), or
/// digits alone (`str_to_datetime`'s "internal format", where a `T` counts
/// as a digit and a `.` starts a fraction) of any length but 4, 8 and 14 or
/// more. A zero date (every digit 0) stays the zero date. Digits too few
/// for a date are the server's to refuse.
pub(super) fn two_digit_year(text: &str) -> bool {
    let text = text.trim_matches(is_space);
    if !text.starts_with(|c: char| c.is_ascii_digit())
        || text.bytes().all(|b| !(b'1'..=b'9').contains(&b))
    {
        return false;
    }
    let run = text
        .bytes()
        .take_while(|&b| b.is_ascii_digit() || b == b'T')
        .count();
    let rest = &text[run..];
    let fraction = rest.strip_prefix('.').unwrap_or("x");
    if rest.is_empty() || fraction.bytes().all(|b| b.is_ascii_digit()) {
        return matches!(run, 5..=7 | 9..=13);
    }
    text.bytes().take_while(u8::is_ascii_digit).count() == 2
}

/// Whether `text`, if it spells a time as a number (`10.5`, `103000.5`,
/// `20240105103000.5`; `signed`: with a `-`), has no more fractional
/// digits than `digits`, trailing zeros aside.
pub(super) fn compact_within(text: &str, digits: usize, signed: bool) -> bool {
    let mut number = text.trim_matches(is_space);
    if signed {
        number = number.strip_prefix('-').unwrap_or(number);
    }
    let Some((whole, fraction)) = number.split_once('.') else {
        return true;
    };
    let time_digit = |b: u8| b.is_ascii_digit() || (!signed && b == b'T');
    let is_number = whole.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && whole.bytes().all(time_digit)
        && fraction.bytes().all(|b| b.is_ascii_digit());
    !is_number || fraction.trim_end_matches('0').len() <= digits
}
