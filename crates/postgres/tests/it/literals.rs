//! The checks split row, array and range literals into their values as the
//! server does (`record_in`, `array_in`, `range_in`): random spellings of
//! well-formed and malformed literals, each read by the server and by
//! checks that refuse values longer than a given length. Wherever the
//! server reads the literal, the longest value the checks find must be the
//! server's, and an array nested unevenly (which PostgreSQL before 17 reads
//! as `{}` or with a dimension added) must be refused.

use ringpipe_hunt::Hunt;
use ringpipe_postgres::Check;

use crate::common::{client, Type};

/// `RINGPIPE_PG_LITERALS_SECS` runs each test for that long, from
/// `RINGPIPE_PG_LITERALS_SEED` ([`Hunt`]).
const HUNT: &str = "RINGPIPE_PG_LITERALS";

/// Spellings of one value (or of part of one), quoted and escaped in the
/// ways the literals allow, with the characters that delimit them.
const PIECES: &[&str] = &[
    "a",
    "ab",
    " a ",
    "a b",
    "\"a,b\"",
    "\"a\"\"b\"",
    "a\\,b",
    "\\\"",
    "\"\"",
    "",
    "\"(x)\"",
    " \"a\" ",
    "\"a\"b",
    "\\\\",
    "NULL",
    "\"NULL\"",
    "{a}",
    "\"{\"",
    "\\ ",
    ",",
    "\"",
];

/// `count` random pieces joined by commas (sometimes a piece more or less),
/// between `open` and `close`, sometimes with a space around.
fn literal(random: &mut fastrand::Rng, open: &str, close: &str, count: usize) -> String {
    let count = match random.u8(..10) {
        0 => count + 1,
        1 => count.saturating_sub(1),
        _ => count,
    };
    let items: Vec<&str> = (0..count)
        .map(|_| PIECES[random.usize(..PIECES.len())])
        .collect();
    let space = if random.u8(..4) == 0 { " " } else { "" };
    format!("{space}{open}{}{close}{space}", items.join(","))
}

/// Compares the checks `wrap` makes of `varchar(n)` with the server's
/// longest value over random literals (3,000, or as [`HUNT`] asks): the
/// check of its length must pass, that of one less must refuse. Literals
/// the server refuses, or whose values it does not keep (`sql` gives -1),
/// are skipped.
fn compare(
    what: &str,
    wrap: impl Fn(Check) -> Check,
    mut make: impl FnMut(&mut fastrand::Rng) -> String,
    sql: &str,
) {
    let uneven = |text: &str| what == "array" && Check::Nesting.check(text).is_err();
    let mut conn = client();
    let hunt = Hunt::from_env(HUNT, 3_000, 7);
    let mut random = fastrand::Rng::with_seed(hunt.seed());
    let (mut case, mut read, mut refused) = (0, 0u64, 0u64);
    while hunt.more(case) {
        case += 1;
        let text = make(&mut random);
        let Ok(row) = conn.query_one(sql, &[&text]) else {
            continue; // malformed for the server, which refuses it
        };
        let longest = row.get::<_, Option<i32>>(0).unwrap_or(0);
        if longest == -1 {
            continue; // the server kept no values to compare (an empty range)
        }
        read += 1;
        let longest = usize::try_from(longest).unwrap();
        let fits = wrap(Check::Chars(longest)).check(&text);
        if uneven(&text) {
            assert!(
                fits.is_err(),
                "{what} {text:?}: nested unevenly, not refused"
            );
            refused += 1;
            continue;
        }
        assert_eq!(
            fits,
            Ok(()),
            "{what} {text:?}: the server's longest value has {longest} characters"
        );
        if let Some(shorter) = longest.checked_sub(1) {
            let refuses = wrap(Check::Chars(shorter)).check(&text).is_err();
            assert!(
                refuses,
                "{what} {text:?}: the server's longest value has {longest} characters"
            );
        }
    }
    hunt.report(case, &format!("{what} literals"));
    assert!(
        read > case / 5,
        "{what}: {read} of {case} read by the server"
    );
    assert!(
        what != "array" || refused > 20,
        "{refused} arrays nested unevenly"
    );
}

