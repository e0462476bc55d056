//! What the row sums are checked against: one reference per row (a compensated f64 sum, or the
//! exact sum of an exact-by-construction input), and each row's sum against it within the f32
//! error bound of [`super::data`].

use super::data::{compensated_sum, Checked, Reference};
use crate::element::Element;
use crate::rows::RowLayout;

/// The reference of every row of `host`, computed on every core.
pub fn row_references<T: Element>(host: &[T], layout: RowLayout) -> Vec<Reference> {
    let row = |r: usize| -> Reference {
        let start = r * layout.stride;
        let (sum_f64, abs_sum) = compensated_sum(&host[start..start + layout.cols]);
        Reference { n: layout.cols, sum_f64, sum_i64: 0, abs_sum, exact: false }
    };
    let mut out = vec![Reference { n: layout.cols, ..Reference::EMPTY }; layout.rows];
    if layout.cols == 0 {
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let per = layout.rows.div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        for (w, chunk) in out.chunks_mut(per).enumerate() {
            let row = &row;
            scope.spawn(move || chunk.iter_mut().enumerate().for_each(|(i, r)| *r = row(w * per + i)));
        }
    });
    out
}

/// The exact reference of every row of an exact-by-construction `host` ([`Checked::fill_exact`],
/// drawn for rows of `layout.cols` values): each row's sum must come back bit for bit. `Err` if
/// a row is not such an input.
pub fn exact_row_references<T: Checked>(host: &[T], layout: RowLayout) -> std::result::Result<Vec<Reference>, String> {
    (0..layout.rows)
        .map(|r| {
            let start = r * layout.stride;
            T::exact_reference(&host[start..start + layout.cols]).map_err(|why| format!("row {r}: {why}"))
        })
        .collect()
}

/// `Ok` if there is one sum per reference and each is right: bit for bit for an exact reference,
/// within the f32 error bound at addition depth `depth` ([`crate::rows::Launch::addition_depth`]) otherwise
/// (NaN never is); otherwise how many rows are wrong, and the first few.
pub fn check_rows(got: &[f32], references: &[Reference], depth: u64) -> std::result::Result<(), String> {
    if got.len() != references.len() {
        return Err(format!("{} sums for {} rows", got.len(), references.len()));
    }
    let wrong: Vec<String> = got.iter().zip(references).enumerate()
        .filter_map(|(r, (&g, reference))| f32::check_with(g, reference, depth).err().map(|why| format!("row {r}: {why}")))
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} rows wrong; {}", wrong.len(), got.len(), wrong.iter().take(3).cloned().collect::<Vec<_>>().join("; ")))
    }
}
