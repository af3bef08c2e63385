//! The logical content of one generated product: what a correct import
//! must store, independent of how the XML spells it.

use super::rng::SplitMix64;

/// Words for product names: multi-byte scripts, emoji, quotes, a
/// backslash, and characters XML must escape.
const NAME_WORDS: [&str; 24] = [
    "Café",
    "Crème",
    "Brûlée",
    "Müller",
    "Straße",
    "日本茶",
    "茶碗",
    "Ελληνικά",
    "Кофе",
    "🚀",
    "💡",
    "O'Brien",
    "\"Deluxe\"",
    "back\\slash",
    "Tom & Jerry",
    "<Pro>",
    "50% off",
    "Größe",
    "naïve",
    "Smörgåsbord",
    "piñata",
    "Widget",
    "Lamp",
    "Chair",
];

/// Sentences for descriptions: tabs, line ends (including CR-LF), an SQL
/// injection attempt, a CDATA terminator, and more escaping material.
const SENTENCES: [&str; 12] = [
    "Hand-made in small batches.",
    "Line one\nLine two",
    "Tabs\there\tand there.",
    "'); DROP TABLE t; --",
    "Price < 100 & > 10.",
    "Quote \"this\" and 'that'.",
    "Contains the ]]> marker.",
    "Windows\r\nline end.",
    "Unicode: ü, ß, 漢字, 🎉.",
    "A backslash \\N is not NULL.",
    "Trailing spaces   ",
    "  leading spaces",
];

const CATEGORIES: [&str; 8] = [
    "Home & Garden",
    "Électronique",
    "Toys/Games",
    "Books",
    "Küche",
    "Sports \"Pro\"",
    "Office <Supplies>",
    "Food & Drink",
];

const CURRENCIES: [&str; 6] = ["EUR", "USD", "GBP", "JPY", "CHF", "SEK"];

/// One product row; `None` is SQL `NULL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    /// `id`: 1-based record number.
    pub id: u64,
    /// `sku`: unique, at most 32 characters.
    pub sku: String,
    /// `name`: never empty, at most 255 characters.
    pub name: String,
    /// `description`: sometimes `NULL`, sometimes empty.
    pub description: Option<String>,
    /// `price`: `DECIMAL(12,2)` text such as `19.99`.
    pub price: Option<String>,
    /// `quantity`: fits `INT`.
    pub quantity: Option<i32>,
    /// `category`: at most 64 characters.
    pub category: Option<&'static str>,
    /// `currency`: three letters.
    pub currency: Option<&'static str>,
    /// `updated`: `YYYY-MM-DD HH:MM:SS`.
    pub updated: Option<String>,
}

impl Product {
    /// Product `id` of the catalogue seeded with `seed`.
    pub(crate) fn generate(seed: u64, id: u64) -> Self {
        let rng = &mut SplitMix64::new(seed, id);
        Product {
            id,
            sku: format!("SKU-{id:09}-{:04X}", rng.below(0x10000)),
            name: name(rng),
            description: description(rng),
            price: rng
                .percent(95)
                .then(|| format!("{}.{:02}", rng.below(100_000), rng.below(100))),
            quantity: rng
                .percent(90)
                .then(|| rng.below(100_000) as i32 - if rng.percent(5) { 100_000 } else { 0 }),
            category: rng.percent(90).then(|| rng.pick(&CATEGORIES)),
            currency: rng.percent(85).then(|| rng.pick(&CURRENCIES)),
            updated: rng.percent(92).then(|| datetime(rng)),
        }
    }

    /// The values in [`PRODUCT_COLUMNS`](super::PRODUCT_COLUMNS) order.
    pub fn values(&self) -> [Option<String>; 9] {
        [
            Some(self.id.to_string()),
            Some(self.sku.clone()),
            Some(self.name.clone()),
            self.description.clone(),
            self.price.clone(),
            self.quantity.map(|q| q.to_string()),
            self.category.map(str::to_owned),
            self.currency.map(str::to_owned),
            self.updated.clone(),
        ]
    }
}

fn name(rng: &mut SplitMix64) -> String {
    let words = 2 + rng.below(5);
    let mut name = String::new();
    for i in 0..words {
        if i > 0 {
            name.push(' ');
        }
        name.push_str(rng.pick(&NAME_WORDS));
    }
    name
}

fn description(rng: &mut SplitMix64) -> Option<String> {
    match rng.below(100) {
        0..=7 => None,
        8..=14 => Some(String::new()),
        _ => {
            let sentences = 1 + rng.below(4);
            let parts: Vec<&str> = (0..sentences).map(|_| rng.pick(&SENTENCES)).collect();
            Some(parts.join(" "))
        }
    }
}

fn datetime(rng: &mut SplitMix64) -> String {
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        2015 + rng.below(11),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_product() {
        assert_eq!(Product::generate(1, 5), Product::generate(1, 5));
        assert_ne!(Product::generate(1, 5), Product::generate(2, 5));
    }

    #[test]
    fn values_fit_their_column_types() {
        for id in 1..=2000 {
            let p = Product::generate(9, id);
            assert!(p.sku.chars().count() <= 32);
            assert!(!p.name.is_empty() && p.name.chars().count() <= 255);
            assert!(p.description.as_ref().map_or(0, String::len) <= 65_535);
            assert!(p.category.map_or(0, |c| c.chars().count()) <= 64);
            assert!(p.currency.map_or(true, |c| c.len() == 3));
            let price = p.price.unwrap_or_default();
            assert!(price.len() <= 8 && !price.starts_with('-'), "{price}");
            assert!(p.updated.map_or(true, |u| u.len() == 19));
        }
    }
}
