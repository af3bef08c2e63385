//! The splitter against `csv-core`, the parser it replaces: random inputs
//! made of the bytes that matter (quotes, delimiters, line ends, multi-byte
//! text), read through buffers of random small sizes, must give the same
//! records, fields, quoting, lines, offsets and length faults, up to the
//! malformed field the splitter refuses where `csv-core` reads on.

use std::io::{BufRead, BufReader, Cursor};

use csv_core::ReadFieldResult;

use super::*;

/// One record as read: where it starts, its fields (bytes, quoted, line),
/// and the offset and line after it.
type Record = ((u64, u64), Vec<(Vec<u8>, bool, u64)>, (u64, u64));

/// What stopped a reading: a field too long (record, field), or a
/// malformed field in a record (only the splitter refuses those).
#[derive(Debug, PartialEq)]
enum Fault {
    TooLong(usize, usize),
    Malformed(usize, Malformed),
}

/// What reading a whole input gives: its records, then its fault.
type Outcome = (Vec<Record>, Option<Fault>);

/// The line of byte `at` of `input`: 1 and one more after each `\n`,
/// `\r` and `\r\n`. (`csv-core` counts `\n` only, so a file with `\r`
/// line ends would be all line 1.)
fn line_at(input: &[u8], at: usize) -> u64 {
    let ends = (0..at).filter(|&i| match input[i] {
        b'\r' => true,
        b'\n' => i == 0 || input[i - 1] != b'\r',
        _ => false,
    });
    1 + ends.count() as u64
}

/// The records of `input` by `csv-core`, field by field, as the source
/// read them before this splitter: empty lines skipped before each record
/// (so that its position is its first byte's), the first byte fed alone
/// (so that nothing is taken for a byte-order mark); lines by [`line_at`].
fn by_csv_core(input: &[u8], delimiter: u8, max: usize) -> Outcome {
    let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let (mut at, mut fed) = (0usize, false);
    let mut records = Vec::new();
    loop {
        // Skip line ends before the record.
        while at < input.len() && matches!(input[at], b'\r' | b'\n') {
            at += 1;
        }
        let record_at = (at as u64, line_at(input, at));
        let mut fields = Vec::new();
        loop {
            let line = line_at(input, at);
            let quoted = input.get(at) == Some(&b'"');
            let mut out = vec![0u8; max + 1];
            let mut len = 0;
            let end = loop {
                let rest = &input[at..];
                let rest = if fed {
                    rest
                } else {
                    &rest[..rest.len().min(1)]
                };
                if len == out.len() {
                    let fault = Fault::TooLong(records.len(), fields.len());
                    return (records, Some(fault));
                }
                let (result, nin, nout) = core.read_field(rest, &mut out[len..]);
                fed |= nin > 0;
                at += nin;
                len += nout;
                match result {
                    ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => {}
                    ReadFieldResult::Field { record_end } => break Some(record_end),
                    ReadFieldResult::End => break None,
                }
            };
            let Some(end) = end else {
                assert!(fields.is_empty(), "csv-core ends records before the input");
                return (records, None);
            };
            if len > max {
                let fault = Fault::TooLong(records.len(), fields.len());
                return (records, Some(fault));
            }
            fields.push((out[..len].to_vec(), quoted, line));
            if end {
                break;
            }
        }
        records.push((record_at, fields, (at as u64, line_at(input, at))));
    }
}

