//! "Measuring your GPU" (`book/benchmark.md`): the fastest kernel at each size against the peak,
//! the read-only ceiling, the copy and cuBLAS (`best.md`), every kernel as a share of the
//! ceiling (`ceiling.md`), and the copy as a pace, not a ceiling (`pace.md`).

use super::common::{find, has_ceiling, pct, pct_of_ceiling, pct_of_peak, ceiling_for, CEILING_NOT_MEASURED};
use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row, Status, COPY_KERNEL, CUBLAS_KERNEL, READ_ONLY_KERNEL};
use std::fmt::Write as _;

/// Every correct kernel from kernel 7 on, and the libraries, as a share of the read-only
/// ceiling at the sizes where bandwidth rules (f32, rotated); or why there is no such table.
pub fn ceiling_table(m: &Machine, rows: &[Row]) -> String {
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
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && !r.is_host_visible() && ((r.chapter >= 7 && r.status == Status::Correct) || r.status == Status::Peer || r.is_copy())) {
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
            .filter(|r| r.dtype == Dtype::F32 && r.n == n && r.cache == Cache::Rotated && r.status == Status::Correct && r.kernel != READ_ONLY_KERNEL && !r.is_entry_point())
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

/// The fastest correct kernel at each size (f32, inputs rotated), against the theoretical peak
/// and the read-only ceiling, with the copy's pace and the cuBLAS peer beside it.
pub fn best_table(m: &Machine, rows: &[Row]) -> String {
    let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == Dtype::F32 && r.status == Status::Correct).map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    writeln!(s, "| n (f32) | fastest kernel | time (µs) | GB/s | % of peak | % of read-only | read-only GB/s | copy GB/s (pace) | cuBLAS Sasum (µs) |").unwrap();
    writeln!(s, "|--:|---|--:|--:|--:|--:|--:|--:|--:|").unwrap();
    for n in sizes.into_iter().filter(|n| n.is_power_of_two() && n.trailing_zeros() % 2 == 0) {
        let Some(best) = fastest(rows, Dtype::F32, n) else { continue };
        let gbps = |kernel: &str| find(rows, kernel, Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.0}", r.gbps())).unwrap_or_else(|| "–".into());
        let peer = find(rows, CUBLAS_KERNEL, Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.2}", r.median_us)).unwrap_or_default();
        writeln!(s, "| 2^{} | {} | {:.2} | {:.1} | {} | {} | {} | {} | {peer} |", n.trailing_zeros(), best.kernel, best.median_us, best.gbps(),
            pct_of_peak(m, best), pct_of_ceiling(rows, best), gbps(READ_ONLY_KERNEL), gbps(COPY_KERNEL)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only columns: the ceiling is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

/// The fastest correct kernel of the book at one size (inputs rotated).
pub fn fastest(rows: &[Row], dtype: Dtype, n: usize) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.dtype == dtype && r.n == n && r.status == Status::Correct && r.cache == Cache::Rotated && !r.is_entry_point())
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// The copy against the fastest reduction and the read-only ceiling, at the largest size.
pub fn copy_pace(m: &Machine, rows: &[Row]) -> String {
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
