//! The operators' benchmark (chapter 16): every operator × input type, whole arrays at 2^10 …
//! 2^30 and rows at M·N = 2^28 (N = 2^8 … 2^24) and 4096 × 64, each checked against its reference
//! on the same input before it is timed, and in the same run the yardsticks: the read-only kernel
//! (every byte read once) and kernel 10's sum on the same sizes, kernel 13's row sums on the same
//! shapes. Timed as the other benchmarks are (CUDA graphs of back-to-back launches, CUDA events,
//! inputs rotated through a pool larger than L2). Records: [`crate::records::operators`].

use crate::records::operators::{op_bytes, OpRow};
use crate::check::ops::{check, reference_parallel, OpInput};
use crate::check::CheckSum;
use crate::data::Checked;
use crate::element::{bf16, f16, Dtype, Element};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::ops::{row_depth, Op, OpReducer};
use crate::measure::{row, Input, Measured};
use crate::records::bench::{Cache, Status, READ_ONLY_KERNEL};
use crate::runtime::timing::{time_graph, GraphTiming};
use crate::rows::{RowLayout, RowReducer, Strategy};
use cudarc::driver::CudaSlice;

/// What to measure.
#[derive(Clone, Debug)]
pub struct OpsBenchConfig {
    pub ops: Vec<Op>,
    pub dtypes: Vec<Dtype>,
    /// Whole-array sizes.
    pub sizes: Vec<usize>,
    /// Row shapes (M, N).
    pub shapes: Vec<(usize, usize)>,
    /// The mean/variance walks are measured at these sizes (none: not measured).
    pub walk_sizes: Vec<usize>,
    pub target_ms: f64,
    pub seed: u64,
}

// ANCHOR: defaults
impl Default for OpsBenchConfig {
    /// 2^10 … 2^30 (every other power of two) and the row shapes of `rows-bench` from N = 2^8 to
    /// 2^24 (every other one) and 4096 × 64, every type; with the peers' script after it, about
    /// two and a half minutes on an H200 (every power and every shape: `--sizes`, `--shapes`).
    fn default() -> Self {
        let mut ops = Op::CHAPTER.to_vec();
        ops.push(Op::Sum);
        let mut shapes = vec![(4096, 64)];
        shapes.extend((8..=24).step_by(2).map(|k| (crate::measure::rows_bench::SWEEP_VALUES >> k, 1usize << k)));
        OpsBenchConfig {
            ops,
            dtypes: vec![Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I32],
            sizes: (10..=30).step_by(2).map(|k| 1usize << k).collect(),
            shapes,
            walk_sizes: vec![1 << 20, 1 << 24, 1 << 28, 1 << 30],
            target_ms: 2.0,
            seed: 2212,
        }
    }
}
// ANCHOR_END: defaults

impl OpsBenchConfig {
    /// Fewer sizes and shapes, shorter timings.
    pub fn quick() -> OpsBenchConfig {
        OpsBenchConfig {
            sizes: vec![1 << 16, 1 << 24, 1 << 28],
            shapes: vec![(4096, 64), (1 << 20, 1 << 8), (1 << 14, 1 << 14)],
            walk_sizes: vec![1 << 28],
            target_ms: 1.0,
            ..OpsBenchConfig::default()
        }
    }
}

/// The chapter's kernel names in the results: `<op>_whole`, `<op>_rows_auto` (the planner's
/// choice), `<op>_rows_<strategy>` (forced).
pub fn kernel_name(op: Op, strategy: Option<Option<Strategy>>) -> String {
    match strategy {
        None => format!("{op}_whole"),
        Some(None) => format!("{op}_rows_auto"),
        Some(Some(s)) => format!("{op}_rows_{}", s.name()),
    }
}

/// The chapter number of the operators in results files.
pub const CHAPTER: u32 = 16;

