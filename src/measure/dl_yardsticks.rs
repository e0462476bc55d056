//! The yardsticks the deep-learning benchmark measures beside its kernels (`measure::dl_bench`),
//! on 2^28 f32 values: the copy kernel, the tiled copy at every shape of
//! [`COPY_TILE_SHAPES`](crate::kernels::COPY_TILE_SHAPES) and `cudaMemcpyAsync` (what a kernel
//! that reads and writes every value once reaches), and the read-only sum (one that only reads).

use super::{row, Input, Measured};
use crate::check::dl as check;
use crate::element::Dtype;
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::CopyShape;
use crate::records::bench::{Cache, Status};
use crate::records::dl::{CopyShapeTime, DlRow};
use crate::records::summary::median;
use crate::runtime::timing::{time_graph_or_batches as time, GraphTiming};
use cudarc::driver::CudaSlice;

/// What [`measure`] returns: the rows (the copy kernel, the fastest tile shape, cudaMemcpy, the
/// read-only sum) and the median of every tile shape checked.
#[derive(Default)]
pub struct Yardsticks {
    pub rows: Vec<DlRow>,
    pub copy_shapes: Vec<CopyShapeTime>,
}

/// The copy kernel and the read-only sum on 2^28 f32: what a kernel that reads and writes every
/// byte, and one that only reads, reach in the same run.
pub fn measure(gpu: &Gpu, target_ms: f64, seed: u64) -> Result<Yardsticks> {
    let n = super::dl_bench::SWEEP_VALUES;
    let need = 3 * n * 4;
    if gpu.memory()?.0 < need + (1 << 28) {
        eprintln!("copy and read-only: skipped, {} do not fit", crate::error::human_bytes(need));
        return Ok(Yardsticks::default());
    }
    let host: Vec<f32> = check::uniform(n, -1.0, 1.0, seed);
    let mut pool = gpu.alloc::<f32>(2 * n)?;
    gpu.upload_chunked(&host, &mut pool, 0, "uploading the copy's input")?;
    gpu.upload_chunked(&host, &mut pool, n, "uploading the copy's input")?;
    let mut out = gpu.alloc::<f32>(n)?;
    let mut rows = Vec::new();
    // The copy (kernels/copy.cu's copy_u32, the whole-array benchmark's pace), on as many blocks
    // as the GPU holds at once.
    let copy = gpu.function(&crate::kernels::COPY, crate::kernels::entries::COPY_U32)?;
    let per_sm = copy.occupancy_max_active_blocks_per_multiprocessor(256, 0, None).during("asking the occupancy calculator")?;
    let grid = per_sm.max(1) * gpu.info().sm_count;
    let timing = time(gpu, target_ms, |j| super::launch_copy(gpu, &copy, &pool.slice((j % 2) * n..(j % 2 + 1) * n), &mut out, n as u64, grid, 256))?;
    let got = gpu.download(&out)?;
    gpu.synchronize()?;
    if got != host {
        return Err(Error::WrongSum { what: "the copy kernel".into(), why: "its output is not its input".into() });
    }
    let what = Measured { kernel: crate::records::bench::COPY_KERNEL, chapter: 0, title: "copy kernel (read + write)", status: Status::Pace };
    let r = row(what, Input { dtype: Dtype::F32, n, block: 256, cache: Cache::Rotated, bytes: 8 * n, working_set_bytes: 8 * n }, &timing);
    eprintln!("copy            f32  {n:>10}   {:>10.2} µs {:>8.1} GB/s", r.median_us, r.gbps());
    rows.push(DlRow::of(r, "copy", 1));
    // The copy at every tile shape and the driver's own copy: what a kernel that reads and writes
    // every byte once can reach here. Not fatal: the chapters only lose a yardstick.
    let copy_shapes = match copy_shapes(gpu, target_ms, &pool, &mut out, &host) {
        Ok((more, every)) => {
            rows.extend(more);
            every
        }
        Err(e) => {
            eprintln!("copy shapes: not measured: {e}");
            Vec::new()
        }
    };
    // The read-only sum: its fastest shape over the same two slots, checked first, as in the benchmark.
    let reference = <f32 as crate::data::Checked>::reference(&host);
    let (shape, timing) = crate::measure::read_only::fastest_shape(gpu, n, target_ms, &reference, |j| pool.slice((j % 2) * n..(j % 2 + 1) * n))?;
    let title = format!("read-only sum, fastest of {} shapes: {} threads × {} loads", crate::kernels::READ_ONLY_SHAPES.len(), shape.block, shape.loads);
    let what = Measured { kernel: crate::records::bench::READ_ONLY_KERNEL, chapter: 0, title: &title, status: Status::Ceiling };
    let r = row(what, Input { dtype: Dtype::F32, n, block: shape.block, cache: Cache::Rotated, bytes: 4 * n, working_set_bytes: 8 * n }, &timing);
    eprintln!("read_only       f32  {n:>10}   {:>10.2} µs {:>8.1} GB/s ({})", r.median_us, r.gbps(), shape.label());
    rows.push(DlRow::of(r, "read", 1));
    Ok(Yardsticks { rows, copy_shapes })
}

