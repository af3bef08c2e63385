//! The checks, type by type.

use super::array::array_elements;
use super::*;

#[test]
fn numeric_scale_refuses_what_would_round() {
    let check = Check::for_type("numeric", (5 << 16 | 2) + 4).unwrap();
    assert_eq!(check, Check::Scale(2));
    for ok in ["1.23", "1.2300", "-12", " 1.5e-1 ", "0.000", "NaN", "x"] {
        assert_eq!(check.check(ok), Ok(()), "{ok}");
    }
    for bad in ["1.239", "0.001", "1e-3", "-0.125"] {
        assert!(check.check(bad).is_err(), "{bad}");
    }
    let negative = Check::for_type("numeric", (5 << 16 | (-2i32 & 0x7ff)) + 4).unwrap();
    assert_eq!(negative, Check::Scale(-2));
    assert!(negative.check("1200").is_ok());
    assert!(negative.check("1250").is_err());
    assert_eq!(Check::for_type("numeric", -1), None);
}

#[test]
fn character_lengths_count_characters() {
    let varchar = Check::for_type("varchar", 3 + 4).unwrap();
    assert!(varchar.check("zoë").is_ok());
    assert!(varchar.check("ab  ").is_err());
    let char3 = Check::for_type("bpchar", 3 + 4).unwrap();
    assert!(char3.check("ab    ").is_ok());
    assert!(char3.check("abcd").is_err());
}

#[test]
fn times_keep_their_digits_and_zones() {
    let timestamp = Check::for_type("timestamp", -1).unwrap();
    for ok in [
        "2020-01-01 00:00:00.123456",
        "2020-01-01 10:00 PM",
        "2020-01-01",
        "infinity",
        "2020-01-01 10:00:00.1230000",
    ] {
        assert_eq!(timestamp.check(ok), Ok(()), "{ok}");
    }
    for bad in [
        "2020-01-01 00:00:00.1234567",
        "2020-01-01T10:00:00Z",
        "2020-01-01 10:00:00+02",
        "2020-01-01 10:00 Europe/Paris",
    ] {
        assert!(timestamp.check(bad).is_err(), "{bad}");
    }
    // The canonical-datetime shortcut agrees with the full reading.
    for check in [timestamp.clone(), Check::for_type("timestamp", 0).unwrap()] {
        for value in [
            "2021-08-24 11:14:03",
            "2021-08-24 11:14:03.5",
            "2021-08-24 11:14:03.500000",
            "2021-08-24 11:14:3x",
            "2021-08-24T11:14:03",
        ] {
            let Check::Time { digits, zone, date } = check else {
                unreachable!()
            };
            assert_eq!(
                check.check(value),
                time(value, digits, zone, date),
                "{value}"
            );
        }
    }
    let tz2 = Check::for_type("timestamptz", 2).unwrap();
    assert!(tz2.check("2020-01-01 10:00:00.12+02").is_ok());
    assert!(tz2.check("2020-01-01 10:00:00.129+02").is_err());
    let date = Check::for_type("date", -1).unwrap();
    assert!(date.check("2020-01-01 00:00:00").is_ok());
    assert!(date.check("2020-01-01 12:34").is_err());
}

#[test]
fn moments_of_the_server_are_refused_constants_alone_pass() {
    let checks = ["date", "timestamp", "timestamptz", "time", "timetz"]
        .map(|t| Check::for_type(t, -1).unwrap());
    for check in &checks {
        for bad in [
            "now",
            " Today ",
            "tomorrow",
            "YESTERDAY",
            "now()",
            "today 10:00",
        ] {
            let why = check.check(bad).unwrap_err();
            assert!(why.contains("time of the import"), "{check:?} {bad}: {why}");
        }
        for bad in ["epoch 12:00", "infinity BC", "2024-01-02 allballs"] {
            assert!(check.check(bad).is_err(), "{check:?} {bad}");
        }
        for ok in ["epoch", "infinity", "-infinity", "allballs", "EPOCH"] {
            assert_eq!(check.check(ok), Ok(()), "{check:?} {ok}");
        }
    }
    // Words that merely contain one pass.
    assert!(checks[2].check("2024-01-02 10:00 America/Knox_IN").is_ok());
}

#[test]
fn two_digit_years_are_refused() {
    let date = Check::for_type("date", -1).unwrap();
    let timestamptz = Check::for_type("timestamptz", -1).unwrap();
    for bad in [
        "1/2/3",
        "01/02/45",
        "Jan 2 45",
        "2-Jan-45",
        "450102",
        "January 2, 45",
    ] {
        assert!(date.check(bad).unwrap_err().contains("century"), "{bad}");
        let with_time = format!("{bad} 10:00:00+02");
        assert!(timestamptz.check(&with_time).is_err(), "{with_time}");
    }
    for ok in [
        "2024-01-02",
        "01/02/2024",
        "1/2/045",
        "Jan 2 2024",
        "20240102",
        "2 Jan 45 BC",
        "J2451187",
        "2024-1-2",
        "epoch",
    ] {
        assert_eq!(date.check(ok), Ok(()), "{ok}");
    }
    for ok in [
        "Tue Jan 02 10:00:00 2024 PST",
        "2024-01-02 10:00:00-05:30",
        "Jan 2 10:00:00.5 2024 EST5EDT",
        "2024-01-02T10:00:00Z",
    ] {
        assert_eq!(timestamptz.check(ok), Ok(()), "{ok}");
    }
}

