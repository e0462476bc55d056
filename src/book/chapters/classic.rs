//! The chapters of Harris's seven kernels (`book/01_*.md` … `book/07_*.md`): each kernel against
//! the one before it (`kernel<k>.md`), the bank conflicts ncu counted for kernels 2 and 3, what
//! limits kernel 4, Harris's kernel 5 as written, and kernel 7 at the largest size and left in L2.

use super::common::{ceiling_for, find, pct, pct_of_ceiling, pct_of_peak, CEILING_NOT_MEASURED};
use super::harris::CHANGES;
use crate::element::Dtype;
use crate::kernels::names;
use crate::records::bench::{Cache, Machine, Row, COPY_KERNEL, READ_ONLY_KERNEL};
use std::fmt::Write as _;

/// One kernel against the one before it, at the sizes the chapters discuss.
pub fn chapter_table(m: &Machine, rows: &[Row], kernel: &str) -> String {
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
/// (`reports`: (kernel, log) of those under `plots/data/bank-conflicts/`), and their benchmark
/// times.
pub fn bank_conflicts_table(reports: &[(String, String)], rows: &[Row]) -> Option<String> {
    if reports.is_empty() {
        return None;
    }
    let mut s = String::new();
    let head: Vec<&str> = BANK_METRICS.iter().map(|(_, what)| *what).collect();
    writeln!(s, "| kernel | {} | 2^22 i32, rotated (µs) | 2^25 i32, rotated (µs) |\n|---|{}--:|--:|", head.join(" | "), "--:|".repeat(head.len())).unwrap();
    for (kernel, report) in reports {
        let counts: Vec<String> = BANK_METRICS.iter().map(|(m, _)| ncu_metric(report, m).map_or("–".into(), |v| format!("{v:.0}"))).collect();
        let time = |n: usize| find(rows, kernel, Dtype::I32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.2}", r.median_us));
        writeln!(s, "| `{kernel}` | {} | {} | {} |", counts.join(" | "), time(1 << 22), time(1 << 25)).unwrap();
    }
    Some(s)
}

/// What limits kernel 4, as far as the measurements say without a profiler.
pub fn kernel4_limit(m: &Machine, rows: &[Row]) -> String {
    let sizes = [1usize << 22, 1 << 30];
    let pairs: Vec<(usize, &Row, &Row)> = sizes.iter()
        .filter_map(|&n| Some((n, find(rows, names::REDUCE4, Dtype::I32, n, Cache::Rotated)?, find(rows, names::REDUCE5, Dtype::I32, n, Cache::Rotated)?)))
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

/// Harris's 2007 kernel 5 next to the corrected one: where it was checked and what it cost.
pub fn historical_kernel5(rows: &[Row]) -> String {
    let mut s = String::new();
    for dtype in [Dtype::I32, Dtype::F32] {
        let old: Vec<&Row> = rows.iter().filter(|r| r.kernel == names::REDUCE5_VOLATILE && r.dtype == dtype).collect();
        let checked = old.len();
        let mean_ratio = old.iter().filter_map(|o| find(rows, names::REDUCE5, dtype, o.n, o.cache).map(|new| new.median_us / o.median_us)).collect::<Vec<_>>();
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

/// Kernel 7 at the largest size, against the peak, the read-only ceiling and the copy.
pub fn kernel7_large(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let Some(k7) = find(rows, names::REDUCE7, Dtype::F32, n, Cache::Rotated) else {
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

/// What re-reading one buffer that fits in L2 measures: mostly the fixed cost of a sum.
pub fn resident_fixed_cost(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 22;
    let (Some(resident), Some(dram), Some(tiny)) = (
        find(rows, names::REDUCE7, Dtype::I32, n, Cache::Resident),
        find(rows, names::REDUCE7, Dtype::I32, n, Cache::Rotated),
        find(rows, names::REDUCE7, Dtype::I32, 1 << 16, Cache::Rotated),
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

/// `bank_conflicts.md`: [`bank_conflicts_table`], or how to measure it.
pub fn bank_conflicts_markdown(reports: &[(String, String)], rows: &[Row]) -> String {
    bank_conflicts_table(reports, rows)
        .unwrap_or_else(|| "*Not yet measured on this GPU: `OUT=results bash tests/gpu-host.sh ncu`, then copy `results/bank-conflicts/` to `plots/data/`.*\n".into())
}
