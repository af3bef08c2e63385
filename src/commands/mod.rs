//! One module per subcommand.

pub mod doctor;
pub mod gen;
pub mod import;
