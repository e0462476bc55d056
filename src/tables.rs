//! Markdown tables for the chapters, generated from benchmark results: Harris's table for the
//! book's GPU, each chapter's before-and-after, the split of the speed-up, and the machine
//! line. The chapters `{{#include}}` them from `book/generated/`, so no measured number in the
//! book is typed by hand.

use crate::error::{io_error, Result};
use crate::results::{Cache, Machine, Row};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Harris's G80 figures for 2^22 ints ("Optimizing Parallel Reduction in CUDA", 2007): time in
/// ms and bandwidth in GB/s for kernels 1–7. Quoted from the slides, not measured here.
pub const HARRIS_G80: [(&str, f64, f64); 7] = [
    ("reduce1", 8.054, 2.083),
    ("reduce2", 3.456, 4.854),
    ("reduce3", 1.722, 9.741),
    ("reduce4", 0.965, 17.377),
    ("reduce5", 0.536, 31.289),
    ("reduce6", 0.381, 43.996),
    ("reduce7", 0.268, 62.671),
];

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

/// Write every table the chapters include into `out_dir` (`book/generated/`).
pub fn write_all(book: &(Machine, Vec<Row>), out_dir: &Path) -> Result<Vec<PathBuf>> {
    let (machine, rows) = book;
    let mut files = vec![("machine.md".to_string(), machine_line(machine))];
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
    files.push(("kernel5_historical.md".into(), historical_kernel5(rows)));

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

fn find<'a>(rows: &'a [Row], kernel: &str, dtype: &str, n: usize, cache: Cache) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == cache)
}

fn machine_line(m: &Machine) -> String {
    let peak = m.peak_gbps.map(|p| format!(", theoretical peak {p:.0} GB/s")).unwrap_or_default();
    format!(
        "*Measured on an {} ({} SMs, {:.0} MiB of L2{peak}; driver CUDA {}, NVRTC {}) on {} by `{}`.*\n",
        m.gpu, m.sm_count, m.l2_bytes as f64 / (1 << 20) as f64, m.driver_cuda, m.nvrtc, m.date, m.command
    )
}

fn pct_of_peak(m: &Machine, row: &Row) -> String {
    m.peak_gbps.map(|p| format!("{:.1} %", 100.0 * row.gbps() / p)).unwrap_or_else(|| "–".into())
}

