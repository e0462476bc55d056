//! The benchmark: every registered kernel, both element types, a sweep of sizes, each result
//! checked before it is timed, timed as CUDA graphs of back-to-back sums with CUDA events,
//! inputs rotated through a pool larger than L2, and in the same run the two yardsticks: the
//! read-only kernel (the ceiling of a sum) and the copy kernel (a pace).

use super::{row, Input, Measured};
use crate::check::CheckSum;
use crate::data::{exact_parallel_for, Checked, Reference};
use crate::element::Dtype;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelSpec;
use crate::records::bench::{Cache, Row, Status, COPY_KERNEL, CUBLAS_KERNEL};
use crate::runtime::timing::{host_method, time_calls, time_graph};
use crate::Reducer;
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, DevicePtrMut};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sizes: Vec<usize>,
    pub kernels: Vec<&'static KernelSpec>,
    pub dtypes: Vec<Dtype>,
    /// Threads per block for every kernel; `None`: each kernel's preferred block at each size.
    pub block: Option<u32>,
    /// Sizes also measured with the input left in L2 (the same buffer every time), to show
    /// what the cache does; Harris's 2^22 ints fit in an H200's L2.
    pub resident_sizes: Vec<usize>,
    /// GPU time each measurement aims for, in milliseconds.
    pub target_ms: f64,
    pub seed: u64,
    /// Also measure the entry point ([`crate::Reducer::auto`]) at every size, graph-amortized
    /// and host-visible ([`ENTRY_POINT`], [`ENTRY_POINT_HOST`]).
    pub entry_point: bool,
    /// Time the entry point before the kernels instead of after them. Measured first, on the
    /// H200 (2026-12-03, f32, n = 2^10 … 2^15), it made every kernel timed after it 12–15%
    /// slower (reduce12 at 2^10: 1.368 µs, against 1.215 without the entry point and 1.210 with
    /// it last) and its own times at 2^13 and 2^14 too; measured last, the kernels took their
    /// times without it. So last is the default; this flag repeats the comparison.
    pub entry_point_first: bool,
    /// An experiment (0: off): after each kernel's row at an input rotated past L2, time the same
    /// launch again `scratch_pads` times, each with a new reducer made after a pad of 1, 2, …
    /// × 2 MiB was allocated, so that its scratch buffers (the partial sums, the ticket) lie
    /// elsewhere; the title of each such row gives the pad and the addresses. The question: is
    /// where a short sum's partials live what makes one launch 3-15% apart from itself within a
    /// run (`plots/data/experiments/entry-point-order/README.md`)?
    pub scratch_pads: usize,
}

impl BenchConfig {
    /// 2^10 … 2^30 and a few sizes that are not powers of two.
    pub fn default_sizes() -> Vec<usize> {
        let mut sizes: Vec<usize> = (10..=30).map(|k| 1usize << k).collect();
        sizes.extend([1_000_000, 10_000_000, 100_000_000, (1 << 22) + 1, (3 << 24) - 1]);
        sizes.sort_unstable();
        sizes
    }

    pub fn new() -> BenchConfig {
        BenchConfig {
            sizes: BenchConfig::default_sizes(),
            kernels: crate::kernels::all().iter().collect(),
            dtypes: Dtype::CLASSIC.to_vec(),
            block: None,
            resident_sizes: vec![1 << 22],
            target_ms: 3.0,
            seed: 2007,
            entry_point: true,
            entry_point_first: false,
            scratch_pads: 0,
        }
    }
}

impl BenchConfig {
    /// The most values any one sum of the run adds: the pool is drawn exact for it. The
    /// L2-resident sizes are sums too (`--sizes 2^20` still measures 2^22 resident).
    pub fn largest_sum(&self) -> usize {
        self.sizes.iter().chain(&self.resident_sizes).copied().max().unwrap_or(0)
    }
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig::new()
    }
}

/// Measure everything in `config`, with a progress bar; rows come back in measuring order.
pub fn run(gpu: &Gpu, config: &BenchConfig) -> Result<Vec<Row>> {
    Ok(run_with_shapes(gpu, config)?.rows)
}

/// What one benchmark run measured: the rows of the results file (the kernels, the peers, the
/// copy and, at each size, the read-only kernel at its fastest shape), and the read-only kernel
/// at every shape it was measured at (`plots/data/read-only/`), the evidence for that choice.
pub struct BenchResults {
    pub rows: Vec<Row>,
    pub read_only_shapes: Vec<Row>,
}

