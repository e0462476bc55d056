//! NCCL's all-reduce, measured the way nccl-tests' `all_reduce_perf` measures it: `f32` sums of
//! every message size from 8 B up, one rank per GPU, each size checked before it is timed, CUDA
//! events around back-to-back calls, the median of the repeats; reported as algorithm bandwidth
//! (bytes / time) and bus bandwidth (the same, scaled to what each link carried). Results are
//! data (`plots/data/nccl/<gpu>-x<count>.csv`); the chart and the chapter's table are drawn
//! from them.

use crate::error::{io_error, During, Error, Result};
use crate::gpu::Gpu;
use crate::multigpu::{run_ranks, Ranks, Stop};
use crate::nccl::{self, Comm};
use crate::plots::{draw_bytes_chart, BytesSeries};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaSlice;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// What to measure.
#[derive(Clone, Debug)]
pub struct AllReduceConfig {
    pub min_bytes: usize,
    pub max_bytes: usize,
    /// GPU time one timed repeat aims for, in milliseconds (sets the calls per repeat).
    pub target_ms: f64,
    /// Timed repeats per size; the median is kept.
    pub repeats: usize,
    pub nccl_timeout: Duration,
    pub deadline: Duration,
    /// Print a line per size as it is measured.
    pub progress: bool,
}

impl Default for AllReduceConfig {
    fn default() -> Self {
        AllReduceConfig {
            min_bytes: 8,
            max_bytes: 1 << 30,
            target_ms: 2.0,
            repeats: 15,
            nccl_timeout: Duration::from_secs(60),
            deadline: Duration::from_secs(600),
            progress: true,
        }
    }
}

/// Warm-up calls before each size's timing, and the most calls one repeat queues.
const WARMUP: usize = 5;
const MAX_OPS_PER_REPEAT: usize = 1000;

/// Every power-of-two message size from `min` to `max` bytes, whole `f32`s (at least one).
pub fn sizes(min_bytes: usize, max_bytes: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut bytes = min_bytes.max(4).next_power_of_two();
    while bytes <= max_bytes {
        out.push(bytes);
        bytes *= 2;
    }
    out
}

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

pub const METHOD: &str = "out-of-place ncclAllReduce of f32, sum; each size checked first, then 5 warm-up calls, \
then repeats of back-to-back calls timed with CUDA events on every rank; the slowest rank's median is kept";

const COLUMNS: &str = "bytes,count,dtype,op,median_us,min_us,max_us,algbw_gbps,busbw_gbps,repeats,ops_per_repeat";

pub fn write_csv(path: &Path, header: &AllReduceHeader, rows: &[AllReduceRow]) -> Result<()> {
    let mut s = String::new();
    for (key, value) in [
        ("gpus", header.gpus.join("; ")),
        ("gpu_count", header.ranks().to_string()),
        ("nccl", header.nccl.clone()),
        ("driver_cuda", header.driver_cuda.clone()),
        ("multicast", header.multicast.clone()),
        ("date", header.date.clone()),
        ("command", header.command.clone()),
        ("method", header.method.clone()),
    ] {
        writeln!(s, "# {key}: {value}").unwrap();
    }
    writeln!(s, "{COLUMNS}").unwrap();
    let ranks = header.ranks();
    for r in rows {
        writeln!(
            s,
            "{},{},f32,sum,{:.3},{:.3},{:.3},{:.3},{:.3},{},{}",
            r.bytes, r.count, r.median_us, r.min_us, r.max_us, r.algbw_gbps(), r.busbw_gbps(ranks), r.repeats, r.ops_per_repeat
        )
        .unwrap();
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
    }
    std::fs::write(path, s).map_err(|e| io_error(path, e))
}

pub fn read_csv(path: &Path) -> Result<(AllReduceHeader, Vec<AllReduceRow>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_csv(&text).map_err(|why| io_error(path, why))
}

