//! Launching a reader's kernel: the checker, not the kernel, chooses the grid (as the book's
//! host code does for its own kernels), by the exercise's [`Layout`]. Any block size is allowed
//! here — exercise 6 runs 300 threads — so this does not go through [`crate::Reducer`], whose
//! kernels require a power of two.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::plan::{pass_grids, GridShape};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};

/// How the grid is sized and how many launches a reduction takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One block per tile of `block × per_thread` values, launched again over the blocks'
    /// results until one is left (kernel decomposition, kernels 1–6).
    Tiles { per_thread: u32 },
    /// As many blocks as the GPU holds at once (at most one per tile of `block × per_thread`),
    /// each looping over the input, then one block over their results (kernels 7–9).
    Resident { per_thread: u32 },
    /// One launch of resident blocks, `(in, out, n, partials, ticket)`; `out[0]` is the result
    /// (kernel 10).
    LastBlock,
}

/// The dynamic shared memory a launch gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedRule {
    PerThread,
    /// One padding word per 32.
    PerThreadPadded,
    /// None: the kernel declares its own.
    Static,
}

/// What the kernel computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Sum,
    Max,
    /// An operator of chapter 16, written into the book's machinery (kernels/operators.cuh): the
    /// reader's file instantiates the operator's entry points (`argmax_whole_f32`, ...), which
    /// [`crate::kernels::ops::OpReducer`] launches, checked as tests/ops.rs checks the book's.
    Operator { op: crate::kernels::ops::Op, dtypes: &'static [crate::element::Dtype] },
}

impl SharedRule {
    pub fn bytes(self, block: u32, element_bytes: usize) -> usize {
        match self {
            SharedRule::PerThread => block as usize * element_bytes,
            SharedRule::PerThreadPadded => (block as usize + block as usize / 32) * element_bytes,
            SharedRule::Static => 0,
        }
    }
}

/// The grids of the launches that reduce `n` values (pure, tested without a GPU): the book's
/// own pass arithmetic ([`crate::plan::pass_grids`]) for the exercise's layout.
pub fn grids(layout: Layout, n: u64, block: u32, resident_blocks: u32) -> Vec<u32> {
    let shape = match layout {
        Layout::Tiles { per_thread } => GridShape { tile: block as u64 * per_thread as u64, cap: None, later_one_block: false, single_pass: false },
        Layout::Resident { per_thread } => {
            GridShape { tile: block as u64 * per_thread as u64, cap: Some(resident_blocks), later_one_block: true, single_pass: false }
        }
        Layout::LastBlock => GridShape { tile: block as u64, cap: Some(resident_blocks), later_one_block: false, single_pass: true },
    };
    pass_grids(n, shape).into_iter().map(|g| g as u32).collect()
}

/// A reader's kernel loaded on the GPU, with its scratch buffers.
pub struct Launcher<T: Element> {
    gpu: Gpu,
    function: CudaFunction,
    layout: Layout,
    shared: SharedRule,
    block: u32,
    resident_blocks: u32,
    scratch: [CudaSlice<T>; 2],
    ticket: CudaSlice<u32>,
}

impl<T: Element> Launcher<T> {
    pub fn new(gpu: &Gpu, function: CudaFunction, layout: Layout, shared: SharedRule, block: u32) -> Result<Self> {
        let shared_bytes = shared.bytes(block, std::mem::size_of::<T>());
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(block, shared_bytes, None)
            .map_err(|source| Error::Cuda { during: "asking the occupancy calculator".into(), source })?;
        if per_sm == 0 {
            return Err(Error::InvalidBlockSize { kernel: "the exercise".into(), block, reason: "not one block of this size fits on an SM".into() });
        }
        let resident_blocks = gpu.info().sm_count * per_sm;
        // The largest first-pass grid any layout makes for the inputs the checker uses is at
        // most n / block; the scratch grows on demand in `ensure`.
        let scratch = [gpu.alloc::<T>(1)?, gpu.alloc::<T>(1)?];
        let ticket = gpu.stream().alloc_zeros::<u32>(1).map_err(|source| Error::Cuda { during: "allocating the ticket".into(), source })?;
        Ok(Launcher { gpu: gpu.clone(), function, layout, shared, block, resident_blocks, scratch, ticket })
    }

    pub fn grids(&self, n: usize) -> Vec<u32> {
        grids(self.layout, n as u64, self.block, self.resident_blocks)
    }

