//! The wire client against broken and hostile servers: one test per known
//! attack, then a deterministic mutation loop over a whole session
//! (handshake, OK/ERR/EOF, a result set, a prepare, bulk replies) that must
//! never panic. `fuzz/fuzz_targets/wire_session.rs` runs the same entry
//! point under libFuzzer where a nightly toolchain exists.

use std::time::{Duration, Instant};

use super::fuzz::{greeting, ok, packet, script, wire_session};
use crate::MysqlError;

/// The script with packet `index` replaced by `payload` (same sequence).
fn with_packet(index: usize, payload: &[u8]) -> Vec<u8> {
    let mut packets = script();
    let sequence = packets[index][3];
    packets[index] = packet(sequence, payload);
    packets.concat()
}

fn protocol_error(server: &[u8]) -> String {
    match wire_session(server) {
        Err(e @ MysqlError::Protocol { .. }) => e.to_string(),
        other => panic!("a protocol error, got {other:?}"),
    }
}

#[test]
fn the_well_behaved_script_is_a_whole_session() {
    assert!(wire_session(&script().concat()).unwrap());
}

#[test]
fn a_huge_column_count_is_refused_before_anything_is_sized_by_it() {
    let huge = [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
    let e = protocol_error(&with_packet(2, &huge));
    assert!(e.contains("the limit is 4096"), "{e}");
    let e = protocol_error(&with_packet(2, &[0xFC, 0x01, 0x10]));
    assert!(e.contains("4097 columns"), "{e}");
}

#[test]
fn an_error_among_column_definitions_is_the_servers_error() {
    let mut err = vec![0xFF, 0x7A, 0x04, b'#'];
    err.extend_from_slice(b"HY000Out of memory");
    match wire_session(&with_packet(3, &err)) {
        Err(MysqlError::Server { code: 1146, .. }) => {}
        other => panic!("the server's error 1146, got {other:?}"),
    }
}

#[test]
fn more_definitions_than_announced_are_a_protocol_error() {
    let mut packets = script();
    // The EOF after the one definition becomes another definition.
    packets[4] = packets[3].clone();
    packets[4][3] = 3;
    let e = protocol_error(&packets.concat());
    assert!(e.contains("more than 1 definitions"), "{e}");
}

#[test]
fn a_packet_out_of_sequence_is_a_protocol_error() {
    let mut packets = script();
    packets[1][3] = 3;
    let e = protocol_error(&packets.concat());
    assert!(e.contains("sequence number 3, expected 2"), "{e}");
}

#[test]
fn a_reply_past_the_limit_is_refused_without_reading_it() {
    let mut packets = script();
    packets.truncate(2);
    packets.push(vec![0xFF, 0xFF, 0xFF, 1]);
    packets.push(vec![0; 0xFF_FFFF]);
    packets.push(vec![0xFF, 0xFF, 0xFF, 2]);
    let e = protocol_error(&packets.concat());
    assert!(e.contains("the limit is 16777216 bytes"), "{e}");
}

/// An authentication switch to `plugin` with a 32-byte nonce.
fn switch_to(plugin: &[u8]) -> Vec<u8> {
    let mut switch = vec![0xFE];
    switch.extend_from_slice(plugin);
    switch.push(0);
    switch.extend_from_slice(&[7; 32]);
    switch
}

#[test]
fn a_switch_to_ed25519_is_answered_by_the_wire_client() {
    let mut packets = script();
    packets.splice(
        1..2,
        [packet(2, &switch_to(b"client_ed25519")), packet(4, &ok())],
    );
    assert!(wire_session(&packets.concat()).unwrap());
}

#[test]
fn other_authentication_plugins_go_to_the_driver_without_a_panic() {
    for plugin in [&b"parsec"[..], b"dialog", b"", b"mysql_clear_password"] {
        let hello = packet(
            0,
            &greeting(b"5.5.5-10.11.6-MariaDB", b"mysql_native_password"),
        );
        let outcome = wire_session(&[hello, packet(2, &switch_to(plugin))].concat());
        assert!(matches!(outcome, Ok(false)), "{outcome:?}");
        // Offered in the greeting itself.
        let hello = packet(0, &greeting(b"5.5.5-10.11.6-MariaDB", plugin));
        let outcome = wire_session(&[hello, packet(2, &ok())].concat());
        assert!(!matches!(outcome, Ok(true)), "{outcome:?}");
    }
}

#[test]
fn a_version_of_unicode_digits_does_not_panic() {
    // U+0661 ARABIC-INDIC DIGIT ONE matches `\d` in mysql_common's version
    // pattern, and its own parse of the digits would then panic.
    let hello = greeting("5.5.5-\u{661}.\u{661}.\u{661}-MariaDB".as_bytes(), b"");
    let outcome = wire_session(&[packet(0, &hello), packet(2, &ok())].concat());
    assert!(outcome.is_err(), "{outcome:?}");
}

/// xorshift64*: a fixed, seedable stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that mean something at the start of a payload or a length.
const INTERESTING: &[u8] = &[0x00, 0x01, 0x7F, 0x80, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF];

/// One to three mutations of the well-behaved script.
fn mutant(rng: &mut Rng) -> Vec<u8> {
    let mut packets = script();
    for _ in 0..=rng.below(3) {
        let i = rng.below(packets.len());
        if packets[i].len() < 4 {
            continue;
        }
        match rng.below(8) {
            0 => {
                let p = &mut packets[i];
                let at = rng.below(p.len());
                p[at] ^= 1 << rng.below(8);
            }
            1 => {
                let p = &mut packets[i];
                let at = rng.below(p.len());
                p[at] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let keep = rng.below(packets[i].len());
                packets[i].truncate(keep);
            }
            3 => {
                let len = (rng.next() as u32 & 0xFF_FFFF).to_le_bytes();
                packets[i][..3].copy_from_slice(&len[..3]);
            }
            4 => {
                let copy = packets[rng.below(packets.len())].clone();
                packets.insert(i, copy);
            }
            5 => {
                packets.remove(i);
            }
            6 => {
                let p = &mut packets[i];
                let at = rng.below(p.len() + 1);
                let junk: Vec<u8> = (0..rng.below(16)).map(|_| rng.next() as u8).collect();
                p.splice(at..at, junk);
            }
            _ => {
                let p = &mut packets[i];
                if p.len() > 4 {
                    p[4] = INTERESTING[rng.below(INTERESTING.len())];
                }
            }
        }
        if packets.is_empty() {
            break;
        }
    }
    packets.concat()
}

#[test]
fn no_mutation_of_a_session_makes_the_client_panic_or_hang() {
    // A longer hunt: RINGPIPE_WIRE_FUZZ_SECS=600 RINGPIPE_WIRE_FUZZ_SEED=7.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let budget = Duration::from_secs(env("RINGPIPE_WIRE_FUZZ_SECS").unwrap_or(3));
    let max_cases = if env("RINGPIPE_WIRE_FUZZ_SECS").is_some() {
        u32::MAX
    } else {
        20_000
    };
    let started = Instant::now();
    let mut rng = Rng(env("RINGPIPE_WIRE_FUZZ_SEED").unwrap_or(0x005E_ED0F_5EED) | 1);
    let mut cases = 0u32;
    while cases < max_cases && started.elapsed() < budget {
        let input = mutant(&mut rng);
        let case = Instant::now();
        let outcome = std::panic::catch_unwind(|| wire_session(&input));
        assert!(
            outcome.is_ok(),
            "case {cases} panicked on server bytes {input:02x?}"
        );
        assert!(case.elapsed() < Duration::from_secs(2), "case {cases} hung");
        cases += 1;
    }
    assert!(cases >= 200, "only {cases} cases in {budget:?}");
    eprintln!("{cases} mutated sessions in {:?}", started.elapsed());
}

/// The fuzz target's seed corpus, in the repository.
fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/wire_session")
}

