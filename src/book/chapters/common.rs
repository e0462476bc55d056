//! What the chapters' generators share: the line that says where the numbers were measured
//! (`machine.md`, included under most tables), the lookups of a row, and the shares of the peak
//! and of the read-only ceiling that every table prints.

use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row, READ_ONLY_KERNEL};
use std::fmt::Write as _;

pub fn find<'a>(rows: &'a [Row], kernel: &str, dtype: Dtype, n: usize, cache: Cache) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == cache)
}

/// The read-only kernel's measurement beside `row`: same element type, size and cache mode.
pub fn ceiling_for<'a>(rows: &'a [Row], row: &Row) -> Option<&'a Row> {
    find(rows, READ_ONLY_KERNEL, row.dtype, row.n, row.cache)
}

/// Whether this GPU's data has any read-only measurement yet.
pub fn has_ceiling(rows: &[Row]) -> bool {
    rows.iter().any(Row::is_read_only)
}

/// Said wherever a comparison with the read-only ceiling would stand, until it is measured.
pub const CEILING_NOT_MEASURED: &str = "not yet measured on this GPU: the next `cargo run --release -- bench` measures it beside the kernels";

/// What was measured, where: the GPU, its memory (the bus width and clock the theoretical peak
/// comes from), the software, the date and the command; and whether the read-only ceiling
/// that the "% of read-only" columns divide by has been measured.
pub fn machine_line(m: &Machine, rows: &[Row]) -> String {
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

pub fn pct_of_peak(m: &Machine, row: &Row) -> String {
    m.peak_gbps.map(|p| format!("{:.1} %", 100.0 * row.gbps() / p)).unwrap_or_else(|| "–".into())
}

/// `row`'s bandwidth as a share of the read-only kernel's at the same size, type and cache mode.
pub fn pct_of_ceiling(rows: &[Row], row: &Row) -> String {
    ceiling_for(rows, row).map(|c| format!("{:.1} %", 100.0 * row.gbps() / c.gbps())).unwrap_or_else(|| "–".into())
}

/// `n` as the chapters write a size: `2^20` for a power of two, the number otherwise.
pub fn size_text(n: usize) -> String {
    if n.is_power_of_two() { format!("2^{}", n.trailing_zeros()) } else { n.to_string() }
}

/// [`size_text`], with the benchmark's ragged sizes named as they were chosen: `10^6`,
/// `2^22 + 1`, `3·2^24 − 1`.
pub fn size_label(n: usize) -> String {
    if n.is_power_of_two() {
        return size_text(n);
    }
    let (mut k, mut m) = (0, n);
    while m > 1 && m % 10 == 0 {
        m /= 10;
        k += 1;
    }
    if m == 1 {
        return format!("10^{k}");
    }
    // One off a power of two, or off three times one.
    for (near, sign) in [(n.wrapping_sub(1), "+ 1"), (n.wrapping_add(1), "− 1")] {
        for (factor, prefix) in [(1, ""), (3, "3·")] {
            if near > 2 && near % factor == 0 && (near / factor).is_power_of_two() {
                return format!("{prefix}{} {sign}", size_text(near / factor));
            }
        }
    }
    size_text(n)
}

/// `x` in a sentence: to the first decimal below 10, whole above.
pub fn times(x: f64) -> String {
    if x < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") }
}

pub fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

pub fn by_capability(table: &[(&str, u32)], compute_capability: &str) -> Option<u32> {
    table.iter().find(|(cc, _)| *cc == compute_capability).map(|(_, v)| *v)
}

/// The most threads one SM holds at once, by compute capability: "Maximum number of resident
/// threads per SM" in the CUDA C++ Programming Guide's technical specifications.
pub const MAX_THREADS_PER_SM: [(&str, u32); 9] =
    [("7.0", 2048), ("7.2", 2048), ("7.5", 1024), ("8.0", 2048), ("8.6", 1536), ("8.7", 2048), ("8.9", 1536), ("9.0", 2048), ("12.0", 1536)];
