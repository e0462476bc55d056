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

/// The launches that reduce `n` values to one. Each pass reads the previous pass's partial
/// sums; the last has a grid of one block. `resident_blocks` (SMs × blocks per SM) caps the
/// grid of kernels that loop over their input. `n = 0` needs no launch.
pub fn plan_passes(kernel: &KernelSpec, n: u64, block: u32, resident_blocks: u32) -> Result<Vec<Pass>> {
    let mut passes = Vec::new();
    let mut remaining = n;
    while remaining > 0 {
        let tiles = remaining.div_ceil(kernel.tile(block));
        let grid = match kernel.grid {
            GridRule::OneBlockPerTile => tiles,
            // One block loops over any number of partial sums: the second pass is one block.
            GridRule::ResidentBlocks if !passes.is_empty() => 1,
            GridRule::ResidentBlocks => tiles.min(resident_blocks.max(1) as u64),
        };
        if grid > MAX_GRID {
            return Err(Error::InvalidLength {
                kernel: kernel.name.to_string(),
                n: n as usize,
                reason: format!("its first pass would need {grid} blocks of {block}; a grid holds at most {MAX_GRID}"),
            });
        }
        passes.push(Pass { n: remaining, grid: grid as u32, block });
        // Single-pass kernels finish in this launch, whatever their grid.
        if grid == 1 || kernel.shape != Shape::MultiPass {
            break;
        }
        remaining = grid;
    }
    Ok(passes)
}

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
    fn a_grid_too_large_for_one_launch_is_an_error() {
        let err = plan_passes(find("reduce1").unwrap(), 1 << 37, 32, 264).unwrap_err();
        assert!(matches!(err, Error::InvalidLength { .. }), "{err}");
    }
}