/// [`run`], keeping the read-only kernel's every shape too.
pub fn run_with_shapes(gpu: &Gpu, config: &BenchConfig) -> Result<BenchResults> {
    let mut measured = BenchResults { rows: Vec::new(), read_only_shapes: Vec::new() };
    let kernel_runs: usize = config.dtypes.iter().map(|d| config.kernels.iter().filter(|k| k.supports(*d)).count()).sum();
    let measured_sizes = config.sizes.len() + config.resident_sizes.len();
    // Each kernel at every size; the copy at the rotated sizes; the read-only kernel at all.
    let entry_runs = if config.entry_point { config.dtypes.len() * config.sizes.len() } else { 0 };
    let total = kernel_runs * measured_sizes + config.dtypes.len() * (config.sizes.len() + measured_sizes) + entry_runs;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}").unwrap().progress_chars("=> "));
    for &dtype in &config.dtypes {
        let (rows, shapes) = crate::with_dtype!(dtype, T => run_dtype::<T>(gpu, config, &bar))?;
        measured.rows.extend(rows);
        measured.read_only_shapes.extend(shapes);
    }
    bar.finish_and_clear();
    Ok(measured)
}

/// Print a line where a terminal would show the bar, so that a log shows progress too.
pub(crate) fn note(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// The input pool: one device allocation of random values, larger than the largest size and
/// than several L2s, and its host copy for the references.
pub(crate) struct Pool<T: Checked> {
    device: CudaSlice<T>,
    host: Vec<T>,
}

impl<T: Checked> Pool<T> {
    fn new(gpu: &Gpu, config: &BenchConfig, bar: &ProgressBar) -> Result<Pool<T>> {
        let elem = std::mem::size_of::<T>();
        let largest = config.largest_sum();
        // Under REDUCTION_DEVICE_MEMORY `free` is the capped figure, so the pool fits the cap.
        let (free, _) = gpu.memory()?;
        let on_gpu = crate::limits::pool_values(largest, gpu.info().l2_cache_bytes, free, elem);
        // The pool has a host copy too (the references are computed from it): it takes at most
        // the same share of the host's available memory.
        let on_host = crate::limits::host_pool_values(elem);
        let len = on_gpu.min(on_host);
        if len < largest {
            let host_free = crate::limits::host_available_bytes().map_or(0, |b| b.min(usize::MAX as u128) as usize);
            let (limit, what) = if on_host < on_gpu { (host_free, " on the host".to_string()) } else { (free, gpu.memory_note().map(|n| format!(" ({n})")).unwrap_or_default()) };
            note(bar, format!("{}: the pool holds {} values in {:.0}% of {} free{what}; larger sizes are skipped", T::SUFFIX, len,
                crate::limits::POOL_SHARE * 100.0, crate::error::human_bytes(limit)));
        }
        note(bar, format!("{}: input pool of {} values ({}), exact by construction (nonzero integers up to {}, random signs), seed {}",
            T::SUFFIX, len, crate::error::human_bytes(len * elem), T::exact_limit(largest), config.seed));
        // Exact by construction for the largest sum measured, so that every kernel's sum is
        // checked bit for bit before it is timed (the time of an add does not depend on its
        // operands, and no value is zero or denormal).
        let host: Vec<T> = exact_parallel_for(len, largest, config.seed);
        let mut device = gpu.alloc::<T>(len)?;
        gpu.upload_chunked(&host, &mut device, 0, "uploading the input pool")?;
        Ok(Pool { device, host })
    }

    pub(crate) fn len(&self) -> usize {
        self.host.len()
    }

    /// Where the j-th input of length n starts: consecutive inputs do not overlap, and the
    /// rotation wraps when the pool is used up. Offsets are multiples of 256 values (1 KiB).
    fn offset(&self, n: usize, j: usize, cache: Cache) -> usize {
        if cache == Cache::Resident {
            return 0;
        }
        let stride = n.div_ceil(256) * 256;
        let slots = (self.len() - n) / stride + 1;
        (j % slots) * stride
    }

    pub(crate) fn view(&self, n: usize, j: usize, cache: Cache) -> CudaView<'_, T> {
        let start = self.offset(n, j, cache);
        self.device.slice(start..start + n)
    }

    /// How many distinct inputs of length n the rotation has before it wraps.
    fn slots(&self, n: usize, cache: Cache) -> usize {
        match cache {
            Cache::Resident => 1,
            Cache::Rotated => (self.len() - n) / (n.div_ceil(256) * 256) + 1,
        }
    }

    /// Bytes a graph of `ops` operations on inputs of length n reads, all inputs distinct.
    pub(crate) fn working_set(&self, n: usize, ops: usize, cache: Cache) -> usize {
        ops.min(self.slots(n, cache)) * n * std::mem::size_of::<T>()
    }
}

