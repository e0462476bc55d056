//! Charts drawn with plotters from benchmark results (SVG, embedded in the book).
//!
//! Each chart is first built as data — series of points taken from the CSV rows — and then drawn
//! by a renderer shared by every chart of its kind, so the numbers can be checked without reading
//! SVG and no chart repeats another's drawing code. Output is deterministic: the same rows give
//! the same bytes, which is what lets a test catch a committed chart that has gone stale.

use crate::error::{io_error, Result};
use crate::element::Dtype;
use crate::results::{Cache, Machine, Row, Status};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// The charts against N show one element type; f32 and i32 move the same bytes and run alike.
const SWEEP_DTYPE: Dtype = Dtype::F32;
/// Harris's table measured 2^22 ints; the speed-up chart repeats it at that size.
const HARRIS_N: usize = 1 << 22;
const HARRIS_DTYPE: Dtype = Dtype::I32;

/// A plotters result on the SVG backend (which writes into a `String`).
type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// Draw every chart: those of the book's GPU into `plots_dir`, and the comparison of all GPUs.
pub fn draw_all(data: &[(Machine, Vec<Row>)], book: &(Machine, Vec<Row>), plots_dir: &Path) -> Result<Vec<PathBuf>> {
    let all_gpus = if data.is_empty() { std::slice::from_ref(book) } else { data };
    let figures = [
        ("time.svg", Figure::Lines(time_chart(book, Part::Harris))),
        ("bandwidth.svg", Figure::Lines(bandwidth_chart(book, Part::Harris))),
        ("time_modern.svg", Figure::Lines(time_chart(book, Part::Modern))),
        ("bandwidth_modern.svg", Figure::Lines(bandwidth_chart(book, Part::Modern))),
        ("speedup.svg", Figure::Bars(speedup_chart(book))),
        ("gpus.svg", Figure::Lines(gpus_chart(all_gpus))),
    ];
    std::fs::create_dir_all(plots_dir).map_err(|e| io_error(plots_dir, e))?;
    figures.iter().map(|(name, figure)| write_svg(&plots_dir.join(name), figure.render())).collect()
}

/// The accuracy chart: each method's median relative error against N, log-log, with the two
/// textbook bounds for f32 dashed. Errors of exactly zero, and the infinite errors of a sum that
/// overflowed, cannot be drawn on a log axis and are left out (the chapter's table shows them).
pub(crate) fn draw_accuracy(path: &Path, gpu: &str, medians: &[(&str, &str, Vec<(usize, f64)>)]) -> Result<PathBuf> {
    let mut series: Vec<Series> = medians
        .iter()
        .enumerate()
        .map(|(i, (method, _, points))| Series {
            label: (*method).to_string(),
            // Zero and infinite errors (an exact sum, an overflow) have no place on a log axis.
            points: points.iter().filter(|(_, e)| *e > 0.0 && e.is_finite()).map(|&(n, e)| (n as f64, e)).collect(),
            look: nth_look(i, false),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let sizes: Vec<f64> = medians.iter().flat_map(|(_, _, p)| p.iter().map(|&(n, _)| n as f64)).collect();
    let (lo, hi) = sizes.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &n| (lo.min(n), hi.max(n)));
    if hi > 0.0 {
        let u = crate::data::F32_UNIT_ROUNDOFF;
        let line = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
            let mut n = lo;
            let mut out = Vec::new();
            while n <= hi {
                out.push((n, f(n)));
                n *= 4.0;
            }
            out
        };
        series.push(Series { label: "bound, any order: (n − 1)·u".into(), points: line(&|n| (n - 1.0) * u), look: PEAK_LOOK });
        series.push(Series { label: "bound, balanced tree: log2(n)·u".into(), points: line(&|n| n.log2() * u), look: Look { marker: Marker::Plus, ..PEAK_LOOK } });
    }
    let chart = LineChart {
        title: format!("Relative error of a sum of positive values vs N, {gpu}"),
        y_desc: "relative error |sum − exact| / exact".into(),
        y_axis: Axis::Log,
        y_reach: 0.0,
        series,
        if_empty: "no accuracy measurements".into(),
        x_axis: XAxis::Elements,
    };
    write_svg(path, Figure::Lines(chart).render())
}

/// One line of a chart against message size: `group` picks the colour, so that two measures of
/// one run (bus and algorithm bandwidth) share it, the second `dashed`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BytesSeries {
    pub label: String,
    /// (bytes, value), in increasing bytes; values above zero.
    pub points: Vec<(f64, f64)>,
    pub group: usize,
    pub dashed: bool,
}