/// Measure everything in `config`; one line per measurement goes to stderr as it is made.
pub fn bench(gpu: &Gpu, config: &OpsBenchConfig) -> Result<Vec<OpRow>> {
    let mut rows = Vec::new();
    for &dtype in &config.dtypes {
        rows.extend(match dtype {
            Dtype::F32 => bench_typed::<f32>(gpu, config)?,
            Dtype::F16 => bench_typed::<f16>(gpu, config)?,
            Dtype::BF16 => bench_typed::<bf16>(gpu, config)?,
            Dtype::I32 => bench_typed::<i32>(gpu, config)?,
            Dtype::F64 => return Err(Error::Config { setting: "ops-bench --dtype f64".into(), reason: "the operators take f32, f16, bf16 and i32".into() }),
        });
    }
    Ok(rows)
}

/// The input pool of one type: random values (uniform in [−1, 1), small integers for i32) on the
/// GPU, and their host copy for the references.
struct Pool<T> {
    device: CudaSlice<T>,
    host: Vec<T>,
}

impl<T: OpInput> Pool<T> {
    /// Where the j-th input of `len` values starts: 1 KiB-aligned, consecutive inputs apart.
    fn offset(&self, len: usize, j: usize) -> usize {
        let stride = len.div_ceil(256) * 256;
        let slots = (self.host.len() - len) / stride + 1;
        (j % slots) * stride
    }

    fn slots(&self, len: usize) -> usize {
        (self.host.len() - len) / (len.div_ceil(256) * 256) + 1
    }
}

fn note(line: String) {
    eprintln!("{line}");
}

/// What one graph measurement read: `bytes` per operation (ours and the peers' by one formula),
/// and of the pool's distinct inputs as many as the graph's operations touched.
fn input(dtype: Dtype, n: usize, block: u32, bytes: usize, timing: &GraphTiming, pool_bytes: usize) -> Input {
    let per_op = pool_bytes / (pool_bytes / bytes.max(1)).max(1);
    Input { dtype, n, block, cache: Cache::Rotated, bytes, working_set_bytes: (timing.ops_per_graph * per_op).min(pool_bytes) }
}

