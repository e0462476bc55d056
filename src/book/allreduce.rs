//! The all-reduce results as data and pictures, with no GPU: `plots/data/nccl/<gpu>-x<count>.csv`
//! (written by `reduction multigpu allreduce`, [`crate::multigpu::allreduce`]) in the book's one
//! results format ([`csv_file`]), and the chapter's table and chart drawn from it.

use super::csv_file;
use crate::error::{io_error, Result};
use crate::multigpu::allreduce::{algbw_gbps, bus_factor, busbw_gbps};
use crate::plots::{draw_bytes_chart, BytesSeries};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One message size, measured.
#[derive(Clone, Debug, PartialEq)]
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
        format!("{}-x{}.csv", crate::results::slug(self.gpus.first().map(String::as_str).unwrap_or("unknown")), self.ranks())
    }

    /// `2 × NVIDIA H200`.
    pub fn describe(&self) -> String {
        if self.gpus.windows(2).all(|w| w[0] == w[1]) {
            format!("{} × {}", self.gpus.len(), self.gpus.first().map(String::as_str).unwrap_or("?"))
        } else {
            self.gpus.join(" + ")
        }
    }
}

const COLUMNS: &str = "bytes,count,dtype,op,median_us,min_us,max_us,algbw_gbps,busbw_gbps,repeats,ops_per_repeat";

/// One line of the file: a row with the bandwidths worked out, times and bandwidths to the
/// nanosecond and the MB/s.
#[derive(Serialize, Deserialize)]
struct Record {
    bytes: usize,
    count: usize,
    dtype: String,
    op: String,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    median_us: f64,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    min_us: f64,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    max_us: f64,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    algbw_gbps: f64,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    busbw_gbps: f64,
    repeats: usize,
    ops_per_repeat: usize,
}


