//! The GPU in hand: opening it, describing it, compiling kernels for it once, and allocating on it.

use crate::arch::Arch;
use crate::element::Element;
use crate::error::{During, Error, Result};
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// What the GPU is, read from the driver when it is opened.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub l2_cache_bytes: usize,
    pub memory_bus_width_bits: u32,
    /// The memory clock the driver reports, in kHz (0 where the driver does not report it).
    pub memory_clock_khz: u32,
    pub total_memory_bytes: usize,
    pub max_threads_per_block: u32,
    pub max_shared_memory_per_block: usize,
    /// The SM clock the driver reports as its maximum, in kHz.
    pub sm_clock_khz: u32,
    /// The driver's CUDA version, e.g. (13, 0).
    pub driver_cuda_version: (i32, i32),
}

impl DeviceInfo {
    /// The architecture NVRTC compiles for: `sm_90` on an H100 or H200.
    pub fn arch(&self) -> String {
        self.architecture().sm()
    }

    /// The architecture, to compare with what a kernel needs ([`crate::arch::runs_on`]).
    pub fn architecture(&self) -> Arch {
        Arch::from_compute_capability(self.compute_capability)
    }

    /// `9.0`: the compute capability as results files write it.
    pub fn compute_capability_text(&self) -> String {
        format!("{}.{}", self.compute_capability.0, self.compute_capability.1)
    }

    /// `13.0`: the driver's CUDA version as results files write it.
    pub fn driver_cuda_text(&self) -> String {
        format!("{}.{}", self.driver_cuda_version.0, self.driver_cuda_version.1)
    }

    /// Theoretical DRAM bandwidth in bytes per second: two transfers per memory clock (double
    /// data rate) times the bus width. `None` when the driver reports no clock or bus width.
    pub fn peak_bandwidth_bytes_per_s(&self) -> Option<f64> {
        peak_bandwidth(self.memory_clock_khz, self.memory_bus_width_bits)
    }
}

/// `2 × clock × bus width / 8`: the DDR formula every vendor datasheet uses.
pub fn peak_bandwidth(memory_clock_khz: u32, bus_width_bits: u32) -> Option<f64> {
    if memory_clock_khz == 0 || bus_width_bits == 0 {
        return None;
    }
    Some(2.0 * memory_clock_khz as f64 * 1e3 * bus_width_bits as f64 / 8.0)
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (cc_major, cc_minor) = self.compute_capability;
        writeln!(f, "GPU {}: {} (compute capability {cc_major}.{cc_minor}, {})", self.ordinal, self.name, self.arch())?;
        writeln!(f, "  {} SMs, {} of L2, {} of device memory", self.sm_count,
            crate::error::human_bytes(self.l2_cache_bytes), crate::error::human_bytes(self.total_memory_bytes))?;
        write!(f, "  memory: {}-bit bus at {} MHz", self.memory_bus_width_bits, self.memory_clock_khz / 1000)?;
        match self.peak_bandwidth_bytes_per_s() {
            Some(bw) => writeln!(f, " -> theoretical peak {:.0} GB/s", bw / 1e9)?,
            None => writeln!(f, " -> theoretical peak unknown (the driver reports no clock)")?,
        }
        write!(f, "  driver supports CUDA {}.{}", self.driver_cuda_version.0, self.driver_cuda_version.1)
    }
}

/// A kernel file the runtime can compile: the kernels layer's registry entries implement it, so
/// that the runtime needs to know nothing of them. Compiled once per `file` per process.
pub trait KernelSource {
    /// A name unique to this source (the cache key and the name in compiler messages).
    fn file(&self) -> &'static str;
    /// The text NVRTC compiles.
    fn text(&self) -> String;
    /// NVRTC options beyond the base ones.
    fn options(&self) -> Result<Vec<String>>;
    /// The oldest architecture it compiles and runs on; older GPUs refuse it before compiling.
    fn min_arch(&self) -> Arch {
        Arch::BOOK_MINIMUM
    }
}

/// An open GPU: its context, the one stream every operation of this crate is ordered on, and
/// the kernels compiled so far. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

struct GpuInner {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    /// `REDUCTION_DEVICE_MEMORY`, read when the GPU was opened ([`crate::device_memory`]).
    memory_cap: Option<u64>,
    /// The driver's free memory right after the context was made: what the cap counts down from.
    free_at_open: usize,
    /// Compiled modules by kernel file: NVRTC runs once per file per process.
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
}

