//! The root package's integration tests, built as one binary: the
//! `ringpipe` binary as a user runs it ([`cli`]), exactly-once resume after
//! `kill -9` ([`resume`]), the reliability scenarios ([`reliability`]), no
//! password in any output ([`secrets_cli`]) and the XML source against the
//! server's own XML paths ([`server_differential`]), the XML mapping flags
//! ([`xml_cli`]), CSV into PostgreSQL and JSON Lines into MariaDB
//! ([`ends_cli`]), every source into every sink killed and resumed
//! ([`ends_resume`]) and through the library API ([`ends_api`]) and XML from real producers, mariadb-dump and PostgreSQL
//! ([`xml_producers`]), CSV and JSON Lines from a real producer,
//! PostgreSQL ([`csv_producers`], [`json_producers`]), values a server would alter refused by both sinks
//! ([`altered`]), the first or last record of a key kept in ignore, upsert
//! and replace modes ([`order`]), the reject file across a resume
//! ([`rejects`]), all against the real
//! MariaDB (`RINGPIPE_TEST_MYSQL_URL`, default the local test server).
//! Each test owns its tables.
//!
//! Run one part with a filter: `cargo test --test it -- reliability::`.

mod altered;
mod cli;
mod common;
mod csv_producers;
mod ends_api;
mod ends_cli;
mod ends_resume;
mod json_producers;
mod messages;
mod order;
mod parts;
mod pg_cli;
mod rejects;
mod reliability;
mod resume;
mod secrets_cli;
mod server_differential;
mod tune;
mod xml_cli;
mod xml_producers;
