//! Kernel decomposition, planned on the host: how many launches a sum takes and the grid of
//! each. Pure arithmetic, so it is tested without a GPU.

use crate::error::{Error, Result};
use crate::kernels::{GridRule, KernelSpec, Shape};

/// The largest grid.x a launch may have.
pub const MAX_GRID: u64 = (1 << 31) - 1;

/// One launch: `grid` blocks of `block` threads reduce `n` values to `grid` partial sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub n: u64,
    pub grid: u32,
    pub block: u32,
}

/// How the grids of a sum's passes are counted. Pure arithmetic, shared by the book's kernels
/// ([`plan_passes`]) and the reader's exercises, whose blocks need not be powers of two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridShape {
    /// Values one block covers in one tile.
    pub tile: u64,
    /// At most this many blocks in the first pass (its blocks loop over the input); `None`: one
    /// block per tile.
    pub cap: Option<u32>,
    /// Every pass after the first is one block (it loops over any number of partial sums).
    pub later_one_block: bool,
    /// The sum finishes in the first launch, whatever its grid.
    pub single_pass: bool,
}

/// The grid of each pass that reduces `n` values to one: each pass reads the previous pass's
/// partial sums, and the last has one block (or is the only one, for a single-pass shape).
/// `n = 0` needs no launch.
pub fn pass_grids(n: u64, shape: GridShape) -> Vec<u64> {
    let mut grids = Vec::new();
    let mut remaining = n;
    while remaining > 0 {
        let tiles = remaining.div_ceil(shape.tile);
        let grid = if shape.later_one_block && !grids.is_empty() { 1 } else { shape.cap.map_or(tiles, |cap| tiles.min(cap.max(1) as u64)) };
        grids.push(grid);
        if grid == 1 || shape.single_pass {
            break;
        }
        remaining = grid;
    }
    grids
}

/// The launches that reduce `n` values to one. `resident_blocks` (SMs × blocks per SM) caps the
/// grid of kernels that loop over their input. Tiles are counted for 4-byte elements
/// ([`plan_passes_for`] takes the element size).
pub fn plan_passes(kernel: &KernelSpec, n: u64, block: u32, resident_blocks: u32) -> Result<Vec<Pass>> {
    plan_passes_for(kernel, n, block, resident_blocks, 4)
}

/// [`plan_passes`] for elements of `element_bytes`: a tile of 16-byte packs
/// ([`GridRule::PackTiles`]) holds 16 / `element_bytes` values per pack.
pub fn plan_passes_for(kernel: &KernelSpec, n: u64, block: u32, resident_blocks: u32, element_bytes: usize) -> Result<Vec<Pass>> {
    let shape = GridShape {
        tile: kernel.tile_values(block, element_bytes),
        cap: match kernel.grid {
            // A chunked kernel loops over its chunks, so a cap (a smaller GPU) may shrink its grid.
            GridRule::OneBlockPerTile if kernel.shape.is_chunked() => Some(resident_blocks),
            GridRule::OneBlockPerTile | GridRule::PackTiles => None,
            GridRule::ResidentBlocks => Some(resident_blocks),
        },
        // One block loops over any number of partial sums: the second pass is one block. (A
        // multi-pass tile kernel's last block loops over the tiles past its own.)
        later_one_block: kernel.grid == GridRule::ResidentBlocks || (kernel.grid == GridRule::PackTiles && kernel.shape == Shape::MultiPass),
        // Single-pass kernels finish in their first launch, whatever its grid.
        single_pass: kernel.shape != Shape::MultiPass,
    };
    let mut passes = Vec::new();
    let mut remaining = n;
    for grid in pass_grids(n, shape) {
        if grid > MAX_GRID {
            return Err(Error::InvalidLength {
                kernel: kernel.name.to_string(),
                n: n as usize,
                reason: format!("its first pass would need {grid} blocks of {block}; a grid holds at most {MAX_GRID}"),
            });
        }
        passes.push(Pass { n: remaining, grid: grid as u32, block });
        remaining = grid;
    }
    Ok(passes)
}