#[test]
fn times_keep_no_date_no_leap_second_no_posix_zone() {
    let time = Check::for_type("time", -1).unwrap();
    let timetz = Check::for_type("timetz", 3).unwrap();
    assert_eq!(
        timetz,
        Check::Time {
            digits: 3,
            zone: true,
            date: false
        }
    );
    for check in [&time, &timetz] {
        assert!(check
            .check("2024-01-02 10:00:00")
            .unwrap_err()
            .contains("date"));
        assert!(check.check("10:00:00").is_ok());
        assert!(check.check("T10:00").is_ok());
        assert!(check.check("10:00:00 PM").is_ok());
        assert!(check.check("23:59:60").unwrap_err().contains("leap second"));
    }
    assert!(timetz.check("10:00:00+02").is_ok());
    let timestamptz = Check::for_type("timestamptz", -1).unwrap();
    for bad in [
        "2024-01-02 10:00:00 UTC+2",
        "2024-01-02 10:00:00 GMT-05:00",
        "2024-01-02 10:00:00 XYZ+2",
    ] {
        assert!(
            timestamptz.check(bad).unwrap_err().contains("POSIX"),
            "{bad}"
        );
    }
    for ok in [
        "2024-01-02 10:00:00+02",
        "2024-01-02 10:00:00 UTC",
        "2024-01-02 10:00:00 UTC+0",
        "2024-01-02 10:00:00 Etc/GMT+2",
        "2024-01-02 10:00:00 PM+02",
        "2024-01-02 10:00:00 America/Port-au-Prince",
    ] {
        assert_eq!(timestamptz.check(ok), Ok(()), "{ok}");
    }
    assert!(timestamptz.check("2016-12-31 23:59:60+00").is_err());
}

#[test]
fn floats_keep_every_digit_written() {
    let real = Check::for_type("float4", -1).unwrap();
    let double = Check::for_type("float8", -1).unwrap();
    for ok in [
        "0.1",
        "1.5",
        "0.100000001",
        "1234.567",
        "52.36765",
        "16777216",
        "16777220",
        "1e12",
        "1000000000000",
        "1e-40",
        "-0",
        "NaN",
        "-Infinity",
        "1e-50",
        " 3.25 ",
        "0.10000000149011612",
    ] {
        assert_eq!(real.check(ok), Ok(()), "{ok}");
    }
    for bad in [
        "16777217",
        "123456789",
        "52.3676543",
        "3.14159265358979",
        "1.234567e-40",
    ] {
        let why = real.check(bad).unwrap_err();
        assert!(why.contains("real keeps"), "{bad}: {why}");
    }
    assert!(real
        .check("16777217")
        .unwrap_err()
        .ends_with("stored as 16777216"));
    for ok in [
        "0.1",
        "0.10000000000000001",
        "0.1000000000000000055511151231257827",
        "1.000000000000000056e-01",
        "0.30000000000000004",
        "9007199254740992",
        "1.7976931348623157e308",
        "1e-320",
        "123456789012345",
    ] {
        assert_eq!(double.check(ok), Ok(()), "{ok}");
    }
    for bad in [
        "9007199254740993",
        "3.141592653589793238",
        "1.0000000000000000000001",
    ] {
        assert!(double.check(bad).is_err(), "{bad}");
    }
}

#[test]
fn money_follows_the_sessions_spelling() {
    let c = Check::money("$1,234,567.00").unwrap();
    assert_eq!(
        c,
        Check::Money {
            digits: 2,
            point: '.',
            separator: ','
        }
    );
    for ok in [
        "12.34",
        "$12.34",
        "1,234.56",
        "12,34,567.89",
        "-12.3400",
        "(12.34)",
        " 12 ",
        ".5",
        "1,234,567",
        "x",
    ] {
        assert_eq!(c.check(ok), Ok(()), "{ok}");
    }
    for bad in [
        "12.345",
        "0.005",
        "12,34",
        "1234,5",
        "12.3,4",
        "1,2,345",
        "12.349999",
    ] {
        assert!(c.check(bad).is_err(), "{bad}");
    }
    assert!(c.check("12,34").unwrap_err().contains("reading 1234"));
    let german = Check::money("1.234.567,00 €").unwrap();
    assert_eq!(
        german,
        Check::Money {
            digits: 2,
            point: ',',
            separator: '.'
        }
    );
    assert!(german.check("1.234,56 €").is_ok());
    assert!(german.check("12,345").is_err());
    let yen = Check::money("￥1,234,567").unwrap();
    assert!(matches!(yen, Check::Money { digits: 0, .. }));
    assert!(yen.check("12.5").is_err());
    let plain = Check::money("1234567").unwrap();
    assert!(matches!(
        plain,
        Check::Money {
            digits: 0,
            point: '.',
            separator: ','
        }
    ));
    assert_eq!(Check::money("garbage"), None);
}