/// The records of `input` by [`Fields`], through a buffer of `capacity`.
fn by_fields(input: &[u8], delimiter: u8, max: usize, capacity: usize) -> Outcome {
    let reader = BufReader::with_capacity(capacity, Cursor::new(input.to_vec()));
    let mut fields = Fields::new(reader, delimiter, 0, 1, max);
    let mut records = Vec::new();
    loop {
        match fields.next_record(usize::MAX) {
            Ok(true) => {}
            Ok(false) => return (records, None),
            Err(FieldError::TooLong) => {
                let fault = Fault::TooLong(records.len(), fields.count());
                return (records, Some(fault));
            }
            Err(FieldError::Malformed(how)) => {
                let fault = Fault::Malformed(records.len(), how);
                return (records, Some(fault));
            }
            Err(FieldError::Io(e)) => panic!("{e}"),
            Err(FieldError::TooManyFields) => panic!("no field limit was set"),
        }
        let kept = (0..fields.kept())
            .map(|i| {
                let (range, quoted, line) = fields.field_at(i);
                (fields.text()[range].to_vec(), quoted, line)
            })
            .collect();
        let after = (fields.offset(), fields.line());
        records.push((fields.record_at(), kept, after));
    }
}

/// A small deterministic generator (xorshift).
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn random_input(random: &mut Random, delimiter: u8) -> Vec<u8> {
    let pieces: [&[u8]; 12] = [
        b"a",
        b"bc",
        "\u{e9}".as_bytes(),
        "\u{1F600}".as_bytes(),
        b"\"",
        b"\"\"",
        b"\r",
        b"\n",
        b"\r\n",
        b" ",
        &[delimiter],
        &[delimiter],
    ];
    let mut input = Vec::new();
    for _ in 0..random.below(80) {
        input.extend_from_slice(pieces[random.below(pieces.len())]);
    }
    input
}

/// Well-formed CSV: fields unquoted (no quote, delimiter or line end in
/// them) or quoted (their quotes doubled), records ended by any line end.
fn well_formed_input(random: &mut Random, delimiter: u8) -> Vec<u8> {
    let texts: [&[u8]; 7] = [
        b"",
        b"a",
        b"bc d",
        "\u{e9}".as_bytes(),
        b"\"",
        b"\r\n",
        b"\n",
    ];
    let mut input = Vec::new();
    for _ in 0..random.below(12) {
        for field in 0..1 + random.below(4) {
            if field > 0 {
                input.push(delimiter);
            }
            let mut text = Vec::new();
            for _ in 0..random.below(4) {
                text.extend_from_slice(texts[random.below(texts.len())]);
            }
            text.extend_from_slice(&[delimiter][..random.below(2)]);
            let plain = !text.iter().any(|b| matches!(b, b'"' | b'\r' | b'\n'))
                && !text.contains(&delimiter);
            if plain && random.below(2) == 0 && !text.is_empty() {
                input.extend_from_slice(&text);
            } else {
                input.push(b'"');
                for &b in &text {
                    if b == b'"' {
                        input.push(b'"');
                    }
                    input.push(b);
                }
                input.push(b'"');
            }
        }
        input.extend_from_slice([&b"\n"[..], b"\r\n", b"\r"][random.below(3)]);
    }
    input
}

#[test]
fn random_inputs_split_as_csv_core_splits_them() {
    // A longer hunt: RINGPIPE_CSV_FUZZ_SECS=600 RINGPIPE_CSV_FUZZ_SEED=7.
    let hunt = ringpipe_hunt::Hunt::from_env("RINGPIPE_CSV_FUZZ", 20_000, 0x9e37_79b9_7f4a_7c15);
    let mut random = Random(hunt.seed() | 1);
    let mut whole = 0;
    for case in 0.. {
        if !hunt.more(case) {
            hunt.report(case, &format!("inputs, {whole} of them compared whole"));
            break;
        }
        let delimiter = [b',', b';', b'\t'][random.below(3)];
        let well_formed = case % 2 == 0;
        let input = match well_formed {
            true => well_formed_input(&mut random, delimiter),
            false => random_input(&mut random, delimiter),
        };
        let max = [0, 1, 3, 8, 1 << 20][random.below(5)];
        let capacity = 1 + random.below(9);
        let expected = by_csv_core(&input, delimiter, max);
        let got = by_fields(&input, delimiter, max, capacity);
        let context = format!(
            "case {case}: input {:?}, delimiter {:?}, max {max}, buffer {capacity}",
            String::from_utf8_lossy(&input),
            delimiter as char
        );
        match got.1 {
            // Refused where csv-core reads on: the same records before it.
            Some(Fault::Malformed(record, _)) => {
                assert!(!well_formed, "{context}");
                let before = &expected.0[..record.min(expected.0.len())];
                assert_eq!(got.0, before, "{context}");
            }
            _ => {
                assert_eq!(got, expected, "{context}");
                whole += 1;
            }
        }
    }
    // Most inputs are compared whole: all well-formed ones, and the random
    // ones without a malformed field.
    assert!(whole > 12_000, "{whole} compared whole");
}