/// The seeds: the well-behaved session and one per known attack.
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let hello = packet(
        0,
        &greeting(b"5.5.5-10.11.6-MariaDB", b"mysql_native_password"),
    );
    let mut out_of_order = script();
    out_of_order[1][3] = 3;
    let mut ed25519 = script();
    ed25519.splice(
        1..2,
        [packet(2, &switch_to(b"client_ed25519")), packet(4, &ok())],
    );
    let mut long_auth_data = greeting(b"5.5.5-10.11.6-MariaDB", b"mysql_native_password");
    let at = long_auth_data.iter().position(|&b| b == 0).unwrap() + 21;
    long_auth_data[at] = 0x80;
    vec![
        ("session", script().concat()),
        (
            "huge_column_count",
            with_packet(2, &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),
        ),
        (
            "split_past_limit",
            [&script().concat()[..120], &[0xFF, 0xFF, 0xFF, 1, 0, 0]].concat(),
        ),
        ("sequence_out_of_order", out_of_order.concat()),
        ("switch_ed25519", ed25519.concat()),
        (
            "switch_parsec",
            [hello.clone(), packet(2, &switch_to(b"parsec"))].concat(),
        ),
        (
            "error_in_definitions",
            with_packet(3, b"\xFF\x7A\x04#HY000gone"),
        ),
        (
            "unicode_version",
            packet(0, &greeting("5.5.5-\u{661}.1.1-MariaDB".as_bytes(), b"")),
        ),
        ("auth_data_length_128", packet(0, &long_auth_data)),
    ]
}

#[test]
fn the_committed_seed_corpus_runs_clean() {
    let mut files = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let input = std::fs::read(entry.unwrap().path()).unwrap();
        let outcome = std::panic::catch_unwind(|| wire_session(&input));
        assert!(outcome.is_ok(), "a seed panicked: {input:02x?}");
        files += 1;
    }
    assert!(files >= seeds().len());
}

/// Rewrites the seed corpus: `cargo test -p ringpipe-mysql --lib
/// write_seed_corpus -- --ignored`.
#[test]
#[ignore = "writes fuzz/seeds/wire_session"]
fn write_seed_corpus() {
    std::fs::create_dir_all(corpus_dir()).unwrap();
    for (name, bytes) in seeds() {
        std::fs::write(corpus_dir().join(name), bytes).unwrap();
    }
}

#[test]
fn an_authentication_data_length_past_127_is_refused() {
    let seed = seeds()
        .into_iter()
        .find(|(name, _)| *name == "auth_data_length_128");
    let e = protocol_error(&seed.unwrap().1);
    assert!(e.contains("authentication data length of 128"), "{e}");
}
