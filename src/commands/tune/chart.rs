//! The sweep's chart, written by hand as SVG: rows/s (median of the rounds)
//! per batch size, one line per shard count (colour) and write path (dash).

use std::fmt::Write;

use super::{path_name, Cell};

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];
const DASHES: [&str; 4] = ["", "6,4", "2,3", "10,3,2,3"];

/// The chart of `cells` (imports of `rows` rows into a copy of `table`).
pub(crate) fn svg(cells: &[Cell], table: &str, rows: u64) -> String {
    let mut sizes: Vec<usize> = cells.iter().map(|c| c.batch_rows).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut lines: Vec<(String, usize)> = Vec::new();
    for c in cells {
        let key = (path_name(c.path).to_owned(), c.shards);
        if !lines.contains(&key) {
            lines.push(key);
        }
    }
    let paths: Vec<&String> = lines.iter().fold(Vec::new(), |mut v, (p, _)| {
        if !v.contains(&p) {
            v.push(p);
        }
        v
    });
    let mut shard_counts: Vec<usize> = lines.iter().map(|l| l.1).collect();
    shard_counts.sort_unstable();
    shard_counts.dedup();
    let peak = cells.iter().map(Cell::median).fold(1.0, f64::max) * 1.1;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |size: usize| {
        let i = sizes.iter().position(|&s| s == size).unwrap_or_default();
        LEFT + plot_w * (i as f64 + 0.5) / sizes.len() as f64
    };
    let y = |rate: f64| TOP + plot_h * (1.0 - rate / peak);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="22" font-size="15">ringpipe tune: rows/s per batch size ({rows} rows into a copy of {})</text>"#,
        escape(table)
    );
    let (bottom, right) = (TOP + plot_h, LEFT + plot_w);
    let _ = writeln!(
        s,
        r#"<path d="M{LEFT},{TOP} V{bottom} H{right}" fill="none" stroke="black"/>"#
    );
    for i in 0..=4 {
        let rate = peak * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{rate:.0}</text>"#,
            LEFT - 6.0,
            y(rate) + 4.0
        );
    }
    for &size in &sizes {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{size}</text>"#,
            x(size),
            bottom + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">rows per batch (--batch-rows)</text>"#,
        LEFT + plot_w / 2.0,
        bottom + 38.0
    );
    for (n, (path, shards)) in lines.iter().enumerate() {
        let colour = COLOURS[shard_counts.iter().position(|c| c == shards).unwrap_or(0) % 6];
        let dash = DASHES[paths.iter().position(|p| *p == path).unwrap_or(0) % 4];
        let mut points: Vec<(usize, f64)> = cells
            .iter()
            .filter(|c| path_name(c.path) == path.as_str() && c.shards == *shards)
            .map(|c| (c.batch_rows, c.median()))
            .collect();
        points.sort_unstable_by_key(|p| p.0);
        let d: Vec<String> = points
            .iter()
            .map(|&(b, r)| format!("{:.1},{:.1}", x(b), y(r)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            d.join(" ")
        );
        let ly = TOP + 16.0 * n as f64;
        let lx = right + 16.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{path} ×{shards}</text>"#,
            lx + 28.0,
            lx + 34.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Text made safe for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