fn bench_typed<T: RowSums>(gpu: &Gpu, config: &OpsBenchConfig) -> Result<Vec<OpRow>> {
    let dtype = T::DTYPE;
    let elem = std::mem::size_of::<T>();
    let ops: Vec<Op> = config.ops.iter().copied().filter(|op| op.supports(dtype)).collect();
    let walks: Vec<Op> = if dtype == Dtype::I32 { Vec::new() } else { Op::MEAN_VAR_WALKS.to_vec() };
    let largest = config.sizes.iter().chain(&config.walk_sizes).copied().chain(config.shapes.iter().map(|&(m, n)| m * n)).max().unwrap_or(0);
    // Inputs rotate past L2 where they are smaller than it; one large enough needs no second.
    let want = largest.max(8 * gpu.info().l2_cache_bytes / elem);
    let (free, _) = gpu.memory()?;
    let len = want.min((free as f64 * 0.45) as usize / elem);
    note(format!("{dtype}: input pool of {len} values ({}), uniform in [-1, 1) (i32: [-1000, 1000)), seed {}", crate::error::human_bytes(len * elem), config.seed));
    let host: Vec<T> = crate::check::ops::input(Op::Max, crate::check::ops::Case::Random, len, config.seed);
    let mut device = gpu.alloc::<T>(len)?;
    gpu.upload_chunked(&host, &mut device, 0, "uploading the input pool")?;
    let pool = Pool { device, host };
    let mut out = crate::kernels::ops::alloc_bytes(gpu, 8 << 20)?;
    let mut rows = Vec::new();
    let skip = |n: usize| -> Option<String> { (n > pool.host.len()).then(|| format!("{n} values do not fit in the pool of {} (the GPU's free memory)", pool.host.len())) };

    // Whole arrays: each operator, then the yardsticks at the same size.
    let last_block = crate::Reducer::<T>::new(gpu, "reduce10_last_block", 256)?;
    for &n in &config.sizes {
        if let Some(why) = skip(n) {
            note(format!("skipped {dtype} n = {n}: {why}"));
            continue;
        }
        for &op in &ops {
            rows.push(measure_whole(gpu, config, &pool, &mut out, op, n)?);
        }
        // The ceiling: the read-only kernel's fastest shape at this size, as in the benchmark.
        let reference = T::reference(&pool.host[..n]);
        let (shape, timing) = crate::measure::read_only::fastest_shape(gpu, n, config.target_ms, &reference, |j| {
            let start = pool.offset(n, j);
            pool.device.slice(start..start + n)
        })?;
        let title = format!("read-only sum, fastest of {} shapes: {} threads × {} loads", crate::kernels::READ_ONLY_SHAPES.len(), shape.block, shape.loads);
        let measured = Measured { kernel: READ_ONLY_KERNEL, chapter: CHAPTER, title: &title, status: Status::Ceiling };
        let r = row(measured, input(dtype, n, shape.block, op_bytes("sum", 1, n, elem), &timing, pool.slots(n) * n * elem), &timing);
        note(format!("{dtype:>4} {n:>11} {READ_ONLY_KERNEL:<24} {:>10.2} µs {:>8.1} GB/s ({})", r.median_us, r.gbps(), shape.label()));
        rows.push(OpRow { row: r, op: "sum".into(), rows: 1 });
        // Kernel 10 at the block it prefers at this size, checked, then timed.
        let kernel = "reduce10_last_block";
        let mut reducer = crate::Reducer::<T>::new(gpu, kernel, last_block.kernel().preferred_block(n))?;
        let view = pool.device.slice(0..n);
        reducer.poison_outputs(n)?;
        let got = reducer.sum(&view)?;
        reducer.check(got, &reference).map_err(|why| Error::WrongSum { what: format!("{kernel} on {n} {dtype} values"), why })?;
        let timing = time_graph(gpu, config.target_ms, |j| {
            let start = pool.offset(n, j);
            reducer.enqueue(&pool.device.slice(start..start + n)).map(|_| ())
        })?;
        let measured = Measured { kernel, chapter: CHAPTER, title: "kernel 10: one pass, last block adds", status: Status::Correct };
        let r = row(measured, input(dtype, n, reducer.block(), op_bytes("sum", 1, n, elem), &timing, pool.slots(n) * n * elem), &timing);
        note(format!("{dtype:>4} {n:>11} {kernel:<24} {:>10.2} µs {:>8.1} GB/s", r.median_us, r.gbps()));
        rows.push(OpRow { row: r, op: "sum".into(), rows: 1 });
    }
    // The mean/variance walks: what a division per value costs.
    for &n in &config.walk_sizes {
        if skip(n).is_some() {
            continue;
        }
        for &op in &walks {
            rows.push(measure_whole(gpu, config, &pool, &mut out, op, n)?);
        }
    }

    // Rows: the planner's choice; for f32, max and mean/var with every strategy that could win.
    for &(m, n) in &config.shapes {
        if let Some(why) = skip(m * n) {
            note(format!("skipped {dtype} {m} × {n}: {why}"));
            continue;
        }
        for &op in &ops {
            let mut strategies = vec![None];
            if dtype == Dtype::F32 && matches!(op, Op::Max | Op::MeanVar) {
                strategies.extend(Strategy::ALL.into_iter().filter(|&s| crate::measure::rows_bench::measured(s, n)).map(Some));
            }
            for strategy in strategies {
                rows.push(measure_rows(gpu, config, &pool, &mut out, op, strategy, m, n)?);
            }
        }
        rows.extend(T::row_sums(gpu, config, &pool, m, n)?);
    }
    Ok(rows)
}

