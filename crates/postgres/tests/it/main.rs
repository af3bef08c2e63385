//! Behaviour tests against a real PostgreSQL (`RINGPIPE_TEST_PG_URL`,
//! default `postgres://postgres@127.0.0.1:5432/test`). Each test owns its
//! tables, named after the test, and drops them, also on failure.

mod common;

mod altered_types;
mod binary;
mod errors;
mod literals;
mod lost_commit;
mod modes;
mod rejects;
mod resume;
mod scalars;
mod stall;
mod values;