pub fn parse_csv(text: &str) -> std::result::Result<(AllReduceHeader, Vec<AllReduceRow>), String> {
    let mut header = AllReduceHeader::default();
    let mut gpu_count = None;
    let mut rows = Vec::new();
    let mut columns_seen = false;
    for (i, line) in text.lines().enumerate() {
        let at = |what: String| format!("line {}: {what}", i + 1);
        if let Some(meta) = line.strip_prefix("# ") {
            let (key, value) = meta.split_once(": ").ok_or_else(|| at("expected `# key: value`".into()))?;
            let value = value.to_string();
            match key {
                "gpus" => header.gpus = value.split("; ").map(str::to_string).filter(|g| !g.is_empty()).collect(),
                "gpu_count" => gpu_count = Some(value.parse::<usize>().map_err(|_| at(format!("gpu_count {value:?} is not a number")))?),
                "nccl" => header.nccl = value,
                "driver_cuda" => header.driver_cuda = value,
                "multicast" => header.multicast = value,
                "date" => header.date = value,
                "command" => header.command = value,
                "method" => header.method = value,
                _ => {}
            }
            continue;
        }
        if !columns_seen {
            if line != COLUMNS {
                return Err(at(format!("expected the column names {COLUMNS}")));
            }
            columns_seen = true;
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 11 {
            return Err(at(format!("expected 11 fields, found {}", f.len())));
        }
        let int = |k: usize| f[k].parse::<usize>().map_err(|_| at(format!("field {} is not an integer: {:?}", k + 1, f[k])));
        let num = |k: usize| f[k].parse::<f64>().map_err(|_| at(format!("field {} is not a number: {:?}", k + 1, f[k])));
        let row = AllReduceRow { bytes: int(0)?, count: int(1)?, median_us: num(4)?, min_us: num(5)?, max_us: num(6)?, repeats: int(9)?, ops_per_repeat: int(10)? };
        if !(row.median_us > 0.0 && row.median_us.is_finite()) {
            return Err(at(format!("median time {} µs cannot be right", row.median_us)));
        }
        rows.push(row);
    }
    if !columns_seen {
        return Err("no column header".into());
    }
    if header.gpus.is_empty() || gpu_count != Some(header.gpus.len()) {
        return Err(format!("the header names {} GPU(s) but gpu_count says {gpu_count:?}", header.gpus.len()));
    }
    Ok((header, rows))
}

// ---------------------------------------------------------------------------------------------
// Measuring.

/// `x_r[i]` on rank r: small multiples of ½, so every sum of them is exact in `f32`.
fn send_value(rank: usize, i: usize) -> f32 {
    (i % 13) as f32 + 0.5 * (rank + 1) as f32
}

/// What every rank must hold after the all-reduce: `Σ_r x_r[i]`.
fn expected_value(ranks: usize, i: usize) -> f32 {
    (ranks * (i % 13)) as f32 + 0.25 * (ranks * (ranks + 1)) as f32
}

/// Measure every size of `config` on `ranks` (at least two GPUs: on one, nothing crosses a
/// link and the bus bandwidth is zero by definition).
pub fn run(ranks: &Ranks, config: &AllReduceConfig) -> Result<(AllReduceHeader, Vec<AllReduceRow>)> {
    if ranks.len() < 2 {
        return Err(Error::NoGpu(format!(
            "the all-reduce benchmark needs at least two GPUs, and {} {} visible: with one rank nothing crosses a link",
            ranks.visible(),
            if ranks.visible() == 1 { "is" } else { "are" }
        )));
    }
    let sizes = sizes(config.min_bytes, config.max_bytes);
    if sizes.is_empty() {
        return Err(Error::Io { path: "--min/--max".into(), message: format!("no power-of-two size from {} to {} bytes", config.min_bytes, config.max_bytes) });
    }
    let nccl = nccl::library()?;
    let id = nccl.unique_id()?;
    let count = ranks.len();
    let config_copy = config.clone();
    if config.progress {
        eprintln!("all-reduce (f32, sum) across {}, NCCL {}, {}", ranks.describe(), nccl.version_string(), nccl::multicast_setting());
        eprintln!("{:>12} {:>11} {:>11} {:>12} {:>12}  calls x repeats", "bytes", "count", "time (µs)", "algbw (GB/s)", "busbw (GB/s)");
    }
    let per_rank = run_ranks(ranks, config.deadline, move |rank, gpu, rendezvous| {
        let config = &config_copy;
        let max_count = sizes.last().copied().unwrap_or(0) / 4;
        let ready = (|| -> Result<_> {
            let mut send = gpu.alloc::<f32>(max_count)?;
            let recv = gpu.alloc::<f32>(max_count)?;
            fill_send(gpu, &mut send, rank)?;
            let start = gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during("creating an event")?;
            let end = gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during("creating an event")?;
            Ok((send, recv, start, end))
        })();
        let vote = ready.as_ref().map(|_| ()).map_err(|e| e.to_string());
        if let Err(why) = rendezvous.all_ready(rank, vote) {
            return Err(match ready {
                Err(own) => Stop::Own(own),
                Ok(_) => Stop::Peer(why),
            });
        }
        let (send, mut recv, start, end) = ready.map_err(Stop::Own)?;
        let mut comm = Comm::init(gpu, id, rank, count)?;
        let peer = Stop::Peer;
        let mut rows = Vec::new();
        for &bytes in &sizes {
            let n = bytes / 4;
            // Correct before fast: the output zeroed (no right answer is zero), one call, checked.
            let checked = (|| -> Result<()> {
                let mut out = recv.slice_mut(..n);
                gpu.stream().memset_zeros(&mut out).during("zeroing the all-reduce output")?;
                comm.all_reduce_sum(&send, &mut recv, n)?;
                comm.wait(config.nccl_timeout)?;
                let got = gpu.stream().clone_dtoh(&recv.slice(..n)).during("copying the all-reduce output back")?;
                match got.iter().enumerate().find(|(i, &x)| x != expected_value(count, *i)) {
                    None => Ok(()),
                    Some((i, &x)) => Err(Error::Nccl {
                        during: format!("checking the all-reduce of {bytes} bytes on rank {rank}"),
                        message: format!("element {i} is {x}, expected {}", expected_value(count, i)),
                    }),
                }
            })();
            let vote = checked.as_ref().map(|_| ()).map_err(|e| e.to_string());
            if let Err(why) = rendezvous.all_ready(rank, vote) {
                return Err(match checked {
                    Err(own) => Stop::Own(own),
                    Ok(()) => peer(why),
                });
            }
            for _ in 0..WARMUP {
                comm.all_reduce_sum(&send, &mut recv, n)?;
            }
            comm.wait(config.nccl_timeout)?;
            // Calls per repeat: from the slowest rank's estimate, so every rank queues as many.
            let estimate_ms = time_calls(gpu, &mut comm, &send, &mut recv, n, WARMUP, &start, &end, config.nccl_timeout)? / WARMUP as f64;
            let slowest_ms = rendezvous.max(rank, estimate_ms).map_err(peer)?;
            let ops = ((config.target_ms / slowest_ms.max(1e-4)).ceil() as usize).clamp(1, MAX_OPS_PER_REPEAT);
            let mut per_op_us = Vec::with_capacity(config.repeats);
            for _ in 0..config.repeats.max(1) {
                // Every rank starts its repeat together, so no rank's time includes waiting for
                // another's host thread to queue its calls.
                rendezvous.max(rank, 0.0).map_err(peer)?;
                let ms = time_calls(gpu, &mut comm, &send, &mut recv, n, ops, &start, &end, config.nccl_timeout)?;
                per_op_us.push(ms * 1e3 / ops as f64);
            }
            per_op_us.sort_by(|a, b| a.total_cmp(b));
            let median = per_op_us[per_op_us.len() / 2];
            let row = AllReduceRow {
                bytes,
                count: n,
                median_us: rendezvous.max(rank, median).map_err(peer)?,
                min_us: -rendezvous.max(rank, -per_op_us[0]).map_err(peer)?,
                max_us: rendezvous.max(rank, *per_op_us.last().unwrap_or(&median)).map_err(peer)?,
                repeats: per_op_us.len(),
                ops_per_repeat: ops,
            };
            if rank == 0 && config.progress {
                eprintln!(
                    "{:>12} {:>11} {:>11.2} {:>12.2} {:>12.2}  {} x {}",
                    row.bytes, row.count, row.median_us, row.algbw_gbps(), row.busbw_gbps(count), row.ops_per_repeat, row.repeats
                );
            }
            rows.push(row);
        }
        drop(comm);
        Ok(rows)
    })?;
    let info = ranks.gpus()[0].info();
    let header = AllReduceHeader {
        gpus: ranks.gpus().iter().map(|g| g.info().name.clone()).collect(),
        nccl: nccl.version_string(),
        driver_cuda: format!("{}.{}", info.driver_cuda_version.0, info.driver_cuda_version.1),
        multicast: nccl::multicast_setting(),
        date: crate::results::today(),
        command: String::new(),
        method: METHOD.into(),
    };
    Ok((header, per_rank.into_iter().next().unwrap_or_default()))
}

/// Queue `ops` all-reduces between two events and return the GPU time they took, in ms.
#[allow(clippy::too_many_arguments)]
fn time_calls(
    gpu: &Gpu,
    comm: &mut Comm,
    send: &CudaSlice<f32>,
    recv: &mut CudaSlice<f32>,
    n: usize,
    ops: usize,
    start: &cudarc::driver::CudaEvent,
    end: &cudarc::driver::CudaEvent,
    timeout: Duration,
) -> Result<f64> {
    start.record(gpu.stream()).during("recording an event")?;
    for _ in 0..ops {
        comm.all_reduce_sum(send, recv, n)?;
    }
    end.record(gpu.stream()).during("recording an event")?;
    comm.wait(timeout)?;
    Ok(start.elapsed_ms(end).during("reading an event")? as f64)
}

/// Fill rank `rank`'s send buffer with its values, a chunk at a time.
fn fill_send(gpu: &Gpu, send: &mut CudaSlice<f32>, rank: usize) -> Result<()> {
    const CHUNK: usize = 1 << 24;
    let mut host = vec![0f32; CHUNK.min(send.len())];
    let mut start = 0;
    while start < send.len() {
        let len = CHUNK.min(send.len() - start);
        host[..len].iter_mut().enumerate().for_each(|(j, x)| *x = send_value(rank, start + j));
        let mut view = send.slice_mut(start..start + len);
        gpu.stream().memcpy_htod(&host[..len], &mut view).during("filling the send buffer")?;
        gpu.synchronize()?; // the host buffer is refilled next
        start += len;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The chapter's table and chart.

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
    let smallest = rows.iter().min_by_key(|r| r.bytes);
    let best = rows.iter().max_by(|a, b| a.busbw_gbps(ranks).total_cmp(&b.busbw_gbps(ranks)));
    if let (Some(small), Some(best)) = (smallest, best) {
        writeln!(
            s,
            "\nThe smallest message ({}) took {:.2} µs: that is the latency of one all-reduce. The highest \
             bus bandwidth, {:.1} GB/s, came at {} (algorithm bandwidth {:.1} GB/s; the bus factor for {ranks} GPUs \
             is {:.2}).",
            bytes_text(small.bytes), small.median_us, best.busbw_gbps(ranks), bytes_text(best.bytes), best.algbw_gbps(), bus_factor(ranks)
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
    #[test]
    fn terminal_codes_are_dropped_from_the_topology() {
        assert_eq!(super::without_terminal_codes("\u{1b}[4mGPU0\tGPU1\u{1b}[0m\nGPU0"), "GPU0\tGPU1\nGPU0");
    }

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
    fn sizes_double_from_8_bytes_to_1_gib() {
        let s = sizes(8, 1 << 30);
        assert_eq!((s.len(), s[0], *s.last().unwrap()), (28, 8, 1 << 30));
        assert!(s.windows(2).all(|w| w[1] == 2 * w[0]));
        assert_eq!(sizes(1, 16), vec![4, 8, 16], "a message is at least one f32");
        assert!(sizes(64, 8).is_empty());
    }

    #[test]
    fn expected_values_are_the_sums_of_the_send_values() {
        for ranks in [2, 3, 8] {
            for i in [0, 1, 12, 13, 1000, (1 << 28) - 1] {
                let sum: f32 = (0..ranks).map(|r| send_value(r, i)).sum();
                assert_eq!(sum, expected_value(ranks, i));
                assert!(expected_value(ranks, i) > 0.0, "zero is what the output is cleared to");
            }
        }
    }

    #[test]
    fn bytes_read_as_a_person_writes_them() {
        assert_eq!(bytes_text(8), "8 B");
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(4096), "4 KiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
    }
}
