//! Measurements on the GPU: the benchmark of every kernel, the row sums' benchmark, and the
//! accuracy and determinism experiments. Each writes records ([`crate::records`]); the book draws
//! them; the GPU time comes from [`crate::runtime::timing`].

pub mod accuracy;
pub mod bench;
pub mod read_only;
pub mod determinism;
pub mod dl_bench;
pub mod dl_demos;
pub mod dl_yardsticks;
pub mod ops_bench;
pub mod rows_bench;

use crate::records::bench::{Cache, Row, Status};
use crate::runtime::timing::GraphTiming;
use crate::element::Dtype;
use crate::records::Summary;

/// What a benchmark row names: the kernel, its chapter and title, and what it is.
pub struct Measured<'a> {
    pub kernel: &'a str,
    pub chapter: u32,
    pub title: &'a str,
    pub status: Status,
}

/// What one graph measurement read: an input of `n` values of `dtype`, at `block` threads,
/// `bytes` through DRAM per operation, `working_set_bytes` distinct bytes per graph.
pub struct Input {
    pub dtype: Dtype,
    pub n: usize,
    pub block: u32,
    pub cache: Cache,
    pub bytes: usize,
    pub working_set_bytes: usize,
}

/// A benchmark row from a graph measurement: its median, minimum and maximum time per
/// operation.
pub fn row(what: Measured<'_>, input: Input, timing: &GraphTiming) -> Row {
    let times = Summary::of(&timing.per_op_us).unwrap_or(Summary { median: 0.0, min: 0.0, max: 0.0, count: 0 });
    Row {
        kernel: what.kernel.to_string(),
        chapter: what.chapter,
        title: what.title.to_string(),
        status: what.status,
        dtype: input.dtype,
        n: input.n,
        block: input.block,
        cache: input.cache,
        median_us: times.median,
        min_us: times.min,
        max_us: times.max,
        bytes: input.bytes,
        working_set_bytes: input.working_set_bytes,
        repeats: times.count,
        method: timing.method(),
    }
}

/// One launch of a copy of `kernels/copy.cu` (`copy_u32`, the pace; `copy_tile_b<B>_p<P>`, its
/// tile shapes): `words` 4-byte words from `source` to `target`, on `grid` blocks of `block`
/// threads. The whole-array benchmark and the deep-learning yardsticks time them.
pub fn launch_copy<T: cudarc::driver::DeviceRepr>(gpu: &crate::gpu::Gpu, copy: &cudarc::driver::CudaFunction, source: &cudarc::driver::CudaView<'_, T>,
                                                  target: &mut cudarc::driver::CudaSlice<T>, words: u64, grid: u32, block: u32) -> crate::error::Result<()> {
    use crate::error::During;
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let mut launch = gpu.stream().launch_builder(copy);
    launch.arg(source).arg(target).arg(&words);
    // SAFETY: every copy of kernels/copy.cu is (const unsigned* in, unsigned* out, u64 n): the
    // callers' buffers hold `words` 4-byte words each and start on 16-byte boundaries (pool
    // offsets, fresh allocations); a tile copy's grid is CopyShape::grid of its words.
    unsafe { launch.launch(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }) }.during("launching the copy kernel").map(|_| ())
}