/// Draw a log-log chart of `series` against message size into `path` (the all-reduce
/// benchmark's), with the look of every other chart of the book.
pub(crate) fn draw_bytes_chart(path: &Path, title: &str, y_desc: &str, series: &[BytesSeries], if_empty: &str) -> Result<PathBuf> {
    let n = KERNEL_COLOURS.len();
    let chart = LineChart {
        title: title.to_string(),
        y_desc: y_desc.to_string(),
        y_axis: Axis::Log,
        y_reach: 0.0,
        series: series
            .iter()
            .map(|s| Series {
                label: s.label.clone(),
                points: s.points.clone(),
                look: Look { colour: KERNEL_COLOURS[s.group % n], marker: KERNEL_MARKERS[(s.group + if s.dashed { 4 } else { 0 }) % n], dashed: s.dashed },
            })
            .collect(),
        if_empty: if_empty.to_string(),
        x_axis: XAxis::Bytes,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    write_svg(path, Figure::Lines(chart).render())
}

/// Series given as `(label, (N, value) points, dashed)`.
pub(crate) type PlainSeries = Vec<(String, Vec<(f64, f64)>, bool)>;

/// A line chart against N for data that is not a full sum (the row sums of [`crate::rows`]),
/// drawn by the same renderer as every chart here: one series per `(label, points, dashed)`,
/// looks in list order, a log y axis.
pub(crate) fn draw_line_chart(path: &Path, title: String, y_desc: String, series: PlainSeries) -> Result<PathBuf> {
    let series = series.into_iter().enumerate().map(|(i, (label, points, dashed))| Series { label, points, look: nth_look(i, dashed) }).collect();
    let chart = LineChart { title, y_desc, y_axis: Axis::Log, y_reach: 0.0, series, if_empty: "no measurements".into(), x_axis: XAxis::Elements };
    write_svg(path, Figure::Lines(chart).render())
}

/// Write one rendered SVG, or turn the reason it could not be drawn into an error on its path.
fn write_svg(path: &Path, svg: std::result::Result<String, String>) -> Result<PathBuf> {
    let svg = svg.map_err(|why| io_error(path, why))?;
    std::fs::write(path, fit_to_page(svg)).map_err(|e| io_error(path, e))?;
    Ok(path.to_path_buf())
}

/// Let a picture inlined in the book shrink to the width of the page (its viewBox keeps the
/// proportions); plotters only writes a fixed width and height, which viewers other than a
/// browser still use.
pub(crate) fn fit_to_page(svg: String) -> String {
    svg.replacen("<svg ", "<svg style=\"max-width: 100%; height: auto\" ", 1)
}

// ---------------------------------------------------------------------------------------------
// Looks: a colour and a marker per series, so lines stay apart in print and for colour-blind eyes.

const KERNEL_COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
    OpenCircle,
    OpenTriangle,
    OpenSquare,
    OpenDiamond,
    Cross,
    Plus,
}

const KERNEL_MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
    Marker::OpenCircle,
    Marker::OpenTriangle,
    Marker::OpenSquare,
    Marker::OpenDiamond,
];

#[derive(Clone, Copy, Debug, PartialEq)]
struct Look {
    colour: RGBColor,
    marker: Marker,
    dashed: bool,
}

/// The measured copy, and what it implies for a reduction: a pace to compare with.
const COPY_LOOK: Look = Look { colour: BLACK, marker: Marker::Plus, dashed: false };
/// The measured read-only kernel: the ceiling every sum chases.
const READ_ONLY_LOOK: Look = Look { colour: RGBColor(120, 0, 0), marker: Marker::Cross, dashed: false };
/// The datasheet-style peak: a bound no program reaches.
const PEAK_LOOK: Look = Look { colour: RGBColor(128, 128, 128), marker: Marker::Cross, dashed: true };

/// The `i`-th look of a list: colours cycle every 8, and the marker shifts by one each cycle,
/// so up to 64 series keep a distinct pair.
fn nth_look(i: usize, dashed: bool) -> Look {
    let n = KERNEL_COLOURS.len();
    Look { colour: KERNEL_COLOURS[i % n], marker: KERNEL_MARKERS[(i + i / n) % n], dashed }
}

