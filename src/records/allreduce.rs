//! NCCL's all-reduce as data: `plots/data/nccl/<gpu>-x<count>.csv`, written by `reduction
//! multigpu allreduce` (`multigpu::allreduce`) and read by `book::allreduce`; and the arithmetic
//! on it, the algorithm and bus bandwidths as nccl-tests define them.

use super::csv;
use crate::error::{io_error, Result};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

// ANCHOR: busbw
/// Algorithm bandwidth: the message size over the time of one all-reduce, in GB/s.
pub fn algbw_gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// How much more than the message each rank's links carry in a bandwidth-optimal all-reduce:
/// every rank sends and receives `(n − 1)/n` of the message twice, once while reducing its
/// share (reduce-scatter) and once while passing the sums on (all-gather). 0 for one rank.
pub fn bus_factor(ranks: usize) -> f64 {
    if ranks == 0 { 0.0 } else { 2.0 * (ranks - 1) as f64 / ranks as f64 }
}

/// Bus bandwidth: the algorithm bandwidth scaled by [`bus_factor`], which makes it comparable
/// with the bandwidth of one link, whatever the number of GPUs.
pub fn busbw_gbps(algbw_gbps: f64, ranks: usize) -> f64 {
    algbw_gbps * bus_factor(ranks)
}
// ANCHOR_END: busbw

/// One message size, measured.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct AllReduceRow {
    pub bytes: usize,
    /// `f32` values per rank.
    pub count: usize,
    /// The slowest rank's median time per all-reduce, and the extremes over all ranks.
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub repeats: usize,
    pub ops_per_repeat: usize,
}

impl AllReduceRow {
    pub fn algbw_gbps(&self) -> f64 {
        algbw_gbps(self.bytes, self.median_us * 1e-6)
    }

    pub fn busbw_gbps(&self, ranks: usize) -> f64 {
        busbw_gbps(self.algbw_gbps(), ranks)
    }
}

/// The header block of a results file: which GPUs, which NCCL, when, how.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllReduceHeader {
    pub gpus: Vec<String>,
    pub nccl: String,
    pub driver_cuda: String,
    pub multicast: String,
    pub date: String,
    pub command: String,
    pub method: String,
}

impl AllReduceHeader {
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// `nvidia-h200-x2.csv`.
    pub fn file_name(&self) -> String {
        format!("{}-x{}.csv", super::slug(self.gpus.first().map(String::as_str).unwrap_or("unknown")), self.ranks())
    }

    /// `2 × NVIDIA H200`.
    pub fn describe(&self) -> String {
        if self.gpus.windows(2).all(|w| w[0] == w[1]) {
            format!("{} × {}", self.gpus.len(), self.gpus.first().map(String::as_str).unwrap_or("?"))
        } else {
            self.gpus.join(" + ")
        }
    }

