//! Values PostgreSQL would store as something else without an error (a
//! moment of the import for `now`, a century for a two-digit year, the
//! nearest float, money rounded or its separator skipped, a cut name, ...)
//! are refused with their record and column, in binary and text COPY
//! alike, while their exact neighbours land unchanged.

use std::collections::BTreeMap;

use ringpipe_pipeline::Import;
use ringpipe_postgres::{CopyFormat, PgConfig, PgTarget};

use crate::common::{client, url, Rows, Table, Type};

/// A value and what it is stored as (read back with the test's select
/// expression), or `None` for a value the checks refuse.
type Case<'a> = (&'a str, Option<&'a str>);

/// Imports `cases` as rows `(id, v)` into `name` (`v` of type `column`)
/// in `format`, then checks each: landed as expected, or refused by the
/// sink's checks (not by the server) naming its record and column.
/// Returns whether the import used binary COPY.
fn import(name: &str, column: &str, select: &str, cases: &[Case], format: CopyFormat) -> bool {
    let ddl = format!("CREATE TABLE {{t}} (id int PRIMARY KEY, v {column})");
    let mut table = Table::new(name, &ddl);
    let ids: Vec<String> = (1..=cases.len()).map(|i| i.to_string()).collect();
    let rows: Vec<[Option<&str>; 2]> = ids
        .iter()
        .zip(cases)
        .map(|(id, (value, _))| [Some(id.as_str()), Some(*value)])
        .collect();
    let slices: Vec<&[Option<&str>]> = rows.iter().map(|r| &r[..]).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "v"])
        .format(format)
        .max_bad(cases.len() as u64)
        .reject_file(&file);
    let target = PgTarget::new(config);
    Import::new(target.clone())
        .batch_rows(4)
        .run(vec![Rows::text(&["id", "v"], &slices)])
        .unwrap();
    let stored: BTreeMap<String, Option<String>> = table
        .rows(&format!("id::text, {select}"), "id")
        .into_iter()
        .map(|row| (row[0].clone().unwrap(), row[1].clone()))
        .collect();
    let rejected = std::fs::read_to_string(&file).unwrap_or_default();
    for (i, (value, expected)) in cases.iter().enumerate() {
        let record = i + 1;
        let got = stored.get(&record.to_string());
        match expected {
            Some(expected) => assert_eq!(
                got,
                Some(&Some(expected.to_string())),
                "{column} {value:?} ({format:?}); rejects: {rejected}"
            ),
            None => {
                assert_eq!(got, None, "{column} {value:?} ({format:?}) landed");
                let ours = format!("{record}\t{record}:0\trecord {record}, column \"v\": ");
                assert!(
                    rejected.lines().any(|line| line.starts_with(&ours)),
                    "{column} {value:?} ({format:?}) not refused by the checks: {rejected}"
                );
            }
        }
    }
    target.binary().unwrap()
}

/// [`import`] in the default format (binary when `binary`: the column's
/// type has an encoder) and in text COPY.
fn both(name: &str, column: &str, select: &str, cases: &[Case], binary: bool) {
    let auto = import(
        &format!("{name}_auto"),
        column,
        select,
        cases,
        CopyFormat::Auto,
    );
    assert_eq!(auto, binary, "{column}");
    let text = import(
        &format!("{name}_text"),
        column,
        select,
        cases,
        CopyFormat::Text,
    );
    assert!(!text, "{column}");
}