/// Harris's table for this GPU at one size and cache mode, with his G80 columns beside it.
fn harris_table(m: &Machine, rows: &[Row], n: usize, cache: Cache) -> String {
    let mut s = String::new();
    let where_ = match cache {
        Cache::Resident => format!("the same {} MiB input every time, so it stays in the {:.0} MiB L2", (4 * n) >> 20, m.l2_bytes as f64 / (1 << 20) as f64),
        Cache::Rotated => "inputs rotated through a pool larger than L2, so every sum reads DRAM".to_string(),
    };
    writeln!(s, "{}: 2^{} `i32` values ({} MiB), 256 threads per block, {where_}. The G80 columns are Harris's own figures (2007, 2^22 ints, 128 threads per block).\n",
        m.gpu, n.trailing_zeros(), (4 * n) >> 20).unwrap();
    writeln!(s, "| kernel | change | time (µs) | GB/s | % of peak | step | cumulative | G80 time (µs) | G80 GB/s | G80 step | G80 cumulative |").unwrap();
    writeln!(s, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|").unwrap();
    let first = find(rows, "reduce1", "i32", n, cache);
    let mut previous: Option<&Row> = None;
    for (k, (kernel, change)) in CHANGES.iter().enumerate() {
        let (g80_ms, g80_gbps) = (HARRIS_G80[k].1, HARRIS_G80[k].2);
        let g80_step = if k == 0 { "".to_string() } else { format!("{:.2}×", HARRIS_G80[k - 1].1 / g80_ms) };
        let g80_total = if k == 0 { "".to_string() } else { format!("{:.2}×", HARRIS_G80[0].1 / g80_ms) };
        let g80 = format!("{:.0} | {g80_gbps:.2} | {g80_step} | {g80_total}", g80_ms * 1e3);
        match find(rows, kernel, "i32", n, cache) {
            Some(r) => {
                let step = previous.map(|p| format!("{:.2}×", p.median_us / r.median_us)).unwrap_or_default();
                let total = first.filter(|_| k > 0).map(|f| format!("{:.2}×", f.median_us / r.median_us)).unwrap_or_default();
                writeln!(s, "| {} | {change} | {:.2} | {:.1} | {} | {step} | {total} | {g80} |", k + 1, r.median_us, r.gbps(), pct_of_peak(m, r)).unwrap();
                previous = Some(r);
            }
            None => {
                writeln!(s, "| {} | {change} | not measured | | | | | {g80} |", k + 1).unwrap();
                previous = None;
            }
        }
    }
    s
}

/// The product of the speed-ups of some steps at one size, or None if a kernel is missing.
fn product(rows: &[Row], steps: &[(&str, &str)], n: usize, cache: Cache) -> Option<f64> {
    steps.iter().try_fold(1.0, |acc, (from, to)| {
        let (a, b) = (find(rows, from, "i32", n, cache)?, find(rows, to, "i32", n, cache)?);
        Some(acc * a.median_us / b.median_us)
    })
}

/// Harris's split of the total speed-up into algorithmic and code changes, for each table.
fn speedup_split(rows: &[Row]) -> String {
    let g80 = |steps: &[(&str, &str)]| -> f64 {
        steps.iter().map(|(from, to)| {
            let t = |k: &str| HARRIS_G80.iter().find(|(name, ..)| *name == k).unwrap().1;
            t(from) / t(to)
        }).product()
    };
    let mut s = String::new();
    writeln!(s, "| input | algorithmic (addressing, first add, cascading) | code (unrolling) | total |").unwrap();
    writeln!(s, "|---|--:|--:|--:|").unwrap();
    let (ga, gc) = (g80(&ALGORITHMIC_STEPS), g80(&CODE_STEPS));
    writeln!(s, "| G80, 2^22 ints (Harris) | {ga:.2}× | {gc:.2}× | {:.2}× |", ga * gc).unwrap();
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
    writeln!(s, "| input | {kernel} (µs) | GB/s | % of peak | {previous} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|").unwrap();
    for dtype in ["f32", "i32"] {
        for n in MODERN_SIZES {
            let Some(r) = find(rows, kernel, dtype, n, Cache::Rotated) else { continue };
            let before = find(rows, previous, dtype, n, Cache::Rotated)
                .map(|p| format!("{:.2} | {:.2}× |", p.median_us, p.median_us / r.median_us))
                .unwrap_or_else(|| " | |".into());
            writeln!(s, "| 2^{} {dtype} | {:.2} | {:.1} | {} | {before}", n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r)).unwrap();
        }
    }
    s
}

/// Every kernel from kernel 7 on, and the library peers, at the modern sizes (f32, rotated):
/// time and, in brackets, the fraction of the theoretical peak.
fn modern_table(m: &Machine, rows: &[Row]) -> String {
    let mut kernels: Vec<(&str, &str, bool)> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == "f32" && (r.chapter >= 7 || r.status == "peer")) {
        if !kernels.iter().any(|(k, ..)| *k == r.kernel) {
            kernels.push((&r.kernel, &r.title, r.status == "peer"));
        }
    }
    kernels.sort_by_key(|(_, _, peer)| *peer); // the book's kernels first, then the libraries
    let mut s = String::new();
    let sizes: Vec<String> = MODERN_SIZES.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| kernel | {} |", sizes.join(" | ")).unwrap();
    writeln!(s, "|---|{}", "--:|".repeat(MODERN_SIZES.len())).unwrap();
    for (kernel, title, _) in kernels {
        let cells: Vec<String> = MODERN_SIZES.iter().map(|&n| match find(rows, kernel, "f32", n, Cache::Rotated) {
            Some(r) => format!("{:.2} µs ({})", r.median_us, pct_of_peak(m, r).replace(" %", "%")),
            None => "–".into(),
        }).collect();
        writeln!(s, "| `{kernel}`: {title} | {} |", cells.join(" | ")).unwrap();
    }
    s
}