fn run_dtype<T: Checked>(gpu: &Gpu, config: &BenchConfig, bar: &ProgressBar) -> Result<(Vec<Row>, Vec<Row>)> {
    let pool = Pool::<T>::new(gpu, config, bar)?;
    let mut rows = Vec::new();
    let mut shape_rows = Vec::new();
    let mut references: Vec<(usize, Reference)> = Vec::new();
    let mut reference = |n: usize| -> Reference {
        if let Some((_, r)) = references.iter().find(|(m, _)| *m == n) {
            return *r;
        }
        // The pool was drawn for the largest n, so every prefix is an exact input too.
        let r = T::exact_reference(&pool.host[..n]).expect("the pool is exact by construction");
        references.push((n, r));
        r
    };

    // The pace of a streaming kernel: a copy reads and writes every byte once.
    let copy_max = config.sizes.iter().copied().filter(|&n| n <= pool.len()).max().unwrap_or(0);
    if copy_max > 0 {
        let copy = gpu.function(&crate::kernels::COPY, crate::kernels::entries::COPY_U32)?;
        let mut target = gpu.alloc::<T>(copy_max)?;
        for &n in &config.sizes {
            bar.set_message(format!("copy {} n={}", T::SUFFIX, n));
            if n <= pool.len() {
                let blocks = (n / 4).div_ceil(256).clamp(1, gpu.info().sm_count as usize * 8) as u32;
                let words = (n * std::mem::size_of::<T>() / 4) as u64; // the kernel copies 4-byte words
                let timing = time_graph(gpu, config.target_ms, |j| super::launch_copy(gpu, &copy, &pool.view(n, j, Cache::Rotated), &mut target, words, blocks, 256))?;
                let working_set = pool.working_set(n, timing.ops_per_graph, Cache::Rotated);
                let what = Measured { kernel: COPY_KERNEL, chapter: 0, title: crate::kernels::COPY.title, status: Status::Pace };
                let input = Input { dtype: T::DTYPE, n, block: 256, cache: Cache::Rotated, bytes: 2 * n * std::mem::size_of::<T>(), working_set_bytes: working_set };
                rows.push(row(what, input, &timing));
            }
            bar.inc(1);
        }
        if T::DTYPE == Dtype::F32 {
            rows.extend(cublas_peer(gpu, config, &pool, bar, &mut reference)?);
        }
    }
    let (best, shapes) = super::read_only::ceiling(gpu, config, &pool, bar, &mut reference)?;
    rows.extend(best);
    shape_rows.extend(shapes);
    if config.entry_point && config.entry_point_first {
        rows.extend(entry_point(gpu, config, &pool, bar, &mut reference)?);
    }

    for kernel in config.kernels.iter().filter(|k| k.supports(T::DTYPE)) {
        let started = Instant::now();
        // A kernel that needs a newer GPU is not on this one: its rows are skipped, with why.
        if let Err(why) = kernel.available_on(gpu.info().architecture()) {
            note(bar, format!("skipped {} {}: {why}", kernel.name, T::SUFFIX));
            bar.inc((config.sizes.len() + config.resident_sizes.len()) as u64);
            continue;
        }
        if kernel.needs_cuda_headers {
            if let Err(e) = crate::nvrtc::cuda_include_dir() {
                note(bar, format!("skipped {}: {e}", kernel.name));
                bar.inc((config.sizes.len() + config.resident_sizes.len()) as u64);
                continue;
            }
        }
        // One reducer per block size used, made when first needed.
        let mut reducers: Vec<Reducer<T>> = Vec::new();
        let measured: Vec<(usize, Cache)> = config.sizes.iter().map(|&n| (n, Cache::Rotated))
            .chain(config.resident_sizes.iter().map(|&n| (n, Cache::Resident)))
            .collect();
        for (n, cache) in measured {
            bar.set_message(format!("{} {} n={} {}", kernel.name, T::SUFFIX, n, cache.name()));
            bar.inc(1);
            if n > pool.len() {
                note(bar, format!("skipped {} {} n={n}: {} does not fit in the GPU's free memory next to the pool",
                    kernel.name, T::SUFFIX, crate::error::human_bytes(n * std::mem::size_of::<T>())));
                continue;
            }
            let block = config.block.unwrap_or_else(|| kernel.preferred_block(n)).clamp(kernel.min_block, kernel.max_block);
            let reducer = match reducers.iter().position(|r| r.block() == block) {
                Some(i) => &mut reducers[i],
                None => {
                    reducers.push(Reducer::<T>::new(gpu, kernel.name, block)?);
                    reducers.last_mut().unwrap()
                }
            };
            let check = checked_sum(reducer, &pool, n, cache, &reference(n))?;
            if let Err(why) = &check {
                if kernel.status == crate::kernels::Status::Correct {
                    return Err(Error::WrongSum { what: format!("{} {} n={n}", kernel.name, T::SUFFIX), why: why.clone() });
                }
                note(bar, format!("{} {} n={n} gave a wrong sum ({why}); not timed", kernel.name, T::SUFFIX));
                continue;
            }
            let probed = cache == Cache::Rotated && config.scratch_pads > 0;
            let title = if probed { format!("{} [scratch at {}]", kernel.title, addresses(&reducer.scratch_addresses())) } else { kernel.title.to_string() };
            let what = Measured { kernel: kernel.name, chapter: kernel.chapter, title: &title, status: kernel.status.into() };
            rows.push(timed_row(gpu, config, &pool, reducer, n, cache, what)?);
            if probed {
                rows.extend(scratch_probes(gpu, config, &pool, &mut reference, kernel, block, n)?);
            }
        }
        note(bar, format!("{:>18} {}: {} sizes in {:.1} s", kernel.name, T::SUFFIX, config.sizes.len(), started.elapsed().as_secs_f64()));
    }
    if config.entry_point && !config.entry_point_first {
        rows.extend(entry_point(gpu, config, &pool, bar, &mut reference)?);
    }
    Ok((rows, shape_rows))
}

