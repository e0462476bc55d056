//! Benchmark results as data: one CSV per GPU under `plots/data/`, with a header block that
//! names the machine, written by the benchmark and read back by the charts and the book's
//! tables. Pictures and tables are drawn from these files, never typed.

use crate::book::csv_file::{self, Header};
use crate::element::Dtype;
use crate::error::Result;
use serde::{Deserialize, Serialize, Serializer};
use std::path::Path;

/// Whether the inputs were rotated through a pool larger than L2 or left in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cache {
    #[serde(rename = "rotated")]
    Rotated,
    #[serde(rename = "l2-resident")]
    Resident,
}

impl Cache {
    pub fn name(self) -> &'static str {
        match self {
            Cache::Rotated => "rotated",
            Cache::Resident => "l2-resident",
        }
    }
}

/// What a row measured: a kernel of the book (correct, or historical: Harris's as published), a
/// library peer, or a yardstick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Correct,
    Historical,
    /// A library (cuBLAS, torch.sum, CUB).
    Peer,
    /// The copy kernel.
    Pace,
    /// The read-only kernel; files written before it existed say this of the copy too.
    Ceiling,
}

impl From<crate::kernels::Status> for Status {
    fn from(status: crate::kernels::Status) -> Status {
        match status {
            crate::kernels::Status::Correct => Status::Correct,
            crate::kernels::Status::Historical => Status::Historical,
        }
    }
}

/// The kernel name of the copy's rows: it reads and writes every byte, a pace to compare with.
pub const COPY_KERNEL: &str = "copy";
/// The kernel name of the read-only kernel's rows: every byte read once, one value written per
/// block; the ceiling of a sum.
pub const READ_ONLY_KERNEL: &str = "read_only";
/// The folder, beside a results file, of the read-only kernel's measurements at every launch
/// shape (`plots/data/read-only/<gpu>.csv`): the evidence for the shape its rows were taken at.
pub const READ_ONLY_SHAPES_DIR: &str = "read-only";

/// One measurement: a kernel, a library peer, the copy or the read-only ceiling, on one element
/// type and size.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kernel: String,
    pub chapter: u32,
    pub title: String,
    /// What was measured; the yardsticks are known by their kernel name ([`Row::is_copy`]), since
    /// files written before the read-only kernel existed call the copy a ceiling.
    pub status: Status,
    pub dtype: Dtype,
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
            ("date", self.date.clone()),
            ("command", self.command.clone()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
    }

    /// The machine a header names; keys it lacks are left empty (or zero, or an unknown peak).
    pub fn from_header(header: &[(String, String)]) -> Machine {
        let text = |key| csv_file::value(header, key).unwrap_or_default().to_string();
        let number = |key| csv_file::value(header, key).and_then(|v| v.parse().ok()).unwrap_or(0);
        Machine {
            gpu: text("gpu"),
            compute_capability: text("compute_capability"),
            sm_count: number("sm_count") as u32,
            l2_bytes: number("l2_bytes"),
            peak_gbps: csv_file::value(header, "peak_gbps").and_then(|v| v.parse().ok()),
            memory_clock_mhz: number("memory_clock_mhz") as u32,
            sm_clock_mhz: number("sm_clock_mhz") as u32,
            driver_cuda: text("driver_cuda"),
            nvrtc: text("nvrtc"),
            date: text("date"),
            command: text("command"),
        }
    }
}

/// One line of a results file: a [`Row`] with the bandwidth beside it, times to the nanosecond.
#[derive(Serialize, Deserialize)]
struct Record {
    kernel: String,
    chapter: u32,
    title: String,
    status: Status,
    dtype: Dtype,
    n: usize,
    block: u32,
    cache: Cache,
    #[serde(serialize_with = "decimals::<3, _>")]
    median_us: f64,
    #[serde(serialize_with = "decimals::<3, _>")]
    min_us: f64,
    #[serde(serialize_with = "decimals::<3, _>")]
    max_us: f64,
    /// Written for a reader of the file; computed again from the bytes and the time when read.
    #[serde(serialize_with = "decimals::<1, _>")]
    gbps: f64,
    bytes: usize,
    working_set_bytes: usize,
    repeats: usize,
    method: String,
}

/// A number with a fixed count of decimals, as the results files have always written it.
fn decimals<const D: usize, S: Serializer>(value: &f64, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&format!("{value:.D$}"))
}

impl From<&Row> for Record {
    fn from(r: &Row) -> Record {
        Record {
            kernel: r.kernel.clone(), chapter: r.chapter, title: r.title.clone(), status: r.status, dtype: r.dtype, n: r.n,
            block: r.block, cache: r.cache, median_us: r.median_us, min_us: r.min_us, max_us: r.max_us, gbps: r.gbps(),
            bytes: r.bytes, working_set_bytes: r.working_set_bytes, repeats: r.repeats, method: r.method.clone(),
        }
    }
}

