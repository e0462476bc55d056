//! "Harris's table, on this GPU" (`book/harris_table.md`): his G80 figures as published beside the
//! same kernels measured here at 2^22 and 2^25, his split of the speed-up into algorithm and
//! code, and what the tables say, in sentences.

use super::common::{find, pct, pct_of_ceiling, pct_of_peak, times, ceiling_for, CEILING_NOT_MEASURED};
use crate::element::Dtype;
use crate::kernels::names;
use crate::records::bench::{Cache, Machine, Row};
use std::fmt::Write as _;

/// Harris's G80 figures for 2^22 ints, as published in the closing table of "Optimizing Parallel
/// Reduction in CUDA" (2007): kernel, time (ms), bandwidth (GB/s), step and cumulative speed-up
/// as printed. Quoted, not measured here. His speed-ups are rounded, and each cumulative one is
/// the product of the rounded steps (a test checks the transcription against that), so they
/// differ in the last digit from ratios of his times (8.34× printed; 8.054 / 0.965 = 8.35).
pub const HARRIS_G80: [(&str, f64, f64, &str, &str); 7] = [
    (names::REDUCE1, 8.054, 2.083, "", ""),
    (names::REDUCE2, 3.456, 4.854, "2.33", "2.33"),
    (names::REDUCE3, 1.722, 9.741, "2.01", "4.68"),
    (names::REDUCE4, 0.965, 17.377, "1.78", "8.34"),
    (names::REDUCE5, 0.536, 31.289, "1.8", "15.01"),
    (names::REDUCE6, 0.381, 43.996, "1.41", "21.16"),
    (names::REDUCE7, 0.268, 62.671, "1.42", "30.04"),
];

/// The G80's theoretical peak as Harris gives it: a 384-bit bus at 900 MHz, two transfers per
/// clock, 384 × 1800 / 8 = 86.4 GB/s.
pub const G80_PEAK_GBPS: f64 = 86.4;

/// Harris's split of his speed-up, as published: "11.84x speedup, combined" for the algorithmic
/// changes, "2.54x" for the code changes (products of his rounded step speed-ups).
pub const HARRIS_SPLIT: (&str, &str) = ("11.84", "2.54");

/// What each step changed, for the tables.
pub const CHANGES: [(&str, &str); 7] = [
    (names::REDUCE1, "interleaved addressing, divergent branch"),
    (names::REDUCE2, "strided index, no divergence"),
    (names::REDUCE3, "sequential addressing"),
    (names::REDUCE4, "first add during load"),
    (names::REDUCE5, "unroll the last warp"),
    (names::REDUCE6, "complete unrolling"),
    (names::REDUCE7, "multiple elements per thread"),
];

/// Harris's split: changes of algorithm (addressing, the first add, cascading) and changes of
/// code (unrolling). Each entry is a step `from -> to`.
pub const ALGORITHMIC_STEPS: [(&str, &str); 4] = [(names::REDUCE1, names::REDUCE2), (names::REDUCE2, names::REDUCE3), (names::REDUCE3, names::REDUCE4), (names::REDUCE6, names::REDUCE7)];

pub const CODE_STEPS: [(&str, &str); 2] = [(names::REDUCE4, names::REDUCE5), (names::REDUCE5, names::REDUCE6)];

/// The sizes and cache modes the Harris tables are drawn for.
pub const HARRIS_TABLES: [(usize, Cache); 3] = [(1 << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated)];

/// `harris_2p22_l2-resident.md`
pub fn harris_file_name(n: usize, cache: Cache) -> String {
    format!("harris_2p{}_{}.md", n.trailing_zeros(), cache.name())
}

