//! Markdown tables for the chapters, generated from benchmark results: Harris's table for the
//! book's GPU, each chapter's before-and-after, the split of the speed-up, and the machine
//! line. The chapters `{{#include}}` them from `book/generated/`, so no measured number in the
//! book is typed by hand.

use crate::error::{io_error, Result};
use crate::element::Dtype;
use crate::results::{Cache, Machine, Row, Status, COPY_KERNEL, READ_ONLY_KERNEL};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
const CHANGES: [(&str, &str); 7] = [
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
const ALGORITHMIC_STEPS: [(&str, &str); 4] = [("reduce1", "reduce2"), ("reduce2", "reduce3"), ("reduce3", "reduce4"), ("reduce6", "reduce7")];
const CODE_STEPS: [(&str, &str); 2] = [("reduce4", "reduce5"), ("reduce5", "reduce6")];

/// The sizes and cache modes the Harris tables are drawn for.
pub const HARRIS_TABLES: [(usize, Cache); 3] = [(1 << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated)];

/// Write every table and sentence the chapters include into `out_dir` (`book/generated/`).
pub fn write_all(book: &(Machine, Vec<Row>), out_dir: &Path) -> Result<Vec<PathBuf>> {
    let (machine, rows) = book;
    let mut files = vec![("machine.md".to_string(), machine_line(machine, rows))];
    for (n, cache) in HARRIS_TABLES {
        files.push((harris_file_name(n, cache), harris_table(machine, rows, n, cache)));
    }
    files.push(("speedup_split.md".into(), speedup_split(rows)));
    for (k, (kernel, _)) in CHANGES.iter().enumerate() {
        files.push((format!("kernel{}.md", k + 1), chapter_table(machine, rows, kernel)));
    }
    for (kernel, previous) in MODERN_STEPS {
        files.push((format!("{kernel}.md"), modern_step_table(machine, rows, kernel, previous)));
    }
    files.push(("modern.md".into(), modern_table(machine, rows)));
    files.push(("best.md".into(), best_table(machine, rows)));
    files.push(("ceiling.md".into(), ceiling_table(machine, rows)));
    files.push(("kernel5_historical.md".into(), historical_kernel5(rows)));
    files.push(("intro_ratio.md".into(), add_to_fetch_ratio(machine)));
    files.push(("harris_reading.md".into(), harris_reading(machine, rows)));
    files.push(("resident.md".into(), resident_fixed_cost(machine, rows)));
    files.push(("kernel4_limit.md".into(), kernel4_limit(machine, rows)));
    files.push(("kernel7_large.md".into(), kernel7_large(machine, rows)));
    files.push(("little.md".into(), bytes_in_flight(machine, rows)));
    files.push(("pace.md".into(), copy_pace(machine, rows)));

    std::fs::create_dir_all(out_dir).map_err(|e| io_error(out_dir, e))?;
    let mut written = Vec::new();
    for (name, text) in files {
        let path = out_dir.join(name);
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// `harris_2p22_l2-resident.md`
pub fn harris_file_name(n: usize, cache: Cache) -> String {
    format!("harris_2p{}_{}.md", n.trailing_zeros(), cache.name())
}

fn find<'a>(rows: &'a [Row], kernel: &str, dtype: Dtype, n: usize, cache: Cache) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == cache)
}

/// The read-only kernel's measurement beside `row`: same element type, size and cache mode.
fn ceiling_for<'a>(rows: &'a [Row], row: &Row) -> Option<&'a Row> {
    find(rows, READ_ONLY_KERNEL, row.dtype, row.n, row.cache)
}

/// Whether this GPU's data has any read-only measurement yet.
fn has_ceiling(rows: &[Row]) -> bool {
    rows.iter().any(Row::is_read_only)
}

/// Said wherever a comparison with the read-only ceiling would stand, until it is measured.
pub const CEILING_NOT_MEASURED: &str = "not yet measured on this GPU: the next `cargo run --release -- bench` measures it beside the kernels";

