//! Behaviour tests against a real server (`RINGPIPE_TEST_MYSQL_URL`,
//! default `mysql://root@127.0.0.1:3306/test`). Each test owns its tables,
//! named after the test, so tests run in parallel.

mod common;
mod proxy;

mod altered_types;
mod auth;
mod bad_records;
mod binary;
mod booleans;
mod checkpoints;
mod escaping;
mod faults;
mod galera;
mod limits;
mod modes;
mod retry;
mod scalars;
mod schema;
mod server;
mod typed;
mod wire;
