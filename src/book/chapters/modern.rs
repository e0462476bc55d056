//! The modern chapters (`book/08_*.md` … `book/12_*.md`): each kernel from kernel 8 on against
//! the one it improves on (`<kernel>.md`), all of them at the sizes that matter (`modern.md`),
//! the element types through the 16-byte kernels (`types.md`), and the bytes each keeps in flight
//! (`little.md`).

use super::common::{by_capability, find, has_ceiling, pct_of_ceiling, pct_of_peak, CEILING_NOT_MEASURED, MAX_THREADS_PER_SM};
use crate::element::Dtype;
use crate::kernels::names;
use crate::records::bench::{Cache, Machine, Row, Status};
use std::fmt::Write as _;

/// Each modern kernel and the kernel its chapter improves on.
pub const MODERN_STEPS: [(&str, &str); 8] = [
    (names::REDUCE8_LAST_WARP, names::REDUCE7),
    (names::REDUCE8, names::REDUCE8_LAST_WARP),
    (names::REDUCE9, names::REDUCE8),
    (names::REDUCE10_ATOMIC, names::REDUCE9),
    (names::REDUCE10_LAST_BLOCK, names::REDUCE9),
    (names::REDUCE11, names::REDUCE9),
    (names::REDUCE11_GRID, names::REDUCE10_LAST_BLOCK),
    (names::REDUCE12, names::REDUCE9),
];

/// The sizes the modern chapters compare at: where launch latency rules, the middle, and where
/// bandwidth rules.
pub const MODERN_SIZES: [usize; 5] = [1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A kernel's time next to the kernel its chapter improves on, f32 and i32, inputs rotated.
pub fn modern_step_table(m: &Machine, rows: &[Row], kernel: &str, previous: &str) -> String {
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
pub fn modern_table(m: &Machine, rows: &[Row]) -> String {
    // (kernel, title, order): the book's kernels, then the ceiling, then the libraries.
    let mut kernels: Vec<(&str, &str, u8)> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && !r.is_host_visible() && (r.chapter >= 7 || r.status == Status::Peer || r.is_read_only())) {
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
    let mut sorted: Vec<&Row> = rows.iter().filter(|r| r.cache == Cache::Rotated && r.n >= 1 << 28 && r.status == Status::Correct && !r.is_entry_point()).collect();
    sorted.sort_by(|a, b| (&a.kernel, a.n, a.dtype.name()).cmp(&(&b.kernel, b.n, b.dtype.name())));
    for r in sorted {
        writeln!(s, "| `{}` | {} | 2^{} | {:.2} | {:.1} | {} | {} |", r.kernel, r.dtype, r.n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*% of read-only: the read-only ceiling for these types is {CEILING_NOT_MEASURED} (`--dtype f64,f16,bf16 --out plots/data/types`).*").unwrap();
    }
    s
}

/// Little's law for kernels 7 to 9: the bytes each keeps in flight as written, the latency that
/// covers at the peak, and the latency kernel 7's measured bandwidth implies.
pub fn bytes_in_flight(m: &Machine, rows: &[Row]) -> String {
    let (Some(peak), Some(threads)) = (m.peak_gbps, by_capability(&MAX_THREADS_PER_SM, &m.compute_capability)) else {
        return "*The theoretical peak or the resident threads per SM of this GPU are unknown, so the bytes in flight are not computed.*\n".into();
    };
    if m.sm_count == 0 {
        return "*The SM count of this GPU is not recorded, so the bytes in flight are not computed.*\n".into();
    }
    let per_sm_bytes_per_ns = peak / m.sm_count as f64; // GB/s = bytes per ns
    let n = 1usize << 30;
    // (kernel, loads as written, bytes per thread per step)
    let kernels = [(names::REDUCE7, "7 and 8: two 4-byte loads per step", 8u32), (names::REDUCE9, "9: four 16-byte loads per step", 64)];
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
    if let Some(k7) = find(rows, names::REDUCE7, Dtype::F32, n, Cache::Rotated) {
        let per_sm = kernels[0].2 as f64 * threads as f64;
        let implied_ns = per_sm * m.sm_count as f64 / k7.gbps(); // bytes / (bytes per ns)
        write!(s, " The measurements can: if kernel 7 were held back by its {:.0} KiB per SM alone, its {:.0} GB/s would mean a \
            latency of {implied_ns:.0} ns — and kernel 9 keeps {} times as many bytes in flight.",
            per_sm / 1024.0, k7.gbps(), kernels[1].2 / kernels[0].2).unwrap();
    }
    s.push('\n');
    s
}
