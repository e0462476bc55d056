//! Charts drawn with plotters from benchmark results (SVG, embedded in the book).
//!
//! Each chart is first built as data — series of points taken from the CSV rows — and then drawn
//! by a renderer shared by every chart of its kind, so the numbers can be checked without reading
//! SVG and no chart repeats another's drawing code. Output is deterministic: the same rows give
//! the same bytes, which is what lets a test catch a committed chart that has gone stale.
//!
//! `lines` and `speedup` build the benchmark's charts as data, `experiments` those of the other
//! experiments, `looks` gives each series its colour and marker, and `draw` renders them all.

use crate::element::Dtype;
use crate::error::{io_error, Result};
use crate::records::bench::{Machine, Row};
use plotters::drawing::DrawingAreaErrorKind;
use std::path::{Path, PathBuf};

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

pub(crate) use experiments::*;
use draw::Figure;
use lines::{bandwidth_chart, gpus_chart, time_chart, Part};
use speedup::speedup_chart;

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