    /// Grow the scratch buffers for `n` values and poison them, so that a result nothing wrote
    /// cannot pass.
    pub fn prepare(&mut self, n: usize) -> Result<()> {
        let grids = self.grids(n);
        let need = grids.first().copied().unwrap_or(1).max(1) as usize;
        for buffer in &mut self.scratch {
            if buffer.len() < need {
                *buffer = self.gpu.alloc::<T>(need)?;
            }
            self.gpu.fill(buffer, T::POISON)?;
        }
        Ok(())
    }

    /// Queue every launch of a reduction of `input`; the result is element 0 of the returned
    /// scratch buffer. Nothing waits for the GPU.
    pub fn enqueue(&mut self, input: &CudaView<'_, T>) -> Result<usize> {
        let grids = self.grids(input.len());
        let shared = self.shared.bytes(self.block, std::mem::size_of::<T>()) as u32;
        let stream = self.gpu.stream().clone();
        let [a, b] = &mut self.scratch;
        let mut n = input.len() as u64;
        for (pass, &grid) in grids.iter().enumerate() {
            let config = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (self.block, 1, 1), shared_mem_bytes: shared };
            let mut launch = stream.launch_builder(&self.function);
            // Pass 0 reads the input into a (and, for the last-block layout, its partials go to
            // b); then odd passes read a into b, even passes b into a.
            let (a_view, b_view);
            match pass {
                0 => {
                    launch.arg(input).arg(&mut *a).arg(&n);
                    if self.layout == Layout::LastBlock {
                        launch.arg(&mut *b).arg(&mut self.ticket);
                    }
                }
                p if p % 2 == 1 => {
                    a_view = a.slice(..n as usize);
                    launch.arg(&a_view).arg(&mut *b).arg(&n);
                }
                _ => {
                    b_view = b.slice(..n as usize);
                    launch.arg(&b_view).arg(&mut *a).arg(&n);
                }
            }
            // SAFETY: the entry's signature is the exercise's (it was loaded by name from a
            // file that keeps the stub's signature): `in` holds n values, `out` at least
            // `grid`, `partials` at least `grid` (both scratch buffers are sized to the first
            // grid), the ticket is one counter; the dynamic shared memory is what the
            // exercise's preconditions say. A kernel that breaks its side faults in the child
            // process that runs it, never in the reader's.
            unsafe { launch.launch(config) }.map_err(|source| Error::Cuda {
                during: format!("launching pass {} of {} (grid {grid}, block {})", pass + 1, grids.len(), self.block),
                source,
            })?;
            n = grid as u64;
        }
        Ok(if self.layout == Layout::LastBlock { 0 } else { (grids.len().max(1) - 1) % 2 })
    }

    /// Reduce `input` and read the result back; a kernel fault surfaces here.
    pub fn run(&mut self, input: &CudaView<'_, T>) -> Result<T> {
        let slot = self.enqueue(input)?;
        let mut value = [T::default()];
        self.gpu.stream().memcpy_dtoh(&self.scratch[slot].slice(0..1), &mut value)
            .map_err(|source| Error::Cuda { during: "copying the result back".into(), source })?;
        self.gpu.synchronize()?;
        Ok(value[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_decompose_until_one_block_is_left() {
        assert_eq!(grids(Layout::Tiles { per_thread: 1 }, 1, 256, 1000), vec![1]);
        assert_eq!(grids(Layout::Tiles { per_thread: 1 }, 257, 256, 1000), vec![2, 1]);
        assert_eq!(grids(Layout::Tiles { per_thread: 2 }, 1 << 20, 256, 1000), vec![2048, 4, 1]);
        assert_eq!(grids(Layout::Tiles { per_thread: 1 }, 90_001, 300, 1000), vec![301, 2, 1]);
    }

    #[test]
    fn resident_grids_are_capped_then_finished_by_one_block() {
        assert_eq!(grids(Layout::Resident { per_thread: 2 }, 1 << 24, 256, 1056), vec![1056, 1]);
        assert_eq!(grids(Layout::Resident { per_thread: 2 }, 100, 256, 1056), vec![1]);
        assert_eq!(grids(Layout::LastBlock, 1 << 24, 256, 1056), vec![1056]);
        assert_eq!(grids(Layout::LastBlock, 0, 256, 1056), Vec::<u32>::new());
    }

    #[test]
    fn padding_adds_one_word_per_32() {
        assert_eq!(SharedRule::PerThreadPadded.bytes(256, 4), 264 * 4);
        assert_eq!(SharedRule::PerThread.bytes(300, 4), 1200);
        assert_eq!(SharedRule::Static.bytes(256, 4), 0);
    }
}
