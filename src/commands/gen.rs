//! `ringpipe gen`: the deterministic product catalogue.

use std::io::Write;

use ringpipe_xml::gen::{
    product_table_ddl, write_catalogue, Catalogue, Layout, PRODUCT_TABLE_DDL_POSTGRES,
};

use crate::cli::{DialectArg, GenArgs, LayoutArg};
use crate::error::CliError;

/// Writes the catalogue to a file or stdout, or prints its table's DDL.
pub fn run(args: GenArgs) -> Result<(), CliError> {
    if let Some(table) = &args.ddl {
        let ddl = match args.dialect.unwrap_or(DialectArg::Mariadb) {
            DialectArg::Mariadb => {
                ringpipe_mysql::Ident::new(table)?;
                product_table_ddl(table)
            }
            DialectArg::Postgres => PRODUCT_TABLE_DDL_POSTGRES
                .replace("{table}", &ringpipe_postgres::quote_table(table)?),
        };
        writeln!(std::io::stdout().lock(), "{ddl};")?;
        return Ok(());
    }
    let (Some(rows), Some(out)) = (args.rows, args.out) else {
        return Err(CliError::Usage("gen needs --rows and --out".into()));
    };
    let layout = match args.layout {
        LayoutArg::Elements => Layout::Elements,
        LayoutArg::Attributes => Layout::Attributes,
        LayoutArg::Fields => Layout::Fields,
    };
    let catalogue = Catalogue::new(rows).seed(args.seed).layout(layout);
    if out.as_os_str() == "-" {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        write_catalogue(&catalogue, &mut stdout)?;
        stdout.flush()?;
    } else {
        let bytes = catalogue.write_file(&out)?;
        log::info!(
            "wrote {} products ({bytes} bytes) to {}",
            rows,
            out.display()
        );
    }
    Ok(())
}
