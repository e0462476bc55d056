//! Harris's tables for this GPU: his G80 figures as published beside the same kernels measured
//! here, each chapter's before-and-after, his split of the speed-up, and his kernel 5 as written.

use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row};
use std::fmt::Write as _;
use super::{find, pct_of_ceiling, pct_of_peak};

/// Harris's G80 figures for 2^22 ints, as published in the closing table of "Optimizing Parallel
/// Reduction in CUDA" (2007): kernel, time (ms), bandwidth (GB/s), step and cumulative speed-up
/// as printed. Quoted, not measured here. His speed-ups are rounded, and each cumulative one is
/// the product of the rounded steps (a test checks the transcription against that), so they
/// differ in the last digit from ratios of his times (8.34× printed; 8.054 / 0.965 = 8.35).
pub const HARRIS_G80: [(&str, f64, f64, &str, &str); 7] = [
    ("reduce1", 8.054, 2.083, "", ""),
    ("reduce2", 3.456, 4.854, "2.33", "2.33"),
    ("reduce3", 1.722, 9.741, "2.01", "4.68"),
    ("reduce4", 0.965, 17.377, "1.78", "8.34"),
    ("reduce5", 0.536, 31.289, "1.8", "15.01"),
    ("reduce6", 0.381, 43.996, "1.41", "21.16"),
    ("reduce7", 0.268, 62.671, "1.42", "30.04"),
];

/// The G80's theoretical peak as Harris gives it: a 384-bit bus at 900 MHz, two transfers per
/// clock, 384 × 1800 / 8 = 86.4 GB/s.
pub const G80_PEAK_GBPS: f64 = 86.4;

/// Harris's split of his speed-up, as published: "11.84x speedup, combined" for the algorithmic
/// changes, "2.54x" for the code changes (products of his rounded step speed-ups).
pub const HARRIS_SPLIT: (&str, &str) = ("11.84", "2.54");

/// What each step changed, for the tables.
pub(super) const CHANGES: [(&str, &str); 7] = [
    ("reduce1", "interleaved addressing, divergent branch"),
    ("reduce2", "strided index, no divergence"),
    ("reduce3", "sequential addressing"),
    ("reduce4", "first add during load"),
    ("reduce5", "unroll the last warp"),
    ("reduce6", "complete unrolling"),
    ("reduce7", "multiple elements per thread"),
];

/// Harris's split: changes of algorithm (addressing, the first add, cascading) and changes of
/// code (unrolling). Each entry is a step `from -> to`.
pub(super) const ALGORITHMIC_STEPS: [(&str, &str); 4] = [("reduce1", "reduce2"), ("reduce2", "reduce3"), ("reduce3", "reduce4"), ("reduce6", "reduce7")];
pub(super) const CODE_STEPS: [(&str, &str); 2] = [("reduce4", "reduce5"), ("reduce5", "reduce6")];

/// The sizes and cache modes the Harris tables are drawn for.
pub const HARRIS_TABLES: [(usize, Cache); 3] = [(1 << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated)];

