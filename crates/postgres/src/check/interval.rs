//! `interval`: fractions of a year that are not whole months, and
//! fractional digits of a second beyond the column's.

use ringpipe_pipeline::exact::time_fraction_within;

use super::digit_runs;

/// An interval: no more fractional digits of a second than `digits` (in
/// `hh:mm:ss.f`, `mm:ss.f` or a number of seconds), no fraction of a year
/// (decade, century, millennium) that is not whole months, which the
/// server rounds to months (`0.1 years` is 1 month).
pub(super) fn interval(text: &str, digits: usize) -> Result<(), String> {
    // `16:14.915` is minutes and seconds to the server: a fraction too.
    if !time_fraction_within(text, digits) {
        return Err(format!(
            "{text:?} has more fractional digits of a second than the column's {digits}: it \
             would be rounded"
        ));
    }
    let bytes = text.as_bytes();
    for (start, end) in digit_runs(text) {
        // A fraction: digits after a point.
        if start == 0 || bytes[start - 1] != b'.' {
            continue;
        }
        let fraction = text[start..end].trim_end_matches('0');
        let unit = text[end..].trim_start();
        let unit = &unit[..unit
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(unit.len())];
        let months: u64 = match unit.to_ascii_lowercase().as_str() {
            "y" | "yr" | "yrs" | "year" | "years" => 12,
            "dec" | "decs" | "decade" | "decades" => 120,
            "c" | "cent" | "century" | "centuries" => 1200,
            "mil" | "mils" | "millennium" | "millennia" => 12_000,
            "s" | "sec" | "secs" | "second" | "seconds" if fraction.len() > digits => {
                return Err(format!(
                    "{text:?} has more fractional digits of a second than the column's \
                     {digits}: it would be rounded"
                ))
            }
            _ => continue,
        };
        // With its trailing zeros cut, a fraction of more than five
        // digits is no whole number of months (12,000 = 2^5 * 3 * 5^3).
        let whole = fraction.len() <= 5
            && fraction
                .parse::<u64>()
                .map_or(true, |f| f * months % 10u64.pow(fraction.len() as u32) == 0);
        if !whole {
            return Err(format!(
                "{text:?} has a fraction of {unit:?} that is no whole number of months, which \
                 the server rounds to months"
            ));
        }
    }
    Ok(())
}
