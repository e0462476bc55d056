//! Who holds a row, and every grid: the host's plan for the deep-learning kernels. Pure
//! arithmetic on the shape and a few numbers of the GPU, so it is tested without one.
//!
//! A row of `cols` values is `packs` 16-byte packs (4 f32 or 8 f16/bf16 values each). Each thread
//! of a team holds `vpt` packs per chunk, so a team of `threads` threads holds `threads · vpt`
//! packs: when that covers the row, the row is read from memory once and written from
//! registers; otherwise it is read chunk by chunk, twice (`chunks > 1`).

use super::DlOp;
use crate::element::Dtype;
use crate::error::{Error, Result};
use std::fmt;

/// Who holds a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Team {
    /// `lanes` lanes of one warp per row (8, 16 or 32), several rows per block.
    Lanes(u32),
    /// One block per row.
    Block,
    /// A thread-block cluster of this many blocks per row, through distributed shared memory
    /// (sm_90 and later).
    Cluster(u32),
    /// This many co-resident blocks per row, through global memory (any GPU).
    Split(u32),
    /// The textbook softmax: one block per row, three reads of the row (softmax only).
    ThreePass,
}

impl Team {
    /// `lanes`, `block`, `cluster`, `split`, `three_pass`: the entry names' middle part.
    pub fn kind(self) -> &'static str {
        match self {
            Team::Lanes(_) => "lanes",
            Team::Block => "block",
            Team::Cluster(_) => "cluster",
            Team::Split(_) => "split",
            Team::ThreePass => "three_pass",
        }
    }

    /// Blocks per row (1 but for clusters and splits).
    pub fn blocks_per_row(self) -> u32 {
        match self {
            Team::Cluster(c) | Team::Split(c) => c,
            _ => 1,
        }
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Team::Lanes(l) => write!(f, "{l} lanes per row"),
            Team::Block => write!(f, "one block per row"),
            Team::Cluster(c) => write!(f, "a cluster of {c} blocks per row"),
            Team::Split(s) => write!(f, "{s} co-resident blocks per row"),
            Team::ThreePass => write!(f, "one block per row, three passes"),
        }
    }
}

// ANCHOR: menu
/// The entry points a kernel file instantiates, as (packs per thread, launch bound): the menus of
/// `kernels/dl_rows.cuh` (`DL_ROW_ENTRIES`, `DL_ROW_ENTRIES_TWO_INPUTS`) and
/// `kernels/19_cross_entropy.cu` (`CE_ENTRIES`), cut to what the planner, the tests and the
/// benchmark launch (the prototype measured more: `-DDL_FULL_MENU`, plots/dl_prototype). A test
/// compiles each file and finds every one.
pub struct Menu {
    pub lanes: &'static [(u32, u32)],
    pub block: &'static [(u32, u32)],
    pub split: &'static [(u32, u32)],
    /// (blocks per cluster, packs per thread, launch bound).
    pub cluster: &'static [(u32, u32, u32)],
}

pub const ONE_INPUT: Menu = Menu {
    lanes: &[(1, 256), (2, 256), (4, 256), (8, 256)],
    block: &[(2, 1024), (8, 1024)],
    split: &[(4, 512), (8, 512)],
    cluster: &[(2, 8, 1024), (4, 8, 1024), (8, 8, 1024), (16, 8, 1024)],
};
pub const TWO_INPUTS: Menu = Menu {
    lanes: &[(1, 256), (2, 256), (4, 256)],
    block: &[(2, 1024), (8, 512)],
    split: &[(4, 512)],
    cluster: &[(2, 4, 1024), (4, 4, 1024), (8, 4, 1024), (16, 4, 1024)],
};
pub const CROSS_ENTROPY: Menu = Menu {
    lanes: &[(2, 256), (4, 256), (8, 256)],
    block: &[(8, 1024)],
    split: &[(8, 512)],
    cluster: &[],
};
// ANCHOR_END: menu

impl DlOp {
    /// The menu of this op's entry points (none for the column reduction).
    pub fn menu(self) -> &'static Menu {
        match self {
            DlOp::SoftmaxBwd => &TWO_INPUTS,
            DlOp::CrossEntropy => &CROSS_ENTROPY,
            _ => &ONE_INPUT,
        }
    }
}

