//! Nsight Compute's raw metrics (`ncu --page raw --csv`, `plots/data/ncu/<kernel>.csv`, from
//! `tests/gpu-host.sh ncu`): one [`Profile`] per kernel, every metric in base units.

use crate::error::{io_error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The launch the raw profiles are of: the first pass of a sum of 2^25 `i32`, blocks of 256.
pub const PROFILED_N: usize = 1 << 25;

/// Share of cycles in which a scheduler issued an instruction.
pub const ISSUE_ACTIVE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";
/// Warp instructions executed.
pub const WARP_INSTRUCTIONS: &str = "smsp__inst_executed.sum";
/// Thread instructions executed.
pub const THREAD_INSTRUCTIONS: &str = "smsp__thread_inst_executed.sum";
/// Bytes read from DRAM.
pub const DRAM_READ: &str = "dram__bytes_read.sum";
/// The launch's duration, in nanoseconds.
pub const DURATION: &str = "gpu__time_duration.sum";

/// One kernel's profile: the metrics of `ncu --page raw --csv`, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub kernel: String,
    pub metrics: BTreeMap<String, f64>,
}

impl Profile {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied()
    }

    /// Warp instructions per element of the profiled launch (× 32 / [`PROFILED_N`]).
    pub fn instructions_per_element(&self) -> Option<f64> {
        self.get(WARP_INSTRUCTIONS).map(|w| w * 32.0 / PROFILED_N as f64)
    }

    /// Cycles a warp waited for `reason` (`barrier`, `long_scoreboard`) per instruction issued.
    pub fn stall(&self, reason: &str) -> Option<f64> {
        self.get(&format!("smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"))
    }

    /// The stall reasons (`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`:
    /// cycles a warp waited for that reason, per instruction issued), largest first.
    pub fn stalls(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self
            .metrics
            .iter()
            .filter_map(|(k, v)| {
                let reason = k.strip_prefix("smsp__average_warps_issue_stalled_")?.strip_suffix("_per_issue_active.ratio")?;
                // "selected" is the cycle a warp issues: no stall.
                (reason != "selected").then(|| (reason.replace('_', " "), *v))
            })
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }
}

/// Parse `ncu --page raw --csv` output: a header row of metric names, a row of units, then one
/// row per profiled kernel (the first is kept). Numbers may carry thousands separators.
pub fn parse_raw(text: &str, kernel: &str) -> Option<Profile> {
    let start = text.lines().position(|l| l.starts_with("\"ID\""))?;
    let body: String = text.lines().skip(start).collect::<Vec<_>>().join("\n");
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(body.as_bytes());
    let headers = reader.headers().ok()?.clone();
    let mut records = reader.records().flatten();
    let units = records.next()?;
    let values = records.next()?;
    let mut metrics = BTreeMap::new();
    for ((name, unit), value) in headers.iter().zip(units.iter()).zip(values.iter()) {
        if let Ok(v) = value.replace(',', "").parse::<f64>() {
            metrics.insert(name.to_string(), v * unit_factor(unit));
        }
    }
    Some(Profile { kernel: kernel.to_string(), metrics })
}

/// ncu scales its units to the value (`usecond`, `Mbyte`): back to nanoseconds and bytes.
fn unit_factor(unit: &str) -> f64 {
    match unit {
        "usecond" | "us" => return 1e3,
        "msecond" | "ms" => return 1e6,
        "second" | "s" => return 1e9,
        _ => {}
    }
    // Kbyte, Mbyte, Ginst, ...: a decimal prefix on a lowercase base unit.
    let mut chars = unit.chars();
    let factor = match chars.next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => return 1.0,
    };
    if chars.next().is_some_and(|c| c.is_ascii_lowercase()) { factor } else { 1.0 }
}

/// The raw profiles of `kernels` under `dir` (`<kernel>.csv`), by kernel: a kernel with no file
/// is left out; a file that is there but holds no profile is an error naming it.
pub fn load_profiles(dir: &Path, kernels: &[&str]) -> Result<BTreeMap<String, Profile>> {
    let mut out = BTreeMap::new();
    for kernel in kernels {
        let path = dir.join(format!("{kernel}.csv"));
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let profile = parse_raw(&text, kernel).ok_or_else(|| {
            io_error(&path, "no `ncu --page raw --csv` profile in it (a line of metric names starting \"ID\", one of units, one of values)")
        })?;
        out.insert(kernel.to_string(), profile);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_raw_csv_is_read_with_its_thousands_separators() {
        let text = "==PROF== noise\n\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\",\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"gpu__time_duration.sum\"\n\"\",\"\",\"inst\",\"ratio\",\"ratio\",\"usecond\"\n\"0\",\"reduce4_i32\",\"1,048,576\",\"3.5\",\"7.25\",\"85.5\"\n";
        let p = parse_raw(text, "reduce4").unwrap();
        assert_eq!(p.get(WARP_INSTRUCTIONS), Some(1048576.0));
        assert_eq!(p.get(DURATION), Some(85500.0), "microseconds become nanoseconds");
        assert_eq!(p.stalls()[0], ("long scoreboard".to_string(), 7.25));
        assert_eq!(p.stall("barrier"), Some(3.5));
        assert!(parse_raw("no csv here\n", "reduce4").is_none());
    }

    #[test]
    fn a_file_that_holds_no_profile_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("reduction-ncu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("reduce4.csv"), "==PROF== nothing was profiled\n").unwrap();
        let err = load_profiles(&dir, &["reduce3", "reduce4"]).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(err.contains("reduce4.csv"), "{err}");
    }
}
