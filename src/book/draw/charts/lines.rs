//! Line charts against N (log x), built as data from the rows: time, bandwidth, and the GPUs side
//! by side.

use crate::book::chapters::entry;
use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row, Status, ENTRY_POINT_HOST_KERNEL, ENTRY_POINT_KERNEL};
use super::SWEEP_DTYPE;
use super::draw::{bytes_label, power_of_two};
use super::looks::{COPY_LOOK, ENTRY_LOOK, LINE_WIDTH, Look, PEAK_LOOK, READ_ONLY_LOOK, kernels_in_order, nth_look};

/// The legend's name for the entry point's lines, in every chart that draws them.
pub(super) const ENTRY_LABEL: &str = "entry point (Reducer::auto)";

/// Bytes a reduction of the same N reads. A copy row counts its read and its write.
pub(super) fn read_bytes(row: &Row) -> f64 {
    if row.is_copy() { row.bytes as f64 / 2.0 } else { row.bytes as f64 }
}

/// A usable peak: the CSV says `unknown` when the driver did not report the memory clock.
pub(super) fn peak_gbps(machine: &Machine) -> Option<f64> {
    machine.peak_gbps.filter(|p| p.is_finite() && *p > 0.0)
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Series {
    pub(super) label: String,
    /// (N, value), in increasing N.
    pub(super) points: Vec<(f64, f64)>,
    pub(super) look: Look,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Axis {
    Log,
    /// From zero.
    Linear,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct LineChart {
    pub(super) title: String,
    pub(super) y_desc: String,
    pub(super) y_axis: Axis,
    /// The y axis goes at least this high (100 on a percentage of the peak: the gap shows).
    pub(super) y_reach: f64,
    pub(super) series: Vec<Series>,
    /// Said in place of the chart when there is no series to draw.
    pub(super) if_empty: String,
    /// What the x axis counts.
    pub(super) x_axis: XAxis,
}

/// The quantity on a line chart's (logarithmic, base 2) x axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum XAxis {
    /// N, the elements summed: ticks `2^20`.
    Elements,
    /// A message size in bytes: ticks `1 MiB`.
    Bytes,
    /// The condition number of a sum, Σ|x| / |Σx|: ticks `1e6`.
    Condition,
}

impl XAxis {
    pub(super) fn desc(self) -> &'static str {
        match self {
            XAxis::Elements => "N (elements summed)",
            XAxis::Bytes => "message size (bytes)",
            XAxis::Condition => "condition number Σ|x| / |Σx|",
        }
    }

    pub(super) fn label(self, v: f64) -> String {
        match self {
            XAxis::Elements => power_of_two(v),
            XAxis::Bytes => bytes_label(v),
            XAxis::Condition => format!("{v:.0e}"),
        }
    }
}

/// The rows the charts against N use: one element type, inputs rotated past L2.
/// Which kernels a chart shows: Harris's seven, or kernel 7 and everything after it with the
/// library peers and the entry point (one chart of all of them would have too many lines to
/// read). The read-only ceiling and the copy are in both; a host-visible row (one call by the
/// host's clock) is in neither: it has its own chart, [`host_chart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    Harris,
    Modern,
}

impl Part {
    pub(super) fn shows(self, row: &Row) -> bool {
        match self {
            _ if row.is_yardstick() => true,
            Part::Harris => (1..=7).contains(&row.chapter) && row.status != Status::Peer,
            Part::Modern => (row.chapter >= 7 || row.status == Status::Peer || row.is_entry_point()) && !row.is_host_visible(),
        }
    }

    pub(super) fn caption(self) -> &'static str {
        match self {
            Part::Harris => "Harris's kernels",
            Part::Modern => "modern kernels",
        }
    }
}

pub(super) fn swept(rows: &[Row], part: Part) -> Vec<&Row> {
    rows.iter().filter(|r| r.dtype == SWEEP_DTYPE && r.cache == Cache::Rotated && part.shows(r)).collect()
}

