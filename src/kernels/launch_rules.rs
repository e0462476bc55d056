//! What launches a kernel takes: its block sizes and tiles, the block the benchmark picks by
//! size, and the check of a block against the kernel's rules and the device's limits (with the
//! reason a block is refused), before anything is launched.

use super::{GridRule, KernelSpec, Shape, Shared, CHUNK_VALUES};
use crate::error::{Error, Result};

impl KernelSpec {
    /// Every block size this kernel accepts, smallest first.
    pub fn block_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        (0..=10).map(|k| 1u32 << k).filter(move |b| *b >= self.min_block && *b <= self.max_block)
    }

    /// Inputs one block covers per tile, for 4-byte elements.
    pub fn tile(&self, block: u32) -> u64 {
        self.tile_values(block, 4)
    }

    /// Inputs one block covers per tile, for elements of `element_bytes`: a [`GridRule::PackTiles`]
    /// tile is a number of 16-byte packs, so it holds more f16 values than f32 values.
    pub fn tile_values(&self, block: u32, element_bytes: usize) -> u64 {
        match (self.shape, self.grid) {
            (Shape::Chunked | Shape::ChunkedTwoPass, _) => CHUNK_VALUES, // a chunk, whatever the block
            (_, GridRule::PackTiles) => block as u64 * self.loads_per_thread() as u64 * (16 / element_bytes.clamp(1, 16)) as u64,
            _ => block as u64 * self.elements_per_thread as u64,
        }
    }

    /// 16-byte loads per thread of a [`GridRule::PackTiles`] kernel (`elements_per_thread`
    /// counts 4-byte values).
    pub fn loads_per_thread(&self) -> u32 {
        (self.elements_per_thread / 4).max(1)
    }

    /// The block size the benchmark uses at `n` when none is asked for: 256 for Harris's
    /// kernels (his table compares like with like); for the 16-byte kernels, 1024 threads once
    /// the input is large enough to keep every SM busy with them, 256 below (fewer, smaller
    /// blocks finish a small input sooner). Measured on the H200; see the modern chapters.
    pub fn preferred_block(&self, n: usize) -> u32 {
        if self.shape.is_chunked() {
            // 1024 threads at 48 registers leave one block per SM: 512 keeps two (measured on
            // the H200: 1024 is 30% slower at 2^28). The one-lane kernels take 1024 only.
            return 512u32.clamp(self.min_block, self.max_block);
        }
        if self.grid == GridRule::PackTiles {
            // One block while one tile covers the input: up to 2^15 f32 values that was faster
            // on the H200 than any grid of tiles whose partials must then be added (a second
            // launch, or the last block's fence and ticket:
            // plots/data/experiments/nvidia-h200-finish.csv). Past it, the read-only kernel's
            // tile: 512 threads, eight loads each. (At 256 threads, the fastest from 2^16 to 2^18
            // in that experiment's simpler kernel, the book's tile kernels were still behind
            // kernels 6 and 12 from 2^16 to 2^22 in a benchmark run of 2026-12-02, by up to 34%.)
            return [64, 128, 256, 512, 1024].into_iter().find(|&b| self.tile(b) >= n as u64).unwrap_or(512);
        }
        let block = if self.elements_per_thread >= 16 && n >= 1 << 25 { 1024 } else { 256 };
        block.clamp(self.min_block, self.max_block)
    }

    /// Check `block` against this kernel's rules and the device's limits, before any launch.
    pub fn check_block(&self, block: u32, element_bytes: usize, device_max_threads: u32, device_max_shared: usize) -> Result<()> {
        let reject = |reason: String| Err(Error::InvalidBlockSize { kernel: self.name.to_string(), block, reason });
        if block == 0 {
            return reject("a block needs at least one thread".into());
        }
        if !block.is_power_of_two() {
            return reject(self.power_of_two_reason().into());
        }
        if block < self.min_block || block > self.max_block {
            return reject(format!("this kernel takes {} to {} threads", self.min_block, self.max_block));
        }
        if block > device_max_threads {
            return reject(format!("this GPU allows at most {device_max_threads} threads per block"));
        }
        let shared = self.shared_bytes(block, element_bytes);
        if shared > device_max_shared {
            return reject(format!("it needs {shared} bytes of shared memory; this GPU allows {device_max_shared} per block"));
        }
        Ok(())
    }

    /// Why a block that is not a power of two is refused, for this kernel (traced on the CPU by
    /// `reduction::book::draw::diagrams::ragged_block` for the shared-memory trees).
    pub fn power_of_two_reason(&self) -> &'static str {
        match (self.shared, self.chapter) {
            // s = 1, 2, 4, … pairs slot tid with tid + s: every slot still reaches slot 0, but
            // some adds read past the tile.
            (Shared::PerThread | Shared::PerThreadPadded, 1 | 2) => {
                "its tree needs a power of two: with another block size some adds read slots past the end of the tile"
            }
            // s = blockDim.x / 2, / 4, … rounds down: some slots are never added into slot 0.
            (Shared::PerThread | Shared::PerThreadPadded, _) => {
                "its halving tree needs a power of two: with another block size some slots are never added into slot 0"
            }
            // block_sum works for any multiple of 32; the entry points, plans and tests are for
            // powers of two only.
            (Shared::Static, _) => {
                "the book instantiates and tests it for powers of two only (its warp-shuffle block sum would take any multiple of 32)"
            }
        }
    }

    /// Dynamic shared memory per block, for accumulators of `element_bytes`.
    pub fn shared_bytes(&self, block: u32, element_bytes: usize) -> usize {
        match self.shared {
            Shared::PerThread => block as usize * element_bytes,
            Shared::PerThreadPadded => (block as usize + block as usize / 32) * element_bytes,
            Shared::Static => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::find;
    use crate::error::Error;

    #[test]
    fn block_sizes_are_the_powers_of_two_in_range() {
        let k = find("reduce6").unwrap();
        assert_eq!(k.block_sizes().collect::<Vec<_>>(), vec![64, 128, 256, 512, 1024]);
        let k1 = find("reduce1").unwrap();
        assert_eq!(k1.block_sizes().next(), Some(32));
    }

    #[test]
    fn check_block_rejects_each_bad_size_with_its_reason() {
        let k = find("reduce6").unwrap();
        let reason = |b| match k.check_block(b, 4, 1024, 48 * 1024) {
            Err(Error::InvalidBlockSize { reason, .. }) => reason,
            other => panic!("{b}: expected a rejection, got {other:?}"),
        };
        assert!(reason(0).contains("at least one"));
        assert!(reason(300).contains("power of two"));
        assert!(reason(32).contains("64 to 1024"));
        assert!(reason(2048).contains("64 to 1024"));
        assert!(k.check_block(256, 4, 1024, 48 * 1024).is_ok());
        // A device with little shared memory rejects a block whose tree does not fit.
        assert!(matches!(k.check_block(1024, 4, 1024, 2048), Err(Error::InvalidBlockSize { .. })));
        assert!(matches!(k.check_block(1024, 4, 512, 48 * 1024), Err(Error::InvalidBlockSize { .. })));
    }
}
