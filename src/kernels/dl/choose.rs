//! The automatic choice of who holds a row: the planner's rules by row length, type and op, each
//! from a measurement on the H200 (the comments name it). [`super::plan`] checks the choice
//! against the menu and sizes the grid.

use super::menu::NORMS;
use super::plan::{packs, Choice, Device, Team};
use super::DlOp;
use crate::element::Dtype;

// ANCHOR: choose
/// Rows of at most this many packs go to a team of lanes (1024 f32 values, 2048 f16/bf16).
pub const LANES_MAX_PACKS: u64 = 256;
/// Rows of at most this many packs go to one block (32768 f32 values): 1024 threads × 8 packs,
/// 128 KiB of registers for the row, one block an SM. Up to 4096 packs the block is smaller
/// (512 threads, two blocks an SM).
pub const BLOCK_MAX_PACKS: u64 = 8192;
/// Packs one block of a split holds: 512 threads × 8 packs.
pub const SLICE_PACKS: u64 = 4096;
/// RMSNorm's 16-bit rows of up to 1024 packs take 2 packs a thread where there are at most this many
/// rows (measured at 4096 rows; at 32768 and 65536 the two took the same time).
pub const FEW_ROWS: u64 = 16384;
/// LayerNorm's and RMSNorm's rows of more than [`LANES_MAX_PACKS`] and at most this many packs (2049
/// to 8192 16-bit values, 1025 to 4096 f32) go to the staged blocks on sm_80 and later, where they
/// were measured faster: the most the `NORMS` menu's staged entry holds (4 packs a thread × 256).
pub const STAGED_MAX_PACKS: u64 = NORMS.staged[0].0 as u64 * NORMS.staged[0].1 as u64;
/// The largest cluster size CUDA calls portable (8 blocks).
pub const PORTABLE_CLUSTER: u32 = 8;
/// The largest cluster the planner uses: 16 blocks is a non-portable size (the H200 holds 14 such
/// clusters of 512-thread blocks at once, by Nsight Compute; [`super::plan::plan`] asks the GPU before it plans
/// one, and falls back where it holds none).
pub const MAX_CLUSTER: u32 = 16;

/// The cluster for a row of `p` packs, as (blocks, threads a block), 8 packs a thread; None past
/// 16 × 512 × 8 packs. From dl-bench on the H200 with the exchange through transaction barriers:
/// up to 16384 packs 4 blocks of 512 beat 2 of 1024 for every op (f32 2^16, bf16 2^17); up to
/// 32768, 8 of 512 beat 4 of 1024 (f32 2^17); 8 of 1024 beat 16 co-resident blocks (f32 2^18);
/// and past 32768, 16 of 512 (a non-portable cluster) beat 8 of 1024 (f32 2^18). The times are in
/// the book's data, plots/data/dl/nvidia-h200.csv: each op's cluster of 512 (`dl_<op>`,
/// `dl_<op>_cluster`) beside its blocks of 1024 (`dl_<op>_wide_block`) and its co-resident blocks
/// (`dl_<op>_split`), the softmax chapter's long-row table; tests/book.rs holds the order at f32
/// 2^18. (With the first exchange, through two cluster barriers, 2 of 1024 had been the faster:
/// s32-a-long-rows.csv.) Tried and slower on the H200 (2026-12-03): 16 blocks of 512 × 4 packs with
/// registers for three blocks an SM, in place of 8 of 512 at f32 2^17 and 128256 and bf16 2^18;
/// 16 blocks of 256 at 32768 packs (the teams file).
pub fn cluster_for(p: u64) -> Option<(u32, u32)> {
    match p {
        _ if p <= 4 * SLICE_PACKS => Some((4, 512)),
        _ if p <= PORTABLE_CLUSTER as u64 * SLICE_PACKS => Some((PORTABLE_CLUSTER, 512)),
        _ if p <= MAX_CLUSTER as u64 * SLICE_PACKS => Some((MAX_CLUSTER, 512)),
        _ => None,
    }
}

/// In place of the automatic cluster of 16, on a GPU that holds none: for one input a cluster of 8
/// blocks of 1024, which holds as much as 16 of 512 (`cluster_for` takes 16 only up to that);
/// for softmax backward, co-resident blocks.
pub(super) fn portable_choice(op: DlOp, dtype: Dtype, cols: u64) -> (Choice, &'static str) {
    if op == DlOp::SoftmaxBwd {
        return two_inputs_split(packs(dtype, cols).max(1));
    }
    (Choice { team: Team::Cluster(PORTABLE_CLUSTER), vpt: 8, block: 1024 }, "a row for a cluster of 16 blocks, on a GPU that holds none: 8 blocks of 1024 threads hold it")
}

