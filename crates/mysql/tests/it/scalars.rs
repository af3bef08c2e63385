//! The sink against MariaDB's own conversions, on random spellings: a
//! value lands exactly when its column stores what the widest type of its
//! kind reads (`DECIMAL(8,2)` against `DECIMAL(65,30)`, `TIME(1)` against
//! `TIME(6)`, `DATETIME(0)` against `DATETIME(6)`), and is refused when
//! the column would store it otherwise, since MariaDB drops a time's
//! extra fractional digits without a warning. (A value the server cannot
//! read at all is refused too; a value it reads with a warning is left
//! out of the comparison.)

use mysql::prelude::Queryable;
use ringpipe_hunt::spell::{number, seconds, time_of_day};
use ringpipe_hunt::Hunt;
use ringpipe_mysql::{prepare, SinkConfig};
use ringpipe_pipeline::{RecordPosition, Row, Sink};

use crate::common::*;

/// `RINGPIPE_MYSQL_SCALARS_SECS` runs each type for that long, from
/// `RINGPIPE_MYSQL_SCALARS_SEED` ([`Hunt`]).
const HUNT: &str = "RINGPIPE_MYSQL_SCALARS";

/// Rounds of 2,000 random values from `make` (one round, or as [`HUNT`]
/// asks), each imported into a fresh `column_type` column and what landed
/// compared with the server's casts to `column_type` and to `wide`.
fn compare(name: &str, column_type: &str, wide: &str, make: impl Fn(&mut fastrand::Rng) -> String) {
    let hunt = Hunt::from_env(HUNT, 1, 3);
    let mut random = fastrand::Rng::with_seed(hunt.seed());
    let mut rounds = 0;
    while hunt.more(rounds) {
        let values: Vec<String> = (0..2_000).map(|_| make(&mut random)).collect();
        round(name, column_type, wide, &values);
        rounds += 1;
    }
    hunt.report(rounds * 2_000, column_type);
}

/// One round of [`compare`].
fn round(name: &str, column_type: &str, wide: &str, values: &[String]) {
    let table = format!("rp_mysql_scalars_{name}");
    let _table = MysqlTable::fresh(&table);
    create_with(&table, [("v", column_type)]);
    let dir = tempfile::tempdir().unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let config = SinkConfig::new(url(), &table, &["id", "v"])
        .max_bad(values.len() as u64)
        .reject_file(&rejects);
    let mut sink = prepare(&config).unwrap().connect_sink(0).unwrap();
    let mut row = Row::with_columns(2);
    for (batch, chunk) in values.chunks(500).enumerate() {
        for (i, value) in chunk.iter().enumerate() {
            let id = batch * 500 + i + 1;
            row.clear();
            row.set(0, &id.to_string());
            row.set(1, value);
            row.set_position(RecordPosition {
                record: id as u64,
                line: id as u64,
                column: 1,
                byte_offset: 0,
            });
            sink.write(&row).unwrap();
        }
        commit(&mut sink).unwrap();
    }
    sink.close().unwrap();

    let mut conn = conn();
    // A statement without a table leaves the warnings of the one before
    // it in place: the casts read from a table of one row.
    conn.query_drop("CREATE TEMPORARY TABLE one (x INT); INSERT INTO one VALUES (1)")
        .unwrap();
    let stored: std::collections::BTreeMap<u64, String> = conn
        .query(format!("SELECT id, CAST(v AS CHAR) FROM `{table}`"))
        .unwrap()
        .into_iter()
        .collect();
    let (mut exact, mut altered) = (0, 0);
    for (i, value) in values.iter().enumerate() {
        let id = i as u64 + 1;
        let read: Option<String> = conn
            .exec_first(
                format!("SELECT CAST(CAST(? AS {wide}) AS CHAR) FROM one"),
                (value,),
            )
            .unwrap()
            .flatten();
        let warnings: u64 = conn.query_first("SELECT @@warning_count").unwrap().unwrap();
        let kept: Option<String> = conn
            .exec_first(
                format!("SELECT CAST(CAST(? AS {column_type}) AS CHAR) FROM one"),
                (value,),
            )
            .unwrap()
            .flatten();
        let landed = stored.get(&id);
        match read {
            Some(_) if warnings > 0 => {} // read with a warning: not compared
            None => assert_eq!(landed, None, "{value:?} is no {wide}, yet it landed"),
            Some(read) => {
                let same = Some(&read) == kept.as_ref() || same_value(&read, kept.as_deref());
                match same {
                    true => {
                        assert!(landed.is_some(), "{value:?} ({read}) is exact, yet refused");
                        exact += 1;
                    }
                    false => {
                        assert_eq!(landed, None, "{value:?} ({read}) landed as {kept:?}");
                        altered += 1;
                    }
                }
            }
        }
    }
    assert!(
        exact > 200 && altered > 50,
        "{exact} exact, {altered} altered"
    );
}

/// Whether the narrow type's text is the wide one's without trailing
/// fractional zeros (`1.50` against `1.500000`).
fn same_value(wide: &str, narrow: Option<&str>) -> bool {
    let trim = |text: &str| match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
        false => text.to_owned(),
    };
    narrow.is_some_and(|narrow| trim(wide) == trim(narrow))
}

#[test]
fn mysql_scalars_decimal_scale_is_checked_as_the_server_rounds() {
    compare("decimal", "DECIMAL(8,2)", "DECIMAL(65,30)", number);
}

#[test]
fn mysql_scalars_time_digits_are_checked_as_the_server_cuts_them() {
    let make = |r: &mut fastrand::Rng| match r.u8(..4) {
        0 => format!("{}{:02}{}", r.u8(..24), r.u8(..60), seconds(r)),
        _ => time_of_day(r),
    };
    compare("time", "TIME(1)", "TIME(6)", make);
}

#[test]
fn mysql_scalars_datetime_digits_are_checked_as_the_server_cuts_them() {
    let make = |r: &mut fastrand::Rng| {
        let date = format!("2024-{:02}-{:02}", r.u8(1..13), r.u8(1..29));
        match r.u8(..5) {
            0 => date,
            1 => format!(
                "{}{}",
                date.replace('-', ""),
                time_of_day(r).replace(':', "")
            ),
            _ => format!("{date}{}{}", [" ", "T"][r.usize(..2)], time_of_day(r)),
        }
    };
    compare("datetime", "DATETIME(0)", "DATETIME(6)", make);
}