/// One operator on the first `n` values of the pool: checked, then timed.
fn measure_whole<T: OpInput>(gpu: &Gpu, config: &OpsBenchConfig, pool: &Pool<T>, out: &mut CudaSlice<u8>, op: Op, n: usize) -> Result<OpRow> {
    let dtype = T::DTYPE;
    let elem = std::mem::size_of::<T>();
    let mut reducer = OpReducer::new(gpu, op, dtype)?;
    let launch = reducer.plan_whole(n)?;
    let got = reducer.whole(&pool.device.slice(0..n))?;
    let expected = reference_parallel(op, &pool.host[..n]).ok_or_else(|| Error::Config { setting: format!("{op} of {n} values"), reason: "no reference".into() })?;
    check(op, got, &expected, launch.depth(n as u64, dtype)).map_err(|why| Error::WrongSum { what: format!("{} on {n} {dtype} values", op.entry(crate::kernels::ops::EntryShape::Whole, dtype)), why })?;
    let timing = time_graph(gpu, config.target_ms, |j| {
        let start = pool.offset(n, j);
        reducer.enqueue_whole(&pool.device.slice(start..start + n), out).map(|_| ())
    })?;
    let kernel = kernel_name(op, None);
    let measured = Measured { kernel: &kernel, chapter: CHAPTER, title: op.title(), status: Status::Correct };
    let mut r = row(measured, input(dtype, n, launch.block, op_bytes(op.name(), 1, n, elem), &timing, pool.slots(n) * n * elem), &timing);
    r.method = format!("{}; grid {} of {}", r.method, launch.grid, launch.block);
    note(format!("{dtype:>4} {n:>11} {kernel:<24} {:>10.2} µs {:>8.1} GB/s   grid {} × {}", r.median_us, r.gbps(), launch.grid, launch.block));
    Ok(OpRow { row: r, op: op.name().into(), rows: 1 })
}

/// One operator on an M × N matrix of the pool's values: every row checked, then timed.
#[allow(clippy::too_many_arguments)]
fn measure_rows<T: OpInput>(gpu: &Gpu, config: &OpsBenchConfig, pool: &Pool<T>, out: &mut CudaSlice<u8>, op: Op, strategy: Option<Strategy>, m: usize, n: usize) -> Result<OpRow> {
    let dtype = T::DTYPE;
    let elem = std::mem::size_of::<T>();
    let layout = RowLayout::dense(m, n);
    let mut reducer = OpReducer::new(gpu, op, dtype)?;
    reducer.set_strategy(strategy);
    let launch = reducer.plan_rows(layout)?.ok_or_else(|| Error::Config { setting: format!("{layout}"), reason: "nothing to launch".into() })?;
    let got = reducer.rows(&pool.device.slice(0..m * n), layout)?;
    let depth = row_depth(&launch, n as u64, dtype);
    check_rows(op, &got, &pool.host[..m * n], n, depth).map_err(|why| Error::WrongSum { what: format!("{op} on {layout} of {dtype}, {launch}"), why })?;
    let need = m * op.out_bytes();
    let mut big_out;
    let target: &mut CudaSlice<u8> = if out.len() >= need {
        out
    } else {
        big_out = crate::kernels::ops::alloc_bytes(gpu, need)?;
        &mut big_out
    };
    let timing = time_graph(gpu, config.target_ms, |j| {
        let start = pool.offset(m * n, j);
        reducer.enqueue_rows(&pool.device.slice(start..start + m * n), layout, &mut target.as_view_mut()).map(|_| ())
    })?;
    let kernel = kernel_name(op, Some(strategy));
    let title = format!("{} ({})", op.title(), launch.strategy.name());
    let measured = Measured { kernel: &kernel, chapter: CHAPTER, title: &title, status: Status::Correct };
    let mut r = row(measured, input(dtype, n, launch.block, op_bytes(op.name(), m, n, elem), &timing, pool.slots(m * n) * m * n * elem), &timing);
    r.method = format!("{}; {launch}", r.method);
    note(format!("{dtype:>4} {m:>8} × {n:<9} {kernel:<24} {:>10.2} µs {:>8.1} GB/s   {}", r.median_us, r.gbps(), launch.strategy.name()));
    Ok(OpRow { row: r, op: op.name().into(), rows: m })
}