#[test]
fn pg_literals_rows_are_split_as_record_in_splits_them() {
    let name = "pg_literals_row";
    let _type = Type::new(
        "TYPE",
        name,
        &format!("CREATE TYPE {name} AS (a text, b text, c text)"),
    );
    let check = |c: Check| Check::Fields(vec![Some(c.clone()), Some(c.clone()), Some(c)]);
    let sql = format!(
        "SELECT greatest(length((r).a), length((r).b), length((r).c)) \
         FROM (SELECT $1::text::{name} AS r) t"
    );
    compare("row", check, |r| literal(r, "(", ")", 3), &sql);
}

#[test]
fn pg_literals_arrays_are_split_as_array_in_splits_them() {
    let check = |c| Check::Elements(Box::new(c));
    let sql = "SELECT max(length(v)) FROM unnest($1::text::text[]) v";
    compare("array", check, array_literal, sql);
}

/// The nesting check refuses exactly the arrays the server reshapes: those
/// it reads with no elements, or with more or fewer dimensions than the
/// braces before its first element open.
#[test]
fn pg_literals_arrays_nested_unevenly_are_those_the_server_reshapes() {
    let mut conn = client();
    let hunt = Hunt::from_env(HUNT, 3_000, 11);
    let mut random = fastrand::Rng::with_seed(hunt.seed());
    let sql =
        "SELECT coalesce(array_ndims(a), 0), cardinality(a) FROM (SELECT $1::text::text[] a) t";
    let (mut case, mut even, mut uneven) = (0, 0, 0);
    while hunt.more(case) {
        case += 1;
        let text = array_literal(&mut random);
        let Ok(row) = conn.query_one(sql, &[&text]) else {
            continue;
        };
        let (dims, elements): (i32, i32) = (row.get(0), row.get(1));
        let body = text.trim_start();
        let body = body
            .find('=')
            .filter(|_| body.starts_with('['))
            .map_or(body, |at| &body[at + 1..]);
        let opened = body
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .take_while(|&c| c == '{')
            .count();
        let empty = body
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .nth(opened)
            == Some('}');
        let reshaped = !empty && (elements == 0 || usize::try_from(dims).unwrap() != opened);
        let refused = Check::Nesting.check(&text).is_err();
        assert_eq!(
            refused, reshaped,
            "{text:?}: the server reads {dims} dimensions, {elements} elements"
        );
        even += usize::from(!refused);
        uneven += usize::from(refused);
    }
    hunt.report(case, "arrays");
    assert!(even > 500 && uneven > 20, "{even} even, {uneven} uneven");
}

/// A random array literal: flat, nested (equally deep or not), or with
/// explicit bounds.
fn array_literal(r: &mut fastrand::Rng) -> String {
    let count = r.usize(1..4);
    let (open, close) = match r.bool() {
        true => ("{", "}"),
        false => ("{{", "}}"),
    };
    match r.u8(..5) {
        // Nested (equally deep or not), and with explicit bounds.
        0 | 1 => format!(
            "{{{},{}}}",
            literal(r, "{", "}", count),
            literal(r, open, close, count)
        ),
        2 => format!("[1:{count}]={}", literal(r, "{", "}", count)),
        _ => literal(r, "{", "}", count),
    }
}

#[test]
fn pg_literals_ranges_are_split_as_range_in_splits_them() {
    let name = "pg_literals_textrange";
    let _type = Type::new(
        "TYPE",
        name,
        &format!("CREATE TYPE {name} AS RANGE (subtype = text)"),
    );
    let check = |c| Check::Bounds {
        inner: Box::new(c),
        multi: false,
    };
    let sql = format!(
        "SELECT CASE WHEN isempty(r) THEN -1 ELSE greatest(length(lower(r)), length(upper(r))) END \
         FROM (SELECT $1::text::{name} AS r) t"
    );
    let make = |r: &mut fastrand::Rng| {
        let (open, close) = (["[", "("][r.usize(..2)], ["]", ")"][r.usize(..2)]);
        match r.u8(..10) {
            0 => " empty ".to_owned(),
            _ => literal(r, open, close, 2),
        }
    };
    compare("range", check, make, &sql);
}