/// The tiled copy at every shape of [`COPY_TILE_SHAPES`](crate::kernels::COPY_TILE_SHAPES), each
/// checked on a poisoned output before it is timed, over the same two slots as the copy kernel:
/// the fastest shape's row and the row of `cudaMemcpyAsync` device to device (also checked), and
/// every checked shape's median.
fn copy_shapes(gpu: &Gpu, target_ms: f64, pool: &CudaSlice<f32>, out: &mut CudaSlice<f32>, host: &[f32]) -> Result<(Vec<DlRow>, Vec<CopyShapeTime>)> {
    let n = host.len();
    let stream = gpu.stream().clone();
    let input = |j: usize| pool.slice((j % 2) * n..(j % 2 + 1) * n);
    let mut best: Option<(CopyShape, GraphTiming)> = None;
    let mut every = Vec::new();
    for shape in crate::kernels::COPY_TILE_SHAPES {
        let function = gpu.function(&crate::kernels::COPY, &shape.entry_name())?;
        let launch = |j: usize, out: &mut CudaSlice<f32>| super::launch_copy(gpu, &function, &input(j), out, n as u64, shape.grid(n) as u32, shape.block);
        gpu.fill(out, f32::NAN)?;
        launch(0, out)?;
        if gpu.download(out)? != host {
            eprintln!("copy {}: its output is not its input; not timed", shape.label());
            continue;
        }
        let timing = time(gpu, target_ms, |j| launch(j, out))?;
        let median = median(&timing.per_op_us);
        eprintln!("copy {:<44} {median:>10.2} µs", shape.label());
        if best.as_ref().is_none_or(|(_, b)| median < self::median(&b.per_op_us)) {
            best = Some((shape, timing));
        }
        every.push(CopyShapeTime { block: shape.block, packs: shape.packs, evict_first: shape.stream, n, median_us: median });
    }
    let mut rows = Vec::new();
    if let Some((shape, timing)) = best {
        let title = format!("copy, fastest of {} tile shapes: {}", every.len(), shape.label());
        let what = Measured { kernel: "copy_tile", chapter: 0, title: &title, status: Status::Pace };
        let r = row(what, Input { dtype: Dtype::F32, n, block: shape.block, cache: Cache::Rotated, bytes: 8 * n, working_set_bytes: 8 * n }, &timing);
        eprintln!("copy_tile       f32  {n:>10}   {:>10.2} µs {:>8.1} GB/s ({})", r.median_us, r.gbps(), shape.label());
        rows.push(DlRow::of(r, "copy", 1));
    }
    gpu.fill(out, f32::NAN)?;
    stream.memcpy_dtod(&input(0), out).during("copying device to device")?;
    if gpu.download(out)? != host {
        eprintln!("cudaMemcpyAsync device to device: its output is not its input; not timed");
        return Ok((rows, every));
    }
    let timing = time(gpu, target_ms, |j| stream.memcpy_dtod(&input(j), out).during("copying device to device"))?;
    let what = Measured { kernel: "memcpy", chapter: 0, title: "cudaMemcpyAsync, device to device", status: Status::Pace };
    let r = row(what, Input { dtype: Dtype::F32, n, block: 0, cache: Cache::Rotated, bytes: 8 * n, working_set_bytes: 8 * n }, &timing);
    eprintln!("memcpy          f32  {n:>10}   {:>10.2} µs {:>8.1} GB/s", r.median_us, r.gbps());
    rows.push(DlRow::of(r, "copy", 1));
    Ok((rows, every))
}

