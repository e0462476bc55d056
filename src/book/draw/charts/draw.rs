//! Rendering: every chart's data drawn into SVG by plotters, with one look for the whole book.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use super::Drawn;
use super::lines::{Axis, LineChart, Series};
use super::looks::{Look, draw_legend, draw_marker, legend_height, legend_width};
use super::speedup::{BarChart, Panel};

pub(super) enum Figure {
    Lines(LineChart),
    Bars(BarChart),
}

pub(super) const HEIGHT: u32 = 540;
pub(super) const PANEL_HEIGHT: u32 = 320;
pub(super) const PLOT_WIDTH: u32 = 740;
pub(super) const TITLE_HEIGHT: u32 = 44;
pub(super) const FONT: &str = "sans-serif";
pub(super) const TITLE_SIZE: f64 = 22.0;
pub(super) const LABEL_SIZE: f64 = 17.0;
pub(super) const TICK_SIZE: f64 = 15.0;
pub(super) const LEGEND_SIZE: f64 = 15.0;

impl Figure {
    /// The SVG text, or why these data cannot be drawn.
    pub(super) fn render(&self) -> std::result::Result<String, String> {
        let (title, empty, why) = match self {
            Figure::Lines(c) => (&c.title, c.series.is_empty(), &c.if_empty),
            Figure::Bars(c) => (&c.title, c.panels.iter().all(|p| p.bars.is_empty()), &c.if_empty),
        };
        let drawn = if empty {
            render_message(title, why)
        } else {
            match self {
                Figure::Lines(c) => {
                    check_points(c)?;
                    render_line_chart(c)
                }
                Figure::Bars(c) => {
                    check_bars(c)?;
                    render_bar_chart(c)
                }
            }
        };
        drawn.map_err(|e| format!("plotters could not draw the chart: {e}"))
    }
}

/// Every point must sit on a log x axis (and on y, which starts at zero or is logarithmic too).
pub(super) fn check_points(chart: &LineChart) -> std::result::Result<(), String> {
    for s in &chart.series {
        if let Some((x, y)) = s.points.iter().find(|(x, y)| !(x.is_finite() && *x > 0.0 && y.is_finite() && *y > 0.0)) {
            return Err(format!("{}: the point at N = {x} has value {y}, which cannot be drawn (is a median time zero?)", s.label));
        }
    }
    Ok(())
}

pub(super) fn check_bars(chart: &BarChart) -> std::result::Result<(), String> {
    for (panel, bars) in chart.panels.iter().flat_map(|p| p.bars.iter().map(move |b| (p, b))) {
        if let Some(v) = bars.values.iter().flatten().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(format!("{}, {}: speed-up {v} cannot be drawn (is a median time zero?)", panel.heading, bars.label));
        }
    }
    Ok(())
}

/// An SVG of `size` with the title on top; `body` draws below it.
pub(super) fn render_svg(size: (u32, u32), title: &str, body: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Drawn) -> Drawn<String> {
    let (width, _) = size;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, rest) = root.split_vertically(TITLE_HEIGHT);
        let style = (FONT, TITLE_SIZE).into_font().into_text_style(&top).pos(Pos::new(HPos::Center, VPos::Center));
        top.draw_text(title, &style, (width as i32 / 2, TITLE_HEIGHT as i32 / 2 + 4))?;
        body(&rest)?;
        root.present()?;
    }
    Ok(svg)
}

pub(super) fn render_message(title: &str, message: &str) -> Drawn<String> {
    render_svg((PLOT_WIDTH, HEIGHT), title, |area| {
        let (w, h) = area.dim_in_pixel();
        let style = (FONT, LABEL_SIZE).into_font().color(&RGBColor(96, 96, 96)).pos(Pos::new(HPos::Center, VPos::Center));
        area.draw_text(&format!("Nothing to draw: {message}."), &style, (w as i32 / 2, h as i32 / 2))
    })
}

pub(super) fn render_line_chart(chart: &LineChart) -> Drawn<String> {
    let legend: Vec<(&str, Look)> = chart.series.iter().map(|s| (s.label.as_str(), s.look)).collect();
    let height = HEIGHT.max(TITLE_HEIGHT + legend_height(legend.len()));
    render_svg((PLOT_WIDTH + legend_width(&legend), height), &chart.title, |area| {
        let (plot, key) = area.split_horizontally(PLOT_WIDTH);
        let xs = chart.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = chart.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let (x_min, x_max) = extent(xs);
        let (y_min, y_max) = extent(ys);
        let y_max = y_max.max(chart.y_reach);
        // Half a step of margin either side on the log axes, so no marker sits on a border.
        let x = LogCoord::from((x_min / 1.5..x_max * 1.5).log_scale().base(2.0));
        match chart.y_axis {
            Axis::Log => draw_lines(&plot, chart, x, LogCoord::from((y_min / 1.5..y_max * 1.5).log_scale())),
            Axis::Linear => draw_lines(&plot, chart, x, RangedCoordf64::from(0.0..y_max * 1.08)),
        }?;
        draw_legend(&key, &legend)
    })
}

pub(super) fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

