//! Everything drawn from measurements, redrawn in one call and with no GPU: the data read once
//! ([`Context::load`]), then every file of the [`manifest`] that `render` draws — the tables the
//! chapters include from `book/generated/`, the charts under `plots/`, the diagrams.
//! `reduction bench` calls it after measuring; `reduction bench --plot-only` calls it alone.

use super::context::Context;
use super::manifest::{manifest, Generated, Source};
use crate::error::{io_error, Result};
use crate::records::bench::{Machine, Row};
use std::path::{Path, PathBuf};

pub use crate::records::bench::load_all;

/// The GPU whose results the book shows: the one named in `plots/data/book-gpu.txt` (the
/// benchmark writes it), else the first file.
pub fn book_gpu<'a>(data_dir: &Path, data: &'a [(Machine, Vec<Row>)]) -> Option<&'a (Machine, Vec<Row>)> {
    crate::records::book_gpu_slug(data_dir)
        .and_then(|slug| data.iter().find(|(m, _)| crate::records::slug(&m.gpu) == slug))
        .or_else(|| data.first())
}

/// Redraw every chart and table from the data under `root/plots/data`, into `root`.
pub fn render_all(root: &Path) -> Result<Vec<PathBuf>> {
    let context = Context::load(root)?;
    context.book()?; // nothing is drawn without the benchmark's results
    write(&context, root, |_| true)
}

/// Redraw the files of one chapter (a file under `book/`, `rows.md`) from `context`, into `out`
/// (a folder with the layout of the repository: `out/book/generated/`, `out/plots/`).
pub fn render_chapter(context: &Context, out: &Path, chapter: &str) -> Result<Vec<PathBuf>> {
    write(context, out, |g| g.chapter == chapter)
}

/// Write every drawn entry of the manifest that `wanted` picks, in the manifest's order; the
/// paths written.
fn write(context: &Context, out: &Path, wanted: impl Fn(&Generated) -> bool) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for generated in manifest(context).into_iter().filter(|g| wanted(g)) {
        let Source::Drawn(draw) = &generated.source else { continue };
        let Some(text) = draw(context)? else { continue };
        let path = out.join(&generated.file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}