/// Every row's result against its reference, rows checked on every core.
fn check_rows<T: OpInput>(op: Op, got: &[crate::kernels::ops::Value], host: &[T], n: usize, depth: crate::kernels::ops::Depth) -> std::result::Result<(), String> {
    let workers = std::thread::available_parallelism().map_or(4, |w| w.get());
    let per = got.len().div_ceil(workers).max(1);
    let wrong: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = got.chunks(per).enumerate().map(|(w, chunk)| {
            scope.spawn(move || {
                chunk.iter().enumerate().filter_map(|(i, g)| {
                    let r = w * per + i;
                    let expected = crate::check::ops::reference(op, &host[r * n..(r + 1) * n])?;
                    check(op, *g, &expected, depth).err().map(|why| format!("row {r}: {why}"))
                }).take(3).collect::<Vec<_>>()
            })
        }).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

/// Kernel 13's row sums of the same matrix, the chapter's yardstick for rows: the types kernel 13
/// takes (f32, f16, bf16) measure them; i32 has none.
trait RowSums: OpInput + Checked {
    fn row_sums(gpu: &Gpu, config: &OpsBenchConfig, pool: &Pool<Self>, m: usize, n: usize) -> Result<Option<OpRow>>;
}

macro_rules! row_sums_of {
    ($($t:ty),*) => {$(
        impl RowSums for $t {
            fn row_sums(gpu: &Gpu, config: &OpsBenchConfig, pool: &Pool<Self>, m: usize, n: usize) -> Result<Option<OpRow>> {
                measure_row_sums(gpu, config, pool, m, n).map(Some)
            }
        }
    )*};
}
row_sums_of!(f32, f16, bf16);

impl RowSums for i32 {
    fn row_sums(_: &Gpu, _: &OpsBenchConfig, _: &Pool<Self>, _: usize, _: usize) -> Result<Option<OpRow>> {
        Ok(None)
    }
}

fn measure_row_sums<T: OpInput + Checked + Element<Acc = f32>>(gpu: &Gpu, config: &OpsBenchConfig, pool: &Pool<T>, m: usize, n: usize) -> Result<OpRow> {
    let dtype = T::DTYPE;
    let elem = std::mem::size_of::<T>();
    let layout = RowLayout::dense(m, n);
    let mut reducer = RowReducer::new(gpu)?;
    let launch = reducer.plan_typed(layout, dtype)?.ok_or_else(|| Error::Config { setting: format!("{layout}"), reason: "nothing to launch".into() })?;
    let mut sums = gpu.alloc::<f32>(m)?;
    gpu.fill(&mut sums, f32::POISON)?;
    reducer.enqueue(&pool.device.slice(0..m * n), layout, &mut sums.as_view_mut())?;
    let got = gpu.download(&sums)?;
    gpu.synchronize()?;
    let references = crate::check::rows::row_references(&pool.host[..m * n], layout);
    crate::check::rows::check_rows(&got, &references, launch.addition_depth(n)).map_err(|why| Error::WrongSum { what: format!("kernel 13 on {layout} of {dtype}"), why })?;
    let total = m * n;
    let timing = time_graph(gpu, config.target_ms, |j| {
        let start = pool.offset(total, j);
        reducer.enqueue(&pool.device.slice(start..start + total), layout, &mut sums.as_view_mut()).map(|_| ())
    })?;
    let title = format!("kernel 13: row sums ({})", launch.strategy.name());
    let measured = Measured { kernel: crate::records::rows::AUTO_KERNEL, chapter: 13, title: &title, status: Status::Correct };
    let r = row(measured, input(dtype, n, launch.block, op_bytes("sum", m, n, elem), &timing, pool.slots(total) * total * elem), &timing);
    note(format!("{dtype:>4} {m:>8} × {n:<9} {:<24} {:>10.2} µs {:>8.1} GB/s", crate::records::rows::AUTO_KERNEL, r.median_us, r.gbps()));
    Ok(OpRow { row: r, op: "sum".into(), rows: m })
}
