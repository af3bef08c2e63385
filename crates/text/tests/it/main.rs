//! ringpipe-text's integration tests, built as one binary: CSV ([`csv`])
//! and JSON Lines ([`jsonl`]) reading and refusing, opening inputs
//! ([`input`]), regions read in parallel ([`regions`]), the same
//! catalogue as XML, CSV and JSON Lines ([`differential`]) and arbitrary
//! bytes through both ([`hostile`]), fields no column takes counted
//! ([`usage`]).

mod common;
mod csv;
mod differential;
mod hostile;
mod input;
mod jsonl;
mod regions;
mod usage;
