//! Deterministic, realistic product catalogues for tests and benchmarks.
//!
//! A [`Catalogue`] of N products writes the same bytes for the same seed,
//! about a million records in a few seconds. Values are chosen to be hard
//! for importers (multi-byte text, emoji, quotes, backslashes, entities,
//! CDATA, tabs and line ends, an SQL injection attempt, empty strings and
//! `NULL`s) while fitting [`PRODUCT_TABLE_DDL`]'s column types.
//!
//! # Examples
//!
//! ```
//! use ringpipe_pipeline::{Row, Source};
//! use ringpipe_xml::gen::{write_catalogue, Catalogue, Layout};
//! use ringpipe_xml::XmlSource;
//!
//! let catalogue = Catalogue::new(3).seed(7).layout(Layout::Fields);
//! let mut xml = Vec::new();
//! write_catalogue(&catalogue, &mut xml)?;
//!
//! let mut source = XmlSource::from_reader("gen", std::io::Cursor::new(xml), catalogue.config())?;
//! let mut row = Row::with_columns(9);
//! for product in catalogue.products() {
//!     assert!(source.next_row(&mut row)?);
//!     let values = product.values();
//!     for (i, want) in values.iter().enumerate() {
//!         assert_eq!(row.text(i), want.as_deref());
//!     }
//! }
//! assert!(!source.next_row(&mut row)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod product;
pub(crate) mod rng;
mod write;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub use product::Product;

use crate::XmlConfig;

/// The product table's columns, in row order.
pub const PRODUCT_COLUMNS: [&str; 9] = [
    "id",
    "sku",
    "name",
    "description",
    "price",
    "quantity",
    "category",
    "currency",
    "updated",
];

/// `CREATE TABLE` for the products, with `{table}` standing for the name.
///
/// `STATS_AUTO_RECALC=0` keeps MariaDB's bulk-load path from recomputing
/// statistics on a second thread during the import.
pub const PRODUCT_TABLE_DDL: &str = "CREATE TABLE IF NOT EXISTS {table} (
  id BIGINT NOT NULL,
  sku VARCHAR(32) NOT NULL,
  name VARCHAR(255) NOT NULL,
  description TEXT NULL,
  price DECIMAL(12,2) NULL,
  quantity INT NULL,
  category VARCHAR(64) NULL,
  currency CHAR(3) NULL,
  updated DATETIME NULL,
  PRIMARY KEY (id),
  UNIQUE KEY sku (sku),
  KEY category (category)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin STATS_AUTO_RECALC=0";

/// The products' table for PostgreSQL, with `{table}` standing for the
/// name, quoted by the caller: [`PRODUCT_TABLE_DDL`]'s columns, primary key
/// and unique `sku` in PostgreSQL's types, without the index on `category`
/// (the PostgreSQL benchmark's table, as measured).
pub const PRODUCT_TABLE_DDL_POSTGRES: &str = "CREATE TABLE IF NOT EXISTS {table} (
  id bigint PRIMARY KEY,
  sku varchar(32) NOT NULL UNIQUE,
  name varchar(255) NOT NULL,
  description text,
  price numeric(12,2),
  quantity int,
  category varchar(64),
  currency char(3),
  updated timestamp
)";

/// [`PRODUCT_TABLE_DDL`] for `table`, quoted with backticks (a `db.table`
/// name is quoted part by part).
pub fn product_table_ddl(table: &str) -> String {
    let quoted: Vec<String> = table
        .split('.')
        .map(|part| format!("`{}`", part.replace('`', "``")))
        .collect();
    PRODUCT_TABLE_DDL.replace("{table}", &quoted.join("."))
}

/// How records spell their fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    /// `<product id="…" currency="…">` with a child element per other
    /// field, pretty-printed; missing fields are left out.
    #[default]
    Elements,
    /// `<product id="…" sku="…" …/>`: every field an attribute.
    Attributes,
    /// The `mysqldump --xml` form: `<row>` records of
    /// `<field name="…">` elements, `NULL` as `xsi:nil="true"`.
    Fields,
}