#[test]
fn text_after_a_closing_quote_and_an_open_quote_at_the_end_are_refused() {
    let cases = [
        ("a,\"b\"c,d\n", 0, Malformed::AfterQuote),
        ("x\n\"a\" ,b\n", 1, Malformed::AfterQuote),
        ("x\n1,\"open\n2,b\n", 1, Malformed::OpenQuote),
        ("\"a\"\"", 0, Malformed::OpenQuote),
    ];
    for (input, record, how) in cases {
        for capacity in [1, 3, 64] {
            let (records, fault) = by_fields(input.as_bytes(), b',', 100, capacity);
            assert_eq!(records.len(), record, "{input:?}");
            assert_eq!(fault, Some(Fault::Malformed(record, how)), "{input:?}");
        }
    }
}

/// Records of `(field, quoted)`.
type Expected<'a> = &'a [&'a [(&'a str, bool)]];

#[test]
fn quoting_rules() {
    let cases: [(&str, Expected); 6] = [
        ("a,\"b,c\"\n", &[&[("a", false), ("b,c", true)]]),
        ("\"a\"\"b\"\r\nc", &[&[("a\"b", true)], &[("c", false)]]),
        ("\"a\",c\"d\n", &[&[("a", true), ("c\"d", false)]]),
        (
            "\"x\ny\"\n\n\r\nz,",
            &[&[("x\ny", true)], &[("z", false), ("", false)]],
        ),
        ("\"\"", &[&[("", true)]]),
        (",\r", &[&[("", false), ("", false)]]),
    ];
    for (input, records) in cases {
        let (got, fault) = by_fields(input.as_bytes(), b',', 100, 4);
        assert_eq!(fault, None, "{input:?}");
        let got: Vec<Vec<(String, bool)>> = got
            .into_iter()
            .map(|(_, fields, _)| {
                fields
                    .into_iter()
                    .map(|(bytes, quoted, _)| (String::from_utf8(bytes).unwrap(), quoted))
                    .collect()
            })
            .collect();
        let expected: Vec<Vec<(String, bool)>> = records
            .iter()
            .map(|r| r.iter().map(|&(f, q)| (f.to_owned(), q)).collect())
            .collect();
        assert_eq!(got, expected, "{input:?}");
    }
}

#[test]
fn fields_past_the_kept_ones_are_counted_not_kept() {
    let reader = Cursor::new(b"a,b,c,d\ne\n".to_vec());
    let mut fields = Fields::new(reader, b',', 0, 1, 10);
    assert!(fields.next_record(2).unwrap());
    assert_eq!(
        (fields.count(), fields.kept(), fields.text()),
        (4, 2, &b"ab"[..])
    );
    assert!(fields.next_record(2).unwrap());
    assert_eq!((fields.count(), fields.kept()), (1, 1));
    assert!(!fields.next_record(2).unwrap());
}