/// Half, single and double precision through the 16-byte kernels: the same number of values
/// is a different number of bytes, and the bytes decide the time.
pub fn types_table(m: &Machine, rows: &[Row]) -> String {
    let mut s = String::new();
    writeln!(s, "| kernel | type | n | time (µs) | GB/s | % of peak |\n|---|---|--:|--:|--:|--:|").unwrap();
    let mut sorted: Vec<&Row> = rows.iter().filter(|r| r.cache == Cache::Rotated && r.n >= 1 << 28 && r.status == "correct").collect();
    sorted.sort_by(|a, b| (&a.kernel, a.n, &a.dtype).cmp(&(&b.kernel, b.n, &b.dtype)));
    for r in sorted {
        writeln!(s, "| `{}` | {} | 2^{} | {:.2} | {:.1} | {} |", r.kernel, r.dtype, r.n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r)).unwrap();
    }
    s
}

/// One kernel against the one before it, at the sizes the chapters discuss.
fn chapter_table(m: &Machine, rows: &[Row], kernel: &str) -> String {
    let index = CHANGES.iter().position(|(k, _)| *k == kernel).expect("a Harris kernel");
    let previous = index.checked_sub(1).map(|i| CHANGES[i].0);
    let mut s = String::new();
    let header = match previous {
        Some(p) => format!("| input | {kernel} (µs) | GB/s | % of peak | {p} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|"),
        None => format!("| input | {kernel} (µs) | GB/s | % of peak |\n|---|--:|--:|--:|"),
    };
    writeln!(s, "{header}").unwrap();
    let cases = [(1usize << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated), (1 << 30, Cache::Rotated)];
    for dtype in ["i32", "f32"] {
        for (n, cache) in cases {
            let Some(r) = find(rows, kernel, dtype, n, cache) else { continue };
            let label = format!("2^{} {dtype}, {}", n.trailing_zeros(), cache.name());
            let mut line = format!("| {label} | {:.2} | {:.1} | {} |", r.median_us, r.gbps(), pct_of_peak(m, r));
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
    for dtype in ["i32", "f32"] {
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

/// The fastest correct kernel at each size (f32, inputs rotated), with the copy ceiling.
fn best_table(m: &Machine, rows: &[Row]) -> String {
    let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == "f32" && r.status == "correct").map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    writeln!(s, "| n (f32) | fastest kernel | time (µs) | GB/s | % of peak | copy kernel GB/s | cuBLAS Sasum (µs) |").unwrap();
    writeln!(s, "|--:|---|--:|--:|--:|--:|--:|").unwrap();
    for n in sizes.into_iter().filter(|n| n.is_power_of_two() && n.trailing_zeros() % 2 == 0) {
        let best = rows.iter()
            .filter(|r| r.dtype == "f32" && r.n == n && r.status == "correct" && r.cache == Cache::Rotated)
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let Some(best) = best else { continue };
        let copy = find(rows, "copy", "f32", n, Cache::Rotated).map(|r| format!("{:.0}", r.gbps())).unwrap_or_default();
        let peer = find(rows, "cublas_sasum", "f32", n, Cache::Rotated).map(|r| format!("{:.2}", r.median_us)).unwrap_or_default();
        writeln!(s, "| 2^{} | {} | {:.2} | {:.1} | {} | {copy} | {peer} |", n.trailing_zeros(), best.kernel, best.median_us, best.gbps(), pct_of_peak(m, best)).unwrap();
    }
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
        let time = |n: usize| find(rows, kernel, "i32", n, Cache::Rotated).map_or("–".into(), |r| format!("{:.2}", r.median_us));
        writeln!(s, "| `{kernel}` | {} | {} | {} |", counts.join(" | "), time(1 << 22), time(1 << 25)).unwrap();
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, n: usize, cache: Cache, us: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: 0, title: String::new(), status: "correct".into(), dtype: "i32".into(), n, block: 256,
            cache, median_us: us, min_us: us, max_us: us, bytes: 4 * n, working_set_bytes: 4 * n, repeats: 15, method: String::new(),
        }
    }

    #[test]
    fn harris_split_reproduces_his_g80_figures() {
        // Harris quotes 11.84x and 2.54x, the products of his rounded step speed-ups; from his
        // times the same products are 11.87x and 2.53x, and 8.054 / 0.268 = 30.05x in all.
        let text = speedup_split(&[]);
        assert!(text.contains("| G80, 2^22 ints (Harris) | 11.87× | 2.53× | 30.05× |"), "{text}");
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
