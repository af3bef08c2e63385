//! One module per subcommand.

pub mod docs;
pub mod doctor;
mod ends;
pub mod gen;
pub mod import;
mod sniff;
pub mod status;
pub mod tune;
