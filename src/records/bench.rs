//! Benchmark results as data: one CSV per GPU under `plots/data/` (and under `types/`, `rows/`
//! and `tile/`), a [`Machine`] header and one [`Row`] per measurement, written by the benchmarks
//! (`measure::bench`, `measure::rows_bench`, `plots/peers.py`, `plots/tile_peers.py`) and read
//! back by the charts and the book's tables. Pictures and tables are drawn from these files,
//! never typed.

use super::csv;
pub use super::machine::Machine;
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

/// The kernel name of the copy's rows: it reads and writes every byte, a pace to compare with.
pub const COPY_KERNEL: &str = "copy";
/// The kernel name of the library peer's rows: cuBLAS `Sasum`, measured beside the f32 sums.
pub const CUBLAS_KERNEL: &str = "cublas_sasum";
/// The kernel name of the read-only kernel's rows: every byte read once, one value written per
/// block; the ceiling of a sum.
pub const READ_ONLY_KERNEL: &str = "read_only";
/// The folder, beside a results file, of the read-only kernel's measurements at every launch
/// shape (`plots/data/read-only/<gpu>.csv`): the evidence for the shape its rows were taken at.
pub const READ_ONLY_SHAPES_DIR: &str = "read-only";
/// The kernel name of the entry point's rows (`Reducer::auto`: the launch `kernels::dispatch`
/// picks at each size), graph-amortized like every kernel...
pub const ENTRY_POINT_KERNEL: &str = "entry_point";
/// ...and host-visible: one call and its result in a host variable, by the host's clock.
pub const ENTRY_POINT_HOST_KERNEL: &str = "entry_point_host";

/// One measurement: a kernel, a library peer, the copy or the read-only ceiling, on one element
/// type and size.
#[derive(Clone, Debug, PartialEq, Deserialize)]
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

    /// A host-visible time (a kernel name ending in `_host`): one call and its result in a host
    /// variable, by the host's clock, not GPU time; never drawn beside the GPU times.
    pub fn is_host_visible(&self) -> bool {
        self.kernel.ends_with("_host")
    }

    /// The entry point's rows: a kernel of the book measured again as the rule picks it.
    pub fn is_entry_point(&self) -> bool {
        self.kernel == ENTRY_POINT_KERNEL || self.kernel == ENTRY_POINT_HOST_KERNEL
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

/// A number with a fixed count of decimals, as the results files have always written it.
struct Decimals<const D: usize>(f64);

impl<const D: usize> Serialize for Decimals<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:.D$}", self.0))
    }
}

/// One line of a results file: the row's fields in order, times to the nanosecond, and the
/// bandwidth beside them for a reader of the file (`gbps`, after `max_us`). Reading skips that
/// column: the bandwidth is computed again from the bytes and the time ([`Row::gbps`]).
impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut line = serializer.serialize_struct("Row", 16)?;
        serialize_row_fields(&mut line, self)?;
        line.end()
    }
}

/// A [`Row`]'s 16 columns, in order, into `line`: what every results file starts its lines
/// with (the deep-learning records add `op` and `rows` after them).
pub(crate) fn serialize_row_fields<S: serde::ser::SerializeStruct>(line: &mut S, row: &Row) -> std::result::Result<(), S::Error> {
    line.serialize_field("kernel", &row.kernel)?;
    line.serialize_field("chapter", &row.chapter)?;
    line.serialize_field("title", &row.title)?;
    line.serialize_field("status", &row.status)?;
    line.serialize_field("dtype", &row.dtype)?;
    line.serialize_field("n", &row.n)?;
    line.serialize_field("block", &row.block)?;
    line.serialize_field("cache", &row.cache)?;
    line.serialize_field("median_us", &Decimals::<3>(row.median_us))?;
    line.serialize_field("min_us", &Decimals::<3>(row.min_us))?;
    line.serialize_field("max_us", &Decimals::<3>(row.max_us))?;
    line.serialize_field("gbps", &Decimals::<1>(row.gbps()))?;
    line.serialize_field("bytes", &row.bytes)?;
    line.serialize_field("working_set_bytes", &row.working_set_bytes)?;
    line.serialize_field("repeats", &row.repeats)?;
    line.serialize_field("method", &row.method)
}

/// Write a results file: the machine's header, then one line per row.
pub fn write_csv(path: &Path, machine: &Machine, rows: &[Row]) -> Result<()> {
    csv::write(path, &machine.header(), rows)
}

/// Read a results file written by [`write_csv`] (or by `plots/peers.py`).
pub fn read_csv(path: &Path) -> Result<(Machine, Vec<Row>)> {
    let (header, rows) = csv::read::<Row>(path)?;
    Ok((Machine::from_header(&header), rows))
}

/// Parse the text of a results file; `origin` names it in errors.
pub fn parse_csv(text: &str, origin: &str) -> Result<(Machine, Vec<Row>)> {
    let (header, rows) = csv::from_str::<Row>(text, origin)?;
    Ok((Machine::from_header(&header), rows))
}

/// Every results file directly under `data_dir`, sorted by name; files from the same GPU (the
/// benchmark's and `plots/peers.py`'s) are merged, the first file's header kept (the
/// benchmark's own file comes first, so its header, with the theoretical peak, is kept).
pub fn load_all(data_dir: &Path) -> Result<Vec<(Machine, Vec<Row>)>> {
    let mut files = super::csv_files(data_dir);
    if files.is_empty() && !data_dir.is_dir() {
        return Err(crate::error::io_error(data_dir, "no such folder"));
    }
    files.sort_by_key(|f| (f.to_string_lossy().ends_with("-peers.csv"), f.clone()));
    let mut merged: Vec<(Machine, Vec<Row>)> = Vec::new();
    for file in &files {
        let (machine, rows) = read_csv(file)?;
        match merged.iter_mut().find(|(m, _)| m.gpu == machine.gpu) {
            Some((_, existing)) => existing.extend(rows),
            None => merged.push((machine, rows)),
        }
    }
    Ok(merged)
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
        let root = crate::records::repo_root().join("plots/data");
        for file in ["nvidia-h200.csv", "nvidia-h200-peers.csv", "rows/nvidia-h200.csv", "rows/nvidia-h200-peers.csv", "types/nvidia-h200.csv"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let (machine, rows) = parse_csv(&text, file).unwrap();
            assert!(!rows.is_empty(), "{file}");
            let again = csv::to_string(&machine.header(), &rows).unwrap();
            // The header comes back, and every field but the bandwidth (computed again from the
            // rounded time); fields are compared as CSV, so quoting must come back too.
            let header = |t: &str| t.lines().take_while(|l| l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
            assert_eq!(header(&text), header(&again), "{file}");
            let body = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(|l| {
                let fields = ::csv::ReaderBuilder::new().has_headers(false).from_reader(l.as_bytes()).records().next().unwrap().unwrap();
                let kept: Vec<String> = fields.iter().enumerate().filter(|(i, _)| *i != 11).map(|(_, f)| f.to_string()).collect();
                (kept, l.contains('"'), l.matches(',').count())
            }).collect::<Vec<_>>();
            assert_eq!(body(&text), body(&again), "{file}");
        }
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
    }
}