/// Harris's table for this GPU at one size and cache mode, with his G80 columns beside it.
pub fn harris_table(m: &Machine, rows: &[Row], n: usize, cache: Cache) -> String {
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
    let first = find(rows, names::REDUCE1, Dtype::I32, n, cache);
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
pub fn product(rows: &[Row], steps: &[(&str, &str)], n: usize, cache: Cache) -> Option<f64> {
    steps.iter().try_fold(1.0, |acc, (from, to)| {
        let (a, b) = (find(rows, from, Dtype::I32, n, cache)?, find(rows, to, Dtype::I32, n, cache)?);
        Some(acc * a.median_us / b.median_us)
    })
}

/// Harris's split of the total speed-up into algorithmic and code changes: his published
/// figures, then the same products of measured step speed-ups for each table.
pub fn speedup_split(rows: &[Row]) -> String {
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

/// "Reading the tables" of the Harris chapter: each observation computed from the rows, next to
/// Harris's published figures.
pub fn harris_reading(m: &Machine, rows: &[Row]) -> String {
    let at = |kernel: &str, n: usize, cache: Cache| find(rows, kernel, Dtype::I32, n, cache);
    let share = |r: &Row| m.peak_gbps.map(|p| 100.0 * r.gbps() / p);
    let g80_share = |k: usize| 100.0 * HARRIS_G80[k].2 / G80_PEAK_GBPS;
    let (n22, n25) = (1usize << 22, 1usize << 25);
    let mut s = String::new();

    match (at(names::REDUCE1, n22, Cache::Rotated), at(names::REDUCE7, n22, Cache::Rotated)) {
        (Some(k1), Some(k7)) if share(k1).is_some() => {
            let here = share(k1).unwrap();
            let better = if here > g80_share(0) { "less bad" } else { "no better" };
            writeln!(s, "- **The first kernel is {better}.** Kernel 1 reads at {} of this GPU's peak (2^22 `i32`, rotated); \
                on the G80 it read at {} of its peak ({} GB/s of {G80_PEAK_GBPS}). The cumulative speed-up from kernel 1 to \
                kernel 7 is {:.2}× here, against Harris's {}×.",
                pct(here), pct(g80_share(0)), HARRIS_G80[0].2, k1.median_us / k7.median_us, HARRIS_G80[6].4).unwrap();
        }
        _ => writeln!(s, "- **The first kernel:** kernels 1 and 7 at 2^22 `i32`, rotated, are not both measured here.").unwrap(),
    }

    match (at(names::REDUCE7, n22, Cache::Rotated), at(names::REDUCE7, n22, Cache::Resident), at(names::REDUCE7, n25, Cache::Rotated)) {
        (Some(rot), resident, large) if share(rot).is_some() => {
            let here = share(rot).unwrap();
            let verdict = if here < g80_share(6) { "further from the hardware's limit than it was on the G80" } else { "at least as close to the hardware's limit as on the G80" };
            let mut line = format!("- **At Harris's size, the last kernel is {verdict}.** His kernel 7 read at {} of the G80's peak; \
                here it reads at {} at 2^22 from DRAM", pct(g80_share(6)), pct(here));
            if let Some(p) = resident.and_then(share) {
                write!(line, ", {} with the input left in L2 (of the DRAM peak)", pct(p)).unwrap();
            }
            if let Some(p) = large.and_then(share) {
                write!(line, ", and {} at 2^25", pct(p)).unwrap();
            }
            writeln!(s, "{line}.").unwrap();
        }
        _ => writeln!(s, "- **The last kernel:** kernel 7 at 2^22 `i32`, rotated, is not measured here (or the peak is unknown).").unwrap(),
    }

    match (product(rows, &ALGORITHMIC_STEPS, n22, Cache::Rotated), product(rows, &CODE_STEPS, n22, Cache::Rotated)) {
        (Some(a), Some(c)) => {
            let harris_code: f64 = HARRIS_SPLIT.1.parse().expect("a number, as published");
            let verdict = if c < harris_code { "gave less than they did on the G80" } else { "gave at least as much as on the G80" };
            let mut line = format!("- **The steps that remove instructions {verdict}.** The unrolling of kernels 5 and 6 gave {c:.2}× \
                here (2^22, rotated), against Harris's {}×; the algorithmic steps gave {a:.2}×, against his {}×", HARRIS_SPLIT.1, HARRIS_SPLIT.0);
            // The largest single step, and what it changed.
            let steps: Vec<(usize, f64)> = (1..CHANGES.len())
                .filter_map(|k| Some((k, at(CHANGES[k - 1].0, n22, Cache::Rotated)?.median_us / at(CHANGES[k].0, n22, Cache::Rotated)?.median_us)))
                .collect();
            if let Some((k, step)) = steps.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
                write!(line, ". The largest single step here is kernel {} ({}): {step:.2}×", k + 1, CHANGES[k].1).unwrap();
            }
            writeln!(s, "{line}.").unwrap();
        }
        _ => writeln!(s, "- **Code and algorithm:** not every kernel is measured at 2^22 `i32`, rotated.").unwrap(),
    }

    match (at(names::REDUCE7, n22, Cache::Rotated), at(names::REDUCE7, n25, Cache::Rotated)) {
        (Some(small), Some(large)) => {
            let mut line = format!("- **Size decides.** Kernel 7 takes {:.2} µs at 2^22 and {:.2} µs at 2^25: eight times the data in \
                {} times the time", small.median_us, large.median_us, times(large.median_us / small.median_us));
            if let (Some(a), Some(b)) = (share(small), share(large)) {
                write!(line, ", {} and {} of the peak", pct(a), pct(b)).unwrap();
            }
            writeln!(s, "{line}. At 2^22 the fixed costs of a sum — the launches, the second pass, the tail of the grid — are a large \
                part of a few microseconds. The benchmark chapter draws the whole curve, up to 2^30.").unwrap();
        }
        _ => writeln!(s, "- **Size:** kernel 7 is not measured at both 2^22 and 2^25 `i32`, rotated.").unwrap(),
    }

    writeln!(s).unwrap();
    match at(names::REDUCE7, n25, Cache::Rotated) {
        Some(k7) => match ceiling_for(rows, k7) {
            Some(c) => writeln!(s, "At 2^25, kernel 7 reads at {} of the read-only ceiling ({:.0} GB/s: a kernel that only reads \
                every byte once, measured in the same run).", pct(100.0 * k7.gbps() / c.gbps()), c.gbps()).unwrap(),
            None => writeln!(s, "How far kernel 7 is from the read-only ceiling (a kernel that only reads every byte once) is \
                {CEILING_NOT_MEASURED}.").unwrap(),
        },
        None => writeln!(s, "Kernel 7 is not measured at 2^25 `i32` here.").unwrap(),
    }
    s
}