impl Layout {
    /// The record element's name: `row` for [`Layout::Fields`], else `product`.
    pub fn row_tag(self) -> &'static str {
        match self {
            Layout::Fields => "row",
            Layout::Elements | Layout::Attributes => "product",
        }
    }
}

/// A catalogue to generate: how many products, from which seed, in which layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalogue {
    records: u64,
    seed: u64,
    layout: Layout,
    extras: bool,
}

impl Catalogue {
    /// `records` products, seed 42, [`Layout::Elements`], no extras.
    pub fn new(records: u64) -> Self {
        Catalogue {
            records,
            seed: 42,
            layout: Layout::Elements,
            extras: false,
        }
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the layout.
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// With `true`, adds content that is not data: comments and processing
    /// instructions between and inside records, and (in
    /// [`Layout::Elements`]) nested `<variants>` holding elements named like
    /// fields, which must not be taken for them.
    pub fn extras(mut self, extras: bool) -> Self {
        self.extras = extras;
        self
    }

    /// Number of products.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The layout.
    pub fn layout_kind(&self) -> Layout {
        self.layout
    }

    /// Product `id` (1-based) as it is written.
    pub fn product(&self, id: u64) -> Product {
        Product::generate(self.seed, id)
    }

    /// All products in order.
    pub fn products(&self) -> impl Iterator<Item = Product> + '_ {
        (1..=self.records).map(|id| self.product(id))
    }

    /// An [`XmlConfig`] that reads this catalogue into [`PRODUCT_COLUMNS`].
    pub fn config(&self) -> XmlConfig {
        XmlConfig::new(self.layout.row_tag(), PRODUCT_COLUMNS)
    }

    /// Writes the catalogue to `path`, gzip-compressed if it ends in `.gz`;
    /// returns the uncompressed size in bytes.
    ///
    /// # Errors
    ///
    /// When the file cannot be created or written.
    pub fn write_file(&self, path: impl AsRef<Path>) -> io::Result<u64> {
        let path = path.as_ref();
        let file = BufWriter::with_capacity(1 << 16, File::create(path)?);
        if path.extension().is_some_and(|e| e == "gz") {
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            let written = write_catalogue(self, &mut gz)?;
            gz.finish()?.flush()?;
            Ok(written)
        } else {
            write_catalogue(self, file)
        }
    }
}

/// Writes `catalogue` as XML to `out`; returns the bytes written.
///
/// # Errors
///
/// When writing fails.
pub fn write_catalogue(catalogue: &Catalogue, out: impl Write) -> io::Result<u64> {
    let mut writer =
        write::CatalogueWriter::new(out, catalogue.layout, catalogue.extras, catalogue.seed);
    writer.header(catalogue.records)?;
    for product in catalogue.products() {
        writer.record(&product)?;
    }
    writer.footer()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_quotes_the_table_name() {
        let ddl = product_table_ddl("shop.pro`ducts");
        assert!(ddl.starts_with("CREATE TABLE IF NOT EXISTS `shop`.`pro``ducts` (\n  id BIGINT"));
        assert!(ddl.ends_with("STATS_AUTO_RECALC=0"));
    }

    #[test]
    fn output_is_deterministic_and_counted() {
        let catalogue = Catalogue::new(50).seed(3).extras(true);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let written = write_catalogue(&catalogue, &mut a).unwrap();
        write_catalogue(&catalogue, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(written, a.len() as u64);
        assert!(a.starts_with(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- ringpipe-xml"));
    }

    #[test]
    fn fields_layout_looks_like_mysqldump() {
        let mut xml = Vec::new();
        write_catalogue(&Catalogue::new(1).layout(Layout::Fields), &mut xml).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        assert!(
            xml.contains(
                "<table_data name=\"products\">\n\t<row>\n\t\t<field name=\"id\">1</field>\n"
            ),
            "{xml}"
        );
    }
}