pub use crate::records::bench::{ENTRY_POINT_HOST_KERNEL as ENTRY_POINT_HOST, ENTRY_POINT_KERNEL as ENTRY_POINT};

/// Correct before fast: the reducer's outputs poisoned, the rotation's first input summed, the sum
/// checked against the exact reference (the outer error: a failed launch; the inner: a wrong sum).
fn checked_sum<T: Checked>(reducer: &mut Reducer<T>, pool: &Pool<T>, n: usize, cache: Cache, reference: &Reference) -> Result<std::result::Result<(), String>> {
    reducer.poison_outputs(n)?;
    let got = reducer.sum(&pool.view(n, 0, cache))?;
    Ok(reducer.check(got, reference))
}

/// A checked launch timed as a row: graphs of back-to-back sums over the rotation's inputs.
fn timed_row<T: Checked>(gpu: &Gpu, config: &BenchConfig, pool: &Pool<T>, reducer: &mut Reducer<T>, n: usize, cache: Cache, what: Measured<'_>) -> Result<Row> {
    let timing = time_graph(gpu, config.target_ms, |j| reducer.enqueue(&pool.view(n, j, cache)).map(|_| ()))?;
    let working_set_bytes = pool.working_set(n, timing.ops_per_graph, cache);
    let input = Input { dtype: T::DTYPE, n, block: reducer.block(), cache, bytes: n * std::mem::size_of::<T>(), working_set_bytes };
    Ok(row(what, input, &timing))
}

/// Device addresses as a title gives them: `0x7f00a0000000 0x…`.
fn addresses(at: &[u64]) -> String {
    at.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>().join(" ")
}

