//! What the server says about the target table: column types and key.

use crate::check::Check;
use crate::conn::Conn;
use crate::ident::{quote, quote_table};
use crate::{PgConfig, PgError};

/// A column of the target table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its base type's name (`int4`, `text`, ...; a domain's or enum's own name).
    pub typname: String,
    /// Its type modifier (`atttypmod`: length, precision, scale; -1 for none).
    pub typmod: i32,
    /// The check of its values the server would alter: its own type's, a
    /// domain's base type's, or that of each element of an array, bound of
    /// a range or field of a composite type.
    pub check: Option<Check>,
}

/// The target table as the sinks need it.
#[derive(Debug, Clone)]
pub struct Table {
    /// Every column, in table order.
    pub columns: Vec<Column>,
    /// The primary key's columns, in key order (empty without one).
    pub key: Vec<String>,
}

const COLUMNS: &str = "SELECT a.attname::text, t.typname::text, a.atttypmod, a.atttypid, \
     t.typtype IN ('d', 'c', 'r', 'm') OR t.typcategory = 'A' \
     FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
     WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attnum";

/// A type: its kind, a domain's base type and modifier, an array's
/// element type, its name.
const TYPE: &str = "SELECT typtype::text, typbasetype, typtypmod, \
     CASE WHEN typcategory = 'A' THEN typelem ELSE 0::oid END, typname::text \
     FROM pg_type WHERE oid = $1";

/// A range type's subtype.
const RANGE: &str = "SELECT rngsubtype FROM pg_range WHERE rngtypid = $1";

/// A multirange type's subtype (PostgreSQL 14 and later have multiranges).
const MULTIRANGE: &str = "SELECT rngsubtype FROM pg_range WHERE rngmultitypid = $1";

/// A composite type's attributes, in order: type and modifier.
const ATTRIBUTES: &str = "SELECT a.atttypid, a.atttypmod FROM pg_type t \
     JOIN pg_attribute a ON a.attrelid = t.typrelid \
     WHERE t.oid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";

/// `money`'s spelling in the session's `lc_monetary`: its decimal places,
/// decimal point and digit group separator.
const MONEY: &str = "SELECT 1234567::numeric::money::text";

const KEY: &str = "SELECT a.attname::text FROM pg_index i \
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
     WHERE i.indrelid = $1::text::regclass AND i.indisprimary \
     ORDER BY array_position(i.indkey::int2[], a.attnum)";

/// Reads `table`'s columns and primary key.
///
/// # Errors
///
/// When the table does not exist or the catalogue cannot be read.
pub(crate) fn describe(conn: &mut Conn, table: &str) -> Result<Table, PgError> {
    let quoted = quote_table(table)?;
    let context = format!("reading the columns of {quoted}");
    let rows = conn.query(COLUMNS, &[&quoted], &context)?;
    let mut catalogue = Catalogue {
        conn,
        money: None,
        context,
    };
    let mut columns = Vec::new();
    for row in rows {
        let (typname, typmod): (String, i32) = (row.get(1), row.get(2));
        // A domain's, array's, range's or composite type's checks are
        // those of the types it is made of.
        let check = match row.get(4) {
            true => catalogue.checks(row.get(3), typmod, 0)?,
            false => catalogue.scalar_check(&typname, typmod)?,
        };
        columns.push(Column {
            name: row.get(0),
            typname,
            typmod,
            check,
        });
    }
    let key = catalogue
        .conn
        .query(KEY, &[&quoted], &catalogue.context)?
        .into_iter()
        .map(|row| row.get(0))
        .collect();
    Ok(Table { columns, key })
}

/// The server's catalogue, read for the checks of a table's columns.
struct Catalogue<'a> {
    conn: &'a mut Conn,
    /// The session's money check, once read.
    money: Option<Option<Check>>,
    context: String,
}

/// A type with its domains followed to the base.
struct Base {
    oid: u32,
    /// `typtype`: `b` base, `c` composite, `r` range, `m` multirange, ...
    kind: String,
    name: String,
    typmod: i32,
    /// The element type of an array, 0 for other types.
    element: u32,
}