#[test]
fn pg_altered_moments_centuries_and_leap_seconds_are_refused() {
    let date: &[Case] = &[
        ("now", None),
        ("today", None),
        ("Tomorrow", None),
        ("yesterday", None),
        ("Jan 2 45", None),
        ("450102", None),
        ("Jan 2 2045", Some("2045-01-02")),
        ("2045-01-02", Some("2045-01-02")),
        ("epoch", Some("1970-01-01")),
        ("infinity", Some("infinity")),
        ("-infinity", Some("-infinity")),
    ];
    both("pg_altered_date", "date", "v::text", date, true);
    let timestamp: &[Case] = &[
        ("now", None),
        ("today 10:00", None),
        ("epoch 12:00", None),
        ("infinity 10:00", None),
        ("2016-12-31 23:59:60", None),
        ("2016-12-31 23:59:59", Some("2016-12-31 23:59:59")),
        ("epoch", Some("1970-01-01 00:00:00")),
        ("2024-01-02 10:00:00", Some("2024-01-02 10:00:00")),
        ("Jan 2 2024 10:00", Some("2024-01-02 10:00:00")),
    ];
    both("pg_altered_ts", "timestamp", "v::text", timestamp, true);
    let utc = "(v AT TIME ZONE 'UTC')::text";
    let timestamptz: &[Case] = &[
        ("yesterday", None),
        ("2024-01-02 10:00:00 UTC+2", None),
        ("2024-01-02 10:00:00 GMT-05:00", None),
        ("2024-01-02 10:00:00+02", Some("2024-01-02 08:00:00")),
        ("2024-01-02 10:00:00 Etc/GMT+2", Some("2024-01-02 12:00:00")),
        ("2024-01-02 10:00:00 UTC", Some("2024-01-02 10:00:00")),
        ("1/2/24 10:00:00+00", None),
    ];
    both("pg_altered_tstz", "timestamptz", utc, timestamptz, false);
    let time: &[Case] = &[
        ("now", None),
        ("2024-01-02 10:00:00", None),
        ("23:59:60", None),
        ("10:00:00", Some("10:00:00")),
        ("10:00 PM", Some("22:00:00")),
        ("allballs", Some("00:00:00")),
    ];
    both("pg_altered_time", "time", "v::text", time, false);
    let timetz: &[Case] = &[
        ("2024-01-02 10:00:00+02", None),
        ("10:00:00 UTC+2", None),
        ("10:00:00+02", Some("10:00:00+02")),
    ];
    both("pg_altered_timetz", "timetz", "v::text", timetz, false);
}

#[test]
fn pg_altered_floats_money_intervals_and_small_types_are_refused() {
    let real: &[Case] = &[
        ("16777217", None),
        ("52.3676543", None),
        ("16777216", Some("1.6777216e+07")),
        ("52.36765", Some("52.36765")),
        ("0.1", Some("0.1")),
        ("0.100000001", Some("0.1")),
        ("1e-40", Some("1e-40")),
    ];
    both("pg_altered_real", "real", "v::text", real, true);
    let double: &[Case] = &[
        ("9007199254740993", None),
        ("3.141592653589793238", None),
        ("9007199254740992", Some("9.007199254740992e+15")),
        ("0.10000000000000001", Some("0.1")),
        ("3.141592653589793", Some("3.141592653589793")),
    ];
    both("pg_altered_double", "float8", "v::text", double, true);
    let interval: &[Case] = &[
        ("0.1 years", None),
        ("00:00:00.0000001", None),
        ("1.5 years", Some("1 year 6 mons")),
        ("00:00:00.000001", Some("00:00:00.000001")),
    ];
    both(
        "pg_altered_interval",
        "interval",
        "v::text",
        interval,
        false,
    );
    let name: &[Case] = &[
        (&"n".repeat(64), None),
        (&"n".repeat(63), Some(&"n".repeat(63))),
    ];
    both("pg_altered_name", "name", "v::text", name, false);
    let byte: &[Case] = &[("ab", None), ("a", Some("a"))];
    both("pg_altered_char", "\"char\"", "v::text", byte, false);
    let oid: &[Case] = &[("-1", None), ("4294967295", Some("4294967295"))];
    both("pg_altered_oid", "oid", "v::text", oid, false);
    // Money as the session spells it: these values assume `.` and `,`.
    let spelled: String = client()
        .query_one("SELECT 1234567::numeric::money::text", &[])
        .unwrap()
        .get(0);
    if spelled.ends_with("1,234,567.00") {
        let money: &[Case] = &[
            ("12.345", None),
            ("12,34", None),
            ("0.005", None),
            ("12.34", Some("12.34")),
            ("$1,234.56", Some("1234.56")),
            ("12.3400", Some("12.34")),
        ];
        both(
            "pg_altered_money",
            "money",
            "v::numeric::text",
            money,
            false,
        );
    }
}

