//! Integration tests of ringpipe-ring, built as one binary: the stage
//! graph, lifecycle and failures, pollers, rewinds, what a service needs,
//! and randomized stress.

mod common;

mod graph;
mod lifecycle;
mod poller;
mod rewind;
mod service;
mod stress;
