//! Sums a device buffer with one registered kernel. Multi-pass kernels reduce by kernel
//! decomposition: repeated launches over the partial sums, all on the GPU, with no host round
//! trip between passes and no allocation per pass. Single-pass kernels finish in one launch.

use crate::element::Element;
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{GridRule, KernelSpec, Shape};
use crate::plan::{addition_depth, plan_passes_for, Pass};
use cudarc::driver::{sys, CudaFunction, CudaSlice, CudaView, DevicePtr, DevicePtrMut, LaunchArgs, LaunchConfig, PinnedHostSlice, PushKernelArg};

/// The accumulator type of input type `T`.
type Acc<T> = <T as Element>::Acc;

/// A kernel bound to a GPU, a block size and an input type, with its scratch buffers.
pub struct Reducer<T: Element> {
    gpu: Gpu,
    kernel: &'static KernelSpec,
    block: u32,
    /// The entry point for the input type (`reduce9_f16`)...
    first: CudaFunction,
    /// ...and for the accumulator type, which later passes read (`reduce9_f32`).
    rest: CudaFunction,
    /// A two-launch chunked kernel's second launch (`reduce15_neumaier_two_pass_fold`).
    fold: Option<CudaFunction>,
    /// Later passes go out as programmatic dependent launches ([`KernelSpec::dependent_launch`]
    /// on a GPU that has them, sm_90 on).
    dependent: bool,
    resident_blocks: u32,
    /// Multi-pass: partial sums ping-pong between the two. Single-pass: `[0]` is the result,
    /// `[1]` the blocks' partial sums. They only grow, so a reducer used again allocates nothing.
    scratch: [Option<CudaSlice<Acc<T>>>; 2],
    /// The last-block kernel's ticket counter; it starts at zero and the kernel leaves it so.
    ticket: Option<CudaSlice<u32>>,
    /// Where [`Reducer::sum`] has the last launch write the result: page-locked host memory
    /// that the GPU writes through its mapping, so that no copy follows the sum.
    mapped: Option<MappedResult<Acc<T>>>,
}

/// One value of page-locked host memory and the address the GPU writes it through.
struct MappedResult<A> {
    host: PinnedHostSlice<A>,
    device: sys::CUdeviceptr,
}

impl<T: Element> Reducer<T> {
    /// Check the block size and the element type against the kernel and the device, then
    /// compile (once per process) and load the kernel's entry points.
    pub fn new(gpu: &Gpu, kernel_name: &str, block: u32) -> Result<Self> {
        Reducer::with_spec(gpu, crate::kernels::find(kernel_name)?, block)
    }

    /// The entry point's reducer for inputs of `n` values: the kernel, block and grid that the
    /// rule of [`crate::kernels::dispatch`] picks for this size, element type and GPU. Used for
    /// another length it still sums right, with the launch chosen for `n`.
    pub fn auto(gpu: &Gpu, n: usize) -> Result<Self> {
        let choice = crate::kernels::dispatch::choose_here(n, T::DTYPE, gpu.info());
        let mut reducer = Reducer::with_spec(gpu, choice.kernel, choice.block)?;
        if choice.one_block {
            // A resident-grid kernel loops over its input: one block reads it all (the
            // dispatch tests check that one-block bands name such kernels).
            reducer.resident_blocks = 1;
        }
        Ok(reducer)
    }

    /// As [`Reducer::new`], for a kernel that need not be in the registry (the planted bugs of
    /// [`crate::mutants`] are registered kernels with one line changed).
    pub fn with_spec(gpu: &Gpu, kernel: &'static KernelSpec, block: u32) -> Result<Self> {
        if !kernel.supports(T::DTYPE) {
            return Err(kernel.unsupported(T::DTYPE));
        }
        let info = gpu.info();
        kernel.available_on(info.architecture())?;
        let acc_bytes = std::mem::size_of::<Acc<T>>();
        kernel.check_block(block, acc_bytes, info.max_threads_per_block, info.max_shared_memory_per_block)?;
        let first = gpu.function(kernel, &kernel.entry_name::<T>(block))?;
        let rest = gpu.function(kernel, &kernel.entry_name::<Acc<T>>(block))?;
        let fold = kernel.fold_entry_name().map(|name| gpu.function(kernel, &name)).transpose()?;
        let resident_blocks = match kernel.grid {
            GridRule::OneBlockPerTile | GridRule::PackTiles => u32::MAX,
            GridRule::ResidentBlocks => {
                let per_sm = first
                    .occupancy_max_active_blocks_per_multiprocessor(block, kernel.shared_bytes(block, acc_bytes), None)
                    .during("asking the occupancy calculator")?;
                if per_sm == 0 {
                    return Err(Error::InvalidBlockSize {
                        kernel: kernel.name.to_string(),
                        block,
                        reason: "not one block of this size fits on an SM (registers or shared memory)".into(),
                    });
                }
                info.sm_count * per_sm
            }
        };
        let dependent = kernel.dependent_launch && info.compute_capability >= (9, 0);
        Ok(Reducer { gpu: gpu.clone(), kernel, block, first, rest, fold, dependent, resident_blocks, scratch: [None, None], ticket: None, mapped: None })
    }