#[test]
fn pg_altered_domains_and_arrays_are_checked_by_their_base_type() {
    let name = "pg_altered_tenths";
    let create = format!("CREATE DOMAIN {name} AS numeric(4,1) CHECK (VALUE > 0)");
    let domain = Type::new("DOMAIN", name, &create);
    let tenths: &[Case] = &[("1.25", None), ("1.2", Some("1.2"))];
    both("pg_altered_domain", domain.name, "v::text", tenths, false);
    let arrays: &[Case] = &[
        ("{1.2,1.25}", None),
        ("{{1.5},{\"2.25\"}}", None),
        ("{1.2,NULL}", Some("{1.2,NULL}")),
    ];
    both(
        "pg_altered_array",
        "numeric(4,1)[]",
        "v::text",
        arrays,
        false,
    );
    let column = format!("{}[]", domain.name);
    both("pg_altered_domains", &column, "v::text", arrays, false);
    // Nested unevenly: stored as `{}` or with a dimension added by
    // PostgreSQL before 17, refused by the check of any array.
    let texts: &[Case] = &[
        ("{{{a}},{b}}", None),
        ("{{a},{{b}}}", None),
        ("{{a},{b}}", Some("{{a},{b}}")),
        ("{{{a}},{{b}}}", Some("{{{a}},{{b}}}")),
    ];
    both("pg_altered_nesting", "text[]", "v::text", texts, false);
    let dates: &[Case] = &[
        ("{2024-01-02,now}", None),
        ("{2024-01-02,NULL}", Some("{2024-01-02,NULL}")),
    ];
    both("pg_altered_dates", "date[]", "v::text", dates, false);
}

#[test]
fn pg_altered_interval_fields_a_field_list_drops_are_refused() {
    let year_to_month: &[Case] = &[
        ("1 year 3 days", None),
        ("1 year 2 mons 00:00:01", None),
        ("1 year 2 mons", Some("1 year 2 mons")),
        ("P1Y2M", Some("1 year 2 mons")),
        ("1-2", Some("1 year 2 mons")),
        ("1.5 years", Some("1 year 6 mons")),
        // A number alone is months here: half a month would be dropped.
        ("1.5", None),
        ("14", Some("1 year 2 mons")),
    ];
    both(
        "pg_altered_ytm",
        "interval YEAR TO MONTH",
        "v::text",
        year_to_month,
        false,
    );
    let hour: &[Case] = &[
        ("1 day 02:30", None),
        ("1.5 hours", None),
        // A number alone is hours here.
        ("1.5", None),
        ("5", Some("05:00:00")),
        ("5 hours", Some("05:00:00")),
        ("1 day 02:00", Some("1 day 02:00:00")),
        ("PT26H", Some("26:00:00")),
    ];
    both("pg_altered_hour", "interval HOUR", "v::text", hour, false);
    let minute_to_second: &[Case] = &[
        ("00:04:05.5", None),
        // Minutes and seconds here, hours and minutes as a plain
        // interval: refused, though nothing would be dropped.
        ("4:05", None),
        ("65", Some("00:01:05")),
        ("00:04:05", Some("00:04:05")),
        ("4 minutes 5 seconds", Some("00:04:05")),
    ];
    both(
        "pg_altered_mts",
        "interval MINUTE TO SECOND(0)",
        "v::text",
        minute_to_second,
        false,
    );
    let name = "pg_altered_days";
    let create = format!("CREATE DOMAIN {name} AS interval DAY");
    let domain = Type::new("DOMAIN", name, &create);
    let days: &[Case] = &[("3 days 04:00", None), ("3 days", Some("3 days"))];
    both("pg_altered_dayd", domain.name, "v::text", days, false);
    let hours: &[Case] = &[
        ("{\"1 day 02:30\",03:00}", None),
        ("{5,1.5}", None),
        (
            "{\"1 day 02:00\",03:00,NULL}",
            Some("{\"1 day 02:00:00\",03:00:00,NULL}"),
        ),
        // A number alone in an element is hours, as in a column.
        ("{5}", Some("{05:00:00}")),
    ];
    both(
        "pg_altered_hours",
        "interval HOUR[]",
        "v::text",
        hours,
        false,
    );
}