/// One series per kernel of `rows` (historical ones dashed), valued by `value`. Looks follow
/// the kernel's place among all the GPU's kernels (`all`), so they match from chart to chart.
pub(super) fn kernel_series(all: &[Row], rows: &[&Row], value: impl Fn(&Row) -> f64) -> Vec<Series> {
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

/// The entry point's own line among `rows` (its graph-amortized rows: the kernel the rule picks
/// at each N, measured like every kernel), drawn in [`ENTRY_LOOK`]; `None` where it was not
/// measured. [`kernel_series`] is given the other rows: the entry point is not one more kernel.
pub(super) fn entry_series(rows: &[&Row], value: impl Fn(&Row) -> f64) -> Option<Series> {
    let mine: Vec<&Row> = rows.iter().copied().filter(|r| r.kernel == ENTRY_POINT_KERNEL).collect();
    (!mine.is_empty()).then(|| Series { label: format!("{ENTRY_LABEL}: the rule's kernel at each N"), points: points(&mine, value), look: ENTRY_LOOK })
}

/// (N, value) for each row, sorted by N.
pub(super) fn points(rows: &[&Row], value: impl Fn(&Row) -> f64) -> Vec<(f64, f64)> {
    let mut sorted = rows.to_vec();
    sorted.sort_by_key(|r| r.n);
    sorted.iter().map(|r| (r.n as f64, value(r))).collect()
}

pub(super) fn copy_rows<'a>(rows: &[&'a Row]) -> Vec<&'a Row> {
    rows.iter().copied().filter(|r| r.is_copy()).collect()
}

pub(super) fn read_only_rows<'a>(rows: &[&'a Row]) -> Vec<&'a Row> {
    rows.iter().copied().filter(|r| r.is_read_only()).collect()
}

