//! ringpipe-text's integration tests, built as one binary: CSV ([`csv`])
//! and JSON Lines ([`jsonl`]) reading and refusing, opening inputs
//! ([`input`]), regions read in parallel ([`regions`]) and the same
//! catalogue as XML, CSV and JSON Lines ([`differential`]).

mod common;
mod csv;
mod differential;
mod input;
mod jsonl;
mod regions;
