//! Behaviour tests of `ringpipe-xml`, built as one test binary.

mod allocations;
mod binary;
mod common;
mod conformance;
mod debian;
mod differential;
mod errors;
mod fields;
mod fuzz_smoke;
mod inputs;
mod limits;
mod mapping;
mod paths;
mod regions;
