//! Random spellings of values as people and programs write them, for the
//! differential tests that hand the same text to a check and to a server:
//! numbers with signs, points, exponents and white space; times of day in
//! the forms the servers read.

use fastrand::Rng;

/// A number: a sign, up to four digits before a point and six after it
/// (either side may be empty, the point may be missing), an exponent,
/// white space around.
pub fn number(r: &mut Rng) -> String {
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

/// Seconds: two digits, then (mostly) a point and up to six fractional
/// digits, which the servers' widest time types keep.
pub fn seconds(r: &mut Rng) -> String {
    let fraction = match r.u8(..5) {
        0 => String::new(),
        _ => format!(".{}", digits(r, 6)),
    };
    format!("{:02}{fraction}", r.u8(..60))
}

/// A time of day as `h:mm:ss.f`, or as `mm:ss.f` (minutes and seconds to
/// PostgreSQL, hours and minutes with a fraction to MariaDB's `TIME`).
pub fn time_of_day(r: &mut Rng) -> String {
    match r.bool() {
        true => format!("{}:{:02}:{}", r.u8(..24), r.u8(..60), seconds(r)),
        false => format!("{}:{}", r.u8(..60), seconds(r)),
    }
}

/// Up to `most` digits, zeros and nines frequent (where rounding shows).
fn digits(r: &mut Rng, most: usize) -> String {
    (0..r.usize(0..=most))
        .map(|_| char::from(b'0' + [0, 0, 5, 1, 9, 2][r.usize(..6)]))
        .collect()
}
