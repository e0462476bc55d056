//! The modern chapters' tables: each kernel from kernel 7 on against the one it improves on, all
//! of them at the sizes that matter, and the element types through the 16-byte kernels.

use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row, Status};
use std::fmt::Write as _;
use super::{CEILING_NOT_MEASURED, find, has_ceiling, pct_of_ceiling, pct_of_peak};

/// Each modern kernel and the kernel its chapter improves on.
pub(super) const MODERN_STEPS: [(&str, &str); 8] = [
    ("reduce8_last_warp", "reduce7"),
    ("reduce8", "reduce8_last_warp"),
    ("reduce9", "reduce8"),
    ("reduce10_atomic", "reduce9"),
    ("reduce10_last_block", "reduce9"),
    ("reduce11", "reduce9"),
    ("reduce11_grid", "reduce10_last_block"),
    ("reduce12", "reduce9"),
];

/// The sizes the modern chapters compare at: where launch latency rules, the middle, and where
/// bandwidth rules.
pub(super) const MODERN_SIZES: [usize; 5] = [1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A kernel's time next to the kernel its chapter improves on, f32 and i32, inputs rotated.
pub(super) fn modern_step_table(m: &Machine, rows: &[Row], kernel: &str, previous: &str) -> String {
    let mut s = String::new();
    writeln!(s, "| input | {kernel} (µs) | GB/s | % of peak | % of read-only | {previous} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|--:|").unwrap();
    for dtype in [Dtype::F32, Dtype::I32] {
        for n in MODERN_SIZES {
            let Some(r) = find(rows, kernel, dtype, n, Cache::Rotated) else { continue };
            let before = find(rows, previous, dtype, n, Cache::Rotated)
                .map(|p| format!("{:.2} | {:.2}× |", p.median_us, p.median_us / r.median_us))
                .unwrap_or_else(|| " | |".into());
            writeln!(s, "| 2^{} {dtype} | {:.2} | {:.1} | {} | {} | {before}", n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
        }
    }
    s
}

/// Every kernel from kernel 7 on, the read-only ceiling, and the library peers, at the modern
/// sizes (f32, rotated): time and, in brackets, the fraction of the theoretical peak.
pub(super) fn modern_table(m: &Machine, rows: &[Row]) -> String {
    // (kernel, title, order): the book's kernels, then the ceiling, then the libraries.
    let mut kernels: Vec<(&str, &str, u8)> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && (r.chapter >= 7 || r.status == Status::Peer || r.is_read_only())) {
        if !kernels.iter().any(|(k, ..)| *k == r.kernel) {
            let order = if r.is_read_only() { 1 } else if r.status == Status::Peer { 2 } else { 0 };
            kernels.push((&r.kernel, &r.title, order));
        }
    }
    kernels.sort_by_key(|(_, _, order)| *order);
    let mut s = String::new();
    let sizes: Vec<String> = MODERN_SIZES.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| kernel | {} |", sizes.join(" | ")).unwrap();
    writeln!(s, "|---|{}", "--:|".repeat(MODERN_SIZES.len())).unwrap();
    for (kernel, title, _) in kernels {
        let cells: Vec<String> = MODERN_SIZES.iter().map(|&n| match find(rows, kernel, Dtype::F32, n, Cache::Rotated) {
            Some(r) => format!("{:.2} µs ({})", r.median_us, pct_of_peak(m, r).replace(" %", "%")),
            None => "–".into(),
        }).collect();
        writeln!(s, "| `{kernel}`: {title} | {} |", cells.join(" | ")).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only ceiling (`read_only`) is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

/// Half, single and double precision through the 16-byte kernels: the same number of values
/// is a different number of bytes, and the bytes decide the time.
pub fn types_table(m: &Machine, rows: &[Row]) -> String {
    let mut s = String::new();
    writeln!(s, "| kernel | type | n | time (µs) | GB/s | % of peak | % of read-only |\n|---|---|--:|--:|--:|--:|--:|").unwrap();
    let mut sorted: Vec<&Row> = rows.iter().filter(|r| r.cache == Cache::Rotated && r.n >= 1 << 28 && r.status == Status::Correct).collect();
    sorted.sort_by(|a, b| (&a.kernel, a.n, a.dtype.name()).cmp(&(&b.kernel, b.n, b.dtype.name())));
    for r in sorted {
        writeln!(s, "| `{}` | {} | 2^{} | {:.2} | {:.1} | {} | {} |", r.kernel, r.dtype, r.n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*% of read-only: the read-only ceiling for these types is {CEILING_NOT_MEASURED} (`--dtype f64,f16,bf16 --out plots/data/types`).*").unwrap();
    }
    s
}
