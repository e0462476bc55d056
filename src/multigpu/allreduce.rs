//! NCCL's all-reduce, measured the way nccl-tests' `all_reduce_perf` measures it: `f32` sums of
//! every message size from 8 B up, one rank per GPU, each size checked before it is timed, CUDA
//! events around back-to-back calls, the median of the repeats; reported as algorithm bandwidth
//! (bytes / time) and bus bandwidth (the same, scaled to what each link carried). Results are
//! data (`plots/data/nccl/<gpu>-x<count>.csv`); the chart and the chapter's table are drawn
//! from them by [`crate::book::allreduce`].

use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::multigpu::ranks::{run_ranks, Ranks};
use crate::multigpu::rendezvous::Stop;
use crate::nccl::{self, Comm};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaSlice;
use std::time::Duration;

// The results file and its rows, kept by the book layer; here too for the command line.
pub use crate::book::allreduce::{read_csv, write_csv, AllReduceHeader, AllReduceRow};

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


pub const METHOD: &str = "out-of-place ncclAllReduce of f32, sum; each size checked first, then 5 warm-up calls, \
then repeats of back-to-back calls timed with CUDA events on every rank; the slowest rank's median is kept";


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
        return Err(Error::Config { setting: "--min/--max".into(), reason: format!("no power-of-two size from {} to {} bytes", config.min_bytes, config.max_bytes) });
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
        let (send, mut recv, start, end) = rendezvous.vote(rank, ready)?;
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
                    Some((i, &x)) => Err(Error::WrongSum {
                        what: format!("the all-reduce of {bytes} bytes on rank {rank}"),
                        why: format!("element {i} is {x}, expected {}", expected_value(count, i)),
                    }),
                }
            })();
            rendezvous.vote(rank, checked)?;
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
            let median = crate::measure::median(&mut per_op_us);
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
}
