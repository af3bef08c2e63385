//! The `ringpipe` command-line importer.

fn main() {
    println!("usage: ringpipe <import|doctor|gen> ...");
}