/// 16-byte packs of a row of `cols` values of `dtype` (rounded up).
pub fn packs(dtype: Dtype, cols: u64) -> u64 {
    cols.div_ceil(16 / dtype.size_bytes() as u64)
}

/// What the planner needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    pub sm_count: u32,
    /// Compute capability, e.g. (9, 0).
    pub arch: (i32, i32),
    pub max_grid_x: u32,
}

impl Device {
    /// An H200's numbers (132 SMs, sm_90), for tests without a GPU.
    pub fn h200() -> Device {
        Device { sm_count: 132, arch: (9, 0), max_grid_x: i32::MAX as u32 }
    }
    /// Thread-block clusters with distributed shared memory: sm_90 and later.
    pub fn has_clusters(&self) -> bool {
        self.arch.0 >= 9
    }
}

/// A team asked for by the caller instead of the automatic choice: the kind, the packs per
/// thread and the block (the planner still sizes the grid and checks the menu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub team: Team,
    pub vpt: u32,
    pub block: u32,
}

/// One launch of a row kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub op: DlOp,
    pub dtype: Dtype,
    pub team: Team,
    pub vpt: u32,
    pub block: u32,
    pub grid: u32,
    /// Chunks each thread walks: 1 means the row is held (read once).
    pub chunks: u64,
    /// Launched cooperatively (the split teams wait for each other: the driver checks that every
    /// block is resident at once).
    pub cooperative: bool,
    pub reason: &'static str,
}

impl Launch {
    /// The entry point: `softmax_lanes4_f32`, `layer_norm_cluster4x8_bf16`, `softmax_three_pass_f16`.
    pub fn entry(&self) -> String {
        entry_name(self.op, self.dtype, self.team, self.vpt)
    }

    /// Threads that hold one row.
    pub fn threads_per_row(&self) -> u64 {
        match self.team {
            Team::Lanes(l) => l as u64,
            other => other.blocks_per_row() as u64 * self.block as u64,
        }
    }

    /// The `team` argument of the entry: lanes per row, or blocks per row for a split.
    pub fn team_arg(&self) -> u32 {
        match self.team {
            Team::Lanes(l) => l,
            Team::Split(s) => s,
            _ => 1,
        }
    }

    /// Reads of each value from memory the plan implies: 1 when the row is held, 2 when it is
    /// read chunk by chunk for the state and again for the output, 3 for the textbook softmax;
    /// 1 for cross-entropy (nothing is written back).
    pub fn reads(&self) -> u32 {
        match (self.team, self.op.writes_rows()) {
            (Team::ThreePass, _) => 3,
            (_, false) => 1,
            _ if self.chunks <= 1 => 1,
            _ => 2,
        }
    }

    /// The most roundings one value's contribution goes through in the row's state: its share
    /// of the thread's values, the combines of the chunks, and the trees of lanes, warps, blocks.
    /// What [`crate::check::dl`]'s bounds are computed from.
    pub fn depth(&self, cols: u64) -> u64 {
        let per_thread = cols.div_ceil(self.threads_per_row().max(1));
        let tree = 5 + 5 + (self.team.blocks_per_row() as u64).next_power_of_two().trailing_zeros() as u64;
        per_thread + self.chunks + tree + 2
    }
}

/// The entry point of `op`'s `team` with `vpt` packs per thread, for `dtype`.
fn entry_name(op: DlOp, dtype: Dtype, team: Team, vpt: u32) -> String {
    let stem = op.stem();
    let t = dtype.name();
    match team {
        Team::ThreePass => format!("softmax_three_pass_{t}"),
        Team::Cluster(c) => format!("{stem}_cluster{c}x{vpt}_{t}"),
        other => format!("{stem}_{}{vpt}_{t}", other.kind()),
    }
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}, {} packs per thread, grid {} × {} threads", self.team, self.entry(), self.team, self.vpt, self.grid, self.block)?;
        if self.chunks > 1 {
            write!(f, ", {} chunks (read twice)", self.chunks)?;
        }
        write!(f, "; because {}", self.reason)
    }
}

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
/// The largest cluster size CUDA calls portable (8 blocks).
pub const PORTABLE_CLUSTER: u32 = 8;
/// The largest cluster the planner uses: 16 blocks is a non-portable size (the H200 holds 14 such
/// clusters of 512-thread blocks at once, by Nsight Compute; [`plan`] asks the GPU before it plans
/// one, and falls back where it holds none).
pub const MAX_CLUSTER: u32 = 16;