/// Harris's table for this GPU at one size and cache mode, with his G80 columns beside it.
pub(super) fn harris_table(m: &Machine, rows: &[Row], n: usize, cache: Cache) -> String {
    let mut s = String::new();
    let where_ = match cache {
        Cache::Resident => format!("the same {} MiB input every time, so it stays in the {:.0} MiB L2", (4 * n) >> 20, m.l2_bytes as f64 / (1 << 20) as f64),
        Cache::Rotated => "inputs rotated through a pool larger than L2, so every sum reads DRAM".to_string(),
    };
    writeln!(s, "{}: 2^{} `i32` values ({} MiB), 256 threads per block, {where_}. The G80 time, GB/s, step and cumulative \
        columns are Harris's published figures (2007, 2^22 ints, 128 threads per block); his G80 % of peak is his GB/s over \
        the {G80_PEAK_GBPS} GB/s he gives as the G80's peak.\n",
        m.gpu, n.trailing_zeros(), (4 * n) >> 20).unwrap();
    writeln!(s, "| kernel | change | time (µs) | GB/s | % of peak | % of read-only | step | cumulative | G80 time (ms) | G80 GB/s | G80 % of peak | G80 step | G80 cumulative |").unwrap();
    writeln!(s, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|").unwrap();
    let first = find(rows, "reduce1", Dtype::I32, n, cache);
    let mut previous: Option<&Row> = None;
    for (k, (kernel, change)) in CHANGES.iter().enumerate() {
        let (_, g80_ms, g80_gbps, g80_step, g80_total) = HARRIS_G80[k];
        let printed = |x: &str| if x.is_empty() { String::new() } else { format!("{x}×") };
        let g80 = format!("{g80_ms:.3} | {g80_gbps:.3} | {:.1} % | {} | {}", 100.0 * g80_gbps / G80_PEAK_GBPS, printed(g80_step), printed(g80_total));
        match find(rows, kernel, Dtype::I32, n, cache) {
            Some(r) => {
                let step = previous.map(|p| format!("{:.2}×", p.median_us / r.median_us)).unwrap_or_default();
                let total = first.filter(|_| k > 0).map(|f| format!("{:.2}×", f.median_us / r.median_us)).unwrap_or_default();
                writeln!(s, "| {} | {change} | {:.2} | {:.1} | {} | {} | {step} | {total} | {g80} |", k + 1, r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
                previous = Some(r);
            }
            None => {
                writeln!(s, "| {} | {change} | not measured | | | | | | {g80} |", k + 1).unwrap();
                previous = None;
            }
        }
    }
    s
}

/// The product of the speed-ups of some steps at one size, or None if a kernel is missing.
pub(super) fn product(rows: &[Row], steps: &[(&str, &str)], n: usize, cache: Cache) -> Option<f64> {
    steps.iter().try_fold(1.0, |acc, (from, to)| {
        let (a, b) = (find(rows, from, Dtype::I32, n, cache)?, find(rows, to, Dtype::I32, n, cache)?);
        Some(acc * a.median_us / b.median_us)
    })
}

/// Harris's split of the total speed-up into algorithmic and code changes: his published
/// figures, then the same products of measured step speed-ups for each table.
pub(super) fn speedup_split(rows: &[Row]) -> String {
    let mut s = String::new();
    writeln!(s, "| input | algorithmic (addressing, first add, cascading) | code (unrolling) | total |").unwrap();
    writeln!(s, "|---|--:|--:|--:|").unwrap();
    let (algorithmic, code) = HARRIS_SPLIT;
    writeln!(s, "| G80, 2^22 ints (Harris, as published) | {algorithmic}× | {code}× | {}× |", HARRIS_G80[6].4).unwrap();
    for (n, cache) in HARRIS_TABLES {
        match (product(rows, &ALGORITHMIC_STEPS, n, cache), product(rows, &CODE_STEPS, n, cache)) {
            (Some(a), Some(c)) => writeln!(s, "| 2^{} ints, {} | {a:.2}× | {c:.2}× | {:.2}× |", n.trailing_zeros(), cache.name(), a * c).unwrap(),
            _ => writeln!(s, "| 2^{} ints, {} | not measured | | |", n.trailing_zeros(), cache.name()).unwrap(),
        }
    }
    s
}

/// One kernel against the one before it, at the sizes the chapters discuss.
pub(super) fn chapter_table(m: &Machine, rows: &[Row], kernel: &str) -> String {
    let index = CHANGES.iter().position(|(k, _)| *k == kernel).expect("a Harris kernel");
    let previous = index.checked_sub(1).map(|i| CHANGES[i].0);
    let mut s = String::new();
    let header = match previous {
        Some(p) => format!("| input | {kernel} (µs) | GB/s | % of peak | % of read-only | {p} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|--:|"),
        None => format!("| input | {kernel} (µs) | GB/s | % of peak | % of read-only |\n|---|--:|--:|--:|--:|"),
    };
    writeln!(s, "{header}").unwrap();
    let cases = [(1usize << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated), (1 << 30, Cache::Rotated)];
    for dtype in [Dtype::I32, Dtype::F32] {
        for (n, cache) in cases {
            let Some(r) = find(rows, kernel, dtype, n, cache) else { continue };
            let label = format!("2^{} {dtype}, {}", n.trailing_zeros(), cache.name());
            let mut line = format!("| {label} | {:.2} | {:.1} | {} | {} |", r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r));
            if let Some(p) = previous {
                match find(rows, p, dtype, n, cache) {
                    Some(prev) => write!(line, " {:.2} | {:.2}× |", prev.median_us, prev.median_us / r.median_us).unwrap(),
                    None => line.push_str(" | |"),
                }
            }
            writeln!(s, "{line}").unwrap();
        }
    }
    s
}

/// Harris's 2007 kernel 5 next to the corrected one: where it was checked and what it cost.
pub(super) fn historical_kernel5(rows: &[Row]) -> String {
    let mut s = String::new();
    for dtype in [Dtype::I32, Dtype::F32] {
        let old: Vec<&Row> = rows.iter().filter(|r| r.kernel == "reduce5_volatile" && r.dtype == dtype).collect();
        let checked = old.len();
        let mean_ratio = old.iter().filter_map(|o| find(rows, "reduce5", dtype, o.n, o.cache).map(|new| new.median_us / o.median_us)).collect::<Vec<_>>();
        if checked == 0 {
            writeln!(s, "- `{dtype}`: the 2007 form was not measured.").unwrap();
            continue;
        }
        let (lo, hi) = mean_ratio.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        // Measurements, not sizes: the benchmark measures some sizes twice (from DRAM and left in L2).
        let rotated = old.iter().filter(|r| r.cache == Cache::Rotated).count();
        let resident = checked - rotated;
        let what = if resident == 0 { format!("{rotated} sizes") } else { format!("{rotated} sizes read from DRAM and {resident} left in L2") };
        writeln!(s, "- `{dtype}`: the 2007 form gave the right sum in all {checked} measurements the benchmark checked before timing \
            ({what}); the `__syncwarp()` form took {lo:.2}× to {hi:.2}× its time.").unwrap();
    }
    s
}
