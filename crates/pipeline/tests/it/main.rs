//! Integration tests of ringpipe-pipeline, built as one binary.

mod parts;
mod pipeline;
mod regions;
mod resume;
mod support;