#[test]
fn pg_altered_interval_fields_inside_other_types_are_refused() {
    // Dropped in reverse order: the range and the type use the domain.
    let (hour, span, pair) = ("pg_altered_fhour", "pg_altered_fspan", "pg_altered_fpair");
    let hour = Type::new(
        "DOMAIN",
        hour,
        &format!("CREATE DOMAIN {hour} AS interval HOUR"),
    );
    let span = Type::new(
        "TYPE",
        span,
        &format!("CREATE TYPE {span} AS RANGE (subtype = {})", hour.name),
    );
    let pair = Type::new(
        "TYPE",
        pair,
        &format!("CREATE TYPE {pair} AS (a int, d interval HOUR, e interval)"),
    );
    let pairs: &[Case] = &[
        ("(1,\"1 day 02:30\",)", None),
        ("(1,1.5,)", None),
        (
            "(1,\"1 day 02:00\",\"1 day 02:30\")",
            Some("(1,\"1 day 02:00:00\",\"1 day 02:30:00\")"),
        ),
        ("(1,5,)", Some("(1,05:00:00,)")),
        ("(,,)", Some("(,,)")),
    ];
    both("pg_altered_fpairs", pair.name, "v::text", pairs, false);
    let column = format!("{}[]", pair.name);
    let arrays: &[Case] = &[
        ("{\"(1,\\\"1 day 02:30\\\",)\"}", None),
        ("{\"(1,03:00,)\",NULL}", Some("{\"(1,03:00:00,)\",NULL}")),
    ];
    both("pg_altered_fpairs_arr", &column, "v::text", arrays, false);
    let spans: &[Case] = &[
        ("[1 day 02:30,2 days)", None),
        ("(,1.5]", None),
        ("[1 day 02:00,)", Some("[\"1 day 02:00:00\",)")),
    ];
    both("pg_altered_fspans", span.name, "v::text", spans, false);
}

#[test]
fn pg_altered_interval_fields_beside_an_unreadable_value_are_still_refused() {
    // "soon" fails the batch's one query; the values are then read one by
    // one, and COPY refuses "soon" with the server's own message.
    let name = "pg_altered_unreadable";
    let mut table = Table::new(
        name,
        "CREATE TABLE {t} (id int PRIMARY KEY, v interval YEAR TO MONTH)",
    );
    let rows: &[[Option<&str>; 2]] = &[
        [Some("1"), Some("2 years")],
        [Some("2"), Some("soon")],
        [Some("3"), Some("2 years 1 day")],
        [Some("4"), Some("3 years")],
    ];
    let slices: Vec<&[Option<&str>]> = rows.iter().map(|r| &r[..]).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsv");
    let config = PgConfig::new(url(), name, &["id", "v"])
        .max_bad(2)
        .reject_file(&file);
    Import::new(PgTarget::new(config))
        .batch_rows(4)
        .run(vec![Rows::text(&["id", "v"], &slices)])
        .unwrap();
    let stored = table.rows("id::text, v::text", "id");
    let expected = [["1", "2 years"], ["4", "3 years"]];
    let expected: Vec<Vec<Option<String>>> = expected
        .iter()
        .map(|r| r.iter().map(|v| Some(v.to_string())).collect())
        .collect();
    assert_eq!(stored, expected);
    let rejected = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = rejected.lines().collect();
    assert_eq!(lines.len(), 2, "{rejected}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("2\t") && l.contains("invalid input syntax")),
        "{rejected}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("3\t3:0\trecord 3, column \"v\": ")
                && l.contains("would be stored as \"2 years\"")),
        "{rejected}"
    );
}

/// The `hstore` extension, created for a test in a schema of its own and
/// dropped after it, unless it was there before. In its own schema, off
/// every other session's search path, its operators and functions never
/// become candidates in a concurrent test's statement while it is dropped.
struct Hstore {
    /// The schema of its objects.
    schema: String,
    created: bool,
}

