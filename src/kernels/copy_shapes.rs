//! The launch shapes of the tiled copy (`kernels/copy.cu`, `copy_tile_b<B>_p<P>[_cs]`): the
//! yardstick of the deep-learning chapters, whose kernels read every byte once and write it back
//! once. The fastest of them (and the driver's own device-to-device copy) is what a kernel that
//! reads and writes as much reaches on this GPU (`measure::dl_bench`).

/// One shape: `block` threads, each holding `packs` 16-byte packs (every load before the first
/// store), one tile per block; `stream`: evict-first stores (`st.global.cs`), as the row kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyShape {
    pub block: u32,
    pub packs: u32,
    pub stream: bool,
}

/// Every shape `kernels/copy.cu` instantiates (its `COPY_TILES` lines): 256 to 1024 threads, 1 to
/// 8 packs each, plain and evict-first stores.
pub const COPY_TILE_SHAPES: [CopyShape; 24] = {
    let blocks = [256, 512, 1024];
    let packs = [1, 2, 4, 8];
    let mut shapes = [CopyShape { block: 0, packs: 0, stream: false }; 24];
    let mut i = 0;
    while i < 24 {
        shapes[i] = CopyShape { block: blocks[i / 8], packs: packs[(i / 2) % 4], stream: i % 2 == 1 };
        i += 1;
    }
    shapes
};

impl CopyShape {
    /// The entry point: `copy_tile_b512_p4`, `copy_tile_b512_p4_cs`.
    pub fn entry_name(&self) -> String {
        format!("copy_tile_b{}_p{}{}", self.block, self.packs, if self.stream { "_cs" } else { "" })
    }

    /// Blocks for `n` 4-byte words: one per tile of `block × packs` packs (the last one partial).
    pub fn grid(&self, n: usize) -> usize {
        (n / 4).div_ceil(self.block as usize * self.packs as usize).max(1)
    }

    /// `512 threads × 4 packs, evict-first stores` (`1 pack`), as the tables write it.
    pub fn label(&self) -> String {
        let plural = if self.packs == 1 { "" } else { "s" };
        format!("{} threads × {} pack{plural}{}", self.block, self.packs, if self.stream { ", evict-first stores" } else { "" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_an_entry_of_the_copy_file() {
        let source = super::super::COPY.source;
        for (i, s) in COPY_TILE_SHAPES.iter().enumerate() {
            assert!(source.contains(&format!("COPY_TILES({})", s.block)), "{}", s.entry_name());
            assert!(COPY_TILE_SHAPES[..i].iter().all(|o| o != s), "{} twice", s.entry_name());
        }
        assert!(source.contains("COPY_TILE(B, 1) COPY_TILE(B, 2) COPY_TILE(B, 4) COPY_TILE(B, 8)"));
        assert_eq!(COPY_TILE_SHAPES.iter().filter(|s| s.stream).count(), 12);
    }

    #[test]
    fn the_grid_covers_every_pack_once() {
        let s = CopyShape { block: 256, packs: 4, stream: false };
        assert_eq!(s.grid(1 << 28), (1 << 26) / 1024);
        assert_eq!(s.grid(4 * 1024 + 4), 2);
        assert_eq!(s.grid(3), 1, "the last n % 4 words still get a block");
    }
}
