//! The SVG bar chart: median events/s of every contender, grouped by case,
//! on a log scale.

use std::path::Path;

use plotters::prelude::*;

/// One group of bars: a case and each contender's median events/s.
pub struct Group {
    /// Case label under the group.
    pub case: String,
    /// `(contender, median events/s)`, ours first.
    pub bars: Vec<(String, f64)>,
}

const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
];

/// Writes the chart to `path`; contenders are coloured by their position
/// in `contenders` (ours first).
pub fn write(path: &Path, contenders: &[&str], groups: &[Group]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let root = SVGBackend::new(path, (1200, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (lo, hi) = bounds(groups);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "ringpipe-ring vs peers: median events/s (log scale)",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(220)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..groups.len() as f64, (lo..hi).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("events/s")
        .y_label_formatter(&|v| super::stats::rate(*v))
        .draw()
        .map_err(|e| e.to_string())?;
    for (g, group) in groups.iter().enumerate() {
        draw_group(&mut chart, contenders, g, group, lo)?;
        // Labels go on the root area, below the x axis (outside the plot).
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, lo));
        let font = ("sans-serif", 13)
            .into_font()
            .transform(FontTransform::Rotate90);
        root.draw(&Text::new(
            group.case.clone(),
            (x - 6, y + 8),
            font.color(&BLACK),
        ))
        .map_err(|e| e.to_string())?;
    }
    legend(&mut chart, contenders, lo)?;
    root.present().map_err(|e| e.to_string())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::LogCoord<f64>,
    >,
>;

fn bounds(groups: &[Group]) -> (f64, f64) {
    let values = groups.iter().flat_map(|g| g.bars.iter().map(|b| b.1));
    let (lo, hi) = values.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let lo = 10f64.powf(lo.max(1.0).log10().floor());
    // One spare decade on top keeps the legend clear of the bars.
    let hi = 10f64.powf(hi.max(10.0).log10().ceil() + 1.0);
    (lo, hi)
}

fn draw_group(
    chart: &mut Chart<'_, '_>,
    contenders: &[&str],
    g: usize,
    group: &Group,
    floor: f64,
) -> Result<(), String> {
    let width = 0.8 / group.bars.len() as f64;
    for (i, (name, value)) in group.bars.iter().enumerate() {
        let colour = colour_of(contenders, name);
        let x0 = g as f64 + 0.1 + i as f64 * width;
        let bar = Rectangle::new([(x0, floor), (x0 + width * 0.9, *value)], colour.filled());
        chart.draw_series([bar]).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn colour_of(contenders: &[&str], name: &str) -> RGBColor {
    let index = contenders.iter().position(|c| *c == name).unwrap_or(0);
    COLOURS[index % COLOURS.len()]
}

fn legend<'a>(chart: &mut Chart<'a, 'a>, contenders: &[&str], floor: f64) -> Result<(), String> {
    for (i, name) in contenders.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series([Rectangle::new(
                [(0.0, floor), (0.0, floor)],
                colour.filled(),
            )])
            .map_err(|e| e.to_string())?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}