/// Why there is no usable GPU here, or `Ok` if there is one. Never panics: the driver library
/// is probed before cudarc is asked to load it.
pub fn probe() -> Result<usize> {
    // SAFETY: only tries to dlopen libcuda by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoGpu("the CUDA driver library (libcuda.so) could not be loaded; is an NVIDIA driver installed?".into()));
    }
    let count = CudaContext::device_count().map_err(|e| Error::NoGpu(format!("cuInit or cuDeviceGetCount failed: {e}")))?;
    if count <= 0 {
        return Err(Error::NoGpu("the driver is installed but reports no CUDA device".into()));
    }
    Ok(count as usize)
}

/// Values per copy of [`Gpu::upload_chunked`]: 2^26, 256 MiB of `f32`.
pub const UPLOAD_CHUNK: usize = 1 << 26;

impl Gpu {
    /// Open GPU 0.
    pub fn open() -> Result<Gpu> {
        Gpu::open_ordinal(0)
    }

    /// Open the GPU with this ordinal (as `CUDA_VISIBLE_DEVICES` numbers them).
    pub fn open_ordinal(ordinal: usize) -> Result<Gpu> {
        // A cap that is not a size is refused first, with or without a GPU.
        let memory_cap = crate::device_memory::cap_from_env()?;
        let count = probe()?;
        if ordinal >= count {
            return Err(Error::NoGpu(format!("asked for GPU {ordinal}, but only {count} are visible")));
        }
        let context = CudaContext::new(ordinal).map_err(|e| Error::NoGpu(format!("could not open GPU {ordinal}: {e}")))?;
        // Everything this crate does is ordered on one stream, so cudarc's per-buffer event
        // tracking (which orders work across streams) is pure overhead on every launch.
        // SAFETY: no buffer is ever used on a second stream.
        unsafe { context.disable_event_tracking() };
        // A stream of our own rather than the legacy default stream: graphs can be captured
        // from it (the benchmark times small sums as CUDA graphs).
        let stream = context.new_stream().map_err(|e| Error::NoGpu(format!("could not create a stream on GPU {ordinal}: {e}")))?;
        let info = read_info(&context, ordinal)?;
        let (free_at_open, _) = context.mem_get_info().during("reading free device memory")?;
        Ok(Gpu { inner: Arc::new(GpuInner { context, stream, info, memory_cap, free_at_open, modules: Mutex::new(HashMap::new()) }) })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.context
    }

    /// The stream every launch and copy of this crate goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// Make this GPU's context the current one of the calling thread.
    pub fn bind_to_thread(&self) -> Result<()> {
        self.inner.context.bind_to_thread().during("making the GPU's context current")
    }

