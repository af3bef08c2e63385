//! The checks, column type by column type.

use ringpipe_pipeline::Value;

use super::Check;
use crate::encode::boolean::BooleanColumn;
use crate::wire::ColumnType;

fn column(data_type: &str, scale: Option<u64>, precision: Option<u8>) -> ColumnType {
    ColumnType {
        data_type: data_type.into(),
        charset: None,
        datetime_precision: precision,
        numeric_scale: scale,
        octet_length: None,
        members: Vec::new(),
        boolean: None,
    }
}

#[test]
fn integers_refuse_fractions() {
    let check = Check::for_column(&column("int", Some(0), None)).unwrap();
    // Words are the server's to refuse (or, `true` and `false` into a
    // `BOOLEAN`, the sink's to send as digits).
    for ok in ["1", "-7", "1.0", "1e3", "x", "", "true", "FALSE"] {
        assert_eq!(check.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    for bad in ["1.5", "1.4", "-0.5", "15e-1"] {
        assert!(check.check(Value::Text(bad)).is_err(), "{bad}");
    }
}

#[test]
fn decimals_refuse_what_would_round() {
    let check = Check::for_column(&column("decimal", Some(2), None)).unwrap();
    assert_eq!(check, Check::Scale(2));
    assert!(check.check(Value::Text("1.50")).is_ok() && check.check(Value::Text("1.500")).is_ok());
    assert!(
        check.check(Value::Text("1.005")).is_err() && check.check(Value::Text("-0.001")).is_err()
    );
    assert_eq!(Check::for_column(&column("decimal", None, None)), None);
}

#[test]
fn times_refuse_dropped_digits() {
    let check = Check::for_column(&column("datetime", None, Some(0))).unwrap();
    assert!(check.check(Value::Text("2024-01-01 00:00:00")).is_ok());
    assert!(check.check(Value::Text("2024-01-01 00:00:00.000")).is_ok());
    assert!(check.check(Value::Text("2024-01-01 00:00:00.5")).is_err());
    let six = Check::for_column(&column("timestamp", None, Some(6))).unwrap();
    assert!(six.check(Value::Text("2024-01-01 00:00:00.123456")).is_ok());
    assert!(six
        .check(Value::Text("2024-01-01 00:00:00.1234567"))
        .is_err());
}

#[test]
fn dates_refuse_two_digit_years() {
    let date = Check::for_column(&column("date", None, None)).unwrap();
    let datetime = Check::for_column(&column("datetime", None, Some(0))).unwrap();
    let timestamp = Check::for_column(&column("timestamp", None, Some(3))).unwrap();
    assert_eq!(date, Check::Date { fraction: None });
    for check in [&date, &datetime, &timestamp] {
        for ok in [
            "2024-01-05",
            "0024-01-05",
            "5-01-24",
            "2024/1/5",
            "2024.01.05",
            "20240105",
            "24010510",
            "0000-00-00",
            "00-00-00",
            "000000",
            " 2024-01-05 ",
            "garbage",
            "",
        ] {
            assert_eq!(check.check(Value::Text(ok)), Ok(()), "{ok}");
        }
        for bad in [
            "24-01-05",
            "99-12-31",
            "00-01-05",
            "24/1/5",
            "24.01.05",
            " 24-01-05",
            "\t24-01-05",
            "240105",
            "240105 ",
            "24105",
            "10:00:00",
            "00-00-00 10:30:00",
        ] {
            assert!(check.check(Value::Text(bad)).is_err(), "{bad}");
        }
    }
    for ok in [
        "2024-01-05 10:00:00",
        "2024-01-05T10:00:00",
        "20240105103000",
        "20240105T103000",
        "00000000000000",
    ] {
        assert_eq!(datetime.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    for bad in [
        "24-01-05 10:00:00",
        "240105103000",
        "2401051030",
        "2401051",
        "240105T103000",
        "000000103000",
    ] {
        assert!(datetime.check(Value::Text(bad)).is_err(), "{bad}");
    }
    let why = datetime.check(Value::Text("10:00:00")).unwrap_err();
    assert!(why.contains("time of day"), "{why}");
    let why = datetime.check(Value::Text("24-01-05")).unwrap_err();
    assert!(why.contains("two-digit year"), "{why}");
}

#[test]
fn fractions_spelled_as_numbers_are_counted() {
    let datetime = Check::for_column(&column("datetime", None, Some(0))).unwrap();
    let datetime1 = Check::for_column(&column("datetime", None, Some(1))).unwrap();
    assert!(datetime.check(Value::Text("20240105103000.5")).is_err());
    assert!(datetime.check(Value::Text("20240105103000.000")).is_ok());
    assert!(datetime1.check(Value::Text("20240105103000.5")).is_ok());
    assert!(datetime1.check(Value::Text("20240105103000.25")).is_err());
    assert!(datetime1.check(Value::Text("2024.01.05")).is_ok());
    // DATETIME reads `10:00.5` as 10:00:05: not a fraction.
    assert!(datetime.check(Value::Text("2024-01-05 10:00.5")).is_ok());
    let time = Check::for_column(&column("time", None, Some(0))).unwrap();
    assert_eq!(time, Check::Time(0));
    for ok in [
        "10:00:00",
        "10:00",
        "100",
        "-10",
        "10.",
        "10.0",
        "103000",
        "1 10:00:00",
        "-838:59:59",
    ] {
        assert_eq!(time.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    for bad in [
        "10.5",
        "-10.5",
        "103000.5",
        "10:00.5",
        "10:00:00.5",
        " 10.5 ",
    ] {
        assert!(time.check(Value::Text(bad)).is_err(), "{bad}");
    }
    let time1 = Check::for_column(&column("time", None, Some(1))).unwrap();
    for ok in ["10.5", "103000.5", "10:00.5", "10:00:00.50"] {
        assert_eq!(time1.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    for bad in ["10.25", "10:00.25", "10:00:00.25"] {
        assert!(time1.check(Value::Text(bad)).is_err(), "{bad}");
    }
    // Two-digit years are a date's matter, not a time's.
    assert!(time.check(Value::Text("24-01-05")).is_ok());
}

#[test]
fn bits_refuse_numbers_spelled_as_text() {
    let bit = Check::for_column(&column("bit", None, None)).unwrap();
    assert_eq!(bit, Check::Bit { words: false });
    for bad in [
        "", "1", "0", "255", "-1", "+7", "true", "FALSE", "0x1F", "0b101", "b'101'",
    ] {
        assert!(bit.check(Value::Text(bad)).is_err(), "{bad}");
    }
    for ok in ["a", "ab", "1a", "0x", "b'2'"] {
        assert_eq!(bit.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    // Bytes (`--decode`) are a BIT value's own form, even "1" and none.
    assert!(bit.check(Value::Bytes(b"1")).is_ok());
    assert!(bit.check(Value::Bytes(&[])).is_ok());
    assert!(bit.check(Value::Bytes(&[0x01, 0xff])).is_ok());
}

#[test]
fn a_bit_1_takes_the_words_true_and_false_only() {
    let bit1 = Check::for_column(&ColumnType {
        boolean: Some(BooleanColumn::Bit),
        ..column("bit", None, None)
    })
    .unwrap();
    assert_eq!(bit1, Check::Bit { words: true });
    for ok in ["true", "FALSE", "True"] {
        assert_eq!(bit1.check(Value::Text(ok)), Ok(()), "{ok}");
    }
    for bad in ["", "1", "0", " true"] {
        assert!(bit1.check(Value::Text(bad)).is_err(), "{bad}");
    }
    // Other text is the server's to refuse: too long for one bit.
    assert_eq!(bit1.check(Value::Text("t")), Ok(()));
}

#[test]
fn floats_refuse_what_would_become_zero() {
    let float = Check::for_column(&column("float", None, None)).unwrap();
    let double = Check::for_column(&column("double", None, None)).unwrap();
    assert!(float.check(Value::Text("1e-50")).is_err());
    assert!(double.check(Value::Text("1e-50")).is_ok());
    assert!(double.check(Value::Text("1e-400")).is_err());
    for ok in ["0", "-0.0", "1.5", "nan", "1e400", "abc"] {
        assert!(
            float.check(Value::Text(ok)).is_ok() && double.check(Value::Text(ok)).is_ok(),
            "{ok}"
        );
    }
    assert_eq!(Check::for_column(&column("varchar", None, None)), None);
    // FLOAT(7,2) rounds to two decimals without a warning.
    let float2 = Check::for_column(&column("float", Some(2), None)).unwrap();
    assert!(float2.check(Value::Text("1.25")).is_ok());
    assert!(float2.check(Value::Text("1.005")).is_err());
    assert!(float2.check(Value::Text("1e-50")).is_err());
    // Digits the nearest float does not keep.
    assert!(float.check(Value::Text("16777217")).is_err());
    assert!(float.check(Value::Text("1.2345678")).is_ok());
    assert!(double.check(Value::Text("16777217")).is_ok());
    assert!(double.check(Value::Text("9007199254740993")).is_err());
    assert!(double.check(Value::Text("0.30000000000000004")).is_ok());
}

#[test]
fn text_columns_refuse_what_the_server_would_change() {
    let with_members = |data_type: &str, members: &[&str]| ColumnType {
        members: members.iter().map(|m| m.to_string()).collect(),
        ..column(data_type, None, None)
    };
    let refused = |check: &Check, value: &str| check.check(Value::Text(value)).is_err();
    let enumerated = Check::for_column(&with_members("enum", &["A", "b c"])).unwrap();
    assert!(!refused(&enumerated, "A") && !refused(&enumerated, "b c"));
    for bad in ["a", "A ", "1", "", "B C"] {
        assert!(refused(&enumerated, bad), "{bad}");
    }
    let set = Check::for_column(&with_members("set", &["x", "y"])).unwrap();
    for ok in ["", "x", "y,x", "x,x"] {
        assert!(!refused(&set, ok), "{ok}");
    }
    for bad in ["X", "x,", "3", "x, y"] {
        assert!(refused(&set, bad), "{bad}");
    }
    // A declaration that could not be read checks nothing.
    assert_eq!(Check::for_column(&with_members("enum", &[])), None);
    let year = Check::for_column(&column("year", None, None)).unwrap();
    assert!(!refused(&year, "2024") && !refused(&year, "0000") && !refused(&year, " 1999"));
    for bad in ["99", "0", "05", "20245", "2024.0"] {
        assert!(refused(&year, bad), "{bad}");
    }
    let char5 = Check::for_column(&column("char", None, None)).unwrap();
    assert!(!refused(&char5, " ab") && refused(&char5, "ab "));
    let binary = Check::for_column(&ColumnType {
        octet_length: Some(4),
        ..column("binary", None, None)
    })
    .unwrap();
    assert!(binary.check(Value::Bytes(&[0xff, 0, 1, 2])).is_ok());
    assert!(binary.check(Value::Text("abcde")).is_ok());
    assert!(binary.check(Value::Bytes(&[0xff])).is_err());
}
