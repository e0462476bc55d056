//! Where a launch's scratch buffers lie (`tests/gpu-host.sh scratch`,
//! `plots/data/experiments/scratch/<gpu>/<run>.csv`): the same launches timed from reducers whose
//! buffers sit at other addresses, in two processes, for the benchmark chapter's twins.

use super::common::size_label;
use crate::element::Dtype;
use crate::records::bench::{Cache, Row, ENTRY_POINT_HOST_KERNEL, ENTRY_POINT_KERNEL};
use std::fmt::Write as _;

/// One launch of the scratch experiment: its medians in the order of its placements, and the
/// addresses of its scratch buffers at each.
struct Placed {
    kernel: String,
    dtype: Dtype,
    n: usize,
    block: u32,
    at: Vec<String>,
    us: Vec<f64>,
}

/// The launches of one run of `tests/gpu-host.sh scratch`: the rows whose title says where their
/// scratch buffers were, grouped by launch (the entry point's own row, timed once, left out).
fn placements(rows: &[Row]) -> Vec<Placed> {
    let mut out: Vec<Placed> = Vec::new();
    for r in rows.iter().filter(|r| r.cache == Cache::Rotated && r.kernel != ENTRY_POINT_KERNEL && r.kernel != ENTRY_POINT_HOST_KERNEL) {
        let Some(at) = r.title.split("scratch at ").nth(1).map(|a| a.trim_end_matches(']').to_string()) else { continue };
        match out.iter_mut().find(|p| p.kernel == r.kernel && p.dtype == r.dtype && p.n == r.n && p.block == r.block) {
            Some(p) => {
                p.at.push(at);
                p.us.push(r.median_us);
            }
            None => out.push(Placed { kernel: r.kernel.clone(), dtype: r.dtype, n: r.n, block: r.block, at: vec![at], us: vec![r.median_us] }),
        }
    }
    out
}

/// A launch's fastest and slowest time over its placements.
fn range(us: &[f64]) -> (f64, f64) {
    us.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)))
}

/// A launch's spread over its placements: slowest over fastest, less one.
fn spread(us: &[f64]) -> f64 {
    let (lo, hi) = range(us);
    hi / lo - 1.0
}

/// What the scratch paragraph says of the book's GPU while only another GPU has run it.
pub const NOT_RUN_HERE: &str = "not yet measured";

/// Below this spread a launch's placements are called level, and its pattern is not drawn.
pub const SCRATCH_LEVEL: f64 = 0.02;

