//! Spelling products as XML, in each layout, with randomly varied (but
//! always correct) escaping: numeric references, CDATA sections split
//! around `]]>` and carriage returns, empty-element tags.

use std::io::{self, Write};

use super::product::Product;
use super::rng::SplitMix64;
use super::Layout;

/// Writes a catalogue's header, records and footer.
pub(crate) struct CatalogueWriter<W> {
    out: W,
    layout: Layout,
    extras: bool,
    seed: u64,
    /// One record's text, reused.
    buf: String,
    written: u64,
}

impl<W: Write> CatalogueWriter<W> {
    pub(crate) fn new(out: W, layout: Layout, extras: bool, seed: u64) -> Self {
        CatalogueWriter {
            out,
            layout,
            extras,
            seed,
            buf: String::with_capacity(4096),
            written: 0,
        }
    }

    pub(crate) fn header(&mut self, records: u64) -> io::Result<()> {
        self.buf.clear();
        self.buf
            .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        match self.layout {
            Layout::Fields => self.buf.push_str(
                "<mysqldump xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n\
                 <database name=\"ringpipe\">\n\t<table_data name=\"products\">\n",
            ),
            Layout::Elements | Layout::Attributes => {
                self.buf.push_str(&format!(
                    "<!-- ringpipe-xml catalogue: {records} products, seed {} -->\n\
                     <catalogue xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n",
                    self.seed
                ));
            }
        }
        self.flush_buf()
    }

    pub(crate) fn footer(&mut self) -> io::Result<u64> {
        self.buf.clear();
        self.buf.push_str(match self.layout {
            Layout::Fields => "\t</table_data>\n</database>\n</mysqldump>\n",
            Layout::Elements | Layout::Attributes => "</catalogue>\n",
        });
        self.flush_buf()?;
        self.out.flush()?;
        Ok(self.written)
    }

    pub(crate) fn record(&mut self, product: &Product) -> io::Result<()> {
        let rng = &mut SplitMix64::new(self.seed ^ 0x5EED, product.id);
        self.buf.clear();
        if self.extras && product.id % 100 == 0 {
            self.buf
                .push_str("  <!-- a comment between records -->\n  <?pi between records?>\n");
        }
        match self.layout {
            Layout::Elements => self.elements(product, rng),
            Layout::Attributes => self.attributes(product, rng),
            Layout::Fields => self.fields(product, rng),
        }
        self.flush_buf()
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.out.write_all(self.buf.as_bytes())?;
        self.written += self.buf.len() as u64;
        Ok(())
    }

    fn elements(&mut self, p: &Product, rng: &mut SplitMix64) {
        let b = &mut self.buf;
        b.push_str("  <product id=\"");
        b.push_str(&p.id.to_string());
        b.push('"');
        if let Some(currency) = p.currency {
            b.push_str(" currency=\"");
            b.push_str(currency);
            b.push('"');
        }
        b.push_str(">\n");
        element(b, "sku", Some(&p.sku), rng);
        element(b, "name", Some(&p.name), rng);
        if self.extras && rng.percent(5) {
            // Same-named elements below the record are not its fields.
            b.push_str("    <variants><variant><name>Nested &amp; ignored</name><price>0.01</price></variant></variants>\n");
        }
        element(b, "description", p.description.as_deref(), rng);
        element(b, "price", p.price.as_deref(), rng);
        element(
            b,
            "quantity",
            p.quantity.map(|q| q.to_string()).as_deref(),
            rng,
        );
        element(b, "category", p.category, rng);
        if self.extras && rng.percent(5) {
            b.push_str("    <!-- inside a record --><?pi inside?>\n");
        }
        element(b, "updated", p.updated.as_deref(), rng);
        b.push_str("  </product>\n");
    }

    fn attributes(&mut self, p: &Product, rng: &mut SplitMix64) {
        let b = &mut self.buf;
        b.push_str("  <product");
        for (column, value) in super::PRODUCT_COLUMNS.iter().zip(p.values()) {
            if let Some(value) = value {
                b.push_str("\n    ");
                b.push_str(column);
                b.push_str("=\"");
                attribute_text(b, &value, rng);
                b.push('"');
            }
        }
        b.push_str("/>\n");
    }

