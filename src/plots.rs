//! Charts drawn with plotters from benchmark results (SVG, embedded in the book).

use crate::error::Result;
use crate::results::{Machine, Row};
use std::path::{Path, PathBuf};

/// Draw every chart: those of the book's GPU into `plots_dir`, and the comparison of all GPUs.
pub fn draw_all(_data: &[(Machine, Vec<Row>)], _book: &(Machine, Vec<Row>), _plots_dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(Vec::new())
}