/// Harris's "performance comparison" for this GPU: time per sum, with the measured read-only
/// ceiling, the copy's pace and the theoretical floor under it.
pub(super) fn time_chart((machine, all): &(Machine, Vec<Row>), part: Part) -> LineChart {
    let rows = swept(all, part);
    let kernels: Vec<&Row> = rows.iter().copied().filter(|r| !r.is_yardstick() && !r.is_entry_point()).collect();
    let mut series: Vec<Series> = entry_series(&rows, |r| r.median_us).into_iter().collect();
    series.extend(kernel_series(all, &kernels, |r| r.median_us));
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
pub(super) fn dedup_x(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.dedup_by(|a, b| a.0 == b.0);
    points
}

/// Achieved bandwidth of every kernel, of the read-only ceiling and of the copy, as a share of
/// the theoretical peak (or in GB/s where the peak is unknown).
pub(super) fn bandwidth_chart((machine, all): &(Machine, Vec<Row>), part: Part) -> LineChart {
    let rows = swept(all, part);
    let peak = peak_gbps(machine);
    let (scale, y_reach, y_desc) = match peak {
        Some(p) => (100.0 / p, 100.0, format!("achieved bandwidth (% of the {p:.0} GB/s peak)")),
        None => (1.0, 0.0, "achieved bandwidth (GB/s; peak unknown)".to_string()),
    };
    let kernels: Vec<&Row> = rows.iter().copied().filter(|r| !r.is_entry_point()).collect();
    let mut series: Vec<Series> = entry_series(&rows, |r| r.gbps() * scale).into_iter().collect();
    series.extend(kernel_series(all, &kernels, |r| r.gbps() * scale));
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

/// One call as its caller waits for it, against N (the `_host` rows: the launches, the result's
/// way to the host and the wait, by the host's clock): the entry point's and each library's, with
/// the entry point's GPU time per sum (graph-amortized) dashed under its own, so the gap between
/// the two is what a call adds to the sum. Every library's host-visible rows are drawn; the
/// table beside it (`host_visible.md`) keeps only those of the entry point's run.
pub(super) fn host_chart((machine, all): &(Machine, Vec<Row>), dtype: Dtype) -> LineChart {
    let rows: Vec<&Row> = all.iter().filter(|r| r.dtype == dtype && r.cache == Cache::Rotated).collect();
    let of = |kernel: &str| -> Vec<&Row> { rows.iter().copied().filter(|r| r.kernel == kernel).collect() };
    let mut series = Vec::new();
    let (entry, gpu) = (of(ENTRY_POINT_HOST_KERNEL), of(ENTRY_POINT_KERNEL));
    if !entry.is_empty() {
        series.push(Series { label: format!("{ENTRY_LABEL}: one call, by the host's clock"), points: points(&entry, |r| r.median_us), look: ENTRY_LOOK });
        if !gpu.is_empty() {
            let look = Look { dashed: true, width: LINE_WIDTH, ..ENTRY_LOOK };
            series.push(Series { label: format!("{ENTRY_LABEL}: GPU time per sum (graph-amortized)"), points: points(&gpu, |r| r.median_us), look });
        }
    }
    let peers: Vec<&Row> = rows.iter().copied().filter(|r| r.is_host_visible() && !r.is_entry_point()).collect();
    series.extend(kernel_series(all, &peers, |r| r.median_us));
    LineChart {
        title: format!("One call as its caller waits for it vs N, {}: the entry point and the libraries ({dtype})", machine.gpu),
        y_desc: "median time of one call, by the host's clock (µs)".into(),
        y_axis: Axis::Log,
        y_reach: 0.0,
        series,
        if_empty: format!("no host-visible {dtype} measurements (one call and its result, by the host's clock)"),
        x_axis: XAxis::Elements,
    }
}

/// The entry point's time (graph-amortized) over the fastest library's at each N, for f32 and
/// i32: below the line at 1 the entry point is the faster. A library counts only where it ran in
/// the entry point's own run (the tables' rule, [`entry::SAME_RUN`]): runs can land on
/// different H200s, a few percent apart, which is the size of the gaps this chart is about.
pub(super) fn entry_ratio_chart((machine, all): &(Machine, Vec<Row>)) -> LineChart {
    let mut series = Vec::new();
    for (i, dtype) in [Dtype::F32, Dtype::I32].into_iter().enumerate() {
        fn of<'a>(all: &'a [Row], kernel: &'a str, dtype: Dtype) -> impl Iterator<Item = &'a Row> + 'a {
            // Every size, the ragged ones too: a gap only there is still a gap.
            all.iter().filter(move |r| r.kernel == kernel && r.dtype == dtype && r.cache == Cache::Rotated)
        }
        let mut points: Vec<(f64, f64)> = of(all, ENTRY_POINT_KERNEL, dtype)
            .filter_map(|ours| {
                let fastest = entry::PEERS
                    .iter()
                    .flat_map(|(peer, _)| of(all, peer, dtype).filter(|r| r.n == ours.n && r.method.contains(entry::SAME_RUN)))
                    .map(|r| r.median_us)
                    .min_by(f64::total_cmp)?;
                Some((ours.n as f64, ours.median_us / fastest))
            })
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !points.is_empty() {
            series.push(Series { label: format!("{dtype}: the entry point's time ÷ the fastest library's"), points, look: nth_look(i, false) });
        }
    }
    if let (Some(first), Some(last)) = (series.iter().flat_map(|s| s.points.first()).map(|p| p.0).min_by(f64::total_cmp), series.iter().flat_map(|s| s.points.last()).map(|p| p.0).max_by(f64::total_cmp)) {
        series.push(Series { label: "1: as fast as the fastest library".into(), points: vec![(first, 1.0), (last, 1.0)], look: PEAK_LOOK });
    }
    LineChart {
        title: format!("The entry point against the fastest library of its run vs N, {} (inputs rotated past L2)", machine.gpu),
        y_desc: "entry point's time ÷ fastest library's (below 1: the entry point is faster)".into(),
        y_axis: Axis::Linear,
        y_reach: 1.0,
        series,
        if_empty: "no entry-point measurement with a library measured in the same run".into(),
        x_axis: XAxis::Elements,
    }
}

/// The best correct kernel of each GPU: the one with the highest bandwidth at any N.
pub(super) fn gpus_chart(data: &[(Machine, Vec<Row>)]) -> LineChart {
    let series = data
        .iter()
        .enumerate()
        .filter_map(|(i, (machine, rows))| {
            let rows: Vec<&Row> = rows.iter().filter(|r| r.dtype == SWEEP_DTYPE && r.cache == Cache::Rotated).collect();
            let correct = rows.iter().copied().filter(|r| r.status == Status::Correct && !r.is_entry_point());
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