/// What was measured, where: the GPU, its memory (the bus width and clock the theoretical peak
/// comes from), the software, the date and the command; and whether the read-only ceiling
/// that the "% of read-only" columns divide by has been measured.
fn machine_line(m: &Machine, rows: &[Row]) -> String {
    let clock = if m.sm_clock_mhz > 0 { format!(" at up to {} MHz", m.sm_clock_mhz) } else { String::new() };
    let memory = match (m.peak_gbps, m.memory_bus_bits()) {
        (Some(p), Some(bus)) => format!(
            "; memory: a {bus}-bit bus at {} MHz, two transfers per clock, so a theoretical peak of 2 × {} MHz × {bus} bit / 8 = {p:.0} GB/s",
            m.memory_clock_mhz, m.memory_clock_mhz
        ),
        (Some(p), None) => format!("; theoretical peak {p:.0} GB/s"),
        (None, _) => "; theoretical peak unknown (the driver reported no memory clock)".into(),
    };
    let mut s = format!(
        "*Measured on an {} ({} SMs{clock}, {:.0} MiB of L2{memory}; driver CUDA {}, NVRTC {}) on {} by `{}`.*\n",
        m.gpu, m.sm_count, m.l2_bytes as f64 / (1 << 20) as f64, m.driver_cuda, m.nvrtc, m.date, m.command
    );
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only ceiling (`kernels/read_only.cu`), which the \"% of read-only\" columns divide by, is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

fn pct_of_peak(m: &Machine, row: &Row) -> String {
    m.peak_gbps.map(|p| format!("{:.1} %", 100.0 * row.gbps() / p)).unwrap_or_else(|| "–".into())
}

/// `row`'s bandwidth as a share of the read-only kernel's at the same size, type and cache mode.
fn pct_of_ceiling(rows: &[Row], row: &Row) -> String {
    ceiling_for(rows, row).map(|c| format!("{:.1} %", 100.0 * row.gbps() / c.gbps())).unwrap_or_else(|| "–".into())
}

/// Harris's table for this GPU at one size and cache mode, with his G80 columns beside it.
fn harris_table(m: &Machine, rows: &[Row], n: usize, cache: Cache) -> String {
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
fn product(rows: &[Row], steps: &[(&str, &str)], n: usize, cache: Cache) -> Option<f64> {
    steps.iter().try_fold(1.0, |acc, (from, to)| {
        let (a, b) = (find(rows, from, Dtype::I32, n, cache)?, find(rows, to, Dtype::I32, n, cache)?);
        Some(acc * a.median_us / b.median_us)
    })
}

/// Harris's split of the total speed-up into algorithmic and code changes: his published
/// figures, then the same products of measured step speed-ups for each table.
fn speedup_split(rows: &[Row]) -> String {
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

/// Each modern kernel and the kernel its chapter improves on.
const MODERN_STEPS: [(&str, &str); 8] = [
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
const MODERN_SIZES: [usize; 5] = [1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A kernel's time next to the kernel its chapter improves on, f32 and i32, inputs rotated.
fn modern_step_table(m: &Machine, rows: &[Row], kernel: &str, previous: &str) -> String {
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
fn modern_table(m: &Machine, rows: &[Row]) -> String {
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

/// Every correct kernel from kernel 7 on, and the libraries, as a share of the read-only
/// ceiling at the sizes where bandwidth rules (f32, rotated); or why there is no such table.
fn ceiling_table(m: &Machine, rows: &[Row]) -> String {
    if !has_ceiling(rows) {
        return format!("*The read-only ceiling is {CEILING_NOT_MEASURED}; this table then shows each kernel as a share of it.*\n");
    }
    let sizes = [1usize << 24, 1 << 26, 1 << 28, 1 << 30];
    let mut s = String::new();
    let heads: Vec<String> = sizes.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| kernel | {} |\n|---|{}", heads.join(" | "), "--:|".repeat(sizes.len())).unwrap();
    let ceiling: Vec<String> = sizes.iter().map(|&n| match find(rows, READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated) {
        Some(c) => format!("{:.1} GB/s ({} of peak)", c.gbps(), pct_of_peak(m, c).replace(" %", "%")),
        None => "–".into(),
    }).collect();
    writeln!(s, "| read-only ceiling | {} |", ceiling.join(" | ")).unwrap();
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && ((r.chapter >= 7 && r.status == Status::Correct) || r.status == Status::Peer || r.is_copy())) {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    for kernel in kernels {
        let cells: Vec<String> = sizes.iter().map(|&n| {
            find(rows, kernel, Dtype::F32, n, Cache::Rotated).map_or("–".into(), |r| pct_of_ceiling(rows, r).replace(" %", "%"))
        }).collect();
        let name = if kernel == COPY_KERNEL { "`copy` (read + write, a pace)".to_string() } else { format!("`{kernel}`") };
        writeln!(s, "| {name} | {} |", cells.join(" | ")).unwrap();
    }
    // Where a sum beat the read-only kernel, it is no ceiling there: say so, from the data.
    let beaten: Vec<String> = sizes.iter().filter_map(|&n| {
        let ceiling = find(rows, READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated)?;
        let best = rows.iter()
            .filter(|r| r.dtype == Dtype::F32 && r.n == n && r.cache == Cache::Rotated && r.status == Status::Correct && r.kernel != READ_ONLY_KERNEL)
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))?;
        (best.median_us < ceiling.median_us).then(|| format!(
            "at 2^{} `{}` took {:.2} µs and the read-only kernel {:.2} µs", n.trailing_zeros(), best.kernel, best.median_us, ceiling.median_us))
    }).collect();
    if !beaten.is_empty() {
        writeln!(s, "\nThe read-only kernel is a ceiling only where the bytes decide the time: {}. There, the fixed costs \
            of a launch (its one launch, the zeroing of its result, its last blocks) weigh as much as the reading, and a \
            sum that is faster at those costs is faster overall.", beaten.join("; ")).unwrap();
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

/// One kernel against the one before it, at the sizes the chapters discuss.
fn chapter_table(m: &Machine, rows: &[Row], kernel: &str) -> String {
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
fn historical_kernel5(rows: &[Row]) -> String {
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
        writeln!(s, "- `{dtype}`: the 2007 form gave the right sum at all {checked} sizes the benchmark checked before timing it; \
            the `__syncwarp()` form took {lo:.2}× to {hi:.2}× its time.").unwrap();
    }
    s
}

/// The fastest correct kernel at each size (f32, inputs rotated), against the theoretical peak
/// and the read-only ceiling, with the copy's pace and the cuBLAS peer beside it.
fn best_table(m: &Machine, rows: &[Row]) -> String {
    let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == Dtype::F32 && r.status == Status::Correct).map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    writeln!(s, "| n (f32) | fastest kernel | time (µs) | GB/s | % of peak | % of read-only | read-only GB/s | copy GB/s (pace) | cuBLAS Sasum (µs) |").unwrap();
    writeln!(s, "|--:|---|--:|--:|--:|--:|--:|--:|--:|").unwrap();
    for n in sizes.into_iter().filter(|n| n.is_power_of_two() && n.trailing_zeros() % 2 == 0) {
        let Some(best) = fastest(rows, Dtype::F32, n) else { continue };
        let gbps = |kernel: &str| find(rows, kernel, Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.0}", r.gbps())).unwrap_or_else(|| "–".into());
        let peer = find(rows, "cublas_sasum", Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.2}", r.median_us)).unwrap_or_default();
        writeln!(s, "| 2^{} | {} | {:.2} | {:.1} | {} | {} | {} | {} | {peer} |", n.trailing_zeros(), best.kernel, best.median_us, best.gbps(),
            pct_of_peak(m, best), pct_of_ceiling(rows, best), gbps(READ_ONLY_KERNEL), gbps(COPY_KERNEL)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only columns: the ceiling is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

/// The fastest correct kernel of the book at one size (inputs rotated).
fn fastest<'a>(rows: &'a [Row], dtype: Dtype, n: usize) -> Option<&'a Row> {
    rows.iter()
        .filter(|r| r.dtype == dtype && r.n == n && r.status == Status::Correct && r.cache == Cache::Rotated)
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

// ---------------------------------------------------------------------------------------------
// Sentences the chapters include: each claim about a speed, a ratio or a behaviour, computed from
// the measurements, so that the prose says what the data says (or that it is not measured yet).

/// `f32` additions one SM can start per clock, by compute capability: the row "32-bit
/// floating-point add, multiply, multiply-add" of the CUDA C++ Programming Guide's table of
/// arithmetic instruction throughput (results per clock cycle per multiprocessor).
const FP32_LANES_PER_SM: [(&str, u32); 16] = [
    ("5.0", 128), ("5.2", 128), ("5.3", 128),
    ("6.0", 64), ("6.1", 128), ("6.2", 128),
    ("7.0", 64), ("7.2", 64), ("7.5", 64),
    ("8.0", 64), ("8.6", 128), ("8.7", 128), ("8.9", 128),
    ("9.0", 128), ("10.0", 128), ("12.0", 128),
];

/// The most threads one SM holds at once, by compute capability: "Maximum number of resident
/// threads per SM" in the CUDA C++ Programming Guide's technical specifications.
const MAX_THREADS_PER_SM: [(&str, u32); 9] =
    [("7.0", 2048), ("7.2", 2048), ("7.5", 1024), ("8.0", 2048), ("8.6", 1536), ("8.7", 2048), ("8.9", 1536), ("9.0", 2048), ("12.0", 1536)];

fn by_capability(table: &[(&str, u32)], compute_capability: &str) -> Option<u32> {
    table.iter().find(|(cc, _)| *cc == compute_capability).map(|(_, v)| *v)
}

/// `f32` lanes per SM for a compute capability written `major.minor`, if the table has it.
pub fn fp32_lanes_per_sm(compute_capability: &str) -> Option<u32> {
    by_capability(&FP32_LANES_PER_SM, compute_capability)
}

/// `x` in a sentence: to the first decimal below 10, whole above.
fn times(x: f64) -> String {
    if x < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") }
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// The introduction's claim: how much faster the GPU adds than its memory delivers the numbers,
/// from the header (SMs, SM clock, compute capability) and the theoretical peak.
fn add_to_fetch_ratio(m: &Machine) -> String {
    if m.sm_count == 0 || m.sm_clock_mhz == 0 {
        return format!("*Not yet measured: the {}'s results file does not record its SM count and SM clock; the next \
            `cargo run --release -- bench` writes them, and this comparison with them.*\n", m.gpu);
    }
    let Some(lanes) = fp32_lanes_per_sm(&m.compute_capability) else {
        return format!("*Compute capability {} is not in this book's table of `f32` lanes per SM (`src/tables.rs`), so the \
            ratio is not computed for the {}.*\n", m.compute_capability, m.gpu);
    };
    let Some(peak) = m.peak_gbps else {
        return format!("*The {}'s theoretical memory bandwidth is unknown (the driver reported no memory clock), so the \
            ratio is not computed.*\n", m.gpu);
    };
    let adds_per_s = m.sm_count as f64 * lanes as f64 * m.sm_clock_mhz as f64 * 1e6;
    let values_per_s = peak * 1e9 / 4.0;
    format!(
        "On the {} this book was last measured on: {} SMs × {lanes} `f32` adders per SM (compute capability {}; the CUDA \
        C++ Programming Guide's table of arithmetic throughput) × {} MHz (the SM clock the driver reports as its maximum) = \
        {:.1} trillion `f32` additions per second. Its memory's theoretical peak, {peak:.0} GB/s, delivers {:.2} trillion \
        4-byte values per second. It could add **{} times** faster than it can fetch the numbers.\n",
        m.gpu, m.sm_count, m.compute_capability, m.sm_clock_mhz, adds_per_s / 1e12, values_per_s / 1e12, times(adds_per_s / values_per_s)
    )
}

/// "Reading the tables" of the Harris chapter: each observation computed from the rows, next to
/// Harris's published figures.
fn harris_reading(m: &Machine, rows: &[Row]) -> String {
    let at = |kernel: &str, n: usize, cache: Cache| find(rows, kernel, Dtype::I32, n, cache);
    let share = |r: &Row| m.peak_gbps.map(|p| 100.0 * r.gbps() / p);
    let g80_share = |k: usize| 100.0 * HARRIS_G80[k].2 / G80_PEAK_GBPS;
    let (n22, n25) = (1usize << 22, 1usize << 25);
    let mut s = String::new();

    match (at("reduce1", n22, Cache::Rotated), at("reduce7", n22, Cache::Rotated)) {
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

    match (at("reduce7", n22, Cache::Rotated), at("reduce7", n22, Cache::Resident), at("reduce7", n25, Cache::Rotated)) {
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

    match (at("reduce7", n22, Cache::Rotated), at("reduce7", n25, Cache::Rotated)) {
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
    match at("reduce7", n25, Cache::Rotated) {
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

/// What re-reading one buffer that fits in L2 measures: mostly the fixed cost of a sum.
fn resident_fixed_cost(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 22;
    let (Some(resident), Some(dram), Some(tiny)) = (
        find(rows, "reduce7", Dtype::I32, n, Cache::Resident),
        find(rows, "reduce7", Dtype::I32, n, Cache::Rotated),
        find(rows, "reduce7", Dtype::I32, 1 << 16, Cache::Rotated),
    ) else {
        return "*Kernel 7 is not measured at 2^22 `i32` in L2 and from DRAM, and at 2^16, on this GPU.*\n".into();
    };
    let mut s = format!(
        "Kernel 7 summing the same 16 MiB of `i32` again and again, so that it stays in L2, takes {:.2} µs a sum ({:.0} GB/s, {} \
        of the DRAM peak); from DRAM it takes {:.2} µs. The same kernel takes {:.2} µs for a sum of only 2^16 values (256 KiB): \
        {:.0} % of the L2-resident time is what any sum with this kernel pays whatever its size — the launches, the second pass, \
        the tail of the grid — not the time to read 16 MiB.",
        resident.median_us, resident.gbps(), pct_of_peak(m, resident), dram.median_us, tiny.median_us, 100.0 * tiny.median_us / resident.median_us
    );
    match find(rows, READ_ONLY_KERNEL, Dtype::I32, n, Cache::Resident) {
        Some(c) => write!(s, " The read-only kernel reads the same buffer in L2 in {:.2} µs ({:.0} GB/s).", c.median_us, c.gbps()).unwrap(),
        None => write!(s, " What reading it from L2 alone takes (the read-only kernel on the same buffer) is {CEILING_NOT_MEASURED}.").unwrap(),
    }
    s.push('\n');
    s
}

/// What limits kernel 4, as far as the measurements say without a profiler.
fn kernel4_limit(m: &Machine, rows: &[Row]) -> String {
    let sizes = [1usize << 22, 1 << 30];
    let pairs: Vec<(usize, &Row, &Row)> = sizes.iter()
        .filter_map(|&n| Some((n, find(rows, "reduce4", Dtype::I32, n, Cache::Rotated)?, find(rows, "reduce5", Dtype::I32, n, Cache::Rotated)?)))
        .collect();
    if pairs.len() < sizes.len() || m.peak_gbps.is_none() {
        return "*Kernels 4 and 5 are not both measured at 2^22 and 2^30 `i32` on this GPU (or its peak is unknown).*\n".into();
    }
    let shares: Vec<String> = pairs.iter().map(|(n, k4, _)| format!("{} of the theoretical peak at 2^{}", pct_of_peak(m, k4), n.trailing_zeros())).collect();
    let speedups: Vec<String> = pairs.iter().map(|(n, k4, k5)| format!("{:.2}× at 2^{}", k4.median_us / k5.median_us, n.trailing_zeros())).collect();
    let costs: Vec<f64> = pairs.iter().map(|(_, k4, k5)| 100.0 * (1.0 - k5.median_us / k4.median_us)).collect();
    let (lo, hi) = costs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    format!(
        "What the measurements show (no profiler was run on it): kernel 4 reads at {} (`i32`, inputs rotated), so memory \
        bandwidth is not what holds it back. Kernel 5 removes the loop tests and the barriers of the last warp's steps and \
        changes nothing else, and it is faster by {}: those steps cost kernel 4 {lo:.0} % to {hi:.0} % of its time.\n",
        shares.join(" and "), speedups.join(" and ")
    )
}

/// Kernel 7 at the largest size, against the peak, the read-only ceiling and the copy.
fn kernel7_large(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let Some(k7) = find(rows, "reduce7", Dtype::F32, n, Cache::Rotated) else {
        return "*Kernel 7 is not measured at 2^30 `f32` on this GPU.*\n".into();
    };
    let mut s = format!("At 2^30 `f32` values, inputs rotated, kernel 7 reads {:.0} GB/s: {} of the theoretical peak", k7.gbps(), pct_of_peak(m, k7));
    match ceiling_for(rows, k7) {
        Some(c) => write!(s, " and {} of the read-only ceiling ({:.0} GB/s)", pct(100.0 * k7.gbps() / c.gbps()), c.gbps()).unwrap(),
        None => write!(s, "; the read-only ceiling is {CEILING_NOT_MEASURED}").unwrap(),
    }
    if let Some(copy) = find(rows, COPY_KERNEL, Dtype::F32, n, Cache::Rotated) {
        write!(s, ". The copy kernel moves {:.0} GB/s there, counting what it reads and what it writes", copy.gbps()).unwrap();
    }
    s.push_str(".\n");
    s
}

/// Little's law for kernels 7 to 9: the bytes each keeps in flight as written, the latency that
/// covers at the peak, and the latency kernel 7's measured bandwidth implies.
fn bytes_in_flight(m: &Machine, rows: &[Row]) -> String {
    let (Some(peak), Some(threads)) = (m.peak_gbps, by_capability(&MAX_THREADS_PER_SM, &m.compute_capability)) else {
        return "*The theoretical peak or the resident threads per SM of this GPU are unknown, so the bytes in flight are not computed.*\n".into();
    };
    if m.sm_count == 0 {
        return "*The SM count of this GPU is not recorded, so the bytes in flight are not computed.*\n".into();
    }
    let per_sm_bytes_per_ns = peak / m.sm_count as f64; // GB/s = bytes per ns
    let n = 1usize << 30;
    // (kernel, loads as written, bytes per thread per step)
    let kernels = [("reduce7", "7 and 8: two 4-byte loads per step", 8u32), ("reduce9", "9: four 16-byte loads per step", 64)];
    let mut s = format!(
        "Little's law says how many bytes must be on their way: bytes in flight = bandwidth × latency. At this GPU's theoretical \
        peak of {peak:.0} GB/s, shared by {} SMs, each SM must receive {per_sm_bytes_per_ns:.1} bytes every nanosecond, so every \
        100 ns of latency needs {:.1} KiB in flight per SM. An SM of compute capability {} holds at most {threads} threads (the \
        CUDA C++ Programming Guide's technical specifications), so, as the kernels are written:\n\n",
        m.sm_count, per_sm_bytes_per_ns * 100.0 / 1024.0, m.compute_capability
    );
    writeln!(s, "| kernel | in flight per thread | per SM, at most | latency that covers at the peak | measured, 2^30 `f32` |\n|---|--:|--:|--:|--:|").unwrap();
    for (kernel, what, bytes) in kernels {
        let per_sm = bytes as f64 * threads as f64;
        let covered_ns = per_sm / per_sm_bytes_per_ns;
        let covered = if covered_ns < 1000.0 { format!("{covered_ns:.0} ns") } else { format!("{:.1} µs", covered_ns / 1000.0) };
        let measured = find(rows, kernel, Dtype::F32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.0} GB/s, {}", r.gbps(), pct_of_peak(m, r)));
        writeln!(s, "| {what} | {bytes} B | {:.0} KiB | {covered} | {measured} |", per_sm / 1024.0).unwrap();
    }
    writeln!(s).unwrap();
    write!(s, "This book does not measure the latency of one DRAM load, so the table alone cannot say which kernel keeps enough \
        bytes in flight.").unwrap();
    if let Some(k7) = find(rows, "reduce7", Dtype::F32, n, Cache::Rotated) {
        let per_sm = kernels[0].2 as f64 * threads as f64;
        let implied_ns = per_sm * m.sm_count as f64 / k7.gbps(); // bytes / (bytes per ns)
        write!(s, " The measurements can: if kernel 7 were held back by its {:.0} KiB per SM alone, its {:.0} GB/s would mean a \
            latency of {implied_ns:.0} ns — and kernel 9 keeps {} times as many bytes in flight.",
            per_sm / 1024.0, k7.gbps(), kernels[1].2 / kernels[0].2).unwrap();
    }
    s.push('\n');
    s
}

/// The copy against the fastest reduction and the read-only ceiling, at the largest size.
fn copy_pace(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let (Some(copy), Some(best)) = (find(rows, COPY_KERNEL, Dtype::F32, n, Cache::Rotated), fastest(rows, Dtype::F32, n)) else {
        return "*The copy and the kernels are not both measured at 2^30 `f32` on this GPU.*\n".into();
    };
    let mut s = format!(
        "At 2^30 `f32` values the copy kernel moves {:.0} GB/s, counting each byte it reads and each it writes; the fastest \
        reduction (`{}`), which only reads, moves {:.0} GB/s: {} of the copy's rate. So the copy is a pace to compare with, \
        not a ceiling for a sum.",
        copy.gbps(), best.kernel, best.gbps(), pct(100.0 * best.gbps() / copy.gbps())
    );
    match ceiling_for(rows, best) {
        Some(c) => write!(s, " The ceiling is the read-only kernel, which reads every byte once and does nothing else: {:.0} GB/s \
            ({} of the theoretical peak), and the fastest reduction reaches {} of it.", c.gbps(), pct_of_peak(m, c), pct(100.0 * best.gbps() / c.gbps())).unwrap(),
        None => write!(s, " The ceiling for a sum is the read-only kernel, which reads every byte once and does nothing else; it is \
            {CEILING_NOT_MEASURED}.").unwrap(),
    }
    s.push('\n');
    s
}

/// `128 × 2^21`, as the row-sum table writes a shape.
fn shape(m: usize, n: usize) -> String {
    let side = |v: usize| if v.is_power_of_two() && v > 8192 { format!("2^{}", v.trailing_zeros()) } else { v.to_string() };
    format!("{} × {}", side(m), side(n))
}

/// The row-sum chapter's claim about few rows: with fewer rows than SMs, which of one block per
/// row and several blocks per row was faster at each shape, and where `torch.sum` beat both.
/// `rows` are the row-sum measurements (`plots/data/rows/`), `None` where there are none.
pub fn rows_few_sentence(gpu: &str, sm_count: u32, rows: Option<&[Row]>) -> String {
    let Some(rows) = rows.filter(|r| !r.is_empty()) else {
        return format!("*Not yet measured on the {gpu}: `cargo run --release -- rows-bench`.*\n");
    };
    let time = |kernel: &str, m: usize, n: usize| {
        rows.iter().find(|r| r.kernel == kernel && crate::book::rows::rows_of(r) == m && r.n == n).map(|r| r.median_us)
    };
    let (block, split) = (crate::rows::Strategy::Block.kernel(), crate::rows::Strategy::Split.kernel());
    let mut shapes: Vec<(usize, usize)> = rows.iter().map(|r| (crate::book::rows::rows_of(r), r.n)).filter(|&(m, _)| m < sm_count as usize).collect();
    shapes.sort_by(|a, b| b.cmp(a));
    shapes.dedup();
    let (mut block_won, mut split_won, mut torch_won) = (Vec::new(), Vec::new(), Vec::new());
    for &(m, n) in &shapes {
        let (Some(b), Some(sp)) = (time(block, m, n), time(split, m, n)) else { continue };
        if b <= sp {
            block_won.push(format!("{} ({b:.2} µs against {sp:.2})", shape(m, n)));
        } else {
            split_won.push(format!("{} ({sp:.2} µs against {b:.2})", shape(m, n)));
        }
        let ours = rows.iter().filter(|r| crate::book::rows::rows_of(r) == m && r.n == n && r.status != Status::Peer).map(|r| r.median_us).fold(f64::MAX, f64::min);
        if let Some(t) = time(crate::book::rows::TORCH_KERNEL, m, n).filter(|&t| t < ours) {
            torch_won.push(format!("{} ({t:.2} µs)", shape(m, n)));
        }
    }
    if block_won.is_empty() && split_won.is_empty() {
        return format!("*No shape with fewer rows than the {gpu}'s {sm_count} SMs was measured with both one block and several blocks per row.*\n");
    }
    let list = |v: &[String]| if v.is_empty() { "none of them".to_string() } else { v.join(", ") };
    let mut s = format!(
        "With fewer rows than the {gpu}'s {sm_count} SMs, the measurements say: one block per row was still the faster of the two \
        at {}; several blocks per row won at {}.",
        list(&block_won), list(&split_won)
    );
    if !torch_won.is_empty() {
        write!(s, " `torch.sum(x, dim=1)` was faster than all three of the book's kernels at {}.", torch_won.join(", ")).unwrap();
    }
    s.push('\n');
    s
}

/// One sentence per compute-sanitizer log under `log_dir` (`plots/data/sanitizer/`), written to
/// `out_dir/<log name>.md`: which tool ran, and what its summary line counted, so that prose
/// about a sanitizer's verdict comes from its output.
pub fn write_sanitizer_summaries(log_dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(log_dir) else { return Ok(Vec::new()) };
    let mut logs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "log")).collect();
    logs.sort();
    std::fs::create_dir_all(out_dir).map_err(|e| io_error(out_dir, e))?;
    let mut written = Vec::new();
    for log in logs {
        let text = std::fs::read_to_string(&log).map_err(|e| io_error(&log, e))?;
        let path = out_dir.join(format!("{}.md", log.file_stem().unwrap().to_string_lossy()));
        let name = log.file_stem().unwrap().to_string_lossy().to_string();
        std::fs::write(&path, sanitizer_sentence(&format!("{name}\n{text}"))).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// "compute-sanitizer's racecheck reported 3 hazards displayed (0 errors, 10 warnings)." The
/// tool is the first one named in the text (the log's file name comes first).
fn sanitizer_sentence(log: &str) -> String {
    let tool = ["memcheck", "racecheck", "synccheck", "initcheck"]
        .into_iter()
        .filter_map(|t| log.find(t).map(|at| (at, t)))
        .min()
        .map_or("the sanitizer", |(_, t)| t);
    let summary = log
        .lines()
        .filter_map(|l| l.trim_start_matches('=').trim().strip_prefix("RACECHECK SUMMARY: ").or_else(|| l.trim_start_matches('=').trim().strip_prefix("ERROR SUMMARY: ")))
        .find(|s| !s.contains("not printed"));
    let tests = log.lines().find_map(|l| l.strip_prefix("test result: ok. ")).and_then(|rest| rest.split(" passed").next().map(str::to_string));
    let under = tests.map(|n| format!(" ({n} tests ran under it and passed)")).unwrap_or_default();
    match summary {
        Some(summary) => format!("On the GPU this book was last measured on, compute-sanitizer's {tool} reported **{summary}**{under}.\n"),
        None => match log.lines().find_map(|l| l.strip_prefix("# not yet run: ")) {
            Some(command) => format!("compute-sanitizer's {tool} has not been run here yet (`{command}`).\n"),
            None => format!("The {tool} log has no summary line: the run did not finish.\n"),
        },
    }
}

/// The ncu metrics the bank-conflicts section reads, with what each counts.
pub const BANK_METRICS: [(&str, &str); 4] = [
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "bank conflicts, shared loads"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "bank conflicts, shared stores"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "wavefronts, shared loads"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "wavefronts, shared stores"),
];

/// The value of `metric` in an `ncu --csv` report (the last quoted field of its line), if any.
pub fn ncu_metric(report: &str, metric: &str) -> Option<f64> {
    let line = report.lines().find(|l| l.contains(&format!("\"{metric}\"")))?;
    let value = line.trim().trim_end_matches('"').rsplit("\",\"").next()?;
    value.replace(',', "").parse().ok()
}

/// Kernel 2, kernel 2 padded and kernel 3: the bank conflicts ncu counted in one launch of each
/// (logs under `plots/data/bank-conflicts/`), and their benchmark times.
pub fn bank_conflicts_table(log_dir: &Path, rows: &[Row]) -> Option<String> {
    let kernels = ["reduce2", "reduce2_padded", "reduce3"];
    let reports: Vec<(&str, String)> = kernels
        .iter()
        .filter_map(|k| std::fs::read_to_string(log_dir.join(format!("{k}.log"))).ok().map(|t| (*k, t)))
        .collect();
    if reports.is_empty() {
        return None;
    }
    let mut s = String::new();
    let head: Vec<&str> = BANK_METRICS.iter().map(|(_, what)| *what).collect();
    writeln!(s, "| kernel | {} | 2^22 i32, rotated (µs) | 2^25 i32, rotated (µs) |\n|---|{}--:|--:|", head.join(" | "), "--:|".repeat(head.len())).unwrap();
    for (kernel, report) in &reports {
        let counts: Vec<String> = BANK_METRICS.iter().map(|(m, _)| ncu_metric(report, m).map_or("–".into(), |v| format!("{v:.0}"))).collect();
        let time = |n: usize| find(rows, kernel, Dtype::I32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.2}", r.median_us));
        writeln!(s, "| `{kernel}` | {} | {} | {} |", counts.join(" | "), time(1 << 22), time(1 << 25)).unwrap();
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, n: usize, cache: Cache, us: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: 0, title: String::new(), status: Status::Correct, dtype: Dtype::I32.into(), n, block: 256,
            cache, median_us: us, min_us: us, max_us: us, bytes: 4 * n, working_set_bytes: 4 * n, repeats: 15, method: String::new(),
        }
    }

    /// The H200's header as the benchmark wrote it.
    fn h200() -> Machine {
        Machine {
            gpu: "NVIDIA H200".into(), compute_capability: "9.0".into(), sm_count: 132, l2_bytes: 60 << 20, peak_gbps: Some(4814.3),
            memory_clock_mhz: 3201, sm_clock_mhz: 1980, ..Default::default()
        }
    }

    fn named(kernel: &str, dtype: Dtype, n: usize, cache: Cache, us: f64) -> Row {
        let status = if kernel == READ_ONLY_KERNEL { Status::Ceiling } else { Status::Correct };
        // reduce7 -> chapter 7; the yardsticks have none.
        let chapter = kernel.trim_start_matches("reduce").parse().unwrap_or(0);
        Row { dtype, status, chapter, ..row(kernel, n, cache, us) }
    }

    #[test]
    fn harris_published_figures_are_transcribed_consistently() {
        // Each published cumulative speed-up is the product of the published (rounded) steps,
        // rounded; and his split is the product of the algorithmic and the code steps.
        let step = |k: usize| HARRIS_G80[k].3.parse::<f64>().unwrap();
        let mut product = 1.0;
        for (k, (.., cumulative)) in HARRIS_G80.iter().enumerate().skip(1) {
            product *= step(k);
            assert_eq!(format!("{product:.2}"), *cumulative, "cumulative speed-up of kernel {}", k + 1);
        }
        assert_eq!(format!("{:.2}", step(1) * step(2) * step(3) * step(6)), HARRIS_SPLIT.0);
        assert_eq!(format!("{:.2}", step(4) * step(5)), HARRIS_SPLIT.1);
        // His kernel 7: 62.671 GB/s of 86.4 GB/s.
        assert_eq!(format!("{:.1}", 100.0 * HARRIS_G80[6].2 / G80_PEAK_GBPS), "72.5");
        let text = speedup_split(&[]);
        assert!(text.contains("| G80, 2^22 ints (Harris, as published) | 11.84× | 2.54× | 30.04× |"), "{text}");
        let table = harris_table(&h200(), &[], 1 << 22, Cache::Rotated);
        assert!(table.contains("| 0.965 | 17.377 | 20.1 % | 1.78× | 8.34× |"), "{table}");
        assert!(table.contains("| 0.536 | 31.289 | 36.2 % | 1.8× | 15.01× |"), "{table}");
    }

    #[test]
    fn the_add_to_fetch_ratio_comes_from_the_header() {
        // 132 × 128 × 1.98 GHz = 33.45e12 adds/s; 4814.3 GB/s / 4 B = 1.2036e12 values/s: 27.8.
        let text = add_to_fetch_ratio(&h200());
        assert!(text.contains("33.5 trillion") && text.contains("1.20 trillion") && text.contains("**28 times**"), "{text}");
        assert!(add_to_fetch_ratio(&Machine { sm_clock_mhz: 0, ..h200() }).contains("Not yet measured"));
        assert!(add_to_fetch_ratio(&Machine { compute_capability: "3.5".into(), ..h200() }).contains("not in this book's table"));
        assert_eq!(fp32_lanes_per_sm("8.0"), Some(64));
        assert_eq!(fp32_lanes_per_sm("8.6"), Some(128));
    }

    #[test]
    fn the_machine_line_names_the_bus_and_clock_of_the_peak() {
        let line = machine_line(&h200(), &[]);
        assert!(line.contains("a 6016-bit bus at 3201 MHz") && line.contains("2 × 3201 MHz × 6016 bit / 8 = 4814 GB/s"), "{line}");
        assert!(line.contains("not yet measured"), "{line}");
        let measured = [named(READ_ONLY_KERNEL, Dtype::F32, 1 << 20, Cache::Rotated, 1.0)];
        assert!(!machine_line(&h200(), &measured).contains("not yet measured"));
    }

    #[test]
    fn kernels_are_set_against_the_read_only_ceiling_of_the_same_size_type_and_cache() {
        let n = 1 << 30;
        let rows = vec![
            named("reduce7", Dtype::F32, n, Cache::Rotated, 1000.0),
            named("reduce9", Dtype::F32, n, Cache::Rotated, 800.0),
            named(READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated, 760.0),
            named(READ_ONLY_KERNEL, Dtype::I32, n, Cache::Rotated, 1.0), // another type: not the f32 ceiling
            named(COPY_KERNEL, Dtype::F32, n, Cache::Rotated, 2000.0),
        ];
        assert_eq!(pct_of_ceiling(&rows, &rows[1]), "95.0 %");
        assert_eq!(pct_of_ceiling(&rows, &named("reduce9", Dtype::F32, 1 << 20, Cache::Rotated, 1.0)), "–");
        let best = best_table(&h200(), &rows);
        assert!(best.contains("| 2^30 | reduce9 | 800.00 |") && best.contains("| 95.0 % |"), "{best}");
        assert!(!best.contains("not yet measured"), "{best}");
        let ceiling = ceiling_table(&h200(), &rows);
        assert!(ceiling.contains("| `reduce7` | – | – | – | 76.0% |"), "{ceiling}");
        let pace = copy_pace(&h200(), &rows);
        assert!(pace.contains("reaches 95.0 % of it"), "{pace}");
        assert!(kernel7_large(&h200(), &rows).contains("76.0 % of the read-only ceiling"));
        // Without a read-only row, every comparison says so instead of inventing one.
        let without: Vec<Row> = rows.iter().filter(|r| !r.is_read_only()).cloned().collect();
        assert!(ceiling_table(&h200(), &without).contains("not yet measured"));
        assert!(copy_pace(&h200(), &without).contains("not yet measured"));
        assert!(best_table(&h200(), &without).contains("| – | – |"));
    }

    #[test]
    fn little_s_law_uses_the_peak_the_sm_count_and_the_resident_threads() {
        let rows = vec![named("reduce7", Dtype::F32, 1 << 30, Cache::Rotated, 1130.0)];
        let text = bytes_in_flight(&h200(), &rows);
        // 4814.3 GB/s over 132 SMs = 36.47 B/ns; 8 B × 2048 threads = 16 KiB covers 449 ns.
        assert!(text.contains("36.5 bytes every nanosecond") && text.contains("| 16 KiB | 449 ns |") && text.contains("| 128 KiB | 3.6 µs |"), "{text}");
        // 2^32 bytes in 1130 µs = 3800.9 GB/s; 16 KiB × 132 / 3.8009 B/ns = 569 ns.
        assert!(text.contains("latency of 569 ns") && text.contains("8 times as many"), "{text}");
        assert!(bytes_in_flight(&Machine { compute_capability: "1.0".into(), ..h200() }, &rows).contains("unknown"));
    }

    #[test]
    fn kernel_4_is_judged_by_its_share_of_the_peak_and_kernel_5_s_step() {
        let rows = vec![
            named("reduce4", Dtype::I32, 1 << 22, Cache::Rotated, 15.0),
            named("reduce5", Dtype::I32, 1 << 22, Cache::Rotated, 12.0),
            named("reduce4", Dtype::I32, 1 << 30, Cache::Rotated, 2700.0),
            named("reduce5", Dtype::I32, 1 << 30, Cache::Rotated, 2000.0),
        ];
        let text = kernel4_limit(&h200(), &rows);
        // 1 − 12/15 = 20 %; 1 − 2000/2700 = 26 %.
        assert!(text.contains("faster by 1.25× at 2^22 and 1.35× at 2^30") && text.contains("20 % to 26 %"), "{text}");
        assert!(kernel4_limit(&h200(), &rows[..2]).contains("not both measured"));
    }

    #[test]
    fn the_resident_sum_is_compared_with_the_smallest_one() {
        let rows = vec![
            named("reduce7", Dtype::I32, 1 << 22, Cache::Resident, 5.0),
            named("reduce7", Dtype::I32, 1 << 22, Cache::Rotated, 8.0),
            named("reduce7", Dtype::I32, 1 << 16, Cache::Rotated, 3.0),
        ];
        let text = resident_fixed_cost(&h200(), &rows);
        assert!(text.contains("takes 5.00 µs") && text.contains("60 % of the L2-resident time") && text.contains("not yet measured"), "{text}");
    }

    #[test]
    fn few_rows_say_which_strategy_won_at_each_shape() {
        let row_sum = |kernel: &str, m: usize, n: usize, us: f64| Row { dtype: Dtype::F32.into(), bytes: 4 * m * n, ..row(kernel, n, Cache::Rotated, us) };
        let rows = vec![
            row_sum("rows_block", 128, 1 << 21, 238.0),
            row_sum("rows_split", 128, 1 << 21, 260.0),
            row_sum("rows_block", 32, 1 << 23, 330.0),
            row_sum("rows_split", 32, 1 << 23, 253.0),
            Row { status: Status::Peer, ..row_sum(crate::book::rows::TORCH_KERNEL, 32, 1 << 23, 252.0) },
            row_sum("rows_block", 4096, 1 << 16, 236.0), // as many rows as SMs and more: not a few
        ];
        let text = rows_few_sentence("Test GPU", 132, Some(&rows));
        assert!(text.contains("still the faster of the two at 128 × 2^21 (238.00 µs against 260.00)"), "{text}");
        assert!(text.contains("several blocks per row won at 32 × 2^23 (253.00 µs against 330.00)"), "{text}");
        assert!(text.contains("faster than all three of the book's kernels at 32 × 2^23 (252.00 µs)"), "{text}");
        assert!(!text.contains("4096"), "{text}");
        assert!(rows_few_sentence("Test GPU", 132, None).contains("Not yet measured"));
    }

    #[test]
    fn step_and_cumulative_speedups_come_from_the_rows() {
        let rows: Vec<Row> = CHANGES.iter().enumerate().map(|(k, (name, _))| row(name, 1 << 22, Cache::Rotated, 64.0 / (1u32 << k) as f64)).collect();
        let m = Machine { gpu: "Test GPU".into(), peak_gbps: Some(1000.0), l2_bytes: 1 << 20, ..Default::default() };
        let table = harris_table(&m, &rows, 1 << 22, Cache::Rotated);
        // Every step halves the time: 2x per step, 64x cumulative at kernel 7.
        assert!(table.contains("| 7 | multiple elements per thread | 1.00 |"), "{table}");
        assert!(table.contains("| 2.00× | 64.00× |"), "{table}");
        let split = speedup_split(&rows);
        assert!(split.contains("| 2^22 ints, rotated | 16.00× | 4.00× | 64.00× |"), "{split}");
    }

    #[test]
    fn sanitizer_sentences_quote_the_summary_line() {
        let race = "# compute-sanitizer --tool racecheck ...\n========= RACECHECK SUMMARY: 4 hazards displayed (0 errors, 10 warnings)\n";
        assert!(sanitizer_sentence(race).contains("racecheck reported **4 hazards displayed (0 errors, 10 warnings)**"));
        let sync = "========= COMPUTE-SANITIZER\nmistake 1 ...\n========= ERROR SUMMARY: 0 errors\n";
        assert!(sanitizer_sentence(&format!("# --tool synccheck\n{sync}")).contains("synccheck reported **0 errors**"));
        let mem = "========= ERROR SUMMARY: 209 errors\n========= ERROR SUMMARY: 206 errors were not printed.\n";
        assert!(sanitizer_sentence(mem).contains("**209 errors**"));
        assert!(sanitizer_sentence("killed\n").contains("did not finish"));
        let suite = "memcheck\ntest result: ok. 2225 passed; 0 failed\n========= ERROR SUMMARY: 0 errors\n";
        assert!(sanitizer_sentence(suite).contains("**0 errors** (2225 tests ran under it and passed)"));
        assert!(sanitizer_sentence("initcheck\n# not yet run: compute-sanitizer --tool initcheck x\n").contains("has not been run here yet (`compute-sanitizer --tool initcheck x`)"));
    }

    #[test]
    fn ncu_csv_values_are_read_by_metric_name() {
        let report = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
            \"0\",\"reduce2_i32\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum\",\"\",\"1,234,567\"\n\
            \"0\",\"reduce2_i32\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum\",\"\",\"0\"\n";
        assert_eq!(ncu_metric(report, BANK_METRICS[0].0), Some(1_234_567.0));
        assert_eq!(ncu_metric(report, BANK_METRICS[1].0), Some(0.0));
        assert_eq!(ncu_metric(report, BANK_METRICS[2].0), None);
    }

    #[test]
    fn missing_measurements_are_said_not_invented() {
        let m = Machine::default();
        let table = harris_table(&m, &[row("reduce1", 1 << 25, Cache::Rotated, 100.0)], 1 << 25, Cache::Rotated);
        assert!(table.contains("| 2 | strided index, no divergence | not measured |"), "{table}");
    }
}