#[test]
fn the_scan_finds_the_boundaries_the_regions_read() {
    let text = "h1,h2\n1,\"a\nb\"\r\n2,c\n\n3,\"d,\"\"e\"\n4,f";
    let mut boundaries = Vec::new();
    let mut reader = Cursor::new(text.as_bytes());
    scan(
        b',',
        &mut reader as &mut dyn BufRead,
        0,
        &[1, 7, 20, 200],
        &mut |b| boundaries.push(b),
    );
    let (records, _) = by_fields(text.as_bytes(), b',', 100, 64);
    // A boundary follows a whole line end: a `\r\n`'s `\n` too.
    let whole = |offset: u64| match text.as_bytes()[offset as usize - 1..] {
        [b'\r', b'\n', ..] => offset + 1,
        _ => offset,
    };
    let ends: Vec<Boundary> = records
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, (_, _, (offset, line)))| Boundary {
            offset: whole(*offset),
            line: *line,
            records_before: i as u64,
        })
        .collect();
    // Target 1 falls in the header: the first record's end is the first
    // boundary. Target 7 falls in that record, whose end is taken: the
    // second's. Target 20 falls in the third, 200 past the end.
    assert_eq!(boundaries, [ends[0], ends[1], ends[2]]);
}

/// `(first field, line)` of each record of `input` read through buffers of
/// 1 to 8 bytes, the same for all of them, with empty lines kept if `keep`.
fn lines(input: &str, keep: bool) -> Vec<(String, u64)> {
    let read = |capacity| {
        let reader = BufReader::with_capacity(capacity, Cursor::new(input.as_bytes().to_vec()));
        let mut fields = Fields::new(reader, b',', 0, 1, 100);
        fields.keep_empty_lines(keep);
        let mut records = Vec::new();
        while fields.next_record(1).unwrap() {
            let first = String::from_utf8(fields.text().to_vec()).unwrap();
            records.push((first, fields.record_at().1));
        }
        records
    };
    let records = read(1);
    for capacity in 2..=8 {
        assert_eq!(read(capacity), records, "{input:?}, buffer {capacity}");
    }
    records
}

/// `records` as `lines` gives them.
fn owned(records: &[(&str, u64)]) -> Vec<(String, u64)> {
    records.iter().map(|&(f, l)| (f.to_owned(), l)).collect()
}

#[test]
fn a_lone_cr_ends_a_line_and_a_crlf_one_wherever_a_buffer_ends() {
    let input = "a\rb\r\nc\n\"x\ry\r\nz\"\rd\r\re\n";
    let expected = [
        ("a", 1),
        ("b", 2),
        ("c", 3),
        ("x\ry\r\nz", 4),
        ("d", 7),
        ("e", 9),
    ];
    assert_eq!(lines(input, false), owned(&expected));
}

#[test]
fn kept_empty_lines_are_records_of_one_empty_field() {
    let input = "a\n\nb\r\n\r\n\rc\r\r\n\"\"\n\n";
    let expected = [
        ("a", 1),
        ("", 2),
        ("b", 3),
        ("", 4),
        ("", 5),
        ("c", 6),
        ("", 7),
        ("", 8),
        ("", 9),
    ];
    assert_eq!(lines(input, true), owned(&expected));
    // The end of input after a line end is no record, with or without it.
    assert_eq!(lines("a\r\n", true), owned(&[("a", 1)]));
    assert_eq!(lines("a", true), owned(&[("a", 1)]));
    assert_eq!(lines("", true), owned(&[]));
    assert_eq!(lines("\n", true), owned(&[("", 1)]));
    // Skipped, they are no records.
    assert_eq!(
        lines(input, false),
        owned(&[("a", 1), ("b", 3), ("c", 6), ("", 8)])
    );
}

#[test]
fn a_record_of_more_fields_than_allowed_stops_at_the_first_too_many() {
    let mut fields = Fields::new(
        Cursor::new(b"a,b\nc,d,\"e\n\",f\n".to_vec()),
        b',',
        0,
        1,
        100,
    );
    assert!(fields.next_record_at_most(2).unwrap());
    assert_eq!(fields.count(), 2);
    let error = fields.next_record_at_most(2).unwrap_err();
    assert!(matches!(error, FieldError::TooManyFields), "{error:?}");
    // Two fields read, the third not: its line, and what it left unread.
    assert_eq!((fields.count(), fields.line(), fields.offset()), (2, 2, 8));
}