impl Hstore {
    fn new() -> Hstore {
        let mut client = client();
        let sql = "SELECT n.nspname::text FROM pg_extension e \
                   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'hstore'";
        if let Some(row) = client.query_opt(sql, &[]).unwrap() {
            return Hstore {
                schema: row.get(0),
                created: false,
            };
        }
        client
            .batch_execute(
                "CREATE SCHEMA IF NOT EXISTS pgsink_hstore; \
                 CREATE EXTENSION hstore WITH SCHEMA pgsink_hstore",
            )
            .unwrap();
        Hstore {
            schema: "pgsink_hstore".into(),
            created: true,
        }
    }

    /// The type's name, qualified by its schema.
    fn name(&self) -> String {
        format!("{}.hstore", self.schema)
    }
}

impl Drop for Hstore {
    fn drop(&mut self) {
        if self.created {
            let _ = client().batch_execute("DROP SCHEMA IF EXISTS pgsink_hstore CASCADE");
        }
    }
}

/// One test for both, so that the extension is made and dropped once.
#[test]
fn pg_altered_hstore_keys_given_twice_are_refused() {
    let hstore = Hstore::new();
    refused_in_both_formats(&hstore);
    read_as_the_server_reads_them(&hstore);
}

fn refused_in_both_formats(hstore: &Hstore) {
    let cases: &[Case] = &[
        ("a=>1, a=>2", None),
        (r#"a=>1, "a"=>NULL"#, None),
        (r#""k\"ey"=>1, k\"ey=>2"#, None),
        ("a=>1, A=>2", Some("\"A\"=>\"2\", \"a\"=>\"1\"")),
        (
            r#""a,b"=>"x=>y", c=>NULL"#,
            Some("\"c\"=>NULL, \"a,b\"=>\"x=>y\""),
        ),
    ];
    both("pg_altered_hstore", &hstore.name(), "v::text", cases, false);
}

/// Random well-formed hstores of 1 to 4 pairs, in spellings whose keys
/// are equal or not after quoting and escaping: the check must refuse
/// exactly those of which the server keeps fewer keys than were written.
fn read_as_the_server_reads_them(hstore: &Hstore) {
    let mut conn = client();
    let keys = [
        "a", "\"a\"", "\\a", "\"\\a\"", "A", "a\\,", "\"a,\"", "a\\ b", "\"a b\"", "\\=", "\"=\"",
        "\"\"", "\"NULL\"", "b\\=",
    ];
    let values = ["1", "NULL", "\"x,y\"", "x=y", "\\,z", "\"\"", "null"];
    let spaces = ["", " ", "  ", "\t", "\n"];
    let mut random = fastrand::Rng::with_seed(24);
    let (mut refused, mut kept_all) = (0, 0);
    for _ in 0..2000 {
        let pairs = random.usize(1..=4);
        let mut text = String::new();
        for i in 0..pairs {
            let mut space = || spaces[random.usize(..spaces.len())];
            let (a, b, c, d) = (space(), space(), space(), space());
            let key = keys[random.usize(..keys.len())];
            let value = values[random.usize(..values.len())];
            let comma = if i + 1 < pairs || random.bool() {
                ","
            } else {
                ""
            };
            text.push_str(&format!("{a}{key}{b}=>{c}{value}{d}{comma}"));
        }
        let sql = format!(
            "SELECT coalesce(array_length({0}.akeys($1::text::{0}.hstore), 1), 0)",
            hstore.schema
        );
        let row = conn.query_one(&sql, &[&text]);
        let kept = row
            .map_err(|e| format!("{text:?}: {e}"))
            .unwrap()
            .get::<_, i32>(0);
        let check = ringpipe_postgres::Check::for_type("hstore", -1).unwrap();
        let twice = check.check(&text).is_err();
        assert_eq!(
            twice,
            (kept as usize) < pairs,
            "{text:?}: server kept {kept} of {pairs}"
        );
        refused += usize::from(twice);
        kept_all += usize::from(!twice);
    }
    assert!(
        refused > 300 && kept_all > 300,
        "{refused} refused, {kept_all} kept"
    );
}

#[test]
fn pg_altered_ranges_are_checked_bound_by_bound() {
    let tsrange: &[Case] = &[
        ("[now, infinity)", None),
        ("(,2016-12-31 23:59:60]", None),
        ("[2024-01-01 10:00:00.1234567,)", None),
        ("[\"today 10:00\",)", None),
        (
            "[2024-01-01 10:00, 2024-01-02)",
            Some("[\"2024-01-01 10:00:00\",\"2024-01-02 00:00:00\")"),
        ),
        (
            "[\"2024-01-01 10:00\",\"2024-01-02\"]",
            Some("[\"2024-01-01 10:00:00\",\"2024-01-02 00:00:00\"]"),
        ),
        ("EMPTY", Some("empty")),
    ];
    both("pg_altered_tsrange", "tsrange", "v::text", tsrange, false);
    let dates: &[Case] = &[
        ("[today,)", None),
        ("[1/2/45,1/3/45)", None),
        ("[2024-01-01,2024-01-05]", Some("[2024-01-01,2024-01-06)")),
    ];
    both("pg_altered_daterange", "daterange", "v::text", dates, false);
    let utc = "(lower(v) AT TIME ZONE 'UTC')::text";
    let zoned: &[Case] = &[
        ("[2024-01-02 10:00:00 UTC+2,)", None),
        ("[2024-01-02 10:00:00+02,)", Some("2024-01-02 08:00:00")),
    ];
    both("pg_altered_tstzrange", "tstzrange", utc, zoned, false);
    let multi: &[Case] = &[
        ("{[2024-01-01,2024-01-02), [now,)}", None),
        (
            " { [2024-01-01,2024-01-02) , empty }",
            Some("{[\"2024-01-01 00:00:00\",\"2024-01-02 00:00:00\")}"),
        ),
    ];
    both(
        "pg_altered_tsmulti",
        "tsmultirange",
        "v::text",
        multi,
        false,
    );
    let arrays: &[Case] = &[
        ("{\"[now,)\"}", None),
        (
            "{\"[2024-01-01,2024-01-02)\"}",
            Some("{\"[\\\"2024-01-01 00:00:00\\\",\\\"2024-01-02 00:00:00\\\")\"}"),
        ),
    ];
    both("pg_altered_tsranges", "tsrange[]", "v::text", arrays, false);
}

#[test]
fn pg_altered_composite_types_are_checked_field_by_field() {
    let (pair, nested) = ("pg_altered_pair", "pg_altered_nested");
    // The nested type is dropped first, as it goes first.
    let pair = Type::new(
        "TYPE",
        pair,
        &format!("CREATE TYPE {pair} AS (a numeric(4,1), b timestamp, c text)"),
    );
    let nested = Type::new(
        "TYPE",
        nested,
        &format!("CREATE TYPE {nested} AS (p {}, r tsrange)", pair.name),
    );
    let pairs: &[Case] = &[
        ("(1.25,2024-01-01,x)", None),
        ("(1.2,now,x)", None),
        ("(1.2,\"2024-01-01 10:00:00.1234567\",)", None),
        (
            "( 1.2 ,\"2024-01-01 10:00\",)",
            Some("(1.2,\"2024-01-01 10:00:00\",)"),
        ),
        ("(,,\"a\"\"b\")", Some("(,,\"a\"\"b\")")),
    ];
    both("pg_altered_pairs", pair.name, "v::text", pairs, false);
    let nests: &[Case] = &[
        ("(\"(1.25,,)\",)", None),
        ("(,\"[now,)\")", None),
        (
            "(\"(1.5,,)\",\"[2024-01-01,2024-01-02)\")",
            Some("(\"(1.5,,)\",\"[\"\"2024-01-01 00:00:00\"\",\"\"2024-01-02 00:00:00\"\")\")"),
        ),
    ];
    both("pg_altered_nests", nested.name, "v::text", nests, false);
}
