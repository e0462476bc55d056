//! The header every results file starts with: the GPU, its memory and software, the date and
//! the command that measured ([`Machine`]), written as `# key: value` lines ([`super::csv`]).
//! One constructor for every experiment ([`Machine::of`]); the other files' headers
//! (accuracy, determinism, mistakes) keep a subset of its keys ([`Machine::keep`]).

use super::csv::{self, Header};
use crate::gpu::Gpu;

/// The header block of a results file: what ran, where, when.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Machine {
    pub gpu: String,
    pub compute_capability: String,
    pub sm_count: u32,
    pub l2_bytes: usize,
    pub peak_gbps: Option<f64>,
    pub memory_clock_mhz: u32,
    pub sm_clock_mhz: u32,
    pub driver_cuda: String,
    pub nvrtc: String,
    /// `REDUCTION_NVRTC_OPTIONS` as the measurement was compiled with it (empty: the default
    /// build); the header names it only when it is not empty.
    pub nvrtc_options: String,
    pub date: String,
    pub command: String,
}

impl Machine {
    /// The memory bus width, in bits, that the theoretical peak was computed from. The header
    /// keeps the peak and the memory clock, and `peak = 2 × clock × bus / 8` (the DDR formula of
    /// `gpu::peak_bandwidth`) gives the bus back, to the nearest whole number of 32-bit channels
    /// (the clock is written in whole MHz, truncated). `None` where either is missing, or where
    /// that bus does not give the peak back to within the rounding of the header.
    pub fn memory_bus_bits(&self) -> Option<u32> {
        let peak = self.peak_gbps.filter(|p| p.is_finite() && *p > 0.0)?;
        if self.memory_clock_mhz == 0 {
            return None;
        }
        let clock_mhz = self.memory_clock_mhz as f64;
        let bits = (peak * 1e3 * 8.0 / (2.0 * clock_mhz) / 32.0).round() * 32.0;
        let again = 2.0 * clock_mhz * bits / 8.0 / 1e3;
        // A clock up to 1 MHz above the one written moves the peak by peak / clock.
        let tolerance = 0.05 + peak / clock_mhz;
        (bits > 0.0 && (again - peak).abs() <= tolerance).then_some(bits as u32)
    }
}

/// `NVIDIA H200` -> `nvidia-h200`: the file name for a GPU's results.
pub fn slug(gpu_name: &str) -> String {
    let mut out = String::new();
    for c in gpu_name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

impl Machine {
    /// The machine `gpu` is, today, measured by `command` (the command line as a reader would
    /// retype it).
    pub fn of(gpu: &Gpu, command: String) -> Machine {
        let info = gpu.info();
        Machine {
            gpu: info.name.clone(),
            compute_capability: info.compute_capability_text(),
            sm_count: info.sm_count,
            l2_bytes: info.l2_cache_bytes,
            peak_gbps: info.peak_bandwidth_bytes_per_s().map(|b| b / 1e9),
            memory_clock_mhz: info.memory_clock_khz / 1000,
            sm_clock_mhz: info.sm_clock_khz / 1000,
            driver_cuda: info.driver_cuda_text(),
            nvrtc: crate::nvrtc::version_text(),
            nvrtc_options: crate::nvrtc::experiment_options().join(" "),
            date: today(),
            command,
        }
    }

    /// The header lines named by `keys`, in that order, from [`Machine::header`]: the headers
    /// of the files that keep less than the benchmark's.
    pub fn keep(&self, keys: &[&str]) -> Header {
        let all = self.header();
        keys.iter().filter_map(|k| all.iter().find(|(key, _)| key == k).cloned()).collect()
    }

    /// The `# key: value` lines of a results file.
    pub fn header(&self) -> Header {
        let peak = self.peak_gbps.map(|p| format!("{p:.1}")).unwrap_or_else(|| "unknown".into());
        [
            ("gpu", self.gpu.clone()),
            ("compute_capability", self.compute_capability.clone()),
            ("sm_count", self.sm_count.to_string()),
            ("l2_bytes", self.l2_bytes.to_string()),
            ("peak_gbps", peak),
            ("memory_clock_mhz", self.memory_clock_mhz.to_string()),
            ("sm_clock_mhz", self.sm_clock_mhz.to_string()),
            ("driver_cuda", self.driver_cuda.clone()),
            ("nvrtc", self.nvrtc.clone()),
            ("nvrtc_options", self.nvrtc_options.clone()),
            ("date", self.date.clone()),
            ("command", self.command.clone()),
        ]
        .into_iter()
        .filter(|(key, value)| *key != "nvrtc_options" || !value.is_empty())
        .map(|(key, value)| (key.to_string(), value))
        .collect()
    }

    /// The machine a header names; keys it lacks are left empty (or zero, or an unknown peak).
    pub fn from_header(header: &[(String, String)]) -> Machine {
        let text = |key| csv::value(header, key).unwrap_or_default().to_string();
        let number = |key| csv::value(header, key).and_then(|v| v.parse().ok()).unwrap_or(0);
        Machine {
            gpu: text("gpu"),
            compute_capability: text("compute_capability"),
            sm_count: number("sm_count") as u32,
            l2_bytes: number("l2_bytes"),
            peak_gbps: csv::value(header, "peak_gbps").and_then(|v| v.parse().ok()),
            memory_clock_mhz: number("memory_clock_mhz") as u32,
            sm_clock_mhz: number("sm_clock_mhz") as u32,
            driver_cuda: text("driver_cuda"),
            nvrtc: text("nvrtc"),
            nvrtc_options: text("nvrtc_options"),
            date: text("date"),
            command: text("command"),
        }
    }
}


/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bus_width_comes_back_from_the_peak_and_the_clock() {
        // The H200's header: 4814.3 GB/s from a 6016-bit bus at 3201 MHz.
        let h200 = Machine { peak_gbps: Some(4814.3), memory_clock_mhz: 3201, ..Default::default() };
        assert_eq!(h200.memory_bus_bits(), Some(6016));
        assert_eq!(Machine { memory_clock_mhz: 0, ..h200.clone() }.memory_bus_bits(), None);
        assert_eq!(Machine { peak_gbps: None, ..h200 }.memory_bus_bits(), None);
    }

    #[test]
    fn the_header_names_experiment_options_only_when_there_are_some() {
        let plain = Machine { gpu: "Test GPU".into(), ..Default::default() };
        assert!(plain.header().iter().all(|(key, _)| key != "nvrtc_options"));
        let switched = Machine { nvrtc_options: "-DREDUCE12_PREDICATED_TAIL".into(), ..plain };
        assert_eq!(Machine::from_header(&switched.header()), switched);
        assert!(switched.header().contains(&("nvrtc_options".to_string(), "-DREDUCE12_PREDICATED_TAIL".to_string())));
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("NVIDIA H200"), "nvidia-h200");
        assert_eq!(slug("NVIDIA GeForce RTX 4090 (laptop)"), "nvidia-geforce-rtx-4090-laptop");
    }

    #[test]
    fn today_is_a_plausible_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.as_str() >= "2025-01-01", "{d}");
    }
}
