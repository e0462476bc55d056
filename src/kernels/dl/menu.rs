//! What the deep-learning row kernels offer the planner ([`super::plan`]): the teams that can hold
//! a row, the entry points each kernel file instantiates for them (`kernels/dl_rows.cuh`'s
//! macros), and their names.

use super::DlOp;
use crate::element::Dtype;
use std::fmt;

/// Who holds a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Team {
    /// `lanes` lanes of one warp per row (8, 16 or 32), several rows per block.
    Lanes(u32),
    /// One block per row.
    Block,
    /// One block per row, its γ (and β) copied into shared memory by cp.async as the row's loads
    /// are issued (LayerNorm and RMSNorm, sm_80 and later: the `_staged` entries).
    StagedBlock,
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
            Team::StagedBlock => "staged",
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
            Team::StagedBlock => write!(f, "one block per row, parameters staged in shared memory"),
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
    /// The staged blocks (packs per thread, largest block): their shared memory, 16 bytes a pack
    /// of each parameter, bounds the block (LayerNorm: 256 threads × 4 packs × 2 × 16 = 32 KiB).
    pub staged: &'static [(u32, u32)],
}

pub const ONE_INPUT: Menu = Menu {
    lanes: &[(1, 256), (2, 256), (4, 256), (8, 256)],
    block: &[(2, 1024), (4, 1024), (8, 1024)],
    split: &[(4, 512), (8, 512)],
    cluster: &[(2, 8, 1024), (4, 8, 1024), (8, 8, 1024), (16, 8, 1024)],
    staged: &[],
};
/// LayerNorm's and RMSNorm's: the one-input menu and the staged blocks (kernels/18_norms.cu).
pub const NORMS: Menu = Menu { staged: &[(4, 256)], ..ONE_INPUT };
// The staged blocks' shared memory is dynamic: within the 48 KiB a launch gets without opting in.
const _: () = assert!(NORMS.staged[0].0 * NORMS.staged[0].1 * 2 * 16 <= 48 * 1024);
pub const TWO_INPUTS: Menu = Menu {
    lanes: &[(1, 256), (2, 256), (4, 256)],
    block: &[(2, 1024), (8, 512)],
    split: &[(4, 512)],
    cluster: &[(2, 4, 1024), (4, 4, 1024), (8, 4, 1024), (16, 4, 1024)],
    staged: &[],
};
pub const CROSS_ENTROPY: Menu = Menu {
    lanes: &[(2, 256), (4, 256), (8, 256)],
    block: &[(8, 1024)],
    split: &[(8, 512)],
    cluster: &[],
    staged: &[],
};
// ANCHOR_END: menu

impl DlOp {
    /// The menu of this op's entry points (none for the column reduction).
    pub fn menu(self) -> &'static Menu {
        match self {
            DlOp::SoftmaxBwd => &TWO_INPUTS,
            DlOp::CrossEntropy => &CROSS_ENTROPY,
            DlOp::LayerNorm | DlOp::RmsNorm => &NORMS,
            _ => &ONE_INPUT,
        }
    }
}

/// The entry point of `op`'s `team` with `vpt` packs per thread, for `dtype`.
pub(super) fn entry_name(op: DlOp, dtype: Dtype, team: Team, vpt: u32) -> String {
    let stem = op.stem();
    let t = dtype.name();
    match team {
        Team::ThreePass => format!("softmax_three_pass_{t}"),
        Team::StagedBlock => format!("{stem}_block{vpt}_staged_{t}"),
        Team::Cluster(c) => format!("{stem}_cluster{c}x{vpt}_{t}"),
        other => format!("{stem}_{}{vpt}_{t}", other.kind()),
    }
}

/// The per-column parameters a staged block copies into shared memory: LayerNorm's γ and β,
/// RMSNorm's γ (kernels/18_norms.cu's `GroupedParams`).
pub fn staged_parameters(op: DlOp) -> u32 {
    match op {
        DlOp::LayerNorm => 2,
        DlOp::RmsNorm => 1,
        _ => 0,
    }
}