    /// Launch at most `blocks` blocks, as a GPU with fewer SMs would: only kernels that loop
    /// over their chunks ([`Shape::Chunked`]) can; the others are refused.
    pub fn cap_grid(&mut self, blocks: u32) -> Result<()> {
        if !self.kernel.shape.is_chunked() || blocks == 0 {
            return Err(Error::Config {
                setting: format!("a grid cap of {blocks} blocks for {}", self.kernel.name),
                reason: "only the chunked kernels take one, and it must be at least one block".into(),
            });
        }
        self.resident_blocks = blocks;
        Ok(())
    }

    pub fn kernel(&self) -> &'static KernelSpec {
        self.kernel
    }

    pub fn block(&self) -> u32 {
        self.block
    }

    /// The launches a sum of `n` values takes.
    pub fn plan(&self, n: usize) -> Result<Vec<Pass>> {
        plan_passes_for(self.kernel, n as u64, self.block, self.resident_blocks, std::mem::size_of::<T>())
    }

    /// The most roundings any one value goes through in this reducer's sum of `n` values
    /// ([`crate::plan::addition_depth`]): what the error bound of a float sum is computed from.
    pub fn addition_depth(&self, n: usize) -> Result<u64> {
        Ok(addition_depth(self.kernel, &self.plan(n)?))
    }

    /// Sum a device buffer (or a view of one) and read the one value back. The last launch
    /// writes the result straight into page-locked host memory, so a caller waits for the
    /// kernels alone, not for a copy after them (an atomic kernel, which adds into its result,
    /// gets a copy: atomics on host memory are not for every bus).
    pub fn sum(&mut self, input: &CudaView<'_, T>) -> Result<Acc<T>> {
        if self.kernel.shape == Shape::AtomicAdd {
            return match self.enqueue(input)? {
                None => Ok(Acc::<T>::default()),
                Some(slot) => self.read_result(slot),
            };
        }
        let result = self.ensure_mapped()?;
        let host = result.host.as_mut_ptr().during("reading the mapped result")?;
        let device = result.device;
        // SAFETY: one value of page-locked memory that this reducer owns; nothing on the GPU
        // writes it now (every earlier sum was waited for).
        unsafe { host.write_volatile(<Acc<T> as Element>::POISON) };
        if self.enqueue_to(input, Some(device))?.is_none() {
            return Ok(Acc::<T>::default());
        }
        self.gpu.synchronize()?;
        // SAFETY: the kernel that wrote it has finished (the stream was waited for).
        Ok(unsafe { host.read_volatile() })
    }

    fn ensure_mapped(&mut self) -> Result<&mut MappedResult<Acc<T>>> {
        if self.mapped.is_none() {
            // SAFETY: the value is written (poisoned) before every read.
            let mut host = unsafe { self.gpu.context().alloc_pinned_with_flags::<Acc<T>>(1, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
                .during("allocating page-locked memory for the result")?;
            let mut device: sys::CUdeviceptr = 0;
            let ptr = host.as_mut_ptr().during("mapping the result")?;
            self.gpu.context().bind_to_thread().during("making the GPU's context current")?;
            // SAFETY: `ptr` is page-locked memory allocated with DEVICEMAP in this context.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, ptr.cast(), 0) }
                .result()
                .during("mapping the result into the GPU's address space")?;
            self.mapped = Some(MappedResult { host, device });
        }
        Ok(self.mapped.as_mut().expect("made above"))
    }

    /// The grid cap this reducer plans with (SMs × resident blocks, or 1 for the entry point's
    /// one-block path, `u32::MAX` for kernels with one block per tile).
    pub fn resident_blocks(&self) -> u32 {
        self.resident_blocks
    }

    /// Copy `host` to the GPU and sum it there.
    pub fn sum_host(&mut self, host: &[T]) -> Result<Acc<T>> {
        if host.is_empty() {
            return Ok(Acc::<T>::default());
        }
        let device = self.gpu.upload(host)?;
        self.sum(&device.as_view())
    }

    /// Queue every launch of a sum and return which scratch buffer will hold the result in its
    /// element 0 (`None` for an empty input: the sum is zero and nothing is launched). Nothing
    /// waits for the GPU, so back-to-back calls can be timed, or captured into a graph.
    pub fn enqueue(&mut self, input: &CudaView<'_, T>) -> Result<Option<usize>> {
        self.enqueue_to(input, None)
    }

    /// [`Reducer::enqueue`], with the last launch writing the result to `result` instead of
    /// scratch buffer 0 or 1 where one is given (a device address with room for one value).
    fn enqueue_to(&mut self, input: &CudaView<'_, T>, result: Option<sys::CUdeviceptr>) -> Result<Option<usize>> {
        let passes = self.plan(input.len())?;
        if passes.is_empty() {
            return Ok(None);
        }
        self.ensure_scratch(&passes)?;
        // Taken out for the launches so that they can borrow self; put back whatever happens.
        let mut scratch = std::mem::take(&mut self.scratch);
        let launched = match self.kernel.shape {
            Shape::MultiPass => self.launch_passes(&passes, input, &mut scratch, result),
            _ => self.launch_single_pass(passes[0], input, &mut scratch, result),
        };
        self.scratch = scratch;
        launched?;
        Ok(Some(match self.kernel.shape {
            Shape::MultiPass => (passes.len() - 1) % 2,
            _ => 0,
        }))
    }

    // ANCHOR: passes
    fn launch_passes(&self, passes: &[Pass], input: &CudaView<'_, T>, scratch: &mut [Option<CudaSlice<Acc<T>>>; 2], result: Option<sys::CUdeviceptr>) -> Result<()> {
        let [first, second] = scratch;
        let a = first.as_mut().expect("ensure_scratch sized it");
        let mut b = second.as_mut();
        let stream = self.gpu.stream();
        for (i, pass) in passes.iter().enumerate() {
            // Pass 0 reads the input into a; then odd passes read a into b, even passes b into a.
            // The last pass writes `result` instead, where there is one.
            let n = pass.n as usize;
            let result = result.as_ref().filter(|_| i + 1 == passes.len());
            match (i, b.as_deref_mut()) {
                (0, _) => {
                    let mut launch = stream.launch_builder(&self.first);
                    launch.arg(input);
                    output(&mut launch, result, &mut *a);
                    launch.arg(&pass.n);
                    self.fire(launch, i, passes)?;
                }
                (i, Some(b)) => {
                    let (source, target) = if i % 2 == 1 { (&*a, b) } else { (&*b, &mut *a) };
                    let source = source.slice(..n);
                    if self.dependent {
                        self.fire_dependent(&source, result, target, i, passes)?;
                    } else {
                        let mut launch = stream.launch_builder(&self.rest);
                        launch.arg(&source);
                        output(&mut launch, result, target);
                        launch.arg(&pass.n);
                        self.fire(launch, i, passes)?;
                    }
                }
                (_, None) => unreachable!("ensure_scratch allocates b whenever there is a second pass"),
            }
        }
        Ok(())
    }
    // ANCHOR_END: passes

    // ANCHOR: dependent
    /// A later pass of a kernel that waits for the pass before it (`griddepcontrol.wait`, sm_90
    /// on), queued as a programmatic dependent launch: the GPU may start it once every block of
    /// the pass before has started, so that it is resident, waiting, when that pass ends, instead
    /// of being launched after. `(source, out, n)`, out being `result` where there is one.
    fn fire_dependent(&self, source: &CudaView<'_, Acc<T>>, result: Option<&sys::CUdeviceptr>, target: &mut CudaSlice<Acc<T>>, index: usize, passes: &[Pass]) -> Result<()> {
        let pass = passes[index];
        let stream = self.gpu.stream();
        let (mut source_ptr, _source_guard) = source.device_ptr(stream);
        let (target_ptr, _target_guard) = target.device_ptr_mut(stream);
        let mut out_ptr = result.copied().unwrap_or(target_ptr);
        let mut n = pass.n;
        let mut params: [*mut std::ffi::c_void; 3] = [
            (&mut source_ptr as *mut sys::CUdeviceptr).cast(),
            (&mut out_ptr as *mut sys::CUdeviceptr).cast(),
            (&mut n as *mut u64).cast(),
        ];
        // SAFETY: a plain-data union, all zeros but the one field the attribute's id names.
        let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        value.programmaticStreamSerializationAllowed = 1;
        let mut attribute = sys::CUlaunchAttribute { id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, pad: [0; 4], value };
        let config = sys::CUlaunchConfig {
            gridDimX: pass.grid, gridDimY: 1, gridDimZ: 1,
            blockDimX: pass.block, blockDimY: 1, blockDimZ: 1,
            sharedMemBytes: self.kernel.shared_bytes(self.block, std::mem::size_of::<Acc<T>>()) as u32,
            hStream: stream.cu_stream(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        // cudarc's own launches make the context current first; this one goes past them.
        self.gpu.bind_to_thread()?;
        // SAFETY: the entry takes (const Acc* in, Acc* out, u64 n), which `params` points at
        // (locals that outlive the call; the driver copies them at the launch): `source` holds n
        // values, `out` room for `grid` (or is the one-value result). Every launch is on the one
        // stream, and the kernel waits in griddepcontrol.wait before it reads, so starting early
        // cannot read a partial before the pass before has written it.
        unsafe { sys::cuLaunchKernelEx(&config, self.rest.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
            .map_err(|source| Error::Cuda {
                during: format!(
                    "launching {} as a dependent launch (pass {} of {}, grid {}, block {})",
                    self.kernel.entry_name::<Acc<T>>(self.block), index + 1, passes.len(), pass.grid, pass.block
                ),
                source,
            })
    }
    // ANCHOR_END: dependent

    fn launch_single_pass(&mut self, pass: Pass, input: &CudaView<'_, T>, scratch: &mut [Option<CudaSlice<Acc<T>>>; 2], result_to: Option<sys::CUdeviceptr>) -> Result<()> {
        let [result, partials] = scratch;
        let result = result.as_mut().expect("ensure_scratch sized it");
        let passes = [pass];
        let stream = self.gpu.stream().clone();
        if self.kernel.shape == Shape::ChunkedTwoPass {
            let partials = partials.as_mut().expect("ensure_scratch sized it");
            return self.launch_chunks_then_fold(pass, input, result, partials, result_to);
        }
        if self.kernel.shape == Shape::AtomicAdd {
            // The blocks add into the result, so it must start at zero.
            stream.memset_zeros(result).during("zeroing the result")?;
        }
        let mut launch = stream.launch_builder(&self.first);
        launch.arg(input);
        // Only the block that finishes the sum writes `out` (an atomic kernel's blocks add into it).
        output(&mut launch, result_to.as_ref().filter(|_| self.kernel.shape != Shape::AtomicAdd), &mut *result);
        launch.arg(&pass.n);
        match self.kernel.shape {
            Shape::AtomicAdd => self.fire(launch, 0, &passes),
            Shape::LastBlock | Shape::Chunked => {
                let partials = partials.as_mut().expect("ensure_scratch sized it");
                // Taken out so that the launch can borrow it while self is borrowed; put back.
                let mut ticket = self.ticket.take().expect("ensure_scratch made it");
                launch.arg(&mut *partials).arg(&mut ticket);
                let fired = self.fire(launch, 0, &passes);
                self.ticket = Some(ticket);
                fired
            }
            Shape::GridSync => {
                let partials = partials.as_mut().expect("ensure_scratch sized it");
                launch.arg(&mut *partials);
                self.fire(launch, 0, &passes)
            }
            Shape::ChunkedTwoPass => unreachable!("launched above, before this launch was built"),
            Shape::MultiPass => unreachable!("multi-pass kernels go through launch_passes"),
        }
    }

    /// A two-launch chunked sum: the chunks' sums `(in, partials, n)`, then one block of the
    /// kernel's `_fold` entry `(partials, out, chunks)` folds them into the result.
    fn launch_chunks_then_fold(&self, pass: Pass, input: &CudaView<'_, T>, result: &mut CudaSlice<Acc<T>>, partials: &mut CudaSlice<Acc<T>>, result_to: Option<sys::CUdeviceptr>) -> Result<()> {
        let stream = self.gpu.stream();
        let mut launch = stream.launch_builder(&self.first);
        launch.arg(input).arg(&mut *partials).arg(&pass.n);
        self.fire(launch, 0, &[pass])?;
        let fold = self.fold.as_ref().expect("loaded for every two-launch chunked kernel");
        let chunks = pass.n.div_ceil(crate::kernels::CHUNK_VALUES);
        let mut launch = stream.launch_builder(fold);
        launch.arg(&*partials);
        output(&mut launch, result_to.as_ref(), result);
        launch.arg(&chunks);
        // One virtual lane a thread where the GPU allows 1024 threads: no thread folds two
        // lanes one after the other (the order is the lanes', whatever the block).
        let block = crate::kernels::CHUNK_LANES.min(self.gpu.info().max_threads_per_block);
        let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: (partials, out, chunks): partials holds the `chunks` 8-byte sums that the launch
        // before wrote on this stream, out room for one value; one block, as the fold needs.
        unsafe { launch.launch(config) }.map_err(|source| Error::Cuda {
            during: format!("launching {}_fold (pass 2 of 2, grid 1, block {block})", self.kernel.name),
            source,
        })?;
        Ok(())
    }

    /// Launch pass `index` of `passes`, whose arguments `launch` holds.
    fn fire(&self, mut launch: LaunchArgs<'_>, index: usize, passes: &[Pass]) -> Result<()> {
        let pass = passes[index];
        let shared = self.kernel.shared_bytes(self.block, std::mem::size_of::<Acc<T>>()) as u32;
        let config = LaunchConfig { grid_dim: (pass.grid, 1, 1), block_dim: (pass.block, 1, 1), shared_mem_bytes: shared };
        let during = || format!(
            "launching {} (pass {} of {}, grid {}, block {})",
            self.kernel.entry_name::<T>(self.block), index + 1, passes.len(), pass.grid, pass.block
        );
        // SAFETY: the arguments match the entry's signature for this kernel's shape (see
        // kernels::Shape): the input holds n elements, the output at least `grid` (multi-pass)
        // or one (single-pass), partials `grid`, and the ticket one counter at zero; dynamic
        // shared memory is what Shared says the kernel indexes. A cooperative launch is
        // refused by the driver if the grid cannot be resident at once.
        unsafe {
            if self.kernel.shape == Shape::GridSync {
                launch.launch_cooperative(config)
            } else {
                launch.launch(config)
            }
        }
        .map_err(|source| Error::Cuda { during: during(), source })?;
        Ok(())
    }

    /// Read element 0 of a scratch buffer that [`Reducer::enqueue`] named. Waits for the GPU,
    /// so a kernel fault surfaces here as an error.
    pub fn read_result(&self, slot: usize) -> Result<Acc<T>> {
        let buffer = self.scratch[slot].as_ref().ok_or_else(|| Error::Config {
            setting: format!("reading the result from scratch buffer {slot}"),
            reason: "no sum was enqueued into it (call Reducer::enqueue first)".into(),
        })?;
        let mut value = [Acc::<T>::default()];
        self.gpu.stream().memcpy_dtoh(&buffer.slice(0..1), &mut value).during("copying the sum back")?;
        self.gpu.synchronize()?;
        Ok(value[0])
    }

    /// The device addresses of the scratch buffers and the ticket counter this reducer holds
    /// now, in that order (none before its first sum): the `--scratch-pads` experiment of
    /// `reduction bench` writes them beside each time.
    pub fn scratch_addresses(&self) -> Vec<u64> {
        let stream = self.gpu.stream();
        let mut at: Vec<u64> = self.scratch.iter().flatten().map(|b| b.device_ptr(stream).0).collect();
        at.extend(self.ticket.iter().map(|t| t.device_ptr(stream).0));
        at
    }

    /// Size the scratch buffers for an input of `n` values and fill them with
    /// [`Element::POISON`], so that a result nothing wrote cannot pass for a sum.
    pub fn poison_outputs(&mut self, n: usize) -> Result<()> {
        let passes = self.plan(n)?;
        self.ensure_scratch(&passes)?;
        for buffer in self.scratch.iter_mut().flatten() {
            self.gpu.fill(buffer, <Acc<T> as Element>::POISON)?;
        }
        Ok(())
    }

    /// How many values each scratch buffer must hold for these passes.
    fn scratch_sizes(&self, passes: &[Pass]) -> [usize; 2] {
        let most = |slot: usize| passes.iter().skip(slot).step_by(2).map(|p| p.grid as usize).max().unwrap_or(0);
        match self.kernel.shape {
            // Pass i writes passes[i].grid values into buffer i % 2.
            Shape::MultiPass => [most(0), most(1)],
            Shape::AtomicAdd => [1, 0],
            Shape::LastBlock | Shape::GridSync => [1, most(0)],
            // 8 bytes per chunk, in accumulator-sized words.
            // (An empty input has no pass and needs none: a shard of the multi-GPU sum can be.)
            Shape::Chunked | Shape::ChunkedTwoPass => [1, passes.first().map_or(0, |p| (p.n.div_ceil(crate::kernels::CHUNK_VALUES) as usize * 8).div_ceil(std::mem::size_of::<Acc<T>>()))],
        }
    }

    fn ensure_scratch(&mut self, passes: &[Pass]) -> Result<()> {
        for (slot, need) in self.scratch_sizes(passes).into_iter().enumerate() {
            if need > 0 && self.scratch[slot].as_ref().is_none_or(|b| b.len() < need) {
                self.scratch[slot] = None; // free first, so that growth never holds both
                self.scratch[slot] = Some(self.gpu.alloc::<Acc<T>>(need)?);
            }
        }
        if matches!(self.kernel.shape, Shape::LastBlock | Shape::Chunked) && self.ticket.is_none() {
            self.ticket = Some(self.gpu.stream().alloc_zeros::<u32>(1).during("allocating the ticket counter")?);
        }

        Ok(())
    }
}

impl Reducer<f32> {
    /// The 8-byte chunk sums a chunked kernel (kernel 15) left in its `partials` after a sum of
    /// `n` values, in chunk order, as the kernel packs them (`pack()` in
    /// `kernels/15_reproducible.cu`; [`crate::check::reproducible::Packed`] on the host). Waits
    /// for the GPU. Refused for any other kernel shape, and before a sum of `n` values.
    pub fn chunk_partials(&self, n: usize) -> Result<Vec<u64>> {
        let refuse = |reason: &str| Error::Config { setting: format!("reading the chunk sums of {} for n = {n}", self.kernel.name), reason: reason.into() };
        if !self.kernel.shape.is_chunked() {
            return Err(refuse("only the chunked kernels (kernel 15) leave one sum per chunk"));
        }
        let chunks = n.div_ceil(crate::kernels::CHUNK_VALUES as usize);
        if chunks == 0 {
            return Ok(Vec::new());
        }
        let partials = self.scratch[1].as_ref().filter(|p| p.len() >= 2 * chunks).ok_or_else(|| refuse("no sum of that many values was enqueued"))?;
        let words = self.gpu.stream().clone_dtoh(&partials.slice(..2 * chunks)).during("copying the chunk sums back")?;
        // Each 8-byte slot, little-endian: the low word first.
        Ok(words.chunks_exact(2).map(|w| (w[1].to_bits() as u64) << 32 | w[0].to_bits() as u64).collect())
    }
}

/// A launch's output argument: the device address `result` where there is one (the last launch of
/// a sum read on the host), else the scratch buffer.
fn output<'a, A: cudarc::driver::DeviceRepr>(launch: &mut LaunchArgs<'a>, result: Option<&'a sys::CUdeviceptr>, buffer: &'a mut CudaSlice<A>) {
    match result {
        Some(address) => launch.arg(address),
        None => launch.arg(buffer),
    };
}

/// One sum through the entry point: the launch [`crate::kernels::dispatch`] picks for the view's
/// length and element type, then the result read back. A caller who sums often keeps a
/// [`Reducer::auto`] instead, which compiles and allocates once.
pub fn sum<T: Element>(gpu: &Gpu, input: &CudaView<'_, T>) -> Result<Acc<T>> {
    Reducer::<T>::auto(gpu, input.len())?.sum(input)
}