/// The `--scratch-pads` experiment ([`BenchConfig::scratch_pads`]): the same launch of `kernel`
/// at `block` on n values, each time from a new reducer made after a pad of p × 2 MiB (p = 1 …
/// `scratch_pads`) was allocated, so that its scratch buffers lie elsewhere; each checked first,
/// then timed as the kernel's own row. The rows carry the kernel's name; their titles say the pad
/// and where the scratch buffers were.
fn scratch_probes<T: Checked>(gpu: &Gpu, config: &BenchConfig, pool: &Pool<T>, reference: &mut dyn FnMut(usize) -> Reference,
    kernel: &'static KernelSpec, block: u32, n: usize) -> Result<Vec<Row>> {
    const PAD_BYTES: usize = 2 << 20;
    let mut rows = Vec::new();
    // Every pad and reducer is held to the end: freed, their memory would go back to the stream's
    // pool, and the next reducer could get the same addresses whatever its pad.
    let mut held = Vec::with_capacity(config.scratch_pads);
    for p in 1..=config.scratch_pads {
        let pad = gpu.alloc::<f32>(p * PAD_BYTES / 4)?;
        let mut reducer = Reducer::<T>::new(gpu, kernel.name, block)?;
        checked_sum(&mut reducer, pool, n, Cache::Rotated, &reference(n))?
            .map_err(|why| Error::WrongSum { what: format!("{} {} n={n} after a pad of {p} × 2 MiB", kernel.name, T::SUFFIX), why })?;
        let title = format!("{} [pad {p} × 2 MiB; scratch at {}]", kernel.title, addresses(&reducer.scratch_addresses()));
        let what = Measured { kernel: kernel.name, chapter: kernel.chapter, title: &title, status: kernel.status.into() };
        rows.push(timed_row(gpu, config, pool, &mut reducer, n, Cache::Rotated, what)?);
        held.push((pad, reducer));
    }
    Ok(rows)
}

/// The entry point at every size, as a reader calls it: [`crate::Reducer::auto`] for the size,
/// checked exactly first, then timed two ways. Graph-amortized, as the kernels are; and
/// host-visible: one `sum` — the launches, the copy of the result into a host variable and the
/// wait for it — timed by the host's clock, input already on the GPU and rotated as for the
/// kernels, the median of many calls (warm: the first calls compile and allocate).
fn entry_point<T: Checked>(gpu: &Gpu, config: &BenchConfig, pool: &Pool<T>, bar: &ProgressBar, reference: &mut dyn FnMut(usize) -> Reference) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let input = |n: usize, block: u32, working_set_bytes: usize| Input { dtype: T::DTYPE, n, block, cache: Cache::Rotated, bytes: n * std::mem::size_of::<T>(), working_set_bytes };
    let mut host_visible = Vec::new();
    // Every size graph-amortized first, then every size host-visible: a host-visible loop leaves
    // the GPU idle between calls, and no graph is timed right after one.
    for &n in &config.sizes {
        bar.set_message(format!("{ENTRY_POINT} {} n={n}", T::SUFFIX));
        bar.inc(1);
        if n > pool.len() {
            continue;
        }
        let mut reducer = Reducer::<T>::auto(gpu, n)?;
        // A one-block launch is not the kernel's own row's launch: the title says so.
        let one_block = if reducer.resident_blocks() == 1 { ", one block" } else { "" };
        let title = format!("entry point: {}, block {}{one_block}", reducer.kernel().name, reducer.block());
        checked_sum(&mut reducer, pool, n, Cache::Rotated, &reference(n))?
            .map_err(|why| Error::WrongSum { what: format!("{ENTRY_POINT} {} n={n}", T::SUFFIX), why })?;
        // The scratch-pads experiment compares these addresses with the kernels' rows.
        let title = if config.scratch_pads > 0 { format!("{title} [scratch at {}]", addresses(&reducer.scratch_addresses())) } else { title };
        rows.push(timed_row(gpu, config, pool, &mut reducer, n, Cache::Rotated, Measured { kernel: ENTRY_POINT, chapter: 0, title: &title, status: Status::Correct })?);
        host_visible.push((n, reducer, title));
    }
    for (n, mut reducer, title) in host_visible {
        let host = time_calls(config.target_ms, |j| reducer.sum(&pool.view(n, j, Cache::Rotated)).map(|_| ()))?;
        let calls = host.per_op_us.len();
        let host_title = format!("{title}, host-visible");
        let mut measured = row(Measured { kernel: ENTRY_POINT_HOST, chapter: 0, title: &host_title, status: Status::Correct }, input(n, reducer.block(), pool.working_set(n, calls, Cache::Rotated)), &host);
        measured.method = host_method(calls);
        rows.push(measured);
    }
    Ok(rows)
}

