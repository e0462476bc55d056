//! Harris's table as a chart: step and cumulative speed-up at 2^22 ints.

use crate::records::bench::{Cache, Machine, Row, Status};
use plotters::prelude::*;
use super::{HARRIS_DTYPE, HARRIS_N};
use super::looks::{LINE_WIDTH, Look, Marker, kernels_in_order};

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Bars {
    pub(super) label: String,
    pub(super) look: Look,
    /// One per group; `None` where there is nothing to show.
    pub(super) values: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Panel {
    pub(super) heading: String,
    pub(super) bars: Vec<Bars>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct BarChart {
    pub(super) title: String,
    pub(super) y_desc: String,
    pub(super) groups: Vec<String>,
    pub(super) panels: Vec<Panel>,
    pub(super) if_empty: String,
}

pub(super) const CACHE_LOOKS: [(Cache, Look, &str); 2] = [
    (Cache::Rotated, Look { colour: RGBColor(59, 91, 146), marker: Marker::Circle, dashed: false, width: LINE_WIDTH }, "inputs rotated past L2"),
    (Cache::Resident, Look { colour: RGBColor(230, 159, 0), marker: Marker::Triangle, dashed: false, width: LINE_WIDTH }, "inputs left in L2"),
];

pub(super) fn speedup_chart((machine, rows): &(Machine, Vec<Row>)) -> BarChart {
    // Harris's seven kernels only (the corrected kernel 5; no variants, no later kernels).
    let is_harris = |r: &Row| crate::book::chapters::harris::HARRIS_G80.iter().any(|(name, ..)| *name == r.kernel);
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
pub(super) fn step_speedups(times: &[Option<f64>]) -> Vec<Option<f64>> {
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
pub(super) fn cumulative_speedups(times: &[Option<f64>]) -> Vec<Option<f64>> {
    let first = times.iter().flatten().next().copied();
    times.iter().map(|t| first.zip(*t).map(|(f, t)| f / t)).collect()
}