/// The automatic choice for `rows` rows of `cols` values of `dtype`, and why.
pub fn choose(op: DlOp, dtype: Dtype, rows: u64, cols: u64, device: Device) -> (Choice, &'static str) {
    let p = packs(dtype, cols).max(1);
    let menu = op.menu();
    let max_vpt = |list: &[(u32, u32)]| list.iter().map(|e| e.0).max().unwrap_or(1);
    if op == DlOp::SoftmaxBwd {
        // Two inputs per thread: the same registers hold half the packs.
        return choose_two_inputs(p, rows, device);
    }
    if p <= LANES_MAX_PACKS {
        let vmax = max_vpt(menu.lanes) as u64;
        let lanes = p.div_ceil(vmax).next_power_of_two().clamp(8, 32);
        let vpt = p.div_ceil(lanes).next_power_of_two().clamp(menu.lanes[0].0 as u64, vmax);
        let block = if lanes == 32 { 128 } else { 256 };
        return (Choice { team: Team::Lanes(lanes as u32), vpt: vpt as u32, block }, "a short row: a team of lanes holds it, shuffles only");
    }
    if op == DlOp::Softmax && dtype.size_bytes() == 2 && p > BLOCK_MAX_PACKS / 2 && p <= BLOCK_MAX_PACKS && device.has_clusters() {
        // Measured, not derived: dl-bench on the H200, bf16 2^12 × 2^16, the cluster 2 × 512 faster
        // than the block × 1024 (plots/data/dl/nvidia-h200.csv: `dl_softmax` beside
        // `dl_softmax_wide_block`; tests/book.rs holds the order). log_softmax (no exponential per
        // value on the way out) gained little from the cluster and f32 softmax at 8192 packs
        // nothing (`dl_log_softmax`, `dl_softmax` beside their `_cluster` rows), so those keep the
        // block.
        return (Choice { team: Team::Cluster(2), vpt: 8, block: 512 }, "softmax's row of 8192 packs of 16-bit values: a cluster of two blocks of 512 (faster than one block of 1024 on the H200)");
    }
    // The ops with a staged entry: LayerNorm and RMSNorm.
    if let Some(&(vpt, most)) = menu.staged.first().filter(|_| device.arch.0 >= 8 && p > LANES_MAX_PACKS && p <= STAGED_MAX_PACKS) {
        // Measured, not derived, and on an H100 80GB HBM3, not on the H200 the other rules were
        // measured on (none was lent for it): dl-bench by turns, two rounds in one call, against
        // the team this function gave them before (8 packs a thread, or 2 for RMSNorm by the two
        // rules below), both norms, in plots/data/dl/experiments/staged-blocks/ (the norms
        // chapter's tables; tests/book.rs holds the count and the quotes): s57-call1 at 4096 ×
        // 4096 and 65536 × 4096, bf16 and f32; s57-call3 at bf16 rows of 8192 and f32 rows of
        // 2048, 4096 rows and M·N = 2^28. Faster in both rounds at 15 of 16 cases: from LayerNorm
        // bf16 4096 × 4096,
        // 24.88 against 27.96 µs, to RMSNorm f32 65536 × 4096, 711.38 against 711.99; at the last,
        // RMSNorm f32 4096 × 2048, the same time (24.33 against 24.33).
        let block = p.div_ceil(vpt as u64).next_power_of_two().min(most as u64) as u32;
        return (Choice { team: Team::StagedBlock, vpt, block }, "LayerNorm's or RMSNorm's row of 257 to 1024 packs: the staged blocks, 4 packs a thread with γ and β in shared memory (faster than the other teams on an H100)");
    }
    if op == DlOp::RmsNorm && dtype.size_bytes() == 2 && p > LANES_MAX_PACKS && p <= 1024 && rows <= FEW_ROWS {
        // Measured, not derived (dl-bench on the H200, forced teams by turns, the means of
        // plots/data/dl/experiments/nvidia-h200-teams.csv): bf16 4096 × 4096, RMSNorm, 256 threads
        // × 2 packs against 64 × 8: 18.8 against 20.1 µs; at 65536 × 4096 and 32768 × 8192, and f32
        // 4096 × 4096 (which the f32 rule below gives 2 packs), the two took the same time.
        // LayerNorm and softmax were slower with 2 packs a thread (bf16 4096 × 4096:
        // 29.7 against 23.1 µs, 20.3 against 18.3). From sm_80 the rule above takes these rows first.
        let block = p.div_ceil(2).next_power_of_two().clamp(64, 1024) as u32;
        return (Choice { team: Team::Block, vpt: 2, block }, "RMSNorm, few 16-bit rows of up to 1024 packs: one block of 2 packs a thread (faster than 8 packs a thread on the H200)");
    }
    if matches!(op, DlOp::Softmax | DlOp::LogSoftmax | DlOp::RmsNorm) && dtype == Dtype::F32 && p > 512 && p <= 1024 {
        // Measured, not derived (the teams file's means, two runs by turns): f32 65536 × 4096, 512
        // threads × 2 packs against 128 × 8: softmax 511.4 against 527.8 µs, log_softmax
        // 512.7 against 528.0, RMSNorm 517.0 against 526.1; at 4096 × 4096 log_softmax
        // 34.4 against 34.7, softmax and RMSNorm the same time. LayerNorm was twice as slow with
        // 2 packs a thread (1056.8 against 528.0), and at rows of 512 packs (131072 × 2048, 256 × 2
        // against 64 × 8) 2 packs took the same time for softmax and log_softmax, and RMSNorm was
        // slower (526.2 against 522.7), so those keep 8. From sm_80 RMSNorm's rows go to the
        // staged blocks first.
        return (Choice { team: Team::Block, vpt: 2, block: 512 }, "softmax, log_softmax or RMSNorm, f32 rows of 513 to 1024 packs: one block of 512 threads × 2 packs (faster than 128 × 8 on the H200)");
    }
    if p <= BLOCK_MAX_PACKS {
        let vpt = 8;
        let block = p.div_ceil(vpt).next_power_of_two().clamp(64, 1024) as u32;
        return (Choice { team: Team::Block, vpt: vpt as u32, block }, "a row one block holds in registers (up to 1024 threads × 8 packs)");
    }
    if matches!(op, DlOp::Softmax | DlOp::LogSoftmax) && dtype.size_bytes() == 2 && p > BLOCK_MAX_PACKS && p <= 4 * SLICE_PACKS && device.has_clusters() {
        // Measured, not derived (the teams file's means, two or three runs of each), bf16 8192 ×
        // 128256, 8 blocks of 256 against 4 of 512: softmax 1040.2 against 1097.4 µs,
        // log_softmax 1006.9 against 1040.2; 2048 × 2^17: softmax 260.3 against 265.9,
        // log_softmax 258.9 against 259.8.
        // f32 rows of as many packs (4096 × 2^16) were slower with 8 of 256 (the teams file), so
        // they keep 4 of 512; so did RMSNorm at bf16 8192 × 128256 (1090.5 against 1081.2).
        return (Choice { team: Team::Cluster(PORTABLE_CLUSTER), vpt: 8, block: 256 }, "softmax's row of up to 16384 packs of 16-bit values: a cluster of 8 blocks of 256 (faster than 4 of 512 on the H200)");
    }
    if op != DlOp::CrossEntropy && device.has_clusters() {
        if let Some((c, block)) = cluster_for(p) {
            return (Choice { team: Team::Cluster(c), vpt: 8, block }, "a row for 4 to 16 blocks: a cluster holds it, each block pushing its state into the others' shared memory");
        }
    }
    let slices = p.div_ceil(SLICE_PACKS);
    let reason = if op == DlOp::CrossEntropy {
        "a long row: several blocks per row, the last to finish merges their (max, sum)"
    } else if device.has_clusters() {
        "a row too long for a cluster of 8: co-resident blocks hold it and exchange the state through global memory"
    } else {
        "a long row on a GPU without clusters: co-resident blocks hold it and exchange the state through global memory"
    };
    (Choice { team: Team::Split(slices.min(64) as u32), vpt: 8, block: 512 }, reason)
}

