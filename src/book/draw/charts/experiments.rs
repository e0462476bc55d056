//! Charts of the other experiments, drawn by the same renderer as the benchmark's: the accuracy
//! of a sum against N, the all-reduce sweep against message size, and the row sums.

use crate::error::Result;
use super::svg;
use super::draw::Figure;
use super::lines::{Axis, LineChart, Series, XAxis};
use super::looks::{KERNEL_COLOURS, KERNEL_MARKERS, LINE_WIDTH, Look, Marker, PEAK_LOOK, nth_look};

/// The accuracy chart: each method's median relative error against N, log-log, with the two
/// textbook bounds for f32 dashed. Errors of exactly zero, and the infinite errors of a sum that
/// overflowed, cannot be drawn on a log axis and are left out (the chapter's table shows them).
/// One method's median relative errors: its name, what it is, and (x, error) points.
pub type MethodPoints<X> = (&'static str, &'static str, Vec<(X, f64)>);

pub fn accuracy_chart(gpu: &str, medians: &[MethodPoints<usize>]) -> Result<String> {
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
    svg("plots/accuracy.svg", Figure::Lines(chart).render())
}

/// The accuracy chart against the condition number: each method's median relative error
/// against the median condition number of its inputs, log-log, with the tree's bound
/// `cond · ⌈log₂ n⌉ · u` dashed. Zero errors (exact sums) are left out, as above.
pub fn conditioning_chart(gpu: &str, n: usize, medians: &[MethodPoints<f64>]) -> Result<String> {
    let mut series: Vec<Series> = medians
        .iter()
        .enumerate()
        .map(|(i, (method, _, points))| Series {
            label: (*method).to_string(),
            points: points.iter().filter(|(_, e)| *e > 0.0 && e.is_finite()).copied().collect(),
            look: nth_look(i, false),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let conditions: Vec<f64> = medians.iter().flat_map(|(_, _, p)| p.iter().map(|&(c, _)| c)).collect();
    if !conditions.is_empty() {
        let u = crate::data::F32_UNIT_ROUNDOFF;
        let depth = (n as f64).log2().ceil();
        let (lo, hi) = conditions.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        let points: Vec<(f64, f64)> = [lo, hi].iter().map(|&c| (c, (c * depth * u).min(1.0))).collect();
        series.push(Series { label: "bound, balanced tree: cond·log2(n)·u".into(), points, look: PEAK_LOOK });
    }
    let chart = LineChart {
        title: format!("Relative error of a sum of 2^{} values vs its condition number, {gpu}", n.trailing_zeros()),
        y_desc: "relative error |sum − exact| / |exact|".into(),
        y_axis: Axis::Log,
        y_reach: 0.0,
        series,
        if_empty: "no conditioning measurements".into(),
        x_axis: XAxis::Condition,
    };
    svg("plots/accuracy_conditioning.svg", Figure::Lines(chart).render())
}

/// One line of a chart against message size: `group` picks the colour, so that two measures of
/// one run (bus and algorithm bandwidth) share it, the second `dashed`.
#[derive(Clone, Debug, PartialEq)]
pub struct BytesSeries {
    pub label: String,
    /// (bytes, value), in increasing bytes; values above zero.
    pub points: Vec<(f64, f64)>,
    pub group: usize,
    pub dashed: bool,
}

/// Draw a chart of `series` against message size on a log axis (the all-reduce benchmark's, and
/// its model's), the values on a log axis too or, with `linear`, on a linear one from zero; with
/// the look of every other chart of the book. `name` names it in errors.
pub fn bytes_chart(name: &str, title: &str, y_desc: &str, series: &[BytesSeries], if_empty: &str, linear: bool) -> Result<String> {
    let n = KERNEL_COLOURS.len();
    let chart = LineChart {
        title: title.to_string(),
        y_desc: y_desc.to_string(),
        y_axis: if linear { Axis::Linear } else { Axis::Log },
        y_reach: 0.0,
        series: series
            .iter()
            .map(|s| Series {
                label: s.label.clone(),
                points: s.points.clone(),
                look: Look { colour: KERNEL_COLOURS[s.group % n], marker: KERNEL_MARKERS[(s.group + if s.dashed { 4 } else { 0 }) % n], dashed: s.dashed, width: LINE_WIDTH },
            })
            .collect(),
        if_empty: if_empty.to_string(),
        x_axis: XAxis::Bytes,
    };
    svg(name, Figure::Lines(chart).render())
}

/// Series given as `(label, (N, value) points, dashed)`.
pub type PlainSeries = Vec<(String, Vec<(f64, f64)>, bool)>;

/// A line chart against N for data that is not a full sum (the row sums of [`crate::rows`]),
/// drawn by the same renderer as every chart here: one series per `(label, points, dashed)`,
/// looks in list order, a log y axis.
pub fn line_chart(title: String, y_desc: String, series: PlainSeries) -> Result<String> {
    let series = series.into_iter().enumerate().map(|(i, (label, points, dashed))| Series { label, points, look: nth_look(i, dashed) }).collect();
    let chart = LineChart { title, y_desc, y_axis: Axis::Log, y_reach: 0.0, series, if_empty: "no measurements".into(), x_axis: XAxis::Elements };
    svg("plots/rows.svg", Figure::Lines(chart).render())
}