impl Catalogue<'_> {
    /// The checks of values of type `oid` with modifier `typmod`, `depth`
    /// types deep in a column's type: a domain's by its base type (and the
    /// domain's modifier), an array's by its element type.
    fn checks(&mut self, oid: u32, typmod: i32, depth: usize) -> Result<Option<Check>, PgError> {
        if depth > MAX_NESTING {
            return Err(PgError::Config(format!(
                "{}: a type nested more than {MAX_NESTING} types deep",
                self.context
            )));
        }
        let base = self.base_type(oid, typmod)?;
        if base.element == 0 {
            return self.leaf_check(&base, depth);
        }
        let element = self.base_type(base.element, base.typmod)?;
        let inner = self.leaf_check(&element, depth)?;
        Ok(Some(match inner {
            Some(inner) => Check::Elements(Box::new(inner)),
            None => Check::Nesting,
        }))
    }

    /// The check of a base type that is no array: a range's (or
    /// multirange's) by its subtype, read without a modifier as the
    /// range's input function reads its bounds; a composite type's by its
    /// attributes'.
    fn leaf_check(&mut self, base: &Base, depth: usize) -> Result<Option<Check>, PgError> {
        let subtype = match base.kind.as_str() {
            "r" => RANGE,
            "m" => MULTIRANGE,
            "c" => return self.fields(base, depth),
            _ => return self.scalar_check(&base.name, base.typmod),
        };
        let subtype: u32 = self
            .conn
            .query_one(subtype, &[&base.oid], &self.context)?
            .get(0);
        let inner = self.checks(subtype, -1, depth + 1)?;
        Ok(inner.map(|inner| Check::Bounds {
            inner: Box::new(inner),
            multi: base.kind == "m",
        }))
    }

    /// A composite type's check: each attribute's, `None` when no
    /// attribute has one.
    fn fields(&mut self, base: &Base, depth: usize) -> Result<Option<Check>, PgError> {
        let attributes = self.conn.query(ATTRIBUTES, &[&base.oid], &self.context)?;
        let mut checks = Vec::with_capacity(attributes.len());
        for attribute in attributes {
            let check = self.checks(attribute.get(0), attribute.get(1), depth + 1)?;
            checks.push(check);
        }
        Ok(checks
            .iter()
            .any(Option::is_some)
            .then_some(Check::Fields(checks)))
    }

    /// The check of values of the base type `name` with modifier `typmod`.
    fn scalar_check(&mut self, name: &str, typmod: i32) -> Result<Option<Check>, PgError> {
        if name != "money" {
            return Ok(Check::for_type(name, typmod));
        }
        if self.money.is_none() {
            let spelled: String = self.conn.query_one(MONEY, &[], &self.context)?.get(0);
            self.money = Some(Check::money(&spelled));
        }
        Ok(self.money.clone().flatten())
    }

    /// The base type of `oid` (itself unless a domain) and its modifier.
    fn base_type(&mut self, mut oid: u32, mut typmod: i32) -> Result<Base, PgError> {
        // A server's catalogue is read, not trusted: domains that name each
        // other in a circle end here instead of looping.
        for _ in 0..MAX_DOMAIN_DEPTH {
            let row = self.conn.query_one(TYPE, &[&oid], &self.context)?;
            let kind: String = row.get(0);
            if kind != "d" {
                return Ok(Base {
                    oid,
                    kind,
                    name: row.get(4),
                    typmod,
                    element: row.get(3),
                });
            }
            // As the server's getBaseTypeAndTypmod: the innermost domain's
            // modifier is the base type's.
            oid = row.get(1);
            typmod = row.get(2);
        }
        Err(PgError::Config(format!(
            "{}: type {oid} is a domain more than {MAX_DOMAIN_DEPTH} domains deep",
            self.context
        )))
    }
}

/// How many domains over domains [`Catalogue::base_type`] follows.
const MAX_DOMAIN_DEPTH: usize = 64;

/// How many types within types (arrays, ranges, composite types)
/// [`Catalogue::checks`] follows.
const MAX_NESTING: usize = 16;

/// Every column of `table` on the server at `url`, in table order.
///
/// # Errors
///
/// When the server cannot be reached or the table does not exist.
pub fn table_columns(url: &str, table: &str) -> Result<Vec<String>, PgError> {
    let mut conn = Conn::open(&PgConfig::new(url, table, &[]))?;
    let table = describe(&mut conn, table)?;
    Ok(table.columns.into_iter().map(|c| c.name).collect())
}

/// A comma-separated list of quoted identifiers, each with `prefix`.
pub fn quoted_list(names: &[String], prefix: &str) -> Result<String, PgError> {
    let quoted: Result<Vec<String>, PgError> = names
        .iter()
        .map(|name| Ok(format!("{prefix}{}", quote(name)?)))
        .collect();
    Ok(quoted?.join(", "))
}