    /// Wait for everything queued so far, and surface any error a kernel raised.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.stream.synchronize().during("waiting for the GPU")
    }

    /// (free, total) device memory in bytes: the driver's free memory, or less under
    /// `REDUCTION_DEVICE_MEMORY` ([`crate::device_memory::capped_free`]). Everything that decides
    /// whether something fits asks this.
    pub fn memory(&self) -> Result<(usize, usize)> {
        let (free, total) = self.driver_memory()?;
        let capped = crate::device_memory::capped_free(self.inner.memory_cap, self.inner.free_at_open as u64, free as u64);
        Ok((capped as usize, total))
    }

    /// (free, total) as the driver reports them, whatever the cap: for a check that memory was
    /// given back, which the cap would hide.
    pub fn driver_memory(&self) -> Result<(usize, usize)> {
        self.inner.context.mem_get_info().during("reading free device memory")
    }

    /// The free memory when this GPU was opened, under the cap if one is set: what a test suite
    /// decides against, so that whether a test runs does not depend on what runs beside it.
    pub fn memory_at_open(&self) -> usize {
        crate::device_memory::capped_free(self.inner.memory_cap, self.inner.free_at_open as u64, self.inner.free_at_open as u64) as usize
    }

    /// The cap `REDUCTION_DEVICE_MEMORY` set, if any.
    pub fn memory_cap(&self) -> Option<u64> {
        self.inner.memory_cap
    }

    /// A line saying that the memory is capped and what is really free; `None` without a cap.
    pub fn memory_note(&self) -> Option<String> {
        let cap = self.inner.memory_cap?;
        let real = self.driver_memory().map(|(free, _)| free).unwrap_or(self.inner.free_at_open);
        Some(crate::device_memory::describe_cap(cap, real as u64))
    }

    /// Load one entry point of `kernel`, compiling its file first if this process has not. A
    /// kernel that needs a newer architecture than this GPU's is refused here, before NVRTC runs
    /// ([`Error::NotOnThisGpu`]).
    pub fn function(&self, kernel: &dyn KernelSource, entry: &str) -> Result<CudaFunction> {
        crate::arch::runs_on(kernel.file(), kernel.min_arch(), self.info().architecture())?;
        // Driver calls on the function that follow (the occupancy calculator) need this GPU's
        // context current on the calling thread, which may be a new one.
        self.bind_to_thread()?;
        let module = self.module(kernel)?;
        module.load_function(entry).during(&format!("loading entry point {entry} from {}", kernel.file()))
    }

    /// Compile every file of `kernels` this process has not compiled yet, in parallel (one
    /// thread each: NVRTC compiles one program on one core), then load them; later
    /// [`Gpu::function`] calls find them loaded. For a program that will use several large files
    /// (the deep-learning kernels' four take ~45 s one after another on one core).
    pub fn preload(&self, kernels: &[&(dyn KernelSource + Sync)]) -> Result<()> {
        self.bind_to_thread()?;
        let arch = self.info().arch();
        let wanted: Vec<&(dyn KernelSource + Sync)> = {
            let modules = self.inner.modules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut wanted: Vec<&(dyn KernelSource + Sync)> = Vec::new();
            for &k in kernels {
                if !modules.contains_key(k.file()) && !wanted.iter().any(|w| w.file() == k.file()) {
                    wanted.push(k);
                }
            }
            wanted
        };
        let compiled: Vec<Result<crate::nvrtc::Compiled>> = std::thread::scope(|scope| {
            let handles: Vec<_> = wanted
                .iter()
                .map(|&k| {
                    let arch = arch.clone();
                    scope.spawn(move || crate::nvrtc::compile_cubin(k.file(), &k.text(), &arch, &k.options()?))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::Compile { file: "preload".into(), log: "a compile thread panicked".into() }))).collect()
        });
        let mut modules = self.inner.modules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (k, c) in wanted.into_iter().zip(compiled) {
            let c = c?;
            if !modules.contains_key(k.file()) {
                let module = self.inner.context.load_module(Ptx::from_binary(c.cubin)).during(&format!("loading the CUBIN of {}", k.file()))?;
                modules.insert(k.file(), module);
            }
        }
        Ok(())
    }

    fn module(&self, kernel: &dyn KernelSource) -> Result<Arc<CudaModule>> {
        // Held across the compile, so that two threads never compile the same file twice.
        let mut modules = self.inner.modules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(module) = modules.get(kernel.file()) {
            return Ok(module.clone());
        }
        let compiled = crate::nvrtc::compile_cubin(kernel.file(), &kernel.text(), &self.info().arch(), &kernel.options()?)?;
        let module = self.inner.context.load_module(Ptx::from_binary(compiled.cubin))
            .during(&format!("loading the CUBIN of {}", kernel.file()))?;
        modules.insert(kernel.file(), module.clone());
        Ok(module)
    }

    /// Allocate `len` elements, uninitialised, after checking that they fit: a request larger
    /// than the free memory gets [`Error::OutOfMemory`] instead of a driver error.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<CudaSlice<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let (mut free, _) = self.memory()?;
        if bytes > free {
            // Buffers dropped a moment ago go back to the driver only once the stream has reached
            // their frees (cudarc frees into the stream's memory pool): wait for it, then ask again.
            self.inner.stream.synchronize().during("waiting for the buffers freed before this allocation")?;
            free = self.memory()?.0;
        }
        if bytes > free {
            return Err(Error::OutOfMemory { requested_bytes: bytes, free_bytes: free });
        }
        if len == 0 {
            return self.inner.stream.null::<T>().during("making an empty buffer");
        }
        // SAFETY: the caller writes before reading; every user in this crate does (uploads,
        // kernel outputs, or an explicit poison fill).
        match unsafe { self.inner.stream.alloc::<T>(len) } {
            Ok(slice) => Ok(slice),
            Err(e) if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Err(Error::OutOfMemory { requested_bytes: bytes, free_bytes: free })
            }
            Err(source) => Err(Error::Cuda { during: format!("allocating {len} elements"), source }),
        }
    }

    /// Copy a host slice to a new device buffer.
    pub fn upload<T: Element>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let mut device = self.alloc::<T>(host.len())?;
        if !host.is_empty() {
            self.inner.stream.memcpy_htod(host, &mut device).during("copying input to the GPU")?;
        }
        Ok(device)
    }

    /// Copy `host` into `device` from element `offset` on, [`UPLOAD_CHUNK`] values at a time,
    /// waiting for each copy: the caller may reuse or refill `host` as soon as this returns, and
    /// a copy of gigabytes never waits on one transfer. `what` names the upload in errors.
    pub fn upload_chunked<T: Element>(&self, host: &[T], device: &mut CudaSlice<T>, offset: usize, what: &str) -> Result<()> {
        for (i, chunk) in host.chunks(UPLOAD_CHUNK).enumerate() {
            self.copy_chunk(chunk, device, offset + i * UPLOAD_CHUNK, what)?;
        }
        Ok(())
    }

    /// Fill `device` with values made on the host, [`UPLOAD_CHUNK`] at a time: `make(start,
    /// chunk)` writes the values of elements `start..start + chunk.len()` into one host buffer of
    /// a chunk, which is copied and waited for before it is refilled. A buffer of any size is
    /// filled with one chunk of host memory.
    pub fn upload_made<T: Element>(&self, device: &mut CudaSlice<T>, what: &str, mut make: impl FnMut(usize, &mut [T]) -> Result<()>) -> Result<()> {
        let mut host = vec![T::default(); UPLOAD_CHUNK.min(device.len())];
        let mut start = 0;
        while start < device.len() {
            let chunk = &mut host[..UPLOAD_CHUNK.min(device.len() - start)];
            make(start, chunk)?;
            self.copy_chunk(chunk, device, start, what)?;
            start += chunk.len();
        }
        Ok(())
    }

    /// One chunk of [`Gpu::upload_chunked`] and [`Gpu::upload_made`]: copied, and waited for,
    /// since the host buffer is reused next.
    fn copy_chunk<T: Element>(&self, chunk: &[T], device: &mut CudaSlice<T>, start: usize, what: &str) -> Result<()> {
        let mut view = device.slice_mut(start..start + chunk.len());
        self.inner.stream.memcpy_htod(chunk, &mut view).during(what)?;
        self.synchronize()
    }

    /// Overwrite a device buffer with `value` (used to poison outputs before a run).
    pub fn fill<T: Element>(&self, buffer: &mut CudaSlice<T>, value: T) -> Result<()> {
        let host = vec![value; buffer.len()];
        self.inner.stream.memcpy_htod(&host, buffer).during("filling a device buffer")
    }

    /// Copy a device buffer back to the host.
    pub fn download<T: Element>(&self, device: &CudaSlice<T>) -> Result<Vec<T>> {
        self.inner.stream.clone_dtoh(device).during("copying results from the GPU")
    }
}

fn read_info(context: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceInfo> {
    let attr = |a: Attr| context.attribute(a).during("reading device attributes");
    let mut driver_version = 0;
    // SAFETY: one valid out-pointer.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }.result().during("reading the driver version")?;
    Ok(DeviceInfo {
        ordinal,
        name: context.name().during("reading the device name")?,
        compute_capability: context.compute_capability().during("reading the compute capability")?,
        sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        l2_cache_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
        memory_bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
        memory_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0).max(0) as u32,
        total_memory_bytes: context.total_mem().during("reading total device memory")?,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        max_shared_memory_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as usize,
        sm_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0).max(0) as u32,
        driver_cuda_version: (driver_version / 1000, (driver_version % 1000) / 10),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_bandwidth_is_double_data_rate_times_bus_width() {
        // An H100 SXM reports 2619 MHz on a 5120-bit bus: the 3.35 TB/s of its datasheet.
        let bw = peak_bandwidth(2_619_000, 5120).unwrap();
        assert!((bw / 1e12 - 3.352).abs() < 0.001, "{bw}");
        assert_eq!(peak_bandwidth(0, 5120), None);
        assert_eq!(peak_bandwidth(2_619_000, 0), None);
    }
}