/// The library a reader would otherwise call: cuBLAS `Sasum` reads the same n values once and
/// returns Σ|x|, so it is a fair peer for an f32 sum. Skipped, with a note, where cuBLAS cannot
/// be loaded or captured into a graph.
fn cublas_peer<T: Checked>(gpu: &Gpu, config: &BenchConfig, pool: &Pool<T>, bar: &ProgressBar, reference: &mut dyn FnMut(usize) -> Reference) -> Result<Vec<Row>> {
    use cudarc::cublas::{sys::cublasPointerMode_t, CudaBlas};
    let mut rows = Vec::new();
    // SAFETY: only tries to dlopen libcublas by its candidate names.
    if !unsafe { cudarc::cublas::sys::is_culib_present() } {
        note(bar, "cuBLAS could not be loaded: the library peer is not measured".into());
        return Ok(rows);
    }
    let blas = match CudaBlas::new(gpu.stream().clone()) {
        Ok(blas) => blas,
        Err(e) => {
            note(bar, format!("cuBLAS did not start ({e:?}): the library peer is not measured"));
            return Ok(rows);
        }
    };
    // The result stays on the GPU, so that a sum can be captured into a graph.
    let pointer_mode = blas.set_pointer_mode(cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE);
    let cublas_error = |source: cudarc::cublas::result::CublasError| Error::Cublas { during: "calling cublasSasum".into(), source };
    pointer_mode.map_err(cublas_error)?;
    let mut result = gpu.alloc::<f32>(1)?;
    let stream = gpu.stream().clone();
    // The address only: every use is ordered on the one stream, so no guard needs to live.
    let out = result.device_ptr_mut(&stream).0;
    for &n in config.sizes.iter().filter(|&&n| n <= pool.len() && n <= i32::MAX as usize) {
        bar.set_message(format!("{CUBLAS_KERNEL} f32 n={n}"));
        let mut enqueue = |j: usize| -> Result<()> {
            let view = pool.view(n, j, Cache::Rotated);
            let (x, _x_guard) = view.device_ptr(&stream);
            // SAFETY: x holds n f32 values (this is only called for the f32 pool); `out` is one
            // f32 on the device, as the device pointer mode requires.
            unsafe { cudarc::cublas::result::sasum(*blas.handle(), n as i32, x as *const f32, 1, out as *mut f32) }.map_err(cublas_error)
        };
        gpu.fill(&mut result, f32::NAN)?;  // poisoned: a call that writes nothing cannot pass
        enqueue(0)?;
        let got = gpu.download(&result)?[0];
        let r = reference(n);
        // Σ|x| of integers is no exact input past 2^24 (its partial sums only grow), and cuBLAS
        // documents no order: assume a reduction tree with at least 1024 partial sums.
        let expected = Reference { sum_f64: r.abs_sum, sum_i64: 0, exact: false, ..r };
        if let Err(why) = f32::check_with(got, &expected, n as u64 / 1024 + 64) {
            note(bar, format!("cublasSasum n={n} disagrees with the reference ({why}); not timed"));
            continue;
        }
        let timing = match time_graph(gpu, config.target_ms, &mut enqueue) {
            Ok(timing) => timing,
            Err(e) => {
                note(bar, format!("cublasSasum could not be timed as a graph ({e}); the peer is skipped"));
                return Ok(rows);
            }
        };
        let working_set = pool.working_set(n, timing.ops_per_graph, Cache::Rotated);
        let what = Measured { kernel: CUBLAS_KERNEL, chapter: 0, title: "cuBLAS Sasum (library peer)", status: Status::Peer };
        rows.push(row(what, Input { dtype: Dtype::F32, n, block: 0, cache: Cache::Rotated, bytes: n * 4, working_set_bytes: working_set }, &timing));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_exact_for_every_sum_the_run_makes() {
        // `--sizes 2^13,2^20` still sums 2^22 values resident in L2: the pool's values must be
        // small enough for that sum (a pool drawn for 2^20 failed its own check at 2^22).
        let config = BenchConfig { sizes: vec![1 << 13, 1 << 20], ..BenchConfig::new() };
        assert_eq!(config.largest_sum(), 1 << 22);
        let config = BenchConfig { sizes: vec![1 << 30], ..BenchConfig::new() };
        assert_eq!(config.largest_sum(), 1 << 30);
    }
}
