//! NCCL's all-reduce as data: `plots/data/nccl/<gpu>-x<count>[-<algorithm>].csv`, written by
//! `reduction multigpu allreduce` (`multigpu::allreduce`) and read by the book's multi-GPU
//! chapter; and the arithmetic on it, the algorithm and bus bandwidths as nccl-tests define them.
//! The latency–bandwidth model fitted to these files is [`super::nccl_model`].

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
///
/// The same factor for every algorithm, as nccl-tests uses it (`doc/PERFORMANCE.md`: "this is
/// independent of the algorithm used (ring, tree, or other)"): bus bandwidth is the link speed
/// a bandwidth-optimal point-to-point all-reduce would need for the measured time, so a tree's
/// busbw is comparable with a ring's, and with NVLS the figure can exceed the link itself.
pub fn bus_factor(ranks: usize) -> f64 {
    if ranks == 0 { 0.0 } else { 2.0 * (ranks - 1) as f64 / ranks as f64 }
}

/// Bus bandwidth: the algorithm bandwidth scaled by [`bus_factor`], which makes it comparable
/// with the bandwidth of one link, whatever the number of GPUs.
pub fn busbw_gbps(algbw_gbps: f64, ranks: usize) -> f64 {
    algbw_gbps * bus_factor(ranks)
}
// ANCHOR_END: busbw

/// Which of NCCL's all-reduce algorithms a run asked for, through `NCCL_ALGO` (read by NCCL when a
/// communicator is made). NVLS, the third family on an NVSwitch machine, is not offered: the
/// project keeps NVLink multicast off ([`crate::multigpu`]'s `nccl::keep_multicast_off`), so
/// `NCCL_ALGO=NVLS` could only fail or fall back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// `NCCL_ALGO` unset: NCCL picks per message size from its own model of the machine.
    #[default]
    Default,
    /// `NCCL_ALGO=Ring`.
    Ring,
    /// `NCCL_ALGO=Tree`: within one machine a chain (see [`super::nccl_model`]).
    Tree,
}

impl Algorithm {
    pub const ALL: [Algorithm; 3] = [Algorithm::Default, Algorithm::Ring, Algorithm::Tree];

