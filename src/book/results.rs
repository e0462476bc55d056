//! Benchmark results as data: one CSV per GPU under `plots/data/`, with a header block that
//! names the machine, written by the benchmark and read back by the charts and the book's
//! tables. Pictures and tables are drawn from these files, never typed.

use crate::error::{io_error, Result};
use std::fmt::Write as _;
use std::path::Path;

/// Whether the inputs were rotated through a pool larger than L2 or left in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    Rotated,
    Resident,
}

impl Cache {
    pub fn name(self) -> &'static str {
        match self {
            Cache::Rotated => "rotated",
            Cache::Resident => "l2-resident",
        }
    }

    fn parse(s: &str) -> Option<Cache> {
        [Cache::Rotated, Cache::Resident].into_iter().find(|c| c.name() == s)
    }
}

/// The kernel name of the copy's rows: it reads and writes every byte, a pace to compare with.
pub const COPY_KERNEL: &str = "copy";
/// The kernel name of the read-only kernel's rows: every byte read once, one value written per
/// block; the ceiling of a sum.
pub const READ_ONLY_KERNEL: &str = "read_only";

/// One measurement: a kernel, a library peer, the copy or the read-only ceiling, on one element
/// type and size.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kernel: String,
    pub chapter: u32,
    pub title: String,
    /// `correct`, `historical`, `peer` (a library), `ceiling` (the read-only kernel) or `pace` (the
    /// copy; files written before the read-only kernel existed say `ceiling` for it too).
    pub status: String,
    pub dtype: String,
    pub n: usize,
    pub block: u32,
    pub cache: Cache,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// Bytes moved through DRAM per operation: n values read (a copy also writes them).
    pub bytes: usize,
    /// Distinct input bytes one timed graph reads; below the L2 size the data came from L2.
    pub working_set_bytes: usize,
    pub repeats: usize,
    pub method: String,
}

impl Row {
    /// The copy kernel's row (whatever its status says: older files call it a ceiling).
    pub fn is_copy(&self) -> bool {
        self.kernel == COPY_KERNEL
    }

    /// The read-only kernel's row: the ceiling of a sum.
    pub fn is_read_only(&self) -> bool {
        self.kernel == READ_ONLY_KERNEL
    }

    /// A yardstick rather than a kernel of the book: the copy or the read-only kernel.
    pub fn is_yardstick(&self) -> bool {
        self.is_copy() || self.is_read_only()
    }

    /// Achieved bandwidth at the median time, in GB/s (10^9 bytes per second).
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / (self.median_us * 1e-6) / 1e9
    }
}

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

const COLUMNS: &str = "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method";

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

pub fn write_csv(path: &Path, machine: &Machine, rows: &[Row]) -> Result<()> {
    let mut s = String::new();
    let peak = machine.peak_gbps.map(|p| format!("{p:.1}")).unwrap_or_else(|| "unknown".into());
    for (key, value) in [
        ("gpu", machine.gpu.clone()),
        ("compute_capability", machine.compute_capability.clone()),
        ("sm_count", machine.sm_count.to_string()),
        ("l2_bytes", machine.l2_bytes.to_string()),
        ("peak_gbps", peak),
        ("memory_clock_mhz", machine.memory_clock_mhz.to_string()),
        ("sm_clock_mhz", machine.sm_clock_mhz.to_string()),
        ("driver_cuda", machine.driver_cuda.clone()),
        ("nvrtc", machine.nvrtc.clone()),
        ("date", machine.date.clone()),
        ("command", machine.command.clone()),
    ] {
        writeln!(s, "# {key}: {value}").unwrap();
    }
    writeln!(s, "{COLUMNS}").unwrap();
    for r in rows {
        writeln!(
            s,
            "{},{},{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.1},{},{},{},{}",
            r.kernel, r.chapter, quote(&r.title), r.status, r.dtype, r.n, r.block, r.cache.name(),
            r.median_us, r.min_us, r.max_us, r.gbps(), r.bytes, r.working_set_bytes, r.repeats, quote(&r.method)
        )
        .unwrap();
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
    }
    std::fs::write(path, s).map_err(|e| io_error(path, e))
}

pub fn read_csv(path: &Path) -> Result<(Machine, Vec<Row>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_csv(&text).map_err(|why| io_error(path, why))
}