/// Kernels in book order (chapter, then their order in the file), so that a kernel keeps its
/// look in every chart of one GPU.
fn kernels_in_order<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a str> {
    let mut kernels: Vec<(u32, usize, &str)> = Vec::new();
    for (i, row) in rows.into_iter().enumerate().filter(|(_, r)| !r.is_yardstick()) {
        if !kernels.iter().any(|(_, _, k)| *k == row.kernel) {
            kernels.push((row.chapter, i, &row.kernel));
        }
    }
    kernels.sort();
    kernels.into_iter().map(|(_, _, k)| k).collect()
}

/// Bytes a reduction of the same N reads. A copy row counts its read and its write.
fn read_bytes(row: &Row) -> f64 {
    if row.is_copy() { row.bytes as f64 / 2.0 } else { row.bytes as f64 }
}

/// A usable peak: the CSV says `unknown` when the driver did not report the memory clock.
fn peak_gbps(machine: &Machine) -> Option<f64> {
    machine.peak_gbps.filter(|p| p.is_finite() && *p > 0.0)
}

// ---------------------------------------------------------------------------------------------
// Line charts against N (log x): time, bandwidth, and the GPUs side by side.

#[derive(Clone, Debug, PartialEq)]
struct Series {
    label: String,
    /// (N, value), in increasing N.
    points: Vec<(f64, f64)>,
    look: Look,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    Log,
    /// From zero.
    Linear,
}

#[derive(Clone, Debug, PartialEq)]
struct LineChart {
    title: String,
    y_desc: String,
    y_axis: Axis,
    /// The y axis goes at least this high (100 on a percentage of the peak: the gap shows).
    y_reach: f64,
    series: Vec<Series>,
    /// Said in place of the chart when there is no series to draw.
    if_empty: String,
    /// What the x axis counts.
    x_axis: XAxis,
}

/// The quantity on a line chart's (logarithmic, base 2) x axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XAxis {
    /// N, the elements summed: ticks `2^20`.
    Elements,
    /// A message size in bytes: ticks `1 MiB`.
    Bytes,
}

impl XAxis {
    fn desc(self) -> &'static str {
        match self {
            XAxis::Elements => "N (elements summed)",
            XAxis::Bytes => "message size (bytes)",
        }
    }

    fn label(self, v: f64) -> String {
        match self {
            XAxis::Elements => power_of_two(v),
            XAxis::Bytes => bytes_label(v),
        }
    }
}

/// The rows the charts against N use: one element type, inputs rotated past L2.
/// Which kernels a chart shows: Harris's seven, or kernel 7 and everything after it with the
/// library peer (one chart of all of them would have too many lines to read). The read-only
/// ceiling and the copy are in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Harris,
    Modern,
}

impl Part {
    fn shows(self, row: &Row) -> bool {
        match self {
            _ if row.is_yardstick() => true,
            Part::Harris => (1..=7).contains(&row.chapter) && row.status != Status::Peer,
            Part::Modern => row.chapter >= 7 || row.status == Status::Peer,
        }
    }

    fn caption(self) -> &'static str {
        match self {
            Part::Harris => "Harris's kernels",
            Part::Modern => "modern kernels",
        }
    }
}

fn swept(rows: &[Row], part: Part) -> Vec<&Row> {
    rows.iter().filter(|r| r.dtype == SWEEP_DTYPE && r.cache == Cache::Rotated && part.shows(r)).collect()
}

/// One series per kernel of `rows` (historical ones dashed), valued by `value`. Looks follow
/// the kernel's place among all the GPU's kernels (`all`), so they match from chart to chart.
fn kernel_series(all: &[Row], rows: &[&Row], value: impl Fn(&Row) -> f64) -> Vec<Series> {
    kernels_in_order(all)
        .into_iter()
        .enumerate()
        .filter_map(|(i, kernel)| {
            let mine: Vec<&Row> = rows.iter().copied().filter(|r| r.kernel == kernel).collect();
            let first = mine.first()?;
            let look = nth_look(i, first.status == Status::Historical);
            Some(Series { label: format!("{kernel}: {}", first.title), points: points(&mine, &value), look })
        })
        .collect()
}

/// (N, value) for each row, sorted by N.
fn points(rows: &[&Row], value: impl Fn(&Row) -> f64) -> Vec<(f64, f64)> {
    let mut sorted = rows.to_vec();
    sorted.sort_by_key(|r| r.n);
    sorted.iter().map(|r| (r.n as f64, value(r))).collect()
}

fn copy_rows<'a>(rows: &[&'a Row]) -> Vec<&'a Row> {
    rows.iter().copied().filter(|r| r.is_copy()).collect()
}

