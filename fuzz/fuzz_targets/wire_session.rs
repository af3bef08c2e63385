//! Plays arbitrary bytes as everything a MariaDB server sends to the wire
//! client over one session (greeting, authentication, OK/ERR/EOF, a result
//! set, a prepare, bulk replies): the client must return a value or a typed
//! error, never panic, hang or allocate past its limits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ringpipe_mysql::wire_fuzz::wire_session(data);
});
