//! Scalar checks against the server's own casts, on random spellings: a
//! value is refused exactly when the column's type modifier would store
//! another value than the plain type reads (`numeric(p,s)` rounding to its
//! scale, `interval(p)`, `time(p)` and `timestamp(p)` to their digits).

use ringpipe_hunt::Hunt;
use ringpipe_postgres::Check;

use crate::common::client;

/// `RINGPIPE_PG_SCALARS_SECS` runs each comparison for that long, from
/// `RINGPIPE_PG_SCALARS_SEED` ([`Hunt`]).
const HUNT: &str = "RINGPIPE_PG_SCALARS";

/// A random number as people write them: a sign, digits around a point,
/// an exponent, white space.
fn number(r: &mut fastrand::Rng) -> String {
    let digits = |r: &mut fastrand::Rng, most: usize| -> String {
        let count = r.usize(0..=most);
        (0..count)
            .map(|_| char::from(b'0' + [0, 0, 5, 1, 9, 2][r.usize(..6)]))
            .collect()
    };
    let sign = ["", "", "-", "+"][r.usize(..4)];
    let whole = digits(r, 4);
    let point = if r.u8(..4) == 0 { "" } else { "." };
    let fraction = digits(r, 6);
    let exponent = match r.u8(..4) {
        0 => format!(
            "{}{}{}",
            ["e", "E"][r.usize(..2)],
            ["", "-", "+"][r.usize(..3)],
            r.u8(..4)
        ),
        _ => String::new(),
    };
    let space = [" ", ""][r.usize(..2)];
    format!("{space}{sign}{whole}{point}{fraction}{exponent}{space}")
}

/// Compares `check` with `altered` (SQL of `$1`: whether the typed reading
/// differs from the plain one) over random values from `make` (3,000, or
/// as [`HUNT`] asks).
fn compare(check: &Check, altered: &str, mut make: impl FnMut(&mut fastrand::Rng) -> String) {
    let mut conn = client();
    let hunt = Hunt::from_env(HUNT, 3_000, 5);
    let mut random = fastrand::Rng::with_seed(hunt.seed());
    let (mut case, mut read, mut refused) = (0, 0u64, 0u64);
    while hunt.more(case) {
        case += 1;
        let text = make(&mut random);
        let Ok(row) = conn.query_one(altered, &[&text]) else {
            continue; // not a value of the type, or out of its range
        };
        let changed: bool = row.get(0);
        assert_eq!(
            check.check(&text).is_err(),
            changed,
            "{text:?}: altered {changed}"
        );
        read += 1;
        refused += u64::from(changed);
    }
    hunt.report(case, altered);
    assert!(
        read > case / 3 && refused > case / 30 && read - refused > case / 30,
        "{read} of {case} read, {refused} altered"
    );
}

#[test]
fn pg_scalars_numeric_scale_is_checked_as_the_server_rounds() {
    for (precision, scale) in [(8, 2), (6, 0), (10, 4)] {
        let check = Check::for_type("numeric", (precision << 16 | scale) + 4).unwrap();
        let altered = format!("SELECT $1::text::numeric <> $1::text::numeric({precision},{scale})");
        compare(&check, &altered, number);
    }
}

#[test]
fn pg_scalars_interval_digits_are_checked_as_the_server_rounds() {
    let make = |r: &mut fastrand::Rng| match r.u8(..4) {
        0 => format!("{} seconds", seconds(r)),
        1 => format!("1 day {}", time_of_day(r)),
        _ => time_of_day(r),
    };
    for digits in [0, 3] {
        let check = Check::for_type("interval", 0x7fff << 16 | digits).unwrap();
        let altered = format!("SELECT $1::text::interval <> $1::text::interval({digits})");
        compare(&check, &altered, make);
    }
}

#[test]
fn pg_scalars_time_digits_are_checked_as_the_server_rounds() {
    for digits in [0, 2] {
        let check = Check::for_type("time", digits).unwrap();
        let altered = format!("SELECT $1::text::time <> $1::text::time({digits})");
        compare(&check, &altered, time_of_day);
    }
}

/// Seconds with at most six fractional digits (which the plain types
/// keep), two digits before the point.
fn seconds(r: &mut fastrand::Rng) -> String {
    let fraction: String = (0..r.usize(0..=6))
        .map(|_| char::from(b'0' + [0, 5, 1, 9][r.usize(..4)]))
        .collect();
    let point = if r.u8(..5) == 0 { "" } else { "." };
    format!("{:02}{point}{fraction}", r.u8(..60))
}

/// A time of day as `h:mm:ss.f` or as `mm:ss.f` (minutes and seconds to
/// the server).
fn time_of_day(r: &mut fastrand::Rng) -> String {
    match r.bool() {
        true => format!("{}:{:02}:{}", r.u8(..24), r.u8(..60), seconds(r)),
        false => format!("{}:{}", r.u8(..60), seconds(r)),
    }
}

#[test]
fn pg_scalars_timestamp_digits_are_checked_as_the_server_rounds() {
    let stamp = |r: &mut fastrand::Rng| {
        let date = format!("2024-{:02}-{:02}", r.u8(1..13), r.u8(1..29));
        let separator = [" ", "T", " "][r.usize(..3)];
        let zone = ["", "", "+02", "-05:30", "Z"][r.usize(..5)];
        match r.u8(..6) {
            0 => date,
            _ => format!("{date}{separator}{}{zone}", time_of_day(r)),
        }
    };
    for (typename, digits) in [("timestamp", 0), ("timestamptz", 3)] {
        let check = Check::for_type(typename, digits).unwrap();
        let altered = format!("SELECT $1::text::{typename} <> $1::text::{typename}({digits})");
        // A zone in a timestamp without one is dropped by both readings,
        // and refused by the check: leave zones to the zoned type.
        let make = |r: &mut fastrand::Rng| loop {
            let text = stamp(r);
            let zoned = text.ends_with('Z') || text[10..].contains(['+', '-']);
            if typename == "timestamptz" || !zoned {
                return text;
            }
        };
        compare(&check, &altered, make);
    }
}