fn read_only_rows<'a>(rows: &[&'a Row]) -> Vec<&'a Row> {
    rows.iter().copied().filter(|r| r.is_read_only()).collect()
}

/// Harris's "performance comparison" for this GPU: time per sum, with the measured read-only
/// ceiling, the copy's pace and the theoretical floor under it.
fn time_chart((machine, all): &(Machine, Vec<Row>), part: Part) -> LineChart {
    let rows = swept(all, part);
    let kernels: Vec<&Row> = rows.iter().copied().filter(|r| !r.is_yardstick()).collect();
    let mut series = kernel_series(all, &kernels, |r| r.median_us);
    let ceiling = read_only_rows(&rows);
    if !ceiling.is_empty() {
        // The read-only kernel's own time: a sum of N values that only reads them.
        series.push(Series { label: "read-only ceiling: N values read once, measured".into(), points: points(&ceiling, |r| r.median_us), look: READ_ONLY_LOOK });
    }
    let copies = copy_rows(&rows);
    if !copies.is_empty() {
        // Reading N values at the copy's measured bandwidth (its reads and writes counted).
        let floor = points(&copies, |r| read_bytes(r) / (r.gbps() * 1e9) * 1e6);
        series.push(Series { label: "copy pace: N values at the copy kernel's bandwidth".into(), points: floor, look: COPY_LOOK });
    }
    if let Some(peak) = peak_gbps(machine) {
        let floor = dedup_x(points(&rows, |r| read_bytes(r) / (peak * 1e9) * 1e6));
        series.push(Series { label: format!("peak floor: N values read at {peak:.0} GB/s (theoretical)"), points: floor, look: PEAK_LOOK });
    }
    LineChart {
        title: format!("Time per sum vs N, {}: {} ({SWEEP_DTYPE}, inputs rotated past L2)", machine.gpu, part.caption()),
        y_desc: "median time per sum (µs)".into(),
        y_axis: Axis::Log,
        y_reach: 0.0,
        series,
        if_empty: format!("no {SWEEP_DTYPE} measurements with rotated inputs"),
        x_axis: XAxis::Elements,
    }
}

/// One point per N (points are sorted by N): every kernel at that N reads the same bytes.
fn dedup_x(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.dedup_by(|a, b| a.0 == b.0);
    points
}

/// Achieved bandwidth of every kernel, of the read-only ceiling and of the copy, as a share of
/// the theoretical peak (or in GB/s where the peak is unknown).
fn bandwidth_chart((machine, all): &(Machine, Vec<Row>), part: Part) -> LineChart {
    let rows = swept(all, part);
    let peak = peak_gbps(machine);
    let (scale, y_reach, y_desc) = match peak {
        Some(p) => (100.0 / p, 100.0, format!("achieved bandwidth (% of the {p:.0} GB/s peak)")),
        None => (1.0, 0.0, "achieved bandwidth (GB/s; peak unknown)".to_string()),
    };
    let mut series = kernel_series(all, &rows, |r| r.gbps() * scale);
    let ceiling = read_only_rows(&rows);
    if let Some(first) = ceiling.first() {
        series.push(Series { label: format!("read-only ceiling: {}", first.title), points: points(&ceiling, |r| r.gbps() * scale), look: READ_ONLY_LOOK });
    }
    let copies = copy_rows(&rows);
    if let Some(first) = copies.first() {
        series.push(Series { label: format!("copy (a pace): {}", first.title), points: points(&copies, |r| r.gbps() * scale), look: COPY_LOOK });
    }
    LineChart {
        title: format!("Bandwidth vs N, {}: {} ({SWEEP_DTYPE}, inputs rotated past L2)", machine.gpu, part.caption()),
        y_desc,
        y_axis: Axis::Linear,
        y_reach,
        series,
        if_empty: format!("no {SWEEP_DTYPE} measurements with rotated inputs"),
        x_axis: XAxis::Elements,
    }
}

