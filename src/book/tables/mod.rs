//! Markdown tables and sentences for the chapters, generated from benchmark results. The chapters
//! `{{#include}}` them from `book/generated/`, so no measured number in the book is typed by hand.
//! This file writes them all and holds what every table shares (the machine line, the lookups, the
//! shares of the peak and of the read-only ceiling); one file per kind of table: `harris`,
//! `modern`, `ceiling`, the `claims` of the prose, and the CUDA `tools`' reports.

use crate::element::Dtype;
use crate::error::{io_error, Result};
use crate::records::bench::{Cache, Machine, Row, READ_ONLY_KERNEL};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod ceiling;
pub use ceiling::fastest;
mod claims;
mod harris;
mod modern;
mod tools;
#[cfg(test)]
mod tests;

use ceiling::{best_table, ceiling_table};
pub use claims::*;
pub use harris::*;
pub use modern::*;
pub use tools::*;

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