    fn fields(&mut self, p: &Product, rng: &mut SplitMix64) {
        let b = &mut self.buf;
        b.push_str("\t<row>\n");
        for (column, value) in super::PRODUCT_COLUMNS.iter().zip(p.values()) {
            b.push_str("\t\t<field name=\"");
            b.push_str(column);
            match value {
                None => b.push_str("\" xsi:nil=\"true\" />\n"),
                Some(value) => {
                    b.push_str("\">");
                    text(b, &value, rng);
                    b.push_str("</field>\n");
                }
            }
        }
        b.push_str("\t</row>\n");
    }
}

/// `<tag>value</tag>` on its own line; nothing when `None`; an empty
/// element, in either spelling, for the empty string.
fn element(b: &mut String, tag: &str, value: Option<&str>, rng: &mut SplitMix64) {
    let Some(value) = value else { return };
    b.push_str("    <");
    b.push_str(tag);
    if value.is_empty() && rng.percent(50) {
        b.push_str("/>\n");
        return;
    }
    b.push('>');
    if !value.is_empty() && rng.percent(30) {
        cdata(b, value);
    } else {
        text(b, value, rng);
    }
    b.push_str("</");
    b.push_str(tag);
    b.push_str(">\n");
}

/// Escaped character data; a quarter of the values use numeric
/// references and optional entities wherever they may.
fn text(b: &mut String, value: &str, rng: &mut SplitMix64) {
    let nasty = rng.percent(25);
    for c in value.chars() {
        match c {
            '&' => b.push_str("&amp;"),
            '<' => b.push_str("&lt;"),
            '>' => b.push_str("&gt;"),
            '\r' => b.push_str("&#13;"),
            '"' if nasty => b.push_str("&quot;"),
            '\'' if nasty => b.push_str("&apos;"),
            c if nasty && !c.is_ascii() => numeric(b, c, rng),
            c => b.push(c),
        }
    }
}

/// An attribute value between double quotes; whitespace other than the
/// space must be a reference or the parser would normalize it.
fn attribute_text(b: &mut String, value: &str, rng: &mut SplitMix64) {
    let nasty = rng.percent(25);
    for c in value.chars() {
        match c {
            '&' => b.push_str("&amp;"),
            '<' => b.push_str("&lt;"),
            '"' => b.push_str("&quot;"),
            '\t' => b.push_str("&#9;"),
            '\n' => b.push_str("&#10;"),
            '\r' => b.push_str("&#xD;"),
            c if nasty && !c.is_ascii() => numeric(b, c, rng),
            c => b.push(c),
        }
    }
}

fn numeric(b: &mut String, c: char, rng: &mut SplitMix64) {
    let code = u32::from(c);
    if rng.percent(50) {
        b.push_str(&format!("&#{code};"));
    } else {
        b.push_str(&format!("&#x{code:X};"));
    }
}

/// A CDATA section; `]]>` and carriage returns (which a parser would
/// normalize inside CDATA too) split it.
fn cdata(b: &mut String, value: &str) {
    b.push_str("<![CDATA[");
    let mut rest = value;
    while let Some(at) = rest.find(['\r', ']']) {
        let (before, after) = rest.split_at(at);
        b.push_str(before);
        if let Some(tail) = after.strip_prefix("]]>") {
            b.push_str("]]]]><![CDATA[>");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('\r') {
            b.push_str("]]>&#13;<![CDATA[");
            rest = tail;
        } else {
            b.push(']');
            rest = &after[1..];
        }
    }
    b.push_str(rest);
    b.push_str("]]>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdata_is_split_around_terminators_and_carriage_returns() {
        let mut b = String::new();
        cdata(&mut b, "a]]>b\r\nc]d");
        assert_eq!(b, "<![CDATA[a]]]]><![CDATA[>b]]>&#13;<![CDATA[\nc]d]]>");
    }

    #[test]
    fn attribute_whitespace_is_referenced() {
        let mut b = String::new();
        let rng = &mut SplitMix64::new(0, 0);
        attribute_text(&mut b, "a\tb\nc\r\"&<", rng);
        assert_eq!(b, "a&#9;b&#10;c&#xD;&quot;&amp;&lt;");
    }
}
