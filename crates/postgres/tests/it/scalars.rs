//! Scalar checks against the server's own casts, on random spellings: a
//! value is refused exactly when the column's type modifier would store
//! another value than the plain type reads (`numeric(p,s)` rounding to its
//! scale, `interval(p)`, `time(p)` and `timestamp(p)` to their digits).

use ringpipe_hunt::spell::{number, seconds, time_of_day};
use ringpipe_hunt::Hunt;
use ringpipe_postgres::Check;

use crate::common::client;

/// `RINGPIPE_PG_SCALARS_SECS` runs each comparison for that long, from
/// `RINGPIPE_PG_SCALARS_SEED` ([`Hunt`]).
const HUNT: &str = "RINGPIPE_PG_SCALARS";

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