pub fn parse_csv(text: &str) -> std::result::Result<(Machine, Vec<Row>), String> {
    let mut machine = Machine::default();
    let mut rows = Vec::new();
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(meta) = line.strip_prefix("# ") {
            let (key, value) = meta.split_once(": ").ok_or(format!("line {}: expected `# key: value`", i + 1))?;
            let value = value.to_string();
            match key {
                "gpu" => machine.gpu = value,
                "compute_capability" => machine.compute_capability = value,
                "sm_count" => machine.sm_count = value.parse().unwrap_or(0),
                "l2_bytes" => machine.l2_bytes = value.parse().unwrap_or(0),
                "peak_gbps" => machine.peak_gbps = value.parse().ok(),
                "memory_clock_mhz" => machine.memory_clock_mhz = value.parse().unwrap_or(0),
                "sm_clock_mhz" => machine.sm_clock_mhz = value.parse().unwrap_or(0),
                "driver_cuda" => machine.driver_cuda = value,
                "nvrtc" => machine.nvrtc = value,
                "date" => machine.date = value,
                "command" => machine.command = value,
                _ => {}
            }
            continue;
        }
        if !header_seen {
            if line != COLUMNS {
                return Err(format!("line {}: expected the column names {COLUMNS}", i + 1));
            }
            header_seen = true;
            continue;
        }
        let f = split_quoted(line);
        if f.len() != 16 {
            return Err(format!("line {}: expected 16 fields, found {}", i + 1, f.len()));
        }
        let num = |k: usize| f[k].parse::<f64>().map_err(|_| format!("line {}: field {} is not a number: {:?}", i + 1, k + 1, f[k]));
        let int = |k: usize| f[k].parse::<usize>().map_err(|_| format!("line {}: field {} is not an integer: {:?}", i + 1, k + 1, f[k]));
        rows.push(Row {
            kernel: f[0].clone(),
            chapter: int(1)? as u32,
            title: f[2].clone(),
            status: f[3].clone(),
            dtype: f[4].clone(),
            n: int(5)?,
            block: int(6)? as u32,
            cache: Cache::parse(&f[7]).ok_or(format!("line {}: unknown cache mode {:?}", i + 1, f[7]))?,
            median_us: num(8)?,
            min_us: num(9)?,
            max_us: num(10)?,
            bytes: int(12)?,
            working_set_bytes: int(13)?,
            repeats: int(14)?,
            method: f[15].clone(),
        });
    }
    if !header_seen {
        return Err("no column header".into());
    }
    Ok((machine, rows))
}

/// A CSV field, quoted when it holds a comma or a quote.
pub(crate) fn quote(s: &str) -> String {
    if s.contains(',') || s.contains('"') { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// The fields of one CSV line, quotes undone.
pub(crate) fn split_quoted(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
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

    fn sample_row() -> Row {
        Row {
            kernel: "reduce7".into(), chapter: 7, title: "multiple elements, per thread".into(), status: "correct".into(),
            dtype: "f32".into(), n: 1 << 22, block: 256, cache: Cache::Rotated, median_us: 10.0, min_us: 9.5,
            max_us: 12.25, bytes: 4 << 22, working_set_bytes: 4 << 26, repeats: 21, method: "graph of 40 back-to-back, CUDA events".into(),
        }
    }

    #[test]
    fn csv_round_trips_rows_and_machine() {
        let machine = Machine { gpu: "NVIDIA H200".into(), peak_gbps: Some(4915.2), sm_count: 132, date: "2026-11-30".into(), ..Default::default() };
        let path = std::env::temp_dir().join(format!("reduction-csv-{}.csv", std::process::id()));
        write_csv(&path, &machine, &[sample_row()]).unwrap();
        let (m, rows) = read_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(m, machine);
        assert_eq!(rows, vec![sample_row()]);
    }

    #[test]
    fn bandwidth_is_bytes_over_median_time() {
        // 16 MiB in 10 µs: 1677.7 GB/s.
        assert!((sample_row().gbps() - 1677.7216).abs() < 1e-3);
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        assert!(parse_csv("nonsense\n").unwrap_err().contains("line 1"));
        let short = format!("{COLUMNS}\nreduce1,1\n");
        assert!(parse_csv(&short).unwrap_err().contains("line 2"));
    }

    #[test]
    fn the_bus_width_comes_back_from_the_peak_and_the_clock() {
        // The H200's header: 4814.3 GB/s from a 6016-bit bus at 3201 MHz.
        let h200 = Machine { peak_gbps: Some(4814.3), memory_clock_mhz: 3201, ..Default::default() };
        assert_eq!(h200.memory_bus_bits(), Some(6016));
        assert_eq!(Machine { memory_clock_mhz: 0, ..h200.clone() }.memory_bus_bits(), None);
        assert_eq!(Machine { peak_gbps: None, ..h200 }.memory_bus_bits(), None);
    }

    #[test]
    fn yardsticks_are_known_by_name_whatever_their_status() {
        let old_copy = Row { kernel: COPY_KERNEL.into(), status: "ceiling".into(), ..sample_row() };
        assert!(old_copy.is_copy() && old_copy.is_yardstick() && !old_copy.is_read_only());
        let read_only = Row { kernel: READ_ONLY_KERNEL.into(), status: "ceiling".into(), ..sample_row() };
        assert!(read_only.is_read_only() && read_only.is_yardstick());
        assert!(!sample_row().is_yardstick());
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