pub fn write_csv(path: &Path, header: &AllReduceHeader, rows: &[AllReduceRow]) -> Result<()> {
    let meta: Vec<(String, String)> = [
        ("gpus", header.gpus.join("; ")),
        ("gpu_count", header.ranks().to_string()),
        ("nccl", header.nccl.clone()),
        ("driver_cuda", header.driver_cuda.clone()),
        ("multicast", header.multicast.clone()),
        ("date", header.date.clone()),
        ("command", header.command.clone()),
        ("method", header.method.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let ranks = header.ranks();
    let records: Vec<Record> = rows
        .iter()
        .map(|r| Record {
            bytes: r.bytes,
            count: r.count,
            dtype: "f32".into(),
            op: "sum".into(),
            median_us: r.median_us,
            min_us: r.min_us,
            max_us: r.max_us,
            algbw_gbps: r.algbw_gbps(),
            busbw_gbps: r.busbw_gbps(ranks),
            repeats: r.repeats,
            ops_per_repeat: r.ops_per_repeat,
        })
        .collect();
    csv_file::write(path, &meta, &records)
}

pub fn read_csv(path: &Path) -> Result<(AllReduceHeader, Vec<AllReduceRow>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_csv(&text).map_err(|why| io_error(path, why))
}

/// Read a results file from its text; `Err` says which line or record is wrong.
pub fn parse_csv(text: &str) -> std::result::Result<(AllReduceHeader, Vec<AllReduceRow>), String> {
    match text.lines().position(|l| !l.starts_with("# ")) {
        Some(i) if text.lines().nth(i) != Some(COLUMNS) => return Err(format!("line {}: expected the column names {COLUMNS}", i + 1)),
        None => return Err("no column header".into()),
        Some(_) => {}
    }
    let (meta, records): (_, Vec<Record>) = csv_file::from_str(text, "all-reduce results").map_err(|e| e.to_string())?;
    let value = |key: &str| csv_file::value(&meta, key).unwrap_or_default().to_string();
    let header = AllReduceHeader {
        gpus: value("gpus").split("; ").map(str::to_string).filter(|g| !g.is_empty()).collect(),
        nccl: value("nccl"),
        driver_cuda: value("driver_cuda"),
        multicast: value("multicast"),
        date: value("date"),
        command: value("command"),
        method: value("method"),
    };
    let gpu_count = match csv_file::value(&meta, "gpu_count") {
        None => None,
        Some(v) => Some(v.parse::<usize>().map_err(|_| format!("gpu_count {v:?} is not a number"))?),
    };
    if header.gpus.is_empty() || gpu_count != Some(header.gpus.len()) {
        return Err(format!("the header names {} GPU(s) but gpu_count says {gpu_count:?}", header.gpus.len()));
    }
    let mut rows = Vec::with_capacity(records.len());
    for (i, r) in records.into_iter().enumerate() {
        if !(r.median_us > 0.0 && r.median_us.is_finite()) {
            return Err(format!("record {}: median time {} µs cannot be right", i + 1, r.median_us));
        }
        rows.push(AllReduceRow { bytes: r.bytes, count: r.count, median_us: r.median_us, min_us: r.min_us, max_us: r.max_us, repeats: r.repeats, ops_per_repeat: r.ops_per_repeat });
    }
    Ok((header, rows))
}


/// The sizes the chapter's table shows: 8 B and every eighth size up from it (2^3, 2^6, …), and
/// the largest.
fn table_sizes(rows: &[AllReduceRow]) -> Vec<&AllReduceRow> {
    let largest = rows.iter().map(|r| r.bytes).max().unwrap_or(0);
    let mut shown: Vec<&AllReduceRow> = rows.iter().filter(|r| r.bytes.trailing_zeros() % 3 == 0 || r.bytes == largest).collect();
    shown.sort_by_key(|r| r.bytes);
    shown.dedup_by_key(|r| r.bytes);
    shown
}

/// Where the all-reduce results live, under `plots/data`.
pub fn data_dir(root: &Path) -> PathBuf {
    root.join("plots/data/nccl")
}

/// Every results file under `plots/data/nccl/`, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<(PathBuf, AllReduceHeader, Vec<AllReduceRow>)>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "csv")).collect();
    files.sort();
    files.into_iter().map(|f| read_csv(&f).map(|(h, r)| (f, h, r))).collect()
}

/// The note the chapter shows until someone has measured.
pub fn not_measured_note() -> String {
    "> **Not yet measured.** There are no all-reduce results in `plots/data/nccl/` yet, so this \
     page shows no figures. On a machine with two or more GPUs and NCCL, run\n\
     > `cargo run --release -- multigpu allreduce`\n\
     > (or, with the GPU bundle, `bash tests/gpu-host.sh multigpu` and copy `$OUT/nccl/` into\n\
     > `plots/data/nccl/`), then `cargo run --release -- bench --plot-only` to redraw this table\n\
     > and its chart.\n"
        .to_string()
}

/// The chapter's table for one run: the machine line, the sizes of [`table_sizes`], what the
/// smallest and the largest message show, and the GPUs' topology where it was recorded.
pub fn table(header: &AllReduceHeader, rows: &[AllReduceRow], topology: Option<&str>) -> String {
    let ranks = header.ranks();
    let mut s = format!(
        "*Measured on {} with NCCL {} (driver CUDA {}, {}) on {} by `{}`.*\n\n",
        header.describe(), header.nccl, header.driver_cuda, header.multicast, header.date,
        if header.command.is_empty() { "reduction multigpu allreduce" } else { &header.command }
    );
    s += "| message | time per all-reduce | algbw | busbw |\n|--:|--:|--:|--:|\n";
    for r in table_sizes(rows) {
        writeln!(s, "| {} | {:.2} µs | {:.2} GB/s | {:.2} GB/s |", bytes_text(r.bytes), r.median_us, r.algbw_gbps(), r.busbw_gbps(ranks)).unwrap();
    }
    // The fixed cost of an all-reduce: what the messages whose bytes take no time (up to 32 KiB)
    // took, fastest and slowest; the smallest message is not the fastest.
    let small: Vec<&AllReduceRow> = rows.iter().filter(|r| r.bytes <= 32 << 10).collect();
    let fastest = small.iter().min_by(|a, b| a.median_us.total_cmp(&b.median_us));
    let slowest = small.iter().max_by(|a, b| a.median_us.total_cmp(&b.median_us));
    let best = rows.iter().max_by(|a, b| a.busbw_gbps(ranks).total_cmp(&b.busbw_gbps(ranks)));
    if let (Some(fast), Some(slow), Some(best)) = (fastest, slowest, best) {
        writeln!(
            s,
            "\nEvery message up to 32 KiB took between {:.2} µs ({}) and {:.2} µs ({}): that flat floor, not the bytes, is the \
             fixed cost of one all-reduce here (its latency). The highest bus bandwidth, {:.1} GB/s, came at {} (algorithm \
             bandwidth {:.1} GB/s; the bus factor for {ranks} GPUs is {:.2}).",
            fast.median_us, bytes_text(fast.bytes), slow.median_us, bytes_text(slow.bytes), best.busbw_gbps(ranks), bytes_text(best.bytes),
            best.algbw_gbps(), bus_factor(ranks)
        )
        .unwrap();
    }
    if let Some(topology) = topology {
        s += "\nHow the GPUs are connected (`nvidia-smi topo -m`, recorded with the run):\n\n```text\n";
        s += without_terminal_codes(topology).trim_end();
        s += "\n```\n";
    }
    s
}

/// `nvidia-smi` underlines its header with terminal escape codes (`ESC [ 4 m`); a page shows
/// them as noise.
fn without_terminal_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            // Skip to the end of the sequence: its final byte is a letter.
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `8 B`, `64 KiB`, `1 GiB`.
pub fn bytes_text(bytes: usize) -> String {
    let k = bytes.trailing_zeros();
    if bytes.is_power_of_two() && k >= 10 {
        let (unit, shift) = if k >= 30 { ("GiB", 30) } else if k >= 20 { ("MiB", 20) } else { ("KiB", 10) };
        format!("{} {unit}", bytes >> shift)
    } else {
        format!("{bytes} B")
    }
}

/// Redraw `book/generated/nccl.md` and, where there are results, `plots/nccl.svg`: the table
/// shows the run with the most GPUs of the book's GPU (`book_slug`), or else of any GPU; the
/// chart shows every run. With no results the table is the [`not_measured_note`] and no chart
/// is drawn.
pub fn render(root: &Path, book_slug: Option<&str>) -> Result<Vec<PathBuf>> {
    let runs = load_all(&data_dir(root))?;
    let generated = root.join("book/generated");
    std::fs::create_dir_all(&generated).map_err(|e| io_error(&generated, e))?;
    let table_path = generated.join("nccl.md");
    let mut written = Vec::new();
    let Some(shown) = runs
        .iter()
        .filter(|(_, h, _)| book_slug.is_some_and(|slug| crate::results::slug(&h.gpus[0]) == slug))
        .max_by_key(|(_, h, _)| h.ranks())
        .or_else(|| runs.iter().max_by_key(|(_, h, _)| h.ranks()))
    else {
        std::fs::write(&table_path, not_measured_note()).map_err(|e| io_error(&table_path, e))?;
        return Ok(vec![table_path]);
    };
    let (file, header, rows) = shown;
    let topology_file = file.with_file_name(file.file_stem().map(|s| format!("{}-topo.txt", s.to_string_lossy())).unwrap_or_default());
    let topology = std::fs::read_to_string(topology_file).ok();
    let mut md = table(header, rows, topology.as_deref());
    // Nested include: mdBook resolves it from book/generated/.
    md = format!("{{{{#include ../../plots/nccl.svg}}}}\n\n{md}");
    std::fs::write(&table_path, md).map_err(|e| io_error(&table_path, e))?;
    written.push(table_path);

    let mut series = Vec::new();
    for (group, (_, h, rows)) in runs.iter().enumerate() {
        let mut sorted: Vec<&AllReduceRow> = rows.iter().collect();
        sorted.sort_by_key(|r| r.bytes);
        let ranks = h.ranks();
        series.push(BytesSeries { label: format!("{}: busbw", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.busbw_gbps(ranks))).collect(), group, dashed: false });
        // On two GPUs the bus factor is 1 and the lines coincide: the legend says so.
        let same = if bus_factor(ranks) == 1.0 { " (= busbw on 2 GPUs)" } else { "" };
        series.push(BytesSeries { label: format!("{}: algbw{same}", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.algbw_gbps())).collect(), group, dashed: true });
    }
    let names: Vec<String> = runs.iter().map(|(_, h, _)| h.describe()).collect();
    let title = format!("NCCL all-reduce (f32, sum): {}", names.join(", "));
    written.push(draw_bytes_chart(&root.join("plots/nccl.svg"), &title, "bandwidth (GB/s)", &series, "no all-reduce measurements")?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_codes_are_dropped_from_the_topology() {
        assert_eq!(without_terminal_codes("\u{1b}[4mGPU0\tGPU1\u{1b}[0m\nGPU0"), "GPU0\tGPU1\nGPU0");
    }

    #[test]
    fn bytes_read_as_a_person_writes_them() {
        assert_eq!(bytes_text(8), "8 B");
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(4096), "4 KiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
    }

    #[test]
    fn the_committed_runs_are_read_and_written_back_as_they_were() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
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