    /// `default`, `ring`, `tree`: the CSV's column and the file name's suffix.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Default => "default",
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
        }
    }

    /// The value of `NCCL_ALGO` that asks for it; `None` for NCCL's own choice.
    pub fn nccl_algo(self) -> Option<&'static str> {
        match self {
            Algorithm::Default => None,
            Algorithm::Ring => Some("Ring"),
            Algorithm::Tree => Some("Tree"),
        }
    }

    /// `default`, `ring` or `tree`, in any case; `Ring` and `Tree` as `NCCL_ALGO` spells them.
    pub fn parse(text: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The header line's value: `Ring (NCCL_ALGO=Ring)`, or `NCCL's choice (NCCL_ALGO unset)`.
    pub fn header_value(self) -> String {
        match self.nccl_algo() {
            None => "NCCL's choice (NCCL_ALGO unset)".into(),
            Some(v) => format!("{v} (NCCL_ALGO={v})"),
        }
    }

    /// The algorithm a header value names (the first word); `None` for anything else.
    fn from_header_value(value: &str) -> Option<Algorithm> {
        if value.starts_with("NCCL's choice") {
            return Some(Algorithm::Default);
        }
        Algorithm::parse(value.split_whitespace().next().unwrap_or(""))
    }
}

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
    /// Which algorithm the run asked NCCL for.
    pub algorithm: Algorithm,
}

impl AllReduceHeader {
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// `nvidia-h200-x2`: the GPUs, whatever the algorithm.
    pub fn machine_stem(&self) -> String {
        format!("{}-x{}", super::slug(self.gpus.first().map(String::as_str).unwrap_or("unknown")), self.ranks())
    }

    /// `nvidia-h200-x2.csv` for NCCL's own choice, `nvidia-h200-x8-ring.csv` for a chosen one.
    pub fn file_name(&self) -> String {
        match self.algorithm {
            Algorithm::Default => format!("{}.csv", self.machine_stem()),
            a => format!("{}-{}.csv", self.machine_stem(), a.name()),
        }
    }

    /// `nvidia-h200-x2-topo.txt`: how the GPUs are connected, one file for every algorithm.
    pub fn topology_file_name(&self) -> String {
        format!("{}-topo.txt", self.machine_stem())
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
            ("nccl_algo", self.algorithm.header_value()),
            ("date", self.date.clone()),
            ("command", self.command.clone()),
            ("method", self.method.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

const COLUMNS: &str = "bytes,count,dtype,op,algorithm,median_us,min_us,max_us,algbw_gbps,bus_factor,busbw_gbps,repeats,ops_per_repeat";

/// One line of the file: a row with the bandwidths worked out for `ranks` GPUs, times and
/// bandwidths to the nanosecond and the MB/s, and the bus factor used. Reading skips the type,
/// the operation (always `f32`, `sum`), the factor and the bandwidths (computed again from the
/// time); the algorithm is checked against the header.
struct Line<'a> {
    row: &'a AllReduceRow,
    ranks: usize,
    algorithm: Algorithm,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let three = |x: f64| format!("{x:.3}");
        let r = self.row;
        let mut line = serializer.serialize_struct("Line", 13)?;
        line.serialize_field("bytes", &r.bytes)?;
        line.serialize_field("count", &r.count)?;
        line.serialize_field("dtype", "f32")?;
        line.serialize_field("op", "sum")?;
        line.serialize_field("algorithm", &self.algorithm)?;
        line.serialize_field("median_us", &three(r.median_us))?;
        line.serialize_field("min_us", &three(r.min_us))?;
        line.serialize_field("max_us", &three(r.max_us))?;
        line.serialize_field("algbw_gbps", &three(r.algbw_gbps()))?;
        line.serialize_field("bus_factor", &format!("{:.4}", bus_factor(self.ranks)))?;
        line.serialize_field("busbw_gbps", &three(r.busbw_gbps(self.ranks)))?;
        line.serialize_field("repeats", &r.repeats)?;
        line.serialize_field("ops_per_repeat", &r.ops_per_repeat)?;
        line.end()
    }
}

pub fn write_csv(path: &Path, header: &AllReduceHeader, rows: &[AllReduceRow]) -> Result<()> {
    let lines: Vec<Line> = rows.iter().map(|row| Line { row, ranks: header.ranks(), algorithm: header.algorithm }).collect();
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
    let algorithm = match csv::value(&meta, "nccl_algo") {
        None => return Err("no `# nccl_algo:` line (which algorithm the run asked NCCL for)".into()),
        Some(v) => Algorithm::from_header_value(v).ok_or_else(|| format!("nccl_algo {v:?} names no algorithm (default, ring, tree)"))?,
    };
    let header = AllReduceHeader {
        gpus: value("gpus").split("; ").map(str::to_string).filter(|g| !g.is_empty()).collect(),
        nccl: value("nccl"),
        driver_cuda: value("driver_cuda"),
        multicast: value("multicast"),
        date: value("date"),
        command: value("command"),
        method: value("method"),
        algorithm,
    };
    #[derive(Deserialize)]
    struct Tagged {
        algorithm: Algorithm,
    }
    let (_, tags): (_, Vec<Tagged>) = csv::from_str(text, "all-reduce results").map_err(|e| e.to_string())?;
    if let Some(i) = tags.iter().position(|t| t.algorithm != algorithm) {
        return Err(format!("record {}: algorithm {} but the header says {}", i + 1, tags[i].algorithm.name(), algorithm.name()));
    }
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
    fn algorithms_name_their_files_and_header_lines() {
        let mut header = AllReduceHeader { gpus: vec!["NVIDIA H200".into(); 8], ..AllReduceHeader::default() };
        assert_eq!((header.file_name(), header.topology_file_name()), ("nvidia-h200-x8.csv".into(), "nvidia-h200-x8-topo.txt".into()));
        for a in Algorithm::ALL {
            header.algorithm = a;
            assert_eq!(Algorithm::from_header_value(&a.header_value()), Some(a));
            assert_eq!(Algorithm::parse(&a.name().to_uppercase()), Some(a));
            assert_eq!(a.nccl_algo().map(|v| Algorithm::parse(v) == Some(a)), if a == Algorithm::Default { None } else { Some(true) });
        }
        assert_eq!(header.file_name(), "nvidia-h200-x8-tree.csv");
        assert_eq!((Algorithm::parse("nvls"), Algorithm::from_header_value("NVLS (NCCL_ALGO=NVLS)")), (None, None));
    }

    #[test]
    fn a_record_of_another_algorithm_than_the_header_is_refused() {
        let header = AllReduceHeader { gpus: vec!["Test GPU".into(); 2], algorithm: Algorithm::Ring, ..AllReduceHeader::default() };
        let rows = [AllReduceRow { bytes: 8, count: 2, median_us: 10.0, min_us: 9.0, max_us: 11.0, repeats: 3, ops_per_repeat: 4 }];
        let lines: Vec<Line> = rows.iter().map(|row| Line { row, ranks: 2, algorithm: Algorithm::Ring }).collect();
        let text = csv::to_string(&header.lines(), &lines).unwrap();
        assert_eq!(parse_csv(&text).unwrap().0.algorithm, Algorithm::Ring);
        assert!(text.contains(",f32,sum,ring,10.000,9.000,11.000,0.001,1.0000,0.001,3,4"), "{text}");
        let broken = text.replacen(",sum,ring,", ",sum,tree,", 1);
        assert!(parse_csv(&broken).unwrap_err().contains("algorithm tree but the header says ring"));
        let unnamed = text.replacen("# nccl_algo: Ring (NCCL_ALGO=Ring)\n", "", 1);
        assert!(parse_csv(&unnamed).unwrap_err().contains("nccl_algo"));
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
                text.lines().map(|l| if l.starts_with('#') { l.to_string() } else { l.split(',').enumerate().filter(|(i, _)| ![8, 10].contains(i)).map(|(_, f)| f).collect::<Vec<_>>().join(",") }).collect()
            };
            assert_eq!(without_bandwidths(&again), without_bandwidths(&original), "{}", file.display());
        }
    }
}
