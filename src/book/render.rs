//! Everything drawn from measurements, redrawn in one call and with no GPU: the charts under
//! `plots/`, the addressing diagrams, and the tables the chapters include from
//! `book/generated/`. `reduction bench` calls it after measuring; `reduction bench --plot-only`
//! calls it alone.

use crate::error::{io_error, Result};
use crate::records::bench::{read_csv, Machine, Row};
use std::path::{Path, PathBuf};

pub use crate::records::bench::load_all;

/// The GPU whose results the book shows: the one named in `plots/data/book-gpu.txt` (the
/// benchmark writes it), else the first file.
pub fn book_gpu<'a>(data_dir: &Path, data: &'a [(Machine, Vec<Row>)]) -> Option<&'a (Machine, Vec<Row>)> {
    crate::records::book_gpu_slug(data_dir)
        .and_then(|slug| data.iter().find(|(m, _)| crate::records::slug(&m.gpu) == slug))
        .or_else(|| data.first())
}

/// Redraw every chart and table from the data under `root/plots/data`.
pub fn render_all(root: &Path) -> Result<Vec<PathBuf>> {
    let data_dir = root.join("plots/data");
    let data = load_all(&data_dir)?;
    let book = book_gpu(&data_dir, &data)
        .ok_or_else(|| io_error(&data_dir, "no results file (*.csv) to draw from; `reduction bench` writes one"))?;
    let mut written = Vec::new();
    written.extend(crate::book::tables::write_all(book, &root.join("book/generated"))?);
    written.extend(crate::book::plots::draw_all(&data, book, &root.join("plots"))?);
    written.extend(crate::book::diagrams::draw_all(&root.join("plots/diagrams"))?);
    written.extend(crate::book::mistakes::write_mistakes_table(&data_dir, &root.join("book/generated"))?);
    // Other element types, measured separately (`bench --dtype f64,f16,bf16 --out plots/data/types`).
    let types = data_dir.join("types").join(format!("{}.csv", crate::records::slug(&book.0.gpu)));
    if types.is_file() {
        let (machine, rows) = read_csv(&types)?;
        let path = root.join("book/generated/types.md");
        std::fs::write(&path, crate::book::tables::types_table(&machine, &rows)).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    // Bank conflicts counted by ncu (`tests/gpu-host.sh ncu`), where they were.
    let table = crate::book::tables::bank_conflicts_table(&data_dir.join("bank-conflicts"), &book.1)
        .unwrap_or_else(|| "*Not yet measured on this GPU: `OUT=results bash tests/gpu-host.sh ncu`, then copy `results/bank-conflicts/` to `plots/data/`.*\n".into());
    let path = root.join("book/generated/bank_conflicts.md");
    std::fs::write(&path, table).map_err(|e| io_error(&path, e))?;
    written.push(path);
    // The accuracy experiment (`reduction accuracy`), where it has run on the book's GPU.
    written.extend(crate::book::accuracy::render(&data_dir, &book.0.gpu, root)?);
    // The determinism levels (`reduction determinism`), where measured on the book's GPU.
    written.extend(crate::book::determinism::render(&data_dir, book, root)?);
    // Row sums (chapter 13), from plots/data/rows/: a note instead where none were measured.
    written.extend(crate::book::rows::render(&data_dir, &book.0, root)?);
    // What the row sums did with fewer rows than SMs, said from the same data.
    let row_sums = crate::records::rows::load(&crate::records::rows::results_dir(&data_dir), &crate::records::slug(&book.0.gpu))?;
    let path = root.join("book/generated/rows_few.md");
    let sm_count = row_sums.as_ref().map_or(book.0.sm_count, |(m, _)| m.sm_count);
    let f32_sums: Option<Vec<Row>> = row_sums.as_ref().map(|(_, rows)| rows.iter().filter(|r| r.dtype == crate::element::Dtype::F32).cloned().collect());
    let sentence = crate::book::tables::rows_few_sentence(&book.0.gpu, sm_count, f32_sums.as_deref());
    std::fs::write(&path, sentence).map_err(|e| io_error(&path, e))?;
    written.push(path);
    // Claims of the second review (issue 24): a block of 300 traced on the CPU, the profiles and
    // SASS of plots/data/ncu/ and plots/data/sass/, the read-only ceiling's shapes, the
    // sanitizer coverage of every kernel, from the logs in plots/data/sanitizer/.
    written.extend(crate::book::review::render(&data_dir, book, root)?);
    // The tile languages (plots/tile_peers.py): line counts, the generated CUDA, the comparisons.
    written.extend(crate::book::tile::render(&data_dir, &book.0, root)?);
    written.extend(crate::book::tables::write_sanitizer_summaries(&data_dir.join("sanitizer"), &root.join("book/generated/sanitizer"))?);
    // Across GPUs (`reduction multigpu allreduce`): plots/data/nccl/, or a "not yet measured" note.
    written.extend(crate::book::allreduce::render(root, Some(&crate::records::slug(&book.0.gpu)))?);
    Ok(written)
}
