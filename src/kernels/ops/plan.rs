//! The operators' launches as pure arithmetic, tested without a GPU: the whole-array grid
//! ([`plan_whole`], kernel 10's rule), which block or slice reads a value (white-box models of
//! `span_reduce` that the planted-bug tests use), and how deep each result's arithmetic goes (the
//! error bounds of [`crate::check::ops`]). The row launches come from [`crate::rows::plan_for`] (the operators' teams).

use crate::element::Dtype;
use crate::rows::{Launch as RowLaunch, Strategy};

// ANCHOR: constants
/// 16-byte loads in flight per thread (`OP_WHOLE_LOADS`, `OP_WARP_LOADS`, `OP_BLOCK_LOADS` in
/// operators.cuh): kernel 10's four for the whole array, kernel 13's eight for a team of lanes and
/// four for a block or a slice.
pub const WHOLE_LOADS: u64 = 4;
pub const WARP_LOADS: u64 = 8;
pub const BLOCK_LOADS: u64 = 4;
/// Values one thread covers per tile of the whole-array grid: kernel 10's 16.
pub const WHOLE_TILE_PER_THREAD: u64 = 16;
/// The whole-array block: kernel 10's rule, 1024 threads once the input is large enough to keep
/// every SM busy with them, 256 below.
pub fn preferred_block(n: u64) -> u32 {
    if n >= 1 << 25 {
        1024
    } else {
        256
    }
}
// ANCHOR_END: constants

/// One whole-array launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeLaunch {
    pub grid: u32,
    pub block: u32,
}

/// The grid of a whole-array launch of `n > 0` values: one block per tile of `block × 16`
/// values, at most `resident_blocks` (the blocks loop over the rest, grid-stride).
pub fn plan_whole(n: u64, block: u32, resident_blocks: u32) -> WholeLaunch {
    let tiles = n.div_ceil(block as u64 * WHOLE_TILE_PER_THREAD).max(1);
    WholeLaunch { grid: tiles.min(resident_blocks.max(1) as u64) as u32, block }
}

impl WholeLaunch {
    /// The block whose threads read value `i` of an `n`-value input of `dtype` that starts on a
    /// 16-byte boundary: span_reduce deals whole packs to the grid's threads round-robin and the
    /// values after the last whole pack one per thread. (White-box: the planted-bug tests use it
    /// to give one block's share of the input something to lose.)
    pub fn owner_block(&self, i: u64, n: u64, dtype: Dtype) -> u32 {
        let per = 16 / dtype.size_bytes() as u64;
        let threads = self.grid as u64 * self.block as u64;
        let body = n / per * per;
        let thread = if i < body { (i / per) % threads } else { (i - body) % threads };
        (thread / self.block as u64) as u32
    }
}

/// The slice (the block along x) of a split row launch that reads column `c` of rows of `cols`
/// values (each slice a whole number of 16-byte packs, as rows_split_op cuts them).
pub fn owner_slice(launch: &RowLaunch, c: u64, cols: u64, dtype: Dtype) -> u32 {
    let per = 16 / dtype.size_bytes() as u64;
    let slices = launch.slices.max(1) as u64;
    let width = cols.div_ceil(slices).div_ceil(per) * per;
    (c / width.max(1)) as u32
}

/// How deep the arithmetic of one result goes, for the error bounds of [`crate::check::ops`]:
/// the most values one accumulator folds one after another, and the most merges of states any
/// value then goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Depth {
    pub per_accumulator: u64,
    pub merges: u64,
}

impl Depth {
    /// The most roundings any value goes through in a sum: its accumulator's chain and the merges.
    pub fn sum_depth(&self) -> u64 {
        self.per_accumulator + self.merges
    }
}

fn log2_ceil(x: u64) -> u64 {
    64 - x.max(1).saturating_sub(1).leading_zeros() as u64
}

/// The depth of `threads` threads, each with `loads` accumulators, folding `n` values of `dtype`
/// (span_reduce): whole rounds of packs, plus the values before the first and after the last
/// whole pack; then the accumulators combined one after another.
fn walk_depth(n: u64, threads: u64, loads: u64, dtype: Dtype) -> (u64, u64) {
    let per = 16 / dtype.size_bytes() as u64;
    let packs = n / per;
    let rounds = packs.div_ceil(threads.max(1) * loads);
    ((rounds + 2) * per, loads - 1)
}