pub(super) fn draw_lines<Y>(area: &DrawingArea<SVGBackend, Shift>, chart: &LineChart, x: LogCoord<f64>, y: Y) -> Drawn
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(76)
        .build_cartesian_2d(x, y)?;
    ctx.configure_mesh()
        .x_desc(chart.x_axis.desc())
        .y_desc(chart.y_desc.as_str())
        .x_labels(12)
        .y_labels(12)
        .x_label_formatter(&|v| chart.x_axis.label(*v))
        .y_label_formatter(&|v| number(*v))
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
        .light_line_style(RGBColor(238, 238, 238))
        .max_light_lines(4)
        .draw()?;
    // A thicker line is drawn last, over the others: it is the one the chart is about.
    let mut on_top: Vec<&Series> = chart.series.iter().collect();
    on_top.sort_by_key(|s| s.look.width);
    for s in on_top {
        let style = s.look.colour.stroke_width(s.look.width);
        if s.look.dashed {
            ctx.draw_series(DashedLineSeries::new(s.points.iter().copied(), 8, 5, style))?;
        } else {
            ctx.draw_series(LineSeries::new(s.points.iter().copied(), style))?;
        }
        for &p in &s.points {
            draw_marker(ctx.plotting_area(), p, s.look.marker, s.look.colour)?;
        }
    }
    Ok(())
}

/// `2^20` where the value is a power of two (the log-2 axis puts its ticks there), else the
/// number itself.
pub(super) fn power_of_two(v: f64) -> String {
    let k = v.log2().round();
    if (2f64.powf(k) - v).abs() < 1e-9 * v { format!("2^{k}") } else { number(v) }
}

/// `8 B`, `64 KiB`, `1 GiB` at powers of two (where the log-2 axis puts its ticks).
pub(super) fn bytes_label(v: f64) -> String {
    let k = v.log2().round();
    if (2f64.powf(k) - v).abs() > 1e-9 * v || k < 0.0 {
        return number(v);
    }
    let k = k as u32;
    let (unit, shift) = match k {
        0..=9 => ("B", 0),
        10..=19 => ("KiB", 10),
        20..=29 => ("MiB", 20),
        _ => ("GiB", 30),
    };
    format!("{} {unit}", 1u64 << (k - shift))
}

/// Three significant digits at most, without trailing zeros: 1000, 250, 2.5, 0.125.
pub(super) fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

pub(super) fn render_bar_chart(chart: &BarChart) -> Drawn<String> {
    let mut legend: Vec<(&str, Look)> = Vec::new();
    for bars in chart.panels.iter().flat_map(|p| &p.bars) {
        if !legend.iter().any(|(label, _)| *label == bars.label) {
            legend.push((&bars.label, bars.look));
        }
    }
    // Panels one above the other, each as wide as a line chart: the kernel names need the room.
    let height = TITLE_HEIGHT + PANEL_HEIGHT * chart.panels.len() as u32;
    render_svg((PLOT_WIDTH + legend_width(&legend), height), &chart.title, |area| {
        let (panels, key) = area.split_horizontally(PLOT_WIDTH);
        for (panel, region) in chart.panels.iter().zip(panels.split_evenly((chart.panels.len(), 1))) {
            draw_bar_panel(&region, panel, &chart.groups, &chart.y_desc)?;
        }
        draw_legend(&key, &legend)
    })
}

pub(super) fn draw_bar_panel(area: &DrawingArea<SVGBackend, Shift>, panel: &Panel, groups: &[String], y_desc: &str) -> Drawn {
    let values = panel.bars.iter().flat_map(|b| b.values.iter().flatten().copied());
    let top = values.fold(1.0f64, f64::max) * 1.18; // room for the value labels
    let mut ctx = ChartBuilder::on(area)
        .caption(&panel.heading, (FONT, LABEL_SIZE))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..groups.len() as f64 - 0.5, 0.0..top)?;
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .y_label_formatter(&|v| number(*v))
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
        .light_line_style(RGBColor(238, 238, 238))
        .max_light_lines(4)
        .draw()?;
    let below = (FONT, TICK_SIZE).into_font().into_text_style(area).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, group) in groups.iter().enumerate() {
        ctx.plotting_area().draw(&(EmptyElement::at((i as f64, 0.0)) + Text::new(group.clone(), (0, 8), below.clone())))?;
    }
    let width = 0.8 / panel.bars.len() as f64;
    let above = (FONT, TICK_SIZE - 2.0).into_font().into_text_style(area).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (j, bars) in panel.bars.iter().enumerate() {
        let offset = (j as f64 - (panel.bars.len() as f64 - 1.0) / 2.0) * width;
        for (i, value) in bars.values.iter().enumerate() {
            let Some(v) = *value else { continue };
            let x = i as f64 + offset;
            let fill = bars.look.colour.mix(0.75).filled();
            ctx.draw_series(std::iter::once(Rectangle::new([(x - width * 0.45, 0.0), (x + width * 0.45, v)], fill)))?;
            draw_marker(ctx.plotting_area(), (x, v), bars.look.marker, bars.look.colour)?;
            let label = Text::new(format!("{}×", number(v)), (0, -8), above.clone());
            ctx.plotting_area().draw(&(EmptyElement::at((x, v)) + label))?;
        }
    }
    Ok(())
}
