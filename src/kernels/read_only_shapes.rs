//! The launch shapes of the read-only kernel (`kernels/read_only.cu`, registered as
//! [`READ_ONLY`]): each shape is an entry point of its own, and the benchmark's ceiling is the
//! fastest of them at each size (`measure::read_only`).

use super::registry::READ_ONLY;
use crate::element::Element;

/// One launch shape of the read-only kernel: `block` threads, each making `loads` independent
/// 16-byte loads; one tile of `block × loads × 16` bytes per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOnlyShape {
    pub block: u32,
    pub loads: u32,
}

/// Every shape `kernels/read_only.cu` instantiates (its `READ_ONLY_SHAPES` macro, in the same
/// order): 128 to 1024 threads, 1 to 16 loads each.
pub const READ_ONLY_SHAPES: [ReadOnlyShape; 20] = {
    let blocks = [128, 256, 512, 1024];
    let loads = [1, 2, 4, 8, 16];
    let mut shapes = [ReadOnlyShape { block: 0, loads: 0 }; 20];
    let mut i = 0;
    while i < 20 {
        shapes[i] = ReadOnlyShape { block: blocks[i / 5], loads: loads[i % 5] };
        i += 1;
    }
    shapes
};

impl ReadOnlyShape {
    /// The entry point for element type `T`: `read_only_b512_l8_f32`.
    pub fn entry_name<T: Element>(&self) -> String {
        format!("{}_b{}_l{}_{}", READ_ONLY.name, self.block, self.loads, T::SUFFIX)
    }

    /// Values of `elem_bytes` bytes one block reads.
    pub fn tile(&self, elem_bytes: usize) -> usize {
        self.block as usize * self.loads as usize * (16 / elem_bytes)
    }

    /// Blocks (and partial values) for `n` values: one per whole tile, one for the rest.
    pub fn grid(&self, n: usize, elem_bytes: usize) -> usize {
        n.div_ceil(self.tile(elem_bytes))
    }

    /// `512 × 8`, as the tables write it.
    pub fn label(&self) -> String {
        format!("{} × {}", self.block, self.loads)
    }

    /// The title of a benchmark row measured at this shape: `read-only sum, 512 threads × 8 loads`.
    pub fn title(&self) -> String {
        format!("read-only sum, {} threads × {} loads", self.block, self.loads)
    }

    /// The shape a row's title names (the part after its last comma or colon); `None` for rows
    /// written before the kernel had shapes (one shape, 512 × 8, and an atomic result).
    pub fn from_title(title: &str) -> Option<ReadOnlyShape> {
        let rest = title.rsplit([',', ':']).next()?.trim();
        let (block, loads) = rest.split_once(" threads × ")?;
        let loads = loads.strip_suffix(" loads")?;
        Some(ReadOnlyShape { block: block.parse().ok()?, loads: loads.parse().ok()? })
    }
}
