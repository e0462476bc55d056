//! Sums a device buffer with one registered kernel, by kernel decomposition: repeated launches
//! over the partial sums, all on the GPU, with no host round trip between passes and no
//! allocation per pass.

use crate::element::Element;
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{GridRule, KernelSpec};
use crate::plan::{plan_passes, Pass};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};

/// A kernel bound to a GPU, a block size and an element type, with its scratch buffers.
pub struct Reducer<T: Element> {
    gpu: Gpu,
    kernel: &'static KernelSpec,
    block: u32,
    function: CudaFunction,
    resident_blocks: u32,
    /// Partial sums ping-pong between these two; they only grow, so a reducer that is used
    /// again allocates nothing.
    scratch: [Option<CudaSlice<T>>; 2],
}

impl<T: Element> Reducer<T> {
    /// Check the block size against the kernel and the device, then compile (once per
    /// process) and load the kernel's entry point.
    pub fn new(gpu: &Gpu, kernel_name: &str, block: u32) -> Result<Self> {
        let kernel = crate::kernels::find(kernel_name)?;
        let info = gpu.info();
        kernel.check_block(block, std::mem::size_of::<T>(), info.max_threads_per_block, info.max_shared_memory_per_block)?;
        let function = gpu.function(kernel, &kernel.entry_name::<T>(block))?;
        let resident_blocks = match kernel.grid {
            GridRule::OneBlockPerTile => u32::MAX,
            GridRule::ResidentBlocks => {
                let per_sm = function
                    .occupancy_max_active_blocks_per_multiprocessor(block, kernel.shared_bytes(block, std::mem::size_of::<T>()), None)
                    .during("asking the occupancy calculator")?;
                info.sm_count * per_sm.max(1)
            }
        };
        Ok(Reducer { gpu: gpu.clone(), kernel, block, function, resident_blocks, scratch: [None, None] })
    }

    pub fn kernel(&self) -> &'static KernelSpec {
        self.kernel
    }

    pub fn block(&self) -> u32 {
        self.block
    }

    /// The launches a sum of `n` values takes.
    pub fn plan(&self, n: usize) -> Result<Vec<Pass>> {
        plan_passes(self.kernel, n as u64, self.block, self.resident_blocks)
    }

    /// Sum a device buffer (or a view of one) and read the one value back.
    pub fn sum(&mut self, input: &CudaView<'_, T>) -> Result<T> {
        match self.enqueue(input)? {
            None => Ok(T::default()),
            Some(slot) => self.read_result(slot),
        }
    }

    /// Copy `host` to the GPU and sum it there.
    pub fn sum_host(&mut self, host: &[T]) -> Result<T> {
        if host.is_empty() {
            return Ok(T::default());
        }
        let device = self.gpu.upload(host)?;
        self.sum(&device.as_view())
    }

    /// Queue every pass of a sum and return which scratch buffer will hold the result in its
    /// element 0 (`None` for an empty input: the sum is zero and nothing is launched). Nothing
    /// waits for the GPU, so back-to-back calls can be timed.
    pub fn enqueue(&mut self, input: &CudaView<'_, T>) -> Result<Option<usize>> {
        let passes = self.plan(input.len())?;
        if passes.is_empty() {
            return Ok(None);
        }
        self.ensure_scratch(&passes)?;
        // Taken out for the launches so that they can borrow self; put back whatever happens.
        let mut scratch = std::mem::take(&mut self.scratch);
        let launched = self.launch_passes(&passes, input, &mut scratch);
        self.scratch = scratch;
        launched?;
        Ok(Some((passes.len() - 1) % 2))
    }

    fn launch_passes(&self, passes: &[Pass], input: &CudaView<'_, T>, scratch: &mut [Option<CudaSlice<T>>; 2]) -> Result<()> {
        let [first, second] = scratch;
        let a = first.as_mut().expect("ensure_scratch sized it");
        let mut b = second.as_mut();
        for i in 0..passes.len() {
            // Pass 0 reads the input into a; then odd passes read a into b, even passes b into a.
            let n = passes[i].n as usize;
            match (i, b.as_deref_mut()) {
                (0, _) => self.launch(i, passes, input, a)?,
                (i, Some(b)) if i % 2 == 1 => self.launch(i, passes, &a.slice(..n), b)?,
                (_, Some(b)) => self.launch(i, passes, &b.slice(..n), a)?,
                (_, None) => unreachable!("ensure_scratch allocates b whenever there is a second pass"),
            }
        }
        Ok(())
    }

    fn launch(&self, index: usize, passes: &[Pass], input: &CudaView<'_, T>, output: &mut CudaSlice<T>) -> Result<()> {
        let pass = passes[index];
        debug_assert_eq!(input.len() as u64, pass.n);
        debug_assert!(output.len() >= pass.grid as usize);
        let shared = self.kernel.shared_bytes(self.block, std::mem::size_of::<T>()) as u32;
        let config = LaunchConfig { grid_dim: (pass.grid, 1, 1), block_dim: (pass.block, 1, 1), shared_mem_bytes: shared };
        let n = pass.n;
        let stream = self.gpu.stream();
        let mut launch = stream.launch_builder(&self.function);
        launch.arg(input).arg(output).arg(&n);
        // SAFETY: every entry point takes (const T* in, T* out, u64 n); `input` holds n
        // elements and `output` at least `grid` (one per block); the dynamic shared memory is
        // the one element per thread that the kernel's tree indexes.
        unsafe { launch.launch(config) }.during(&format!(
            "launching {} (pass {} of {}, grid {}, block {})",
            self.kernel.entry_name::<T>(self.block), index + 1, passes.len(), pass.grid, pass.block
        ))?;
        Ok(())
    }

    /// Read element 0 of a scratch buffer that [`Reducer::enqueue`] named. Waits for the GPU,
    /// so a kernel fault surfaces here as an error.
    pub fn read_result(&self, slot: usize) -> Result<T> {
        let buffer = self.scratch[slot].as_ref().ok_or_else(|| Error::Cuda {
            during: "reading a result".into(),
            message: format!("scratch buffer {slot} was never written"),
        })?;
        let mut value = [T::default()];
        self.gpu.stream().memcpy_dtoh(&buffer.slice(0..1), &mut value).during("copying the sum back")?;
        self.gpu.synchronize()?;
        Ok(value[0])
    }

    /// Size the scratch buffers for an input of `n` values and fill them with [`Element::POISON`],
    /// so that a result nothing wrote cannot pass for a sum.
    pub fn poison_outputs(&mut self, n: usize) -> Result<()> {
        let passes = self.plan(n)?;
        self.ensure_scratch(&passes)?;
        for buffer in self.scratch.iter_mut().flatten() {
            self.gpu.fill(buffer, T::POISON)?;
        }
        Ok(())
    }

    fn ensure_scratch(&mut self, passes: &[Pass]) -> Result<()> {
        // Pass i writes passes[i].grid values into buffer i % 2.
        for (slot, need) in [0usize, 1].into_iter().map(|s| (s, passes.iter().skip(s).step_by(2).map(|p| p.grid as usize).max())) {
            let Some(need) = need else { continue };
            if self.scratch[slot].as_ref().is_none_or(|b| b.len() < need) {
                self.scratch[slot] = None; // free first, so that growth never holds both
                self.scratch[slot] = Some(self.gpu.alloc::<T>(need)?);
            }
        }
        Ok(())
    }
}
