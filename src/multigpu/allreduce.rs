//! NCCL's all-reduce, measured the way nccl-tests' `all_reduce_perf` measures it: `f32` sums of
//! every message size from 8 B up, one rank per GPU, each size checked before it is timed, CUDA
//! events around back-to-back calls, the median of the repeats; reported as algorithm bandwidth
//! (bytes / time) and bus bandwidth (the same, scaled to what each link carried). Results are
//! data ([`crate::records::allreduce`], `plots/data/nccl/<gpu>-x<count>.csv`), and the chart and
//! the chapter's table are drawn from them by the book.

use crate::error::{During, Error, Result};
use crate::multigpu::nccl::{self, Comm};
use crate::multigpu::ranks::{run_ranks, Ranks};
use crate::multigpu::rendezvous::Stop;
use crate::records::allreduce::{AllReduceHeader, AllReduceRow};
use crate::records::Summary;
use crate::runtime::timing::EventTimer;
use cudarc::driver::CudaSlice;
use std::time::Duration;

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
    let algorithm = nccl::algorithm_setting()?;
    let nccl = nccl::library()?;
    let id = nccl.unique_id()?;
    let count = ranks.len();
    let config_copy = config.clone();
    if config.progress {
        eprintln!(
            "all-reduce (f32, sum) across {}, NCCL {}, {}, algorithm {}",
            ranks.describe(), nccl.version_string(), nccl::multicast_setting(), algorithm.header_value()
        );
        eprintln!("{:>12} {:>11} {:>11} {:>12} {:>12}  calls x repeats", "bytes", "count", "time (µs)", "algbw (GB/s)", "busbw (GB/s)");
    }
    let per_rank = run_ranks(ranks, config.deadline, move |rank, gpu, rendezvous| {
        let config = &config_copy;
        let max_count = sizes.last().copied().unwrap_or(0) / 4;
        let ready = (|| -> Result<_> {
            let mut send = gpu.alloc::<f32>(max_count)?;
            let recv = gpu.alloc::<f32>(max_count)?;
            gpu.upload_made(&mut send, "filling the send buffer", |start, chunk| {
                chunk.iter_mut().enumerate().for_each(|(j, x)| *x = send_value(rank, start + j));
                Ok(())
            })?;
            Ok((send, recv, EventTimer::new(gpu)?))
        })();
        let (send, mut recv, timer) = rendezvous.vote(rank, ready)?;
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
            let estimate_ms = time_calls(&timer, &mut comm, &send, &mut recv, n, WARMUP, config.nccl_timeout)? / WARMUP as f64;
            let slowest_ms = rendezvous.max(rank, estimate_ms).map_err(peer)?;
            let ops = ((config.target_ms / slowest_ms.max(1e-4)).ceil() as usize).clamp(1, MAX_OPS_PER_REPEAT);
            let mut per_op_us = Vec::with_capacity(config.repeats);
            for _ in 0..config.repeats.max(1) {
                // Every rank starts its repeat together, so no rank's time includes waiting for
                // another's host thread to queue its calls.
                rendezvous.max(rank, 0.0).map_err(peer)?;
                let ms = time_calls(&timer, &mut comm, &send, &mut recv, n, ops, config.nccl_timeout)?;
                per_op_us.push(ms * 1e3 / ops as f64);
            }
            let times = Summary::of(&per_op_us).ok_or_else(|| Error::Config { setting: "--repeats".into(), reason: "no repeat was timed".into() })?;
            let row = AllReduceRow {
                bytes,
                count: n,
                median_us: rendezvous.max(rank, times.median).map_err(peer)?,
                min_us: -rendezvous.max(rank, -times.min).map_err(peer)?,
                max_us: rendezvous.max(rank, times.max).map_err(peer)?,
                repeats: times.count,
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
        driver_cuda: info.driver_cuda_text(),
        multicast: nccl::multicast_setting(),
        date: crate::records::today(),
        command: String::new(),
        method: METHOD.into(),
        algorithm,
    };
    Ok((header, per_rank.into_iter().next().unwrap_or_default()))
}

/// Queue `ops` all-reduces between the timer's two events and return the GPU time they took,
/// in ms (waiting for them no longer than `timeout`).
fn time_calls(timer: &EventTimer, comm: &mut Comm, send: &CudaSlice<f32>, recv: &mut CudaSlice<f32>, n: usize, ops: usize, timeout: Duration) -> Result<f64> {
    timer.start()?;
    for _ in 0..ops {
        comm.all_reduce_sum(send, recv, n)?;
    }
    timer.stop()?;
    comm.wait(timeout)?;
    timer.elapsed_ms()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for ranks in [2, 3, 4, 8] {
            for i in [0, 1, 12, 13, 1000, (1 << 28) - 1] {
                let sum: f32 = (0..ranks).map(|r| send_value(r, i)).sum();
                assert_eq!(sum, expected_value(ranks, i));
                assert!(expected_value(ranks, i) > 0.0, "zero is what the output is cleared to");
            }
        }
    }
}