#[test]
fn intervals_keep_whole_months_and_their_digits() {
    let interval = Check::for_type("interval", -1).unwrap();
    assert_eq!(
        interval,
        Check::Interval {
            digits: 6,
            fields: None
        }
    );
    for ok in [
        "1 day",
        "1.5 years",
        "0.25 year",
        "P0.5Y",
        ".5 years",
        "1.5 decades",
        "1.5 days",
        "10:00:00.123456",
        "1.000001 seconds",
        "@ 1 minute ago",
    ] {
        assert_eq!(interval.check(ok), Ok(()), "{ok}");
    }
    for bad in [
        "0.1 years",
        ".1 years",
        "1.33 years",
        "P0.1Y",
        "0.0001 millennia",
        "00:00:00.0000001",
        "1.0000001 seconds",
    ] {
        assert!(interval.check(bad).is_err(), "{bad}");
    }
    // interval(0), and a field list with the default precision.
    let whole = Check::for_type("interval", 0x7fff << 16).unwrap();
    assert_eq!(
        whole,
        Check::Interval {
            digits: 0,
            fields: None
        }
    );
    assert!(whole.check("1.5 seconds").is_err());
    assert!(whole.check("00:00:01.5").is_err());
    let day = Check::for_type("interval", 8 << 16 | 0xffff).unwrap();
    assert_eq!(
        day,
        Check::Interval {
            digits: 6,
            fields: IntervalFields::for_typmod(8 << 16 | 0xffff)
        }
    );
    assert!(day.has_field_lists());
}

#[test]
fn small_types_keep_their_bytes() {
    let name = Check::for_type("name", -1).unwrap();
    assert!(name.check(&"a".repeat(63)).is_ok());
    assert!(name.check(&"a".repeat(64)).is_err());
    let byte = Check::for_type("char", -1).unwrap();
    for ok in ["", "a", "\\303", "\\101"] {
        assert_eq!(byte.check(ok), Ok(()), "{ok}");
    }
    for bad in ["ab", "é", "\\777", "\\30"] {
        assert!(byte.check(bad).is_err(), "{bad}");
    }
    let oid = Check::for_type("oid", -1).unwrap();
    assert!(oid.check("4294967295").is_ok());
    assert!(oid.check("-0").is_ok());
    assert!(oid.check(" -1").is_err());
}

#[test]
fn array_elements_are_checked_each() {
    let array = Check::Elements(Box::new(
        Check::for_type("numeric", (4 << 16 | 1) + 4).unwrap(),
    ));
    for ok in [
        "{1.2,NULL,\"3.4\"}",
        "{{1.5},{2.5}}",
        "[0:1]={1,2}",
        "{}",
        "{ 1.2 , 3 }",
        "x",
    ] {
        assert_eq!(array.check(ok), Ok(()), "{ok}");
    }
    let why = array.check("{1.2, 1.25}").unwrap_err();
    assert!(
        why.starts_with("in the array \"{1.2, 1.25}\": \"1.25\""),
        "{why}"
    );
    assert!(array.check("{{1},{\"2.25\"}}").is_err());
    let varchar = Check::Elements(Box::new(Check::Chars(2)));
    assert!(varchar.check("{\"a  \"}").is_err());
    assert!(varchar.check("{a  ,\"b,\"}").is_ok());
    assert_eq!(
        array_elements(r#"{a\,b,"c\"d",NULL,"NULL", e f ,\NULL}"#),
        Some(vec![
            Some("a,b".into()),
            Some("c\"d".into()),
            None,
            Some("NULL".into()),
            Some("e f".into()),
            Some("NULL".into()),
        ])
    );
    assert_eq!(array_elements("{1,2"), None);
    assert_eq!(array_elements("{1} x"), None);
}

#[test]
fn arrays_nested_unevenly_are_refused_whatever_their_elements() {
    for uneven in [
        "{{{a}},{b}}",
        "{{a},{{b}}}",
        "{ {\"{a}\"} , {{b}} }",
        "{a,{b}}",
    ] {
        let why = Check::Nesting.check(uneven).unwrap_err();
        assert!(why.contains("nested at different depths"), "{why}");
        let chars = Check::Elements(Box::new(Check::Chars(5)));
        assert!(chars.check(uneven).is_err(), "{uneven}");
    }
    for even in [
        "{}",
        "{a,NULL}",
        "{{a},{b}}",
        "[1:1][1:1]={{a}}",
        "{{\"{\"},{\"}\"}}",
        "x",
    ] {
        assert_eq!(Check::Nesting.check(even), Ok(()), "{even}");
    }
}