impl From<Record> for Row {
    fn from(r: Record) -> Row {
        Row {
            kernel: r.kernel, chapter: r.chapter, title: r.title, status: r.status, dtype: r.dtype, n: r.n, block: r.block,
            cache: r.cache, median_us: r.median_us, min_us: r.min_us, max_us: r.max_us, bytes: r.bytes,
            working_set_bytes: r.working_set_bytes, repeats: r.repeats, method: r.method,
        }
    }
}

/// Write a results file: the machine's header, then one record per row.
pub fn write_csv(path: &Path, machine: &Machine, rows: &[Row]) -> Result<()> {
    csv_file::write(path, &machine.header(), &rows.iter().map(Record::from).collect::<Vec<_>>())
}

/// Read a results file written by [`write_csv`] (or by `plots/peers.py`).
pub fn read_csv(path: &Path) -> Result<(Machine, Vec<Row>)> {
    let (header, records) = csv_file::read::<Record>(path)?;
    Ok((Machine::from_header(&header), records.into_iter().map(Row::from).collect()))
}

/// Parse the text of a results file; `origin` names it in errors.
pub fn parse_csv(text: &str, origin: &str) -> Result<(Machine, Vec<Row>)> {
    let (header, records) = csv_file::from_str::<Record>(text, origin)?;
    Ok((Machine::from_header(&header), records.into_iter().map(Row::from).collect()))
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
            kernel: "reduce7".into(), chapter: 7, title: "multiple elements, per thread".into(), status: Status::Correct,
            dtype: Dtype::F32, n: 1 << 22, block: 256, cache: Cache::Rotated, median_us: 10.0, min_us: 9.5,
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
    fn malformed_files_are_refused_with_the_record() {
        let columns = "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method";
        let short = format!("# gpu: x\n{columns}\nreduce1,1\n");
        let message = parse_csv(&short, "short.csv").unwrap_err().to_string();
        assert!(message.contains("short.csv") && message.contains("record 1"), "{message}");
        let unknown = format!("{columns}\nreduce1,1,t,sorted,f32,1,1,rotated,1,1,1,1,1,1,1,m\n");
        assert!(parse_csv(&unknown, "status.csv").unwrap_err().to_string().contains("record 1"));
    }

    #[test]
    fn the_committed_results_files_read_and_write_back_the_same_format() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("plots/data");
        for file in ["nvidia-h200.csv", "nvidia-h200-peers.csv", "rows/nvidia-h200.csv", "rows/nvidia-h200-peers.csv", "types/nvidia-h200.csv"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let (machine, rows) = parse_csv(&text, file).unwrap();
            assert!(!rows.is_empty(), "{file}");
            let again = csv_file::to_string(&machine.header(), &rows.iter().map(Record::from).collect::<Vec<_>>()).unwrap();
            // The header comes back, and every field but the bandwidth (computed again from the
            // rounded time); fields are compared as CSV, so quoting must come back too.
            let header = |t: &str| t.lines().take_while(|l| l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
            assert_eq!(header(&text), header(&again), "{file}");
            let body = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(|l| {
                let fields = csv::ReaderBuilder::new().has_headers(false).from_reader(l.as_bytes()).records().next().unwrap().unwrap();
                let kept: Vec<String> = fields.iter().enumerate().filter(|(i, _)| *i != 11).map(|(_, f)| f.to_string()).collect();
                (kept, l.contains('"'), l.matches(',').count())
            }).collect::<Vec<_>>();
            assert_eq!(body(&text), body(&again), "{file}");
        }
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
        let old_copy = Row { kernel: COPY_KERNEL.into(), status: Status::Ceiling, ..sample_row() };
        assert!(old_copy.is_copy() && old_copy.is_yardstick() && !old_copy.is_read_only());
        let read_only = Row { kernel: READ_ONLY_KERNEL.into(), status: Status::Ceiling, ..sample_row() };
        assert!(read_only.is_read_only() && read_only.is_yardstick());
        assert!(!sample_row().is_yardstick());
    }

    #[test]
    fn files_name_states_as_the_tables_do() {
        for cache in [Cache::Rotated, Cache::Resident] {
            assert_eq!(serde_json::to_string(&cache).unwrap(), format!("\"{}\"", cache.name()));
        }
        assert_eq!(serde_json::to_string(&Status::Historical).unwrap(), "\"historical\"");
        assert_eq!(Status::from(crate::kernels::Status::Correct), Status::Correct);
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