    fn lines(&self) -> csv::Header {
        [
            ("gpus", self.gpus.join("; ")),
            ("gpu_count", self.ranks().to_string()),
            ("nccl", self.nccl.clone()),
            ("driver_cuda", self.driver_cuda.clone()),
            ("multicast", self.multicast.clone()),
            ("date", self.date.clone()),
            ("command", self.command.clone()),
            ("method", self.method.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

const COLUMNS: &str = "bytes,count,dtype,op,median_us,min_us,max_us,algbw_gbps,busbw_gbps,repeats,ops_per_repeat";

/// One line of the file: a row with the bandwidths worked out for `ranks` GPUs, times and
/// bandwidths to the nanosecond and the MB/s. Reading skips the type, the operation (always
/// `f32`, `sum`) and the bandwidths (computed again from the time).
struct Line<'a> {
    row: &'a AllReduceRow,
    ranks: usize,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let three = |x: f64| format!("{x:.3}");
        let r = self.row;
        let mut line = serializer.serialize_struct("Line", 11)?;
        line.serialize_field("bytes", &r.bytes)?;
        line.serialize_field("count", &r.count)?;
        line.serialize_field("dtype", "f32")?;
        line.serialize_field("op", "sum")?;
        line.serialize_field("median_us", &three(r.median_us))?;
        line.serialize_field("min_us", &three(r.min_us))?;
        line.serialize_field("max_us", &three(r.max_us))?;
        line.serialize_field("algbw_gbps", &three(r.algbw_gbps()))?;
        line.serialize_field("busbw_gbps", &three(r.busbw_gbps(self.ranks)))?;
        line.serialize_field("repeats", &r.repeats)?;
        line.serialize_field("ops_per_repeat", &r.ops_per_repeat)?;
        line.end()
    }
}

pub fn write_csv(path: &Path, header: &AllReduceHeader, rows: &[AllReduceRow]) -> Result<()> {
    let lines: Vec<Line> = rows.iter().map(|row| Line { row, ranks: header.ranks() }).collect();
    csv::write(path, &header.lines(), &lines)
}

pub fn read_csv(path: &Path) -> Result<(AllReduceHeader, Vec<AllReduceRow>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_csv(&text).map_err(|why| io_error(path, why))
}

/// Read a results file from its text; `Err` says which line or record is wrong.
pub fn parse_csv(text: &str) -> std::result::Result<(AllReduceHeader, Vec<AllReduceRow>), String> {
    csv::expect_columns(text, COLUMNS)?;
    let (meta, rows): (_, Vec<AllReduceRow>) = csv::from_str(text, "all-reduce results").map_err(|e| e.to_string())?;
    let value = |key: &str| csv::value(&meta, key).unwrap_or_default().to_string();
    let header = AllReduceHeader {
        gpus: value("gpus").split("; ").map(str::to_string).filter(|g| !g.is_empty()).collect(),
        nccl: value("nccl"),
        driver_cuda: value("driver_cuda"),
        multicast: value("multicast"),
        date: value("date"),
        command: value("command"),
        method: value("method"),
    };
    let gpu_count = match csv::value(&meta, "gpu_count") {
        None => None,
        Some(v) => Some(v.parse::<usize>().map_err(|_| format!("gpu_count {v:?} is not a number"))?),
    };
    if header.gpus.is_empty() || gpu_count != Some(header.gpus.len()) {
        return Err(format!("the header names {} GPU(s) but gpu_count says {gpu_count:?}", header.gpus.len()));
    }
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| !(r.median_us > 0.0 && r.median_us.is_finite())) {
        return Err(format!("record {}: median time {} µs cannot be right", i + 1, r.median_us));
    }
    Ok((header, rows))
}

/// Where the all-reduce results live: `plots/data/nccl/` under the repository's `root`.
pub fn data_dir(root: &Path) -> PathBuf {
    root.join("plots/data/nccl")
}

/// Every results file under `plots/data/nccl/`, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<(PathBuf, AllReduceHeader, Vec<AllReduceRow>)>> {
    super::csv_files(dir).into_iter().map(|f| read_csv(&f).map(|(h, r)| (f, h, r))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_bandwidth_is_what_each_link_carries() {
        assert_eq!(bus_factor(1), 0.0);
        assert_eq!(bus_factor(2), 1.0);
        assert_eq!(bus_factor(4), 1.5);
        assert_eq!(bus_factor(8), 1.75);
        // 1 GiB in 5 ms: 214.7 GB/s of algorithm bandwidth; on 8 GPUs each link carried 1.75×.
        let alg = algbw_gbps(1 << 30, 5e-3);
        assert!((alg - 214.748).abs() < 1e-3, "{alg}");
        assert!((busbw_gbps(alg, 8) - 1.75 * alg).abs() < 1e-9);
    }

    #[test]
    fn the_committed_runs_are_read_and_written_back_as_they_were() {
        let root = crate::records::repo_root();
        let root = root.as_path();
        let runs = load_all(&data_dir(root)).unwrap();
        for (file, header, rows) in runs {
            let path = std::env::temp_dir().join(format!("reduction-allreduce-{}-{}", std::process::id(), header.file_name()));
            write_csv(&path, &header, &rows).unwrap();
            let (again, original) = (std::fs::read_to_string(&path).unwrap(), std::fs::read_to_string(&file).unwrap());
            std::fs::remove_file(&path).unwrap();
            // The bandwidths were worked out from the unrounded times, so they may differ in
            // the last digit; everything else is written back as it was.
            let without_bandwidths = |text: &str| -> Vec<String> {
                text.lines().map(|l| if l.starts_with('#') { l.to_string() } else { l.split(',').enumerate().filter(|(i, _)| !(7..=8).contains(i)).map(|(_, f)| f).collect::<Vec<_>>().join(",") }).collect()
            };
            assert_eq!(without_bandwidths(&again), without_bandwidths(&original), "{}", file.display());
        }
    }
}