/// The cluster for a row of `p` packs, as (blocks, threads a block), 8 packs a thread; None past
/// 16 × 512 × 8 packs. From dl-bench on the H200 with the exchange through transaction barriers
/// (the long-row table): up to 16384 packs 4 blocks of 512 beat 2 of 1024 for every op (f32 2^16:
/// softmax 517.1 against 543.9 µs, LayerNorm 704.5 against 753.0; bf16 2^17: softmax 290.0
/// against 315.0); up to 32768, 8 of 512 beat 4 of 1024 (f32 2^17: softmax 524.6 against 587.3);
/// 8 of 1024 beat 16 co-resident blocks (f32 2^18: 607.8 against 917.6); and past 32768, 16 of
/// 512 (a non-portable cluster) beat 8 of 1024 (f32 2^18, one run: softmax 536.2 against 583.0 µs,
/// log_softmax 534.9 against 578.4, RMSNorm 628.1 against 653.8, LayerNorm 805.9 against 817.7).
/// (With the first exchange, through two cluster barriers, 2 of 1024 had been the faster:
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
fn portable_choice(op: DlOp, dtype: Dtype, cols: u64) -> (Choice, &'static str) {
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
        // Measured, not derived: dl-bench on the H200, one run, bf16 2^12 × 2^16: block × 1024
        // 272.9 µs, cluster 2 × 512 260.1 µs; log_softmax (no exponential per value on the way
        // out) 262.0 and 260.4, f32 softmax at 8192 packs 515.0 and 517.5, so those keep the block.
        return (Choice { team: Team::Cluster(2), vpt: 8, block: 512 }, "softmax's row of 8192 packs of 16-bit values: a cluster of two blocks of 512 (faster than one block of 1024 on the H200)");
    }
    if op == DlOp::RmsNorm && dtype.size_bytes() == 2 && p > LANES_MAX_PACKS && p <= 1024 && rows <= FEW_ROWS {
        // Measured, not derived (dl-bench on the H200, forced teams by turns, the means of
        // plots/data/dl/experiments/nvidia-h200-teams.csv): bf16 4096 × 4096, RMSNorm: 256 threads
        // × 2 packs 18.8 µs, 64 × 8 packs 20.1 µs; at 65536 × 4096 and 32768 × 8192, and f32
        // 4096 × 4096 (which keeps 8), the two took the same time. LayerNorm and softmax were
        // slower with 2 packs a thread (bf16 4096 × 4096: 29.7 against 23.1 µs, 20.3 against 18.3).
        let block = p.div_ceil(2).next_power_of_two().clamp(64, 1024) as u32;
        return (Choice { team: Team::Block, vpt: 2, block }, "RMSNorm, few 16-bit rows of up to 1024 packs: one block of 2 packs a thread (faster than 8 packs a thread on the H200)");
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
        // f32 rows of as many packs (4096 × 2^16) were 0.7% slower with 8 of 256, so they keep 4
        // of 512; so did RMSNorm at bf16 8192 × 128256 (1090.5 against 1081.2).
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

/// The reason given for a team the caller chose.
pub const FORCED: &str = "the caller asked for it";

/// The launch for `rows` × `cols` of `dtype`: `choice`, or the automatic one. `co_resident(entry,
/// block)` is how many blocks of an entry the whole GPU holds at once (the occupancy
/// calculator's answer times the SMs; for a cluster entry, its clusters times their blocks, 0
/// where the GPU refuses the size), for the split and the non-portable cluster. `None` when there
/// is nothing to launch (no rows, or rows of nothing).
pub fn plan(op: DlOp, dtype: Dtype, rows: u64, cols: u64, device: Device, choice: Option<Choice>, mut co_resident: impl FnMut(&str, u32) -> u32) -> Result<Option<Launch>> {
    let refuse = |reason: String| Error::InvalidLength { kernel: op.name().into(), n: (rows * cols) as usize, reason };
    if op == DlOp::LayerNormBwdGammaBeta {
        return Err(refuse("the column reduction has its own plan (plan_columns)".into()));
    }
    if !super::DTYPES.contains(&dtype) {
        return Err(Error::UnsupportedDtype { kernel: op.name().into(), dtype, supported: super::DTYPES.to_vec() });
    }
    if rows == 0 || cols == 0 {
        return Ok(None);
    }
    let (mut c, mut reason) = match choice {
        Some(c) => (c, FORCED),
        None => choose(op, dtype, rows, cols, device),
    };
    if let Team::Cluster(k) = c.team {
        // A non-portable cluster runs only where the GPU holds one (the occupancy calculator says
        // how many blocks of its clusters fit at once; 0 where the size is refused).
        // (Only for a team the menu has, with a block it takes: the others get their own reason below.)
        let on_menu = op.menu().cluster.iter().any(|e| e.0 == k && e.1 == c.vpt && c.block % 32 == 0 && c.block > 0 && c.block <= e.2);
        if k > PORTABLE_CLUSTER && device.has_clusters() && on_menu {
            let held = co_resident(&entry_name(op, dtype, c.team, c.vpt), c.block);
            if held < k {
                if choice.is_some() {
                    return Err(refuse(format!("this GPU holds no cluster of {k} blocks of {} threads (past {PORTABLE_CLUSTER} blocks a cluster is a non-portable size)", c.block)));
                }
                (c, reason) = portable_choice(op, dtype, cols);
            }
        }
    }
    let menu = op.menu();
    let bound = match c.team {
        Team::Lanes(l) => {
            if !(l.is_power_of_two() && (8..=32).contains(&l)) {
                return Err(refuse(format!("{l} lanes per row: a team is 8, 16 or 32 lanes")));
            }
            menu.lanes.iter().find(|e| e.0 == c.vpt).map(|e| e.1)
        }
        Team::Block => menu.block.iter().find(|e| e.0 == c.vpt).map(|e| e.1),
        Team::Split(s) => {
            if s < 2 {
                return Err(refuse("a split takes at least 2 blocks per row".into()));
            }
            menu.split.iter().find(|e| e.0 == c.vpt).map(|e| e.1)
        }
        Team::Cluster(k) => {
            if !device.has_clusters() {
                return Err(Error::Config { setting: format!("{} with clusters", op.name()), reason: format!("thread-block clusters need sm_90; this GPU is sm_{}{}", device.arch.0, device.arch.1) });
            }
            menu.cluster.iter().find(|e| e.0 == k && e.1 == c.vpt).map(|e| e.2)
        }
        Team::ThreePass => (op == DlOp::Softmax).then_some(1024),
    };
    let Some(bound) = bound else {
        return Err(refuse(format!("no {} entry with {} packs per thread for {}", c.team.kind(), c.vpt, op.name())));
    };
    if c.block % 32 != 0 || c.block == 0 || c.block > bound {
        return Err(refuse(format!("a block of {} threads: this entry takes a multiple of 32 up to {bound}", c.block)));
    }
    if let Team::Lanes(l) = c.team {
        if c.block < l {
            return Err(refuse(format!("a block of {} threads holds no team of {l} lanes", c.block)));
        }
    }
    let mut launch = Launch { op, dtype, team: c.team, vpt: c.vpt, block: c.block, grid: 1, chunks: 1, cooperative: false, reason };
    let cap = |blocks: u64| blocks.clamp(1, device.max_grid_x as u64) as u32;
    launch.grid = match c.team {
        Team::Lanes(l) => {
            let blocks = rows.div_ceil((c.block / l) as u64);
            // Cross-entropy's mean adds one partial per block: a grid the GPU holds, walking the rows.
            if op == DlOp::CrossEntropy { cap(blocks.min(4 * co_resident(&launch.entry(), c.block).max(1) as u64)) } else { cap(blocks) }
        }
        Team::Block | Team::ThreePass => {
            if op == DlOp::CrossEntropy { cap(rows.min(4 * co_resident(&launch.entry(), c.block).max(1) as u64)) } else { cap(rows) }
        }
        Team::Cluster(k) => {
            let blocks = rows * k as u64;
            if blocks > device.max_grid_x as u64 {
                return Err(refuse(format!("{rows} rows × {k} blocks per cluster exceed a grid")));
            }
            blocks as u32
        }
        Team::Split(s) => {
            if op == DlOp::CrossEntropy {
                // The last block of a row merges: nobody waits, any grid works.
                let blocks = rows * s as u64;
                if blocks > device.max_grid_x as u64 {
                    return Err(refuse(format!("{rows} rows × {s} blocks exceed a grid")));
                }
                blocks as u32
            } else {
                // Every block of a row waits for the others: all of them must be resident at once.
                let resident = co_resident(&launch.entry(), c.block) as u64;
                if resident < s as u64 {
                    return Err(refuse(format!("{s} blocks per row wait for each other, but this GPU holds only {resident} of them at once")));
                }
                launch.cooperative = true;
                (rows.min(resident / s as u64) * s as u64) as u32
            }
        }
    };
    let capacity = launch.threads_per_row() * c.vpt as u64;
    launch.chunks = if c.team == Team::ThreePass { 3 } else { packs(dtype, cols).div_ceil(capacity) };
    Ok(Some(launch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(op: DlOp, dtype: Dtype, rows: u64, cols: u64) -> Launch {
        plan(op, dtype, rows, cols, Device::h200(), None, |_, _| 264).unwrap().unwrap()
    }

    #[test]
    fn nothing_to_launch_for_no_rows_or_empty_rows() {
        assert_eq!(plan(DlOp::Softmax, Dtype::F32, 0, 5, Device::h200(), None, |_, _| 1).unwrap(), None);
        assert_eq!(plan(DlOp::Softmax, Dtype::F32, 5, 0, Device::h200(), None, |_, _| 1).unwrap(), None);
    }

    #[test]
    fn at_the_benchmarks_lengths_the_planned_team_holds_the_row_exactly() {
        // What chapter 17 says of the paths without a test per pack (dl_rows.cuh's UNTESTED): at
        // N = 2^8 … 2^18 (M·N = 2^28) the planner's team has exactly the row's packs, but for
        // softmax backward's rows of 256 packs (its smallest block: 64 threads × 8 packs).
        for op in [DlOp::Softmax, DlOp::LogSoftmax, DlOp::SoftmaxBwd, DlOp::CrossEntropy] {
            for dtype in [Dtype::F32, Dtype::BF16] {
                for log_n in 8..=18 {
                    let l = auto(op, dtype, 1 << (28 - log_n), 1 << log_n);
                    let exact = l.chunks == 1 && l.threads_per_row() * l.vpt as u64 == packs(dtype, 1 << log_n);
                    let the_exception = op == DlOp::SoftmaxBwd && packs(dtype, 1 << log_n) == 256;
                    assert_eq!(exact, !the_exception, "{op:?} {dtype} 2^{log_n}: {l}");
                }
            }
        }
    }

    #[test]
    fn short_rows_go_to_lanes_long_rows_to_blocks_clusters_and_splits() {
        let l = auto(DlOp::Softmax, Dtype::F32, 1 << 20, 256);
        assert!(matches!(l.team, Team::Lanes(_)), "{l}");
        assert_eq!(l.chunks, 1);
        assert_eq!(l.reads(), 1);
        let b = auto(DlOp::Softmax, Dtype::F32, 1 << 16, 4096);
        assert_eq!(b.team, Team::Block);
        assert_eq!(b.chunks, 1, "{b}");
        let wide = auto(DlOp::LayerNorm, Dtype::F32, 1 << 13, 1 << 15);
        assert_eq!((wide.team, wide.block, wide.chunks), (Team::Block, 1024, 1), "{wide}");
        let c = auto(DlOp::LayerNorm, Dtype::F32, 1 << 12, 1 << 16);
        assert_eq!((c.team, c.block), (Team::Cluster(4), 512), "{c}");
        // Softmax's 16-bit rows of 8192 packs: two blocks of 512 in a cluster, not one of 1024.
        let s = auto(DlOp::Softmax, Dtype::BF16, 1 << 12, 1 << 16);
        assert_eq!((s.team, s.block, s.chunks), (Team::Cluster(2), 512, 1), "{s}");
        assert_eq!(auto(DlOp::LogSoftmax, Dtype::BF16, 1 << 12, 1 << 16).team, Team::Block);
        assert_eq!(auto(DlOp::Softmax, Dtype::F32, 1 << 13, 1 << 15).team, Team::Block);
        // 16-bit softmax rows of 8192 to 16384 packs: 8 blocks of 256; f32 rows as long keep 4 of 512.
        for (op, cols) in [(DlOp::Softmax, 1 << 17), (DlOp::LogSoftmax, 128_256)] {
            let v = auto(op, Dtype::BF16, 2048, cols);
            assert_eq!((v.team, v.block, v.chunks, v.entry().as_str()), (Team::Cluster(8), 256, 1, format!("{}_cluster8x8_bf16", op.stem()).as_str()), "{v}");
        }
        assert_eq!((auto(DlOp::Softmax, Dtype::F32, 4096, 1 << 16).team, auto(DlOp::Softmax, Dtype::F32, 4096, 1 << 16).block), (Team::Cluster(4), 512));
        assert_eq!(auto(DlOp::RmsNorm, Dtype::BF16, 8192, 128_256).block, 512);
        // RMSNorm's few rows of up to 1024 packs: 2 packs a thread; many rows, or LayerNorm, 8.
        let r = auto(DlOp::RmsNorm, Dtype::BF16, 4096, 4096);
        assert_eq!((r.team, r.vpt, r.block, r.chunks), (Team::Block, 2, 256, 1), "{r}");
        assert_eq!(auto(DlOp::RmsNorm, Dtype::F32, 4096, 4096).vpt, 8);
        assert_eq!(auto(DlOp::RmsNorm, Dtype::BF16, 65536, 4096).vpt, 8);
        assert_eq!(auto(DlOp::LayerNorm, Dtype::BF16, 4096, 4096).vpt, 8);
        assert_eq!(auto(DlOp::Softmax, Dtype::F32, 2048, 1 << 17).team, Team::Cluster(8));
        assert_eq!(auto(DlOp::Softmax, Dtype::F32, 2048, 1 << 17).block, 512);
        let big = auto(DlOp::Softmax, Dtype::F32, 1024, 1 << 18);
        assert_eq!(big.chunks, 1, "a 1 MiB row is held: {big}");
        assert_eq!((big.team, big.block, big.entry().as_str()), (Team::Cluster(16), 512, "softmax_cluster16x8_f32"), "{big}");
        let bwd = auto(DlOp::SoftmaxBwd, Dtype::F32, 1024, 1 << 18);
        assert_eq!((bwd.team, bwd.block, bwd.chunks), (Team::Cluster(16), 1024, 1), "y and dy held: {bwd}");
        let split = auto(DlOp::Softmax, Dtype::F32, 512, 1 << 19);
        assert!(matches!(split.team, Team::Split(32)), "{split}");
        assert!(split.cooperative);
        assert_eq!(split.grid % 32, 0);
        // Without clusters, the same row goes to co-resident blocks.
        let old = plan(DlOp::Softmax, Dtype::F32, 4096, 1 << 16, Device { arch: (8, 0), ..Device::h200() }, None, |_, _| 216).unwrap().unwrap();
        assert!(matches!(old.team, Team::Split(4)), "{old}");
        // Cross-entropy never waits: its split grid is one slice per block and row.
        let ce = auto(DlOp::CrossEntropy, Dtype::BF16, 8192, 128_256);
        assert!(matches!(ce.team, Team::Split(_)), "{ce}");
        assert_eq!(ce.grid as u64, 8192 * ce.team.blocks_per_row() as u64);
        assert!(!ce.cooperative);
    }

    #[test]
    fn every_automatic_plan_is_on_the_menu_and_holds_its_row() {
        for op in DlOp::FORWARD.into_iter().chain([DlOp::SoftmaxBwd]) {
            for dtype in super::super::DTYPES {
                for k in 0..=18u32 {
                    let cols = 1u64 << k;
                    for cols in [cols, cols + 1, 128_256] {
                        let launch = auto(op, dtype, 64, cols);
                        assert_eq!(launch.chunks, 1, "{op} {dtype} {cols}: {launch}");
                        assert!(launch.block <= 1024 && launch.block % 32 == 0);
                    }
                }
            }
        }
    }

    #[test]
    fn a_gpu_that_holds_no_cluster_of_16_gets_a_portable_team() {
        // The occupancy calculator's answer for the cluster of 16 (0: the size is refused), and
        // 264 blocks for everything else.
        let on = |held16: u32, op: DlOp, choice: Option<Choice>| {
            plan(op, Dtype::F32, 1024, 1 << 18, Device::h200(), choice, |entry: &str, _| if entry.contains("cluster16") { held16 } else { 264 })
        };
        let one = on(0, DlOp::RmsNorm, None).unwrap().unwrap();
        assert_eq!((one.team, one.vpt, one.block, one.chunks), (Team::Cluster(8), 8, 1024, 1), "{one}");
        let two = on(0, DlOp::SoftmaxBwd, None).unwrap().unwrap();
        assert!(matches!(two.team, Team::Split(32)) && two.chunks == 1 && two.cooperative, "{two}");
        // One cluster's worth is enough; fewer blocks than a cluster is none.
        assert_eq!(on(16, DlOp::SoftmaxBwd, None).unwrap().unwrap().team, Team::Cluster(16));
        assert_eq!(on(15, DlOp::Softmax, None).unwrap().unwrap().team, Team::Cluster(8));
        // Asked for by name, it is refused with the reason instead.
        let forced = Choice { team: Team::Cluster(16), vpt: 8, block: 512 };
        let e = on(0, DlOp::Softmax, Some(forced)).unwrap_err().to_string();
        assert!(e.contains("no cluster of 16 blocks of 512 threads") && e.contains("non-portable"), "{e}");
        assert_eq!(on(32, DlOp::Softmax, Some(forced)).unwrap().unwrap().entry(), "softmax_cluster16x8_f32");
    }

    #[test]
    fn a_split_that_does_not_fit_at_once_is_refused() {
        let choice = Choice { team: Team::Split(64), vpt: 4, block: 512 };
        let e = plan(DlOp::Softmax, Dtype::F32, 8, 1 << 18, Device::h200(), Some(choice), |_, _| 40).unwrap_err();
        assert!(e.to_string().contains("only 40"), "{e}");
    }

    #[test]
    fn forced_teams_are_checked_against_the_menu() {
        let bad = |c: Choice| plan(DlOp::Softmax, Dtype::F32, 8, 1000, Device::h200(), Some(c), |_, _| 264).unwrap_err().to_string();
        assert!(bad(Choice { team: Team::Lanes(4), vpt: 2, block: 128 }).contains("8, 16 or 32"));
        assert!(bad(Choice { team: Team::Block, vpt: 3, block: 128 }).contains("no block entry"));
        assert!(bad(Choice { team: Team::Block, vpt: 16, block: 512 }).contains("no block entry"));
        assert!(bad(Choice { team: Team::Split(4), vpt: 8, block: 1024 }).contains("up to 512"));
        assert!(bad(Choice { team: Team::Split(1), vpt: 4, block: 128 }).contains("at least 2"));
        let old = Device { arch: (7, 5), ..Device::h200() };
        let e = plan(DlOp::Softmax, Dtype::F32, 8, 1000, old, Some(Choice { team: Team::Cluster(2), vpt: 8, block: 128 }), |_, _| 1).unwrap_err();
        assert!(e.to_string().contains("sm_90"), "{e}");
        // A team too small for the row reads it in chunks, twice.
        let l = plan(DlOp::Softmax, Dtype::F32, 8, 1 << 14, Device::h200(), Some(Choice { team: Team::Block, vpt: 2, block: 64 }), |_, _| 1).unwrap().unwrap();
        assert_eq!(l.chunks, (1u64 << 12) / 128);
        assert_eq!(l.reads(), 2);
    }

    #[test]
    fn entry_names_follow_the_macros() {
        let c = Choice { team: Team::Cluster(4), vpt: 8, block: 256 };
        let l = plan(DlOp::LayerNorm, Dtype::BF16, 4, 1 << 16, Device::h200(), Some(c), |_, _| 1).unwrap().unwrap();
        assert_eq!(l.entry(), "layer_norm_cluster4x8_bf16");
        assert_eq!(l.grid, 16);
        let b = plan(DlOp::SoftmaxBwd, Dtype::F16, 4, 100, Device::h200(), Some(Choice { team: Team::Block, vpt: 8, block: 64 }), |_, _| 1).unwrap().unwrap();
        assert_eq!(b.entry(), "softmax_backward_block8_f16");
        let t = plan(DlOp::Softmax, Dtype::F32, 4, 100, Device::h200(), Some(Choice { team: Team::ThreePass, vpt: 4, block: 256 }), |_, _| 1).unwrap().unwrap();
        assert_eq!(t.entry(), "softmax_three_pass_f32");
        assert_eq!(t.reads(), 3);
    }
}