impl WholeLaunch {
    /// The depth of this launch over `n` values: the walk, the warp (5) and block (5) trees, and
    /// in the last block the partials (`grid / block` one after another, then 10 more).
    pub fn depth(&self, n: u64, dtype: Dtype) -> Depth {
        let (per_accumulator, combine) = walk_depth(n, self.grid as u64 * self.block as u64, WHOLE_LOADS, dtype);
        Depth { per_accumulator, merges: combine + 10 + (self.grid as u64).div_ceil(self.block as u64) + 10 }
    }
}

/// The depth of a row launch over rows of `cols` values.
pub fn row_depth(launch: &RowLaunch, cols: u64, dtype: Dtype) -> Depth {
    match launch.strategy {
        Strategy::Warp => {
            let (m, c) = walk_depth(cols, launch.lanes as u64, WARP_LOADS, dtype);
            Depth { per_accumulator: m, merges: c + log2_ceil(launch.lanes as u64) }
        }
        Strategy::Block => {
            let (m, c) = walk_depth(cols, launch.block as u64, BLOCK_LOADS, dtype);
            Depth { per_accumulator: m, merges: c + 10 }
        }
        Strategy::Split => {
            let slices = launch.slices.max(1) as u64;
            let (m, c) = walk_depth(cols.div_ceil(slices), launch.block as u64, BLOCK_LOADS, dtype);
            Depth { per_accumulator: m, merges: c + 10 + slices.div_ceil(launch.block as u64) + 10 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_array_grid_is_one_block_per_tile_up_to_the_resident_blocks() {
        assert_eq!(plan_whole(1, 256, 264), WholeLaunch { grid: 1, block: 256 });
        assert_eq!(plan_whole(4096, 256, 264).grid, 1);
        assert_eq!(plan_whole(4097, 256, 264).grid, 2);
        assert_eq!(plan_whole(1 << 30, 1024, 264).grid, 264);
        assert_eq!(preferred_block(1 << 24), 256);
        assert_eq!(preferred_block(1 << 25), 1024);
    }

    #[test]
    fn owners_follow_the_walk() {
        let launch = WholeLaunch { grid: 2, block: 32 };
        // f32: packs of 4 dealt to 64 threads; pack 32 is thread 32's, block 1's; pack 64 wraps.
        assert_eq!(launch.owner_block(0, 1000, Dtype::F32), 0);
        assert_eq!(launch.owner_block(127, 1000, Dtype::F32), 0);
        assert_eq!(launch.owner_block(128, 1000, Dtype::F32), 1);
        assert_eq!(launch.owner_block(256, 1000, Dtype::F32), 0);
        // The values after the last whole pack go one per thread from thread 0.
        assert_eq!(launch.owner_block(1000, 1003, Dtype::F32), 0);
        let split = RowLaunch { strategy: Strategy::Split, reason: "", grid: (3, 1), block: 512, lanes: 512, slices: 3 };
        assert_eq!(owner_slice(&split, 0, 100, Dtype::F32), 0);
        assert_eq!(owner_slice(&split, 36, 100, Dtype::F32), 1);
    }

    #[test]
    fn depths_follow_the_launch() {
        // 2^26 f32 over 264 blocks of 1024: 2^24 packs over 270336 threads × 4 loads: 16 rounds,
        // (16 + 2) × 4 values per accumulator; 3 + 10 + 1 + 10 merges.
        let d = WholeLaunch { grid: 264, block: 1024 }.depth(1 << 26, Dtype::F32);
        assert_eq!(d, Depth { per_accumulator: 72, merges: 24 });
        let warp = RowLaunch { strategy: Strategy::Warp, reason: "", grid: (1, 1), block: 128, lanes: 8, slices: 1 };
        assert_eq!(row_depth(&warp, 256, Dtype::F32).merges, 7 + 3);
        let split = RowLaunch { strategy: Strategy::Split, reason: "", grid: (4, 3), block: 512, lanes: 512, slices: 4 };
        assert_eq!(row_depth(&split, 1 << 16, Dtype::F32).merges, 3 + 10 + 1 + 10);
    }
}