/// `entry_scratch.md`: the same launches timed from reducers whose scratch buffers (the partial
/// sums, the last block's ticket) lie at other addresses, in two processes
/// (`tests/gpu-host.sh scratch`; `plots/data/experiments/scratch/<gpu>/<run>.csv`): is where they
/// lie what makes the twins above differ?
pub fn entry_scratch(data_dir: &std::path::Path, book_gpu: &str) -> crate::error::Result<String> {
    let root = data_dir.join("experiments/scratch");
    let mut gpus: Vec<std::path::PathBuf> = std::fs::read_dir(&root).map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    gpus.sort();
    let mut s = String::new();
    for dir in gpus {
        let files = crate::records::csv_files(&dir);
        let [first, second] = files.as_slice() else { continue };
        let (machine, rows1) = crate::records::bench::read_csv(first)?;
        let (_, rows2) = crate::records::bench::read_csv(second)?;
        let (one, two) = (placements(&rows1), placements(&rows2));
        let pads = one.iter().map(|p| p.us.len()).max().unwrap_or(0);
        // The tables above are of the book's GPU; say so where these runs are of another.
        let book_has_run = root.join(crate::records::slug(book_gpu)).is_dir();
        let elsewhere = if machine.gpu == book_gpu {
            String::new()
        } else if book_has_run {
            format!("; the tables above are of the {book_gpu}, whose runs follow")
        } else {
            format!("; the tables above are of the {book_gpu}, where this is {NOT_RUN_HERE}")
        };
        write!(s, "**Where the scratch buffers lie.** Besides when they were timed, the two rows of a pair differ in where their reducers' scratch buffers (the partial sums, the last block's ticket) lie. \
            `tests/gpu-host.sh scratch` times the same launches {pads} times in one process, each from a new reducer made after another 2 MiB pad, so that only those addresses move, \
            then the whole run again in a second process ({}, {}; `plots/data/experiments/scratch/`{}).",
            machine.gpu, machine.date, elsewhere).unwrap();
        let mut table = String::from("The pattern marks each placement, in the order they were made, F where its time was in the faster half of the launch's range and s in the slower:\n\n\
            | kernel | type | n | block | fastest | slowest | spread | pattern | second process: pattern | largest change at one address |\n|---|---|--:|--:|--:|--:|--:|---|---|--:|\n");
        let pattern = |us: &[f64]| -> String {
            if spread(us) < SCRATCH_LEVEL {
                return "level".into();
            }
            let (lo, hi) = range(us);
            us.iter().map(|&t| if t < (lo + hi) / 2.0 { 'F' } else { 's' }).collect()
        };
        let (mut apart, mut same_pattern, mut same_addresses, mut worst_again, mut launches) = (0, 0, 0, 0.0f64, 0);
        let mut widest: Option<(f64, String)> = None;
        for p in &one {
            let Some(q) = two.iter().find(|q| q.kernel == p.kernel && q.dtype == p.dtype && q.n == p.n && q.block == p.block) else { continue };
            launches += 1;
            let same = p.at == q.at;
            same_addresses += usize::from(same);
            let again = if same { p.us.iter().zip(&q.us).map(|(a, b)| (b / a - 1.0).abs()).fold(0.0, f64::max) } else { f64::NAN };
            let (pa, qa) = (pattern(&p.us), pattern(&q.us));
            if spread(&p.us) >= SCRATCH_LEVEL {
                apart += 1;
                same_pattern += usize::from(pa == qa);
                worst_again = worst_again.max(again);
            }
            if widest.as_ref().is_none_or(|w| spread(&p.us) > w.0) {
                widest = Some((spread(&p.us), format!("{} at {} values of {}", p.kernel, size_label(p.n), p.dtype)));
            }
            let (lo, hi) = range(&p.us);
            writeln!(table, "| {} | {} | {} | {} | {lo:.2} µs | {hi:.2} µs | {:.1}% | `{pa}` | `{qa}` | {} |", p.kernel, p.dtype, size_label(p.n), p.block, 100.0 * spread(&p.us),
                if same { format!("{:.1}%", 100.0 * again) } else { "other addresses".into() }).unwrap();
        }
        let (widest, what) = widest.unwrap_or((0.0, String::new()));
        write!(s, " In {same_addresses} of the {launches} launches the second process put the buffers at the same addresses as the first. \
            In {apart} of them the first process's placements were {:.0}% or more apart, up to {:.1}% ({what}); \
            in {same_pattern} of those {apart} the second process drew the same pattern, and no time at one address moved by more than {:.1}% between the processes. \
",
            SCRATCH_LEVEL * 100.0, widest * 100.0, worst_again * 100.0).unwrap();
        // Launches of other kernels and sizes, timed at other moments, whose buffers were at the
        // same addresses: did they draw the same pattern?
        let mut groups: Vec<(&Vec<String>, Vec<String>)> = Vec::new();
        for p in one.iter().filter(|p| spread(&p.us) >= SCRATCH_LEVEL) {
            match groups.iter_mut().find(|g| *g.0 == p.at) {
                Some(g) => g.1.push(pattern(&p.us)),
                None => groups.push((&p.at, vec![pattern(&p.us)])),
            }
        }
        let shared: Vec<&(&Vec<String>, Vec<String>)> = groups.iter().filter(|g| g.1.len() > 1).collect();
        if !shared.is_empty() {
            let launches: usize = shared.iter().map(|g| g.1.len()).sum();
            let alike = shared.iter().filter(|g| g.1.iter().all(|x| *x == g.1[0])).count();
            writeln!(s, "{launches} of those launches shared their addresses with another (other kernels or sizes, timed at other moments of the run): \
                in {alike} of those {} sets of addresses, every launch drew the same pattern.", shared.len()).unwrap();
        }
        write!(s, "\n\n<details><summary>Every launch: its fastest and slowest placement in the first process, and its pattern in both</summary>\n\n{table}\n</details>\n").unwrap();
    }
    if s.is_empty() {
        s.push_str("*Where the scratch buffers lie is not yet measured: `tests/gpu-host.sh scratch` times the same launches with their buffers moved.*\n");
    }
    Ok(s)
}
