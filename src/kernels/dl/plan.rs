//! Who holds a row, and every grid: the host's plan for the deep-learning kernels (the automatic
//! choice of team is [`super::choose`]'s). Pure
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

use super::choose::portable_choice;
pub use super::choose::{choose, cluster_for, BLOCK_MAX_PACKS, FEW_ROWS, LANES_MAX_PACKS, MAX_CLUSTER, PORTABLE_CLUSTER, SLICE_PACKS, STAGED_MAX_PACKS};
use super::menu::entry_name;
pub use super::menu::{staged_parameters, Menu, Team, CROSS_ENTROPY, NORMS, ONE_INPUT, TWO_INPUTS};

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
    /// Dynamic shared memory a block is given: the staged blocks' parameters, 0 for the others.
    pub shared_bytes: u32,
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

    /// The most roundings one row's loss goes through in cross-entropy's mean over `rows`
    /// (kernels/19_cross_entropy.cu): the rows a thread adds one after another, the blocks'
    /// partials a thread of the last block adds (lanes and block teams), the block's tree, and
    /// the division by the count. Where a thread adds hundreds of rows this is far deeper than
    /// the row's own [`Launch::depth`].
    pub fn mean_depth(&self, rows: u64) -> u64 {
        let block = self.block.max(1) as u64;
        let grid = self.grid.max(1) as u64;
        let tree = block.next_power_of_two().trailing_zeros() as u64;
        let serial = match self.team {
            Team::Lanes(l) => rows.div_ceil(grid * (block / l.max(1) as u64).max(1)) + grid.div_ceil(block),
            Team::Split(_) => rows.div_ceil(block),
            _ => rows.div_ceil(grid) + grid.div_ceil(block),
        };
        serial + tree + 2
    }
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}, {} packs per thread, grid {} × {} threads", self.team, self.entry(), self.team, self.vpt, self.grid, self.block)?;
        if self.chunks > 1 {
            write!(f, ", {} chunks (read twice)", self.chunks)?;
        }
        if self.shared_bytes > 0 {
            write!(f, ", {} bytes of shared memory for the parameters", self.shared_bytes)?;
        }
        write!(f, "; because {}", self.reason)
    }
}

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
        Team::StagedBlock => {
            if device.arch.0 < 8 {
                return Err(Error::Config { setting: format!("{} with staged parameters", op.name()), reason: format!("cp.async needs sm_80; this GPU is sm_{}{}", device.arch.0, device.arch.1) });
            }
            menu.staged.iter().find(|e| e.0 == c.vpt).map(|e| e.1)
        }
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
    let mut launch = Launch { op, dtype, team: c.team, vpt: c.vpt, block: c.block, grid: 1, chunks: 1, cooperative: false, shared_bytes: 0, reason };
    let cap = |blocks: u64| blocks.clamp(1, device.max_grid_x as u64) as u32;
    launch.grid = match c.team {
        Team::Lanes(l) => {
            let blocks = rows.div_ceil((c.block / l) as u64);
            // Cross-entropy's mean adds one partial per block: a grid the GPU holds, walking the rows.
            if op == DlOp::CrossEntropy { cap(blocks.min(4 * co_resident(&launch.entry(), c.block).max(1) as u64)) } else { cap(blocks) }
        }
        Team::Block | Team::StagedBlock | Team::ThreePass => {
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
    // The staged blocks' shared memory, 16 bytes a pack of each parameter for every thread, where
    // the block holds its row (a row read in chunks is written with the parameters in groups).
    // (And the clusters' of the parameters they stage.)
    let staged = match c.team {
        Team::StagedBlock => staged_parameters(op),
        Team::Cluster(_) => cluster_staged_count(op, &crate::runtime::nvrtc::experiment_options()),
        _ => 0,
    };
    if launch.chunks == 1 {
        launch.shared_bytes = c.block * c.vpt * staged * 16;
    }
    Ok(Some(launch))
}

/// Whether `op`'s cluster entries, compiled with these NVRTC options (`REDUCTION_NVRTC_OPTIONS`),
/// stage parameters in shared memory (dl_rows.cuh's `ClusterStaged`). Their launches must give
/// the room, or the kernels load the parameters from L2 as they write.
pub fn staged_in_clusters(op: DlOp, options: &[String]) -> bool {
    cluster_staged_count(op, options) > 0
}

/// How many of `op`'s parameters its cluster entries stage (`ClusterStaged`'s count, read as the
/// kernels' preprocessor reads the options): RMSNorm's γ by default (18_norms.cu), none under
/// `-DDL_CLUSTER_UNSTAGED`, every norm's parameters under `-DDL_CLUSTER_STAGED`, and LayerNorm's
/// γ alone under `-DDL_CLUSTER_STAGED_GAMMA`.
pub fn cluster_staged_count(op: DlOp, options: &[String]) -> u32 {
    // Defined as the kernels' defined() sees it: with or without a value, not a longer name.
    let defines = |name: &str| options.iter().any(|o| o.strip_prefix(name).is_some_and(|rest| rest.is_empty() || rest.starts_with('=')));
    match op {
        DlOp::LayerNorm if defines("-DDL_CLUSTER_STAGED_GAMMA") => 1,
        DlOp::RmsNorm if !defines("-DDL_CLUSTER_UNSTAGED") => staged_parameters(op),
        _ if defines("-DDL_CLUSTER_STAGED") => staged_parameters(op),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(op: DlOp, dtype: Dtype, rows: u64, cols: u64) -> Launch {
        plan(op, dtype, rows, cols, Device::h200(), None, |_, _| 264).unwrap().unwrap()
    }

    #[test]
    fn the_mean_of_many_rows_is_deeper_than_a_row() {
        // 65536 rows of 4096 (M·N = 2^28): each thread of a resident grid adds many rows' losses
        // (with this module's occupancy stub, a grid of 1056 × 128: 81 roundings, the row 45).
        let l = auto(DlOp::CrossEntropy, Dtype::F32, 1 << 16, 4096);
        assert!(l.mean_depth(1 << 16) > l.depth(4096), "{l}: mean {} row {}", l.mean_depth(1 << 16), l.depth(4096));
        // One row: the mean is the loss over its count.
        assert!(l.mean_depth(1) <= 2 + 10 + l.grid.div_ceil(l.block) as u64 + 1);
    }

    #[test]
    fn the_staged_clusters_take_their_own_options_only() {
        let opts = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert!(staged_in_clusters(DlOp::RmsNorm, &opts("")));
        assert!(!staged_in_clusters(DlOp::LayerNorm, &opts("-DDL_CLUSTER_STAGED_ORDER=2 -DDL_LANES_STAGED")));
        assert!(staged_in_clusters(DlOp::LayerNorm, &opts("-DDL_LN_TWO_PASS -DDL_CLUSTER_STAGED")));
        assert!(!staged_in_clusters(DlOp::Softmax, &opts("-DDL_CLUSTER_STAGED=1")));
        assert!(!staged_in_clusters(DlOp::RmsNorm, &opts("-DDL_CLUSTER_UNSTAGED")));
        assert!(staged_in_clusters(DlOp::RmsNorm, &opts("-DDL_CLUSTER_UNSTAGED -DDL_CLUSTER_STAGED")));
        assert_eq!(cluster_staged_count(DlOp::LayerNorm, &opts("-DDL_CLUSTER_STAGED")), 2);
        assert_eq!(cluster_staged_count(DlOp::LayerNorm, &opts("-DDL_CLUSTER_STAGED_GAMMA")), 1);
        assert_eq!(cluster_staged_count(DlOp::LayerNorm, &opts("-DDL_CLUSTER_STAGED -DDL_CLUSTER_STAGED_GAMMA")), 1);
        assert_eq!(cluster_staged_count(DlOp::RmsNorm, &opts("-DDL_CLUSTER_STAGED_GAMMA")), 1);
        assert_eq!(cluster_staged_count(DlOp::Softmax, &opts("-DDL_CLUSTER_STAGED_GAMMA")), 0);
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
        // RMSNorm's few rows of up to 1024 packs: 2 packs a thread; many rows, or LayerNorm, 8
        // (below sm_80: the staged blocks take these rows from sm_80 on).
        let turing = Device { arch: (7, 5), ..Device::h200() };
        let old = |op: DlOp, dtype: Dtype, rows: u64, cols: u64| plan(op, dtype, rows, cols, turing, None, |_, _| 264).unwrap().unwrap();
        let r = old(DlOp::RmsNorm, Dtype::BF16, 4096, 4096);
        assert_eq!((r.team, r.vpt, r.block, r.chunks), (Team::Block, 2, 256, 1), "{r}");
        let r = old(DlOp::RmsNorm, Dtype::BF16, 4096, 8192);
        assert_eq!((r.team, r.vpt, r.block, r.chunks), (Team::Block, 2, 512, 1), "{r}");
        // f32 rows of 1024 packs: 2 packs a thread for softmax, log_softmax and RMSNorm (RMSNorm
        // below sm_80), not LayerNorm.
        for op in [DlOp::Softmax, DlOp::LogSoftmax, DlOp::RmsNorm] {
            for rows in [4096, 65536] {
                let v = if op == DlOp::RmsNorm { old(op, Dtype::F32, rows, 4096) } else { auto(op, Dtype::F32, rows, 4096) };
                assert_eq!((v.team, v.vpt, v.block, v.chunks), (Team::Block, 2, 512, 1), "{v}");
            }
        }
        assert_eq!(old(DlOp::LayerNorm, Dtype::F32, 65536, 4096).vpt, 8);
        assert_eq!(auto(DlOp::Softmax, Dtype::F32, 131072, 2048).vpt, 8);
        assert_eq!(auto(DlOp::Softmax, Dtype::BF16, 32768, 8192).vpt, 8);
        assert_eq!(old(DlOp::RmsNorm, Dtype::BF16, 65536, 4096).vpt, 8);
        assert_eq!(old(DlOp::LayerNorm, Dtype::BF16, 4096, 4096).vpt, 8);
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
    fn staged_blocks_are_given_their_shared_memory_and_refused_where_they_cannot_run() {
        let staged = |op: DlOp, dtype: Dtype, block: u32, device: Device| {
            plan(op, dtype, 4096, 4096, device, Some(Choice { team: Team::StagedBlock, vpt: 4, block }), |_, _| 264)
        };
        let ln = staged(DlOp::LayerNorm, Dtype::BF16, 128, Device::h200()).unwrap().unwrap();
        assert_eq!((ln.entry().as_str(), ln.shared_bytes, ln.grid, ln.chunks), ("layer_norm_block4_staged_bf16", 128 * 4 * 2 * 16, 4096, 1), "{ln}");
        assert!(ln.to_string().contains("16384 bytes of shared memory"), "{ln}");
        let rms = staged(DlOp::RmsNorm, Dtype::F32, 256, Device::h200()).unwrap().unwrap();
        assert_eq!((rms.entry().as_str(), rms.shared_bytes, rms.chunks), ("rms_norm_block4_staged_f32", 256 * 4 * 16, 1), "{rms}");
        // Past 256 threads the parameters would pass 32 KiB a block; other ops have none to stage.
        assert!(staged(DlOp::LayerNorm, Dtype::F32, 512, Device::h200()).unwrap_err().to_string().contains("up to 256"));
        assert!(staged(DlOp::Softmax, Dtype::F32, 128, Device::h200()).unwrap_err().to_string().contains("no staged entry"));
        // cp.async is sm_80's: a Turing GPU is told so.
        let turing = Device { arch: (7, 5), ..Device::h200() };
        let e = staged(DlOp::LayerNorm, Dtype::F16, 128, turing).unwrap_err().to_string();
        assert!(e.contains("sm_80") && e.contains("sm_75"), "{e}");
        // A row read in chunks gets none (its write takes the parameters in groups), nor do the
        // other teams.
        let chunked = staged(DlOp::LayerNorm, Dtype::F32, 128, Device::h200()).unwrap().unwrap();
        assert_eq!((chunked.chunks, chunked.shared_bytes), (2, 0), "{chunked}");
        assert!(!chunked.to_string().contains("bytes of shared memory"), "{chunked}");
        assert_eq!(auto(DlOp::Softmax, Dtype::BF16, 4096, 4096).shared_bytes, 0);
        // The long rows' clusters as built (no REDUCTION_NVRTC_OPTIONS in unit tests): RMSNorm's
        // γ staged, 64 KiB a block of 512 threads × 8 packs (book/dl_norms.md); LayerNorm's none.
        let rms = auto(DlOp::RmsNorm, Dtype::F32, 1024, 1 << 18);
        assert!(matches!(rms.team, Team::Cluster(_)) && (rms.block, rms.vpt, rms.chunks) == (512, 8, 1), "{rms}");
        assert_eq!(rms.shared_bytes, 64 << 10, "{rms}");
        let ln = auto(DlOp::LayerNorm, Dtype::F32, 1024, 1 << 18);
        assert!(matches!(ln.team, Team::Cluster(_)) && ln.shared_bytes == 0, "{ln}");
    }

    #[test]
    fn the_norms_rows_of_257_to_1024_packs_go_to_the_staged_blocks_from_sm_80() {
        let turing = Device { arch: (7, 5), ..Device::h200() };
        for op in [DlOp::LayerNorm, DlOp::RmsNorm] {
            // (type, lengths with their blocks, the lengths either side of the rule's)
            for (dtype, held, outside) in [
                (Dtype::BF16, [(2049, 128), (4096, 128), (4097, 256), (8192, 256)], [2048, 8193]),
                (Dtype::F16, [(2049, 128), (4096, 128), (4097, 256), (8192, 256)], [2048, 8193]),
                (Dtype::F32, [(1025, 128), (2048, 128), (2049, 256), (4096, 256)], [1024, 4097]),
            ] {
                for rows in [4096, 65536] {
                    for (cols, block) in held {
                        let l = auto(op, dtype, rows, cols);
                        assert_eq!((l.team, l.vpt, l.block, l.chunks), (Team::StagedBlock, 4, block, 1), "{op:?} {dtype} {rows}x{cols}: {l}");
                        assert_eq!(l.shared_bytes, block * 4 * staged_parameters(op) * 16);
                        let old = plan(op, dtype, rows, cols, turing, None, |_, _| 264).unwrap().unwrap();
                        assert_ne!(old.team, Team::StagedBlock, "no cp.async on sm_75: {old}");
                    }
                    for cols in outside {
                        assert_ne!(auto(op, dtype, rows, cols).team, Team::StagedBlock, "{op:?} {dtype} {rows}x{cols}");
                    }
                }
            }
        }
        assert_eq!(auto(DlOp::Softmax, Dtype::F32, 4096, 4096).team, Team::Block);
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