/// The best correct kernel of each GPU: the one with the highest bandwidth at any N.
fn gpus_chart(data: &[(Machine, Vec<Row>)]) -> LineChart {
    let series = data
        .iter()
        .enumerate()
        .filter_map(|(i, (machine, rows))| {
            let rows: Vec<&Row> = rows.iter().filter(|r| r.dtype == SWEEP_DTYPE && r.cache == Cache::Rotated).collect();
            let correct = rows.iter().copied().filter(|r| r.status == Status::Correct);
            let best = correct.max_by(|a, b| a.gbps().total_cmp(&b.gbps()))?;
            let mine: Vec<&Row> = rows.iter().copied().filter(|r| r.kernel == best.kernel).collect();
            let label = format!("{}: {} ({})", machine.gpu, best.kernel, best.title);
            Some(Series { label, points: points(&mine, |r| r.gbps()), look: nth_look(i, false) })
        })
        .collect();
    let names: Vec<&str> = data.iter().map(|(m, _)| m.gpu.as_str()).collect();
    LineChart {
        title: format!("Best correct kernel vs N: {} ({SWEEP_DTYPE}, rotated)", names.join(", ")),
        y_desc: "achieved bandwidth (GB/s)".into(),
        y_axis: Axis::Linear,
        y_reach: 0.0,
        series,
        if_empty: format!("no correct kernel measured on {SWEEP_DTYPE} with rotated inputs"),
        x_axis: XAxis::Elements,
    }
}

// ---------------------------------------------------------------------------------------------
// Harris's table as a chart: step and cumulative speed-up at 2^22 ints.

#[derive(Clone, Debug, PartialEq)]
struct Bars {
    label: String,
    look: Look,
    /// One per group; `None` where there is nothing to show.
    values: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq)]
struct Panel {
    heading: String,
    bars: Vec<Bars>,
}

#[derive(Clone, Debug, PartialEq)]
struct BarChart {
    title: String,
    y_desc: String,
    groups: Vec<String>,
    panels: Vec<Panel>,
    if_empty: String,
}

const CACHE_LOOKS: [(Cache, Look, &str); 2] = [
    (Cache::Rotated, Look { colour: RGBColor(59, 91, 146), marker: Marker::Circle, dashed: false }, "inputs rotated past L2"),
    (Cache::Resident, Look { colour: RGBColor(230, 159, 0), marker: Marker::Triangle, dashed: false }, "inputs left in L2"),
];

fn speedup_chart((machine, rows): &(Machine, Vec<Row>)) -> BarChart {
    // Harris's seven kernels only (the corrected kernel 5; no variants, no later kernels).
    let is_harris = |r: &Row| crate::tables::HARRIS_G80.iter().any(|(name, ..)| *name == r.kernel);
    let harris: Vec<&Row> =
        rows.iter().filter(|r| r.status == Status::Correct && r.dtype == HARRIS_DTYPE && r.n == HARRIS_N && is_harris(r)).collect();
    let kernels = kernels_in_order(harris.iter().copied());
    let mut step = Vec::new();
    let mut cumulative = Vec::new();
    for (cache, look, what) in CACHE_LOOKS {
        let times: Vec<Option<f64>> = kernels
            .iter()
            .map(|k| harris.iter().find(|r| r.kernel == *k && r.cache == cache).map(|r| r.median_us))
            .collect();
        if times.iter().all(Option::is_none) {
            continue;
        }
        let label = format!("{} ({what})", cache.name());
        step.push(Bars { label: label.clone(), look, values: step_speedups(&times) });
        cumulative.push(Bars { label, look, values: cumulative_speedups(&times) });
    }
    let first = kernels.first().copied().unwrap_or_default();
    BarChart {
        title: format!("Speed-up of each kernel, {} ({HARRIS_DTYPE}, N = 2^{})", machine.gpu, HARRIS_N.trailing_zeros()),
        y_desc: "speed-up (×, from median times)".into(),
        groups: kernels.iter().map(|k| k.to_string()).collect(),
        panels: vec![
            Panel { heading: "step: over the kernel before".into(), bars: step },
            Panel { heading: format!("cumulative: over {first}"), bars: cumulative },
        ],
        if_empty: format!("no correct kernel measured on {HARRIS_DTYPE} at N = {HARRIS_N}"),
    }
}

/// Each time against the last one before it that was measured; none for the first.
fn step_speedups(times: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut before: Option<f64> = None;
    times
        .iter()
        .map(|t| {
            let speedup = before.zip(*t).map(|(b, t)| b / t);
            before = t.or(before);
            speedup
        })
        .collect()
}

/// Each time against the first measured one.
fn cumulative_speedups(times: &[Option<f64>]) -> Vec<Option<f64>> {
    let first = times.iter().flatten().next().copied();
    times.iter().map(|t| first.zip(*t).map(|(f, t)| f / t)).collect()
}

// ---------------------------------------------------------------------------------------------
// Rendering.

