//! Charts drawn with plotters from the records (SVG, embedded in the book): the shared drawing
//! layer beneath the chapters' generators, with the diagrams and figures.
//!
//! Each chart is first built as data — series of points taken from the CSV rows — and then drawn
//! by a renderer shared by every chart of its kind, so the numbers can be checked without reading
//! SVG and no chart repeats another's drawing code. Output is deterministic: the same rows give
//! the same bytes, which is what lets a test catch a committed chart that has gone stale.
//!
//! `lines` and `speedup` build the benchmark's charts as data (time, bandwidth, the GPUs side by
//! side, and one call as its caller waits for it), `experiments` the chart types of
//! the other chapters (error against N or against a condition number, bandwidth against message
//! size, any series against N), `looks` gives each series its colour and marker, and `draw`
//! renders them all.

use crate::element::Dtype;
use crate::error::{io_error, Result};
use crate::records::bench::{Machine, Row};
use plotters::drawing::DrawingAreaErrorKind;
use std::path::Path;

/// The charts against N show one element type; f32 and i32 move the same bytes and run alike.
const SWEEP_DTYPE: Dtype = Dtype::F32;
/// Harris's table measured 2^22 ints; the speed-up chart repeats it at that size.
const HARRIS_N: usize = 1 << 22;
const HARRIS_DTYPE: Dtype = Dtype::I32;

mod draw;
mod experiments;
mod lines;
mod looks;
mod speedup;
#[cfg(test)]
mod tests;

pub use experiments::{accuracy_chart, bytes_chart, conditioning_chart, line_chart, BytesSeries, MethodPoints, PlainSeries};
use draw::Figure;
use lines::{bandwidth_chart, entry_ratio_chart, gpus_chart, host_chart, time_chart, Part};
use speedup::speedup_chart;

/// A plotters result on the SVG backend (which writes into a `String`).
type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// The benchmark's charts, by file name under `plots/`.
pub const BENCHMARK_CHARTS: [&str; 9] = [
    "time.svg", "bandwidth.svg", "time_modern.svg", "bandwidth_modern.svg", "speedup.svg", "gpus.svg", "host_visible_f32.svg", "host_visible_i32.svg", "entry_vs_peers.svg",
];

/// One of [`BENCHMARK_CHARTS`]: those of the book's GPU from `book`, and the comparison of all
/// GPUs from `data` (the book's alone where there is no other).
pub fn benchmark_chart(name: &str, data: &[(Machine, Vec<Row>)], book: &(Machine, Vec<Row>)) -> Result<String> {
    let all_gpus = if data.is_empty() { std::slice::from_ref(book) } else { data };
    let figure = match name {
        "time.svg" => Figure::Lines(time_chart(book, Part::Harris)),
        "bandwidth.svg" => Figure::Lines(bandwidth_chart(book, Part::Harris)),
        "time_modern.svg" => Figure::Lines(time_chart(book, Part::Modern)),
        "bandwidth_modern.svg" => Figure::Lines(bandwidth_chart(book, Part::Modern)),
        "speedup.svg" => Figure::Bars(speedup_chart(book)),
        "gpus.svg" => Figure::Lines(gpus_chart(all_gpus)),
        "host_visible_f32.svg" => Figure::Lines(host_chart(book, Dtype::F32)),
        "host_visible_i32.svg" => Figure::Lines(host_chart(book, Dtype::I32)),
        "entry_vs_peers.svg" => Figure::Lines(entry_ratio_chart(book)),
        other => return Err(crate::error::Error::Config { setting: format!("the chart {other}"), reason: format!("the benchmark's charts are {}", BENCHMARK_CHARTS.join(", ")) }),
    };
    svg(name, figure.render())
}

/// A rendered chart as the book inlines it ([`fit_to_page`]), or why it could not be drawn, as
/// an error on its file.
fn svg(name: &str, rendered: std::result::Result<String, String>) -> Result<String> {
    rendered.map(fit_to_page).map_err(|why| io_error(Path::new(name), why))
}

/// Let a picture inlined in the book shrink to the width of the page (its viewBox keeps the
/// proportions); plotters only writes a fixed width and height, which viewers other than a
/// browser still use.
pub fn fit_to_page(svg: String) -> String {
    svg.replacen("<svg ", "<svg style=\"max-width: 100%; height: auto\" ", 1)
}