// ANCHOR: depth
/// An upper bound on the additions one thread makes with the values it folds in a pass of `n`
/// values over `threads` threads: its share, rounded up, plus up to 32 more for the head and
/// tail a 16-byte kernel adds one by one, the values of one 16-byte pack, the accumulators it
/// combines and the zeros they start from. Any way of adding c values has depth at most c − 1.
pub fn thread_depth(n: u64, threads: u64) -> u64 {
    n.div_ceil(threads.max(1)) + 32
}

/// An upper bound on the depth of a block's tree: log2(block) ≤ 10 for the shared-memory trees,
/// 5 + 5 for the shuffle trees (a warp, then the warps' sums), and 5 + block/32 for CUB's block
/// reduction, which adds the warps' sums one after another.
pub fn block_depth(block: u32) -> u64 {
    5 + (block as u64 / 32).max(5)
}

/// The most roundings any one input value goes through on its way to the result of `passes`:
/// what [`crate::data::error_bound`] needs. Each pass adds its thread depth and its block tree;
/// an atomic kernel adds one block sum after another into the result (a chain as long as the
/// grid); a last-block or grid-synchronised kernel adds the partial sums with one more block.
pub fn addition_depth(kernel: &KernelSpec, passes: &[Pass]) -> u64 {
    let pass_depth = |p: &Pass| thread_depth(p.n, p.grid as u64 * p.block as u64) + block_depth(p.block);
    let depth: u64 = passes.iter().map(pass_depth).sum();
    let Some(first) = passes.first() else { return 0 };
    match kernel.shape {
        Shape::MultiPass => depth,
        Shape::AtomicAdd => depth + first.grid as u64,
        Shape::LastBlock | Shape::GridSync => depth + pass_depth(&Pass { n: first.grid as u64, grid: 1, block: first.block }),
        // Whatever the launch: a lane's 4 values per accumulator and the tree over them (2),
        // the 1024-lane tree (10); then the partials, 1 in 1024 per lane, and the tree again.
        Shape::Chunked | Shape::ChunkedTwoPass => 4 + 2 + 10 + first.n.div_ceil(crate::kernels::CHUNK_VALUES).div_ceil(1024) + 10,
    }
}
// ANCHOR_END: depth

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::find;

    fn grids(kernel: &str, n: u64, block: u32, resident: u32) -> Vec<u32> {
        plan_passes(find(kernel).unwrap(), n, block, resident).unwrap().iter().map(|p| p.grid).collect()
    }

    #[test]
    fn empty_input_needs_no_launch() {
        assert!(plan_passes(find("reduce1").unwrap(), 0, 256, 264).unwrap().is_empty());
    }

    #[test]
    fn one_block_per_tile_shrinks_by_the_tile_each_pass() {
        // 2^22 values, 256 threads, one element each: 16384 -> 64 -> 1 partial sums.
        assert_eq!(grids("reduce1", 1 << 22, 256, 264), vec![16384, 64, 1]);
        // Two elements per thread halve every grid.
        assert_eq!(grids("reduce4", 1 << 22, 256, 264), vec![8192, 16, 1]);
        // A ragged length rounds up: 257 values need two blocks of 256.
        assert_eq!(grids("reduce1", 257, 256, 264), vec![2, 1]);
        assert_eq!(grids("reduce1", 1, 256, 264), vec![1]);
    }

    #[test]
    fn each_pass_reads_what_the_last_one_wrote() {
        let passes = plan_passes(find("reduce3").unwrap(), 1_000_003, 128, 264).unwrap();
        assert_eq!(passes[0].n, 1_000_003);
        for pair in passes.windows(2) {
            assert_eq!(pair[1].n, pair[0].grid as u64);
        }
        assert_eq!(passes.last().unwrap().grid, 1);
    }

    #[test]
    fn resident_grid_is_capped_by_the_gpu_and_finishes_in_two_launches() {
        // 132 SMs x 2 resident blocks: the first pass never exceeds 264 blocks.
        assert_eq!(grids("reduce7", 1 << 30, 256, 264), vec![264, 1]);
        // However many partial sums, one block finishes them.
        assert_eq!(grids("reduce7", 1 << 30, 256, 132 * 8), vec![1056, 1]);
        // A small input uses fewer blocks than the GPU holds.
        assert_eq!(grids("reduce7", 1000, 256, 264), vec![2, 1]);
    }

    #[test]
    fn single_pass_kernels_plan_one_launch() {
        for name in ["reduce10_atomic", "reduce10_last_block", "reduce11_grid"] {
            assert_eq!(grids(name, 1 << 30, 256, 264), vec![264], "{name}");
            assert_eq!(grids(name, 100, 256, 264), vec![1], "{name}");
        }
    }

    #[test]
    fn addition_depth_is_far_below_n_for_a_parallel_sum() {
        let depth = |kernel: &str, n: u64, block: u32| {
            let k = find(kernel).unwrap();
            addition_depth(k, &plan_passes(k, n, block, 132 * 8).unwrap())
        };
        // Kernel 1 at 2^26: four passes (2^18, 1024, 4, 1 blocks) of one element per thread, a
        // tree of 256 each.
        assert_eq!(depth("reduce1", 1 << 26, 256), 4 * (1 + 32 + 13));
        // Kernel 9 at 2^26 over 1056 blocks of 256: about 248 values per thread, then one block.
        let d9 = depth("reduce9", 1 << 26, 256);
        assert!((248 + 32..400).contains(&d9), "{d9}");
        // The atomic kernel's result is a chain as long as its grid.
        // (kernel 9's second pass: 1056 partials over 256 threads, 5 each, plus its tree.)
        assert_eq!(depth("reduce10_atomic", 1 << 26, 256), d9 - (5 + 32 + 13) + 1056);
        // Whatever the kernel, the depth at 2^30 stays below 2^24: the bound means something.
        for k in crate::kernels::correct() {
            let block = k.block_sizes().find(|&b| b >= 256).unwrap();
            assert!(depth(k.name, 1 << 30, block) < 1 << 16, "{}", k.name);
        }
        assert_eq!(addition_depth(find("reduce3").unwrap(), &[]), 0);
    }

    #[test]
    fn pack_tiles_cover_the_input_in_one_launch_whatever_the_element_size() {
        let k = find("reduce10_tiles").unwrap();
        // 512 threads × 8 loads × 16 bytes: 16384 f32 values, 32768 f16 values, 8192 f64 values.
        assert_eq!(k.tile_values(512, 4), 16384);
        assert_eq!(k.tile_values(512, 2), 32768);
        assert_eq!(k.tile_values(512, 8), 8192);
        let grid = |n: u64, bytes: usize| plan_passes_for(k, n, 512, 264, bytes).unwrap().iter().map(|p| p.grid).collect::<Vec<_>>();
        assert_eq!(grid(1 << 30, 4), vec![65536], "one launch, not capped by the resident blocks");
        assert_eq!(grid(1 << 30, 2), vec![32768]);
        assert_eq!(grid(1 << 14, 4), vec![1]);
        assert_eq!(grid((1 << 14) + 1, 4), vec![2], "one value past a tile needs a block of its own");
        assert_eq!(grid(1, 4), vec![1]);
        assert_eq!(k.entry_name::<f32>(512), "reduce10_tiles_b512_l8_f32");
    }

    #[test]
    fn a_grid_too_large_for_one_launch_is_an_error() {
        let err = plan_passes(find("reduce1").unwrap(), 1 << 37, 32, 264).unwrap_err();
        assert!(matches!(err, Error::InvalidLength { .. }), "{err}");
    }
}