enum Figure {
    Lines(LineChart),
    Bars(BarChart),
}

const HEIGHT: u32 = 540;
const PANEL_HEIGHT: u32 = 320;
const PLOT_WIDTH: u32 = 740;
const TITLE_HEIGHT: u32 = 44;
const FONT: &str = "sans-serif";
const TITLE_SIZE: f64 = 22.0;
const LABEL_SIZE: f64 = 17.0;
const TICK_SIZE: f64 = 15.0;
const LEGEND_SIZE: f64 = 15.0;

impl Figure {
    /// The SVG text, or why these data cannot be drawn.
    fn render(&self) -> std::result::Result<String, String> {
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
fn check_points(chart: &LineChart) -> std::result::Result<(), String> {
    for s in &chart.series {
        if let Some((x, y)) = s.points.iter().find(|(x, y)| !(x.is_finite() && *x > 0.0 && y.is_finite() && *y > 0.0)) {
            return Err(format!("{}: the point at N = {x} has value {y}, which cannot be drawn (is a median time zero?)", s.label));
        }
    }
    Ok(())
}

fn check_bars(chart: &BarChart) -> std::result::Result<(), String> {
    for (panel, bars) in chart.panels.iter().flat_map(|p| p.bars.iter().map(move |b| (p, b))) {
        if let Some(v) = bars.values.iter().flatten().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(format!("{}, {}: speed-up {v} cannot be drawn (is a median time zero?)", panel.heading, bars.label));
        }
    }
    Ok(())
}

/// An SVG of `size` with the title on top; `body` draws below it.
fn render_svg(size: (u32, u32), title: &str, body: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Drawn) -> Drawn<String> {
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

fn render_message(title: &str, message: &str) -> Drawn<String> {
    render_svg((PLOT_WIDTH, HEIGHT), title, |area| {
        let (w, h) = area.dim_in_pixel();
        let style = (FONT, LABEL_SIZE).into_font().color(&RGBColor(96, 96, 96)).pos(Pos::new(HPos::Center, VPos::Center));
        area.draw_text(&format!("Nothing to draw: {message}."), &style, (w as i32 / 2, h as i32 / 2))
    })
}

fn render_line_chart(chart: &LineChart) -> Drawn<String> {
    let legend: Vec<(&str, Look)> = chart.series.iter().map(|s| (s.label.as_str(), s.look)).collect();
    render_svg((PLOT_WIDTH + legend_width(&legend), HEIGHT), &chart.title, |area| {
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

fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

fn draw_lines<Y>(area: &DrawingArea<SVGBackend, Shift>, chart: &LineChart, x: LogCoord<f64>, y: Y) -> Drawn
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
    for s in &chart.series {
        let style = s.look.colour.stroke_width(2);
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
fn power_of_two(v: f64) -> String {
    let k = v.log2().round();
    if (2f64.powf(k) - v).abs() < 1e-9 * v { format!("2^{k}") } else { number(v) }
}

/// `8 B`, `64 KiB`, `1 GiB` at powers of two (where the log-2 axis puts its ticks).
fn bytes_label(v: f64) -> String {
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
fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

fn render_bar_chart(chart: &BarChart) -> Drawn<String> {
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

fn draw_bar_panel(area: &DrawingArea<SVGBackend, Shift>, panel: &Panel, groups: &[String], y_desc: &str) -> Drawn {
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

// ---------------------------------------------------------------------------------------------
// Legend and markers.

const LEGEND_ROW: i32 = 26;
const LEGEND_SAMPLE: i32 = 36;

/// Width of the legend column: the longest label at a generous average glyph width, so the
/// text never runs off the picture whatever font the reader's browser picks.
fn legend_width(entries: &[(&str, Look)]) -> u32 {
    let longest = entries.iter().map(|(label, _)| label.chars().count()).max().unwrap_or(0);
    (LEGEND_SAMPLE as f64 + 28.0 + longest as f64 * LEGEND_SIZE / 1.24 * 0.58).ceil() as u32
}

/// The legend as its own column right of the plot: it can never cover a line.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, entries: &[(&str, Look)]) -> Drawn {
    let style = (FONT, LEGEND_SIZE).into_font().into_text_style(area).pos(Pos::new(HPos::Left, VPos::Center));
    let x0 = 8;
    for (i, (label, look)) in entries.iter().enumerate() {
        let y = 24 + i as i32 * LEGEND_ROW;
        let line = look.colour.stroke_width(2);
        if look.dashed {
            area.draw(&DashedPathElement::new(vec![(x0, y), (x0 + LEGEND_SAMPLE, y)], 8, 5, line))?;
        } else {
            area.draw(&PathElement::new(vec![(x0, y), (x0 + LEGEND_SAMPLE, y)], line))?;
        }
        draw_marker(area, (x0 + LEGEND_SAMPLE / 2, y), look.marker, look.colour)?;
        area.draw_text(label, &style, (x0 + LEGEND_SAMPLE + 10, y))?;
    }
    Ok(())
}

const MARKER_SIZE: i32 = 4;

fn draw_marker<CT: CoordTranslate>(area: &DrawingArea<SVGBackend, CT>, at: CT::From, marker: Marker, colour: RGBColor) -> Drawn {
    let r = MARKER_SIZE;
    let filled = colour.filled();
    let open = colour.stroke_width(2);
    let diamond = vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)];
    let square = [(-r, -r), (r, r)];
    match marker {
        Marker::Circle => area.draw(&Circle::new(at, r, filled)),
        Marker::OpenCircle => area.draw(&Circle::new(at, r, open)),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, r + 1, filled)),
        Marker::OpenTriangle => {
            let outline = vec![(0, -r - 1), (r + 1, r), (-r - 1, r), (0, -r - 1)];
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, open)))
        }
        Marker::Square => area.draw(&(EmptyElement::at(at) + Rectangle::new(square, filled))),
        Marker::OpenSquare => area.draw(&(EmptyElement::at(at) + Rectangle::new(square, open))),
        Marker::Diamond => area.draw(&(EmptyElement::at(at) + Polygon::new(diamond, filled))),
        Marker::OpenDiamond => {
            let mut outline = diamond.clone();
            outline.push(diamond[0]);
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, open)))
        }
        Marker::Cross => area.draw(&Cross::new(at, r, open)),
        Marker::Plus => {
            let across = PathElement::new(vec![(-r - 1, 0), (r + 1, 0)], open);
            let down = PathElement::new(vec![(0, -r - 1), (0, r + 1)], open);
            area.draw(&(EmptyElement::at(at) + across + down))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, chapter: u32, status: Status, n: usize, cache: Cache, median_us: f64) -> Row {
        let bytes = if kernel == "copy" { 8 * n } else { 4 * n };
        Row {
            kernel: kernel.into(), chapter, title: format!("{kernel} title"), status, dtype: Dtype::F32,
            n, block: 256, cache, median_us, min_us: median_us, max_us: median_us, bytes, working_set_bytes: bytes,
            repeats: 3, method: "test".into(),
        }
    }

    fn machine(peak: Option<f64>) -> Machine {
        Machine { gpu: "Test GPU".into(), peak_gbps: peak, ..Default::default() }
    }

    #[test]
    fn copy_floor_is_the_read_half_of_the_copy_at_its_bandwidth() {
        // A copy of 2^20 values in 10 µs moves 8 MiB; reading 4 MiB at that rate takes 5 µs.
        let rows = vec![row("copy", 0, Status::Pace, 1 << 20, Cache::Rotated, 10.0), row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0)];
        let chart = time_chart(&(machine(None), rows), Part::Harris);
        let floor = chart.series.iter().find(|s| s.label.starts_with("copy pace")).unwrap();
        assert_eq!(floor.points.len(), 1);
        assert!((floor.points[0].1 - 5.0).abs() < 1e-9, "{:?}", floor.points);
        assert!(!chart.series.iter().any(|s| s.label.starts_with("peak floor")), "no peak, no peak line");
    }

    #[test]
    fn read_only_ceiling_is_drawn_at_its_own_time_and_bandwidth_in_both_parts() {
        let rows = vec![
            row("read_only", 0, Status::Ceiling, 1 << 20, Cache::Rotated, 2.0),
            row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0),
            row("reduce9", 9, Status::Correct, 1 << 20, Cache::Rotated, 3.0),
        ];
        for part in [Part::Harris, Part::Modern] {
            let time = time_chart(&(machine(Some(4194.304)), rows.clone()), part);
            let ceiling = time.series.iter().find(|s| s.label.starts_with("read-only ceiling")).expect("a ceiling line");
            assert_eq!(ceiling.points, vec![((1 << 20) as f64, 2.0)]);
            assert_eq!(ceiling.look, READ_ONLY_LOOK);
            let bandwidth = bandwidth_chart(&(machine(Some(4194.304)), rows.clone()), part);
            let ceiling = bandwidth.series.iter().find(|s| s.label.starts_with("read-only ceiling")).expect("a ceiling line");
            // 4 MiB in 2 µs is 2097.152 GB/s: half of the 4194.304 GB/s peak.
            assert!((ceiling.points[0].1 - 50.0).abs() < 1e-9, "{:?}", ceiling.points);
            assert!(!bandwidth.series.iter().any(|s| s.label.starts_with("read_only:")), "the ceiling is not drawn as a kernel");
        }
    }

    #[test]
    fn peak_floor_reads_n_values_at_the_peak() {
        let rows = vec![row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0)];
        let chart = time_chart(&(machine(Some(4000.0)), rows), Part::Harris);
        let peak = chart.series.iter().find(|s| s.label.starts_with("peak floor")).unwrap();
        let expected_us = (4 << 20) as f64 / 4000e9 * 1e6;
        assert!((peak.points[0].1 - expected_us).abs() < 1e-9);
    }

    #[test]
    fn series_follow_book_order_and_mark_historical_kernels_dashed() {
        let rows = vec![
            row("reduce5", 5, Status::Correct, 1024, Cache::Rotated, 3.0),
            row("reduce1", 1, Status::Correct, 2048, Cache::Rotated, 9.0),
            row("reduce1", 1, Status::Correct, 1024, Cache::Rotated, 5.0),
            row("reduce5_volatile", 5, Status::Historical, 1024, Cache::Rotated, 3.0),
            row("reduce3", 3, Status::Correct, 1024, Cache::Resident, 1.0), // not rotated: left out
        ];
        let chart = time_chart(&(machine(None), rows), Part::Harris);
        let labels: Vec<&str> = chart.series.iter().map(|s| s.label.split(':').next().unwrap()).collect();
        assert_eq!(labels, ["reduce1", "reduce5", "reduce5_volatile"]);
        assert_eq!(chart.series[0].points, vec![(1024.0, 5.0), (2048.0, 9.0)], "sorted by N");
        assert!(chart.series[2].look.dashed && !chart.series[1].look.dashed);
        let looks: Vec<Look> = chart.series.iter().map(|s| s.look).collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                assert!(a.colour != b.colour && a.marker != b.marker, "{a:?} and {b:?} look alike");
            }
        }
    }

    #[test]
    fn looks_stay_distinct_past_one_cycle_of_colours() {
        let looks: Vec<(RGBColor, Marker)> = (0..64).map(|i| nth_look(i, false)).map(|l| (l.colour, l.marker)).collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(!looks[i + 1..].contains(a), "look {i} repeats");
        }
    }

    #[test]
    fn speedups_are_ratios_of_times_skipping_gaps() {
        let times = [Some(40.0), Some(20.0), None, Some(5.0)];
        assert_eq!(step_speedups(&times), [None, Some(2.0), None, Some(4.0)]);
        assert_eq!(cumulative_speedups(&times), [Some(1.0), Some(2.0), None, Some(8.0)]);
    }

    #[test]
    fn bandwidth_is_a_percentage_of_the_peak_when_known() {
        let rows = vec![row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 2.0)];
        let with_peak = bandwidth_chart(&(machine(Some(4194.304)), rows.clone()), Part::Harris);
        let gbps = rows[0].gbps();
        assert!((with_peak.series[0].points[0].1 - 100.0 * gbps / 4194.304).abs() < 1e-9);
        let without = bandwidth_chart(&(machine(None), rows), Part::Harris);
        assert!((without.series[0].points[0].1 - gbps).abs() < 1e-9);
    }

    #[test]
    fn a_zero_time_is_refused_not_drawn() {
        let rows = vec![row("reduce1", 1, Status::Correct, 1024, Cache::Rotated, 0.0)];
        let err = Figure::Lines(time_chart(&(machine(None), rows), Part::Harris)).render().unwrap_err();
        assert!(err.contains("reduce1") && err.contains("1024"), "{err}");
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(power_of_two(1048576.0), "2^20");
        assert_eq!(power_of_two(1000.0), "1000");
        assert_eq!(number(0.125), "0.125");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(250.0), "250");
        assert_eq!(number(0.30000000000000004), "0.3");
        assert_eq!(bytes_label(8.0), "8 B");
        assert_eq!(bytes_label(65536.0), "64 KiB");
        assert_eq!(bytes_label((1u64 << 30) as f64), "1 GiB");
        assert_eq!(bytes_label(1000.0), "1000");
    }
}