fn choose_two_inputs(p: u64, _rows: u64, device: Device) -> (Choice, &'static str) {
    if p <= LANES_MAX_PACKS / 2 {
        let lanes = p.div_ceil(4).next_power_of_two().clamp(8, 32);
        let vpt = p.div_ceil(lanes).next_power_of_two().clamp(1, 4);
        let block = if lanes == 32 { 128 } else { 256 };
        return (Choice { team: Team::Lanes(lanes as u32), vpt: vpt as u32, block }, "a short row: a team of lanes holds y and dy");
    }
    if p <= SLICE_PACKS {
        let block = p.div_ceil(8).next_power_of_two().clamp(64, 512) as u32;
        return (Choice { team: Team::Block, vpt: 8, block }, "one block holds y and dy (up to 512 threads × 8 packs of each)");
    }
    let slices = p.div_ceil(SLICE_PACKS);
    if device.has_clusters() && slices <= MAX_CLUSTER as u64 {
        // Past 8 blocks, a non-portable cluster: plan() asks the GPU first.
        let c = slices.next_power_of_two().max(2) as u32;
        return (Choice { team: Team::Cluster(c), vpt: 4, block: 1024 }, "a cluster holds y and dy");
    }
    two_inputs_split(p)
}

// Two register sets of y and dy in a split (the next row's in flight): 4 packs of each per thread.
fn two_inputs_split(p: u64) -> (Choice, &'static str) {
    (Choice { team: Team::Split(p.div_ceil(2048).min(64) as u32), vpt: 4, block: 512 }, "co-resident blocks hold y and dy")
}
// ANCHOR_END: choose
