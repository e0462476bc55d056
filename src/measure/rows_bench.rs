//! The row sums' benchmark (chapter 13): each strategy of [`crate::rows`] where it could win, and
//! the automatic choice, at a fixed M·N, each checked row by row before it is timed. Results are
//! ordinary benchmark rows ([`crate::records::bench`]) under `plots/data/rows/`, with the
//! convention of [`crate::records::rows`]: `n` is the row length N, and `bytes` the M·N·size
//! bytes read. f32 rows are measured with every strategy where it could win; f16 and bf16 rows
//! with the automatic choice.

use super::{row, Input, Measured};
use crate::records::rows::{AUTO_KERNEL, CHAPTER};
use crate::runtime::timing::time_graph;
use crate::data::Checked;
use crate::element::{Dtype, Element};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::records::bench::{Cache, Row, Status};
use crate::check::rows::{check_rows, exact_row_references};
use crate::rows::{RowLayout, RowReducer, Strategy, SPLIT_TILE_PACKS, WARP_MAX_PACKS};

/// M·N of the sweep: 2^28 values, 1 GiB of f32, many times any L2.
pub const SWEEP_VALUES: usize = 1 << 28;

/// The default shapes: M·N = 2^28 from 2^20 rows of 2^8 values to 16 rows of 2^24, and a
/// small LayerNorm-like 4096 × 64.
pub fn default_shapes() -> Vec<(usize, usize)> {
    let mut shapes = vec![(4096, 64)];
    shapes.extend((8..=24).map(|k| (SWEEP_VALUES >> k, 1usize << k)));
    shapes
}

/// A few of them, for `--quick`.
pub fn quick_shapes() -> Vec<(usize, usize)> {
    let mut shapes = vec![(4096, 64)];
    shapes.extend((8..=24).step_by(4).map(|k| (SWEEP_VALUES >> k, 1usize << k)));
    shapes
}

/// Whether the benchmark measures `strategy` on f32 rows of `cols` values: where it could win.
/// A team of lanes per row up to 8192 values (past that, one warp per SM-sized row is
/// hopeless); the split from one tile (16384 values; below, it is one block per row with a
/// ticket); one block per row always.
pub fn measured(strategy: Strategy, cols: usize) -> bool {
    let packs = cols.div_ceil(4);
    match strategy {
        Strategy::Warp => packs <= 8 * WARP_MAX_PACKS,
        Strategy::Block => true,
        Strategy::Split => packs >= SPLIT_TILE_PACKS,
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct RowsBenchConfig {
    /// (M, N) pairs.
    pub shapes: Vec<(usize, usize)>,
    pub target_ms: f64,
    pub seed: u64,
    /// Input types: f32 with every strategy, the others with the automatic choice only.
    pub dtypes: Vec<Dtype>,
}

impl Default for RowsBenchConfig {
    fn default() -> Self {
        RowsBenchConfig { shapes: default_shapes(), target_ms: 3.0, seed: 2007, dtypes: crate::rows::DTYPES.to_vec() }
    }
}

/// Measure each shape with each strategy that [`measured`] names and with the automatic choice
/// (f32), and with the automatic choice alone (f16, bf16): each checked row by row against the
/// reference before it is timed, timed like the full sums (CUDA graphs of back-to-back sums,
/// CUDA events, inputs rotated through a pool larger than L2). One line per measurement goes to
/// stderr as it is made.
pub fn bench(gpu: &Gpu, config: &RowsBenchConfig) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &dtype in &config.dtypes {
        match dtype {
            Dtype::F32 => rows.extend(bench_typed::<f32>(gpu, config)?),
            Dtype::F16 => rows.extend(bench_typed::<half::f16>(gpu, config)?),
            Dtype::BF16 => rows.extend(bench_typed::<half::bf16>(gpu, config)?),
            other => return Err(Error::Config { setting: format!("rows-bench --dtype {other}"), reason: "the row kernels take f32, f16 or bf16".into() }),
        }
    }
    Ok(rows)
}

fn bench_typed<T: Checked + Element<Acc = f32>>(gpu: &Gpu, config: &RowsBenchConfig) -> Result<Vec<Row>> {
    let elem = std::mem::size_of::<T>();
    let largest = config.shapes.iter().map(|&(m, n)| m * n).max().unwrap_or(0);
    // Under REDUCTION_DEVICE_MEMORY `free` is the capped figure: the pool fits the cap, and the
    // shapes larger than the pool are skipped below, with the reason.
    let (free, _) = gpu.memory()?;
    // Its host copy (the references are computed from it) within the host's share as well.
    let pool_len = crate::limits::pool_values(largest, gpu.info().l2_cache_bytes, free, elem).min(crate::limits::host_pool_values(elem));
    // Exact by construction for the longest row, so that every row of every shape is checked bit
    // for bit before it is timed (the time of an f32 add does not depend on its operands).
    let longest = config.shapes.iter().map(|&(_, n)| n).max().unwrap_or(1);
    eprintln!("{} input pool of {} values ({}), exact by construction (nonzero integers up to {}, random signs), seed {}",
        T::DTYPE, pool_len, crate::error::human_bytes(pool_len * elem), T::exact_limit(longest), config.seed);
    let host: Vec<T> = crate::data::exact_parallel_for(pool_len, longest, config.seed);
    let mut pool = gpu.alloc::<T>(pool_len)?;
    gpu.upload_chunked(&host, &mut pool, 0, "uploading the input pool")?;
    let strategies: Vec<Option<Strategy>> = match T::DTYPE {
        Dtype::F32 => vec![Some(Strategy::Warp), Some(Strategy::Block), Some(Strategy::Split), None],
        _ => vec![None],
    };
    let mut reducers: Vec<(Option<Strategy>, RowReducer)> = Vec::new();
    for s in strategies {
        reducers.push((s, RowReducer::with_strategy(gpu, s)?));
    }
    let mut rows = Vec::new();
    for &(m, n) in &config.shapes {
        let layout = RowLayout::dense(m, n);
        let total = m * n;
        if total == 0 {
            eprintln!("skipped {layout}: empty");
            continue;
        }
        if total > pool_len {
            eprintln!("skipped {layout} of {}: {} does not fit in the pool of {} (45% of the {} free{})", T::DTYPE,
                crate::error::human_bytes(total * elem), crate::error::human_bytes(pool_len * elem), crate::error::human_bytes(free),
                gpu.memory_note().map(|n| format!("; {n}")).unwrap_or_default());
            continue;
        }
        // Consecutive inputs start 1 KiB apart at least and do not overlap.
        let step = total.div_ceil(256) * 256;
        let slots = (pool_len - total) / step + 1;
        let references = exact_row_references(&host[..total], layout).map_err(|why| Error::Config { setting: format!("the exact input of {layout}"), reason: why })?;
        let mut out = gpu.alloc::<f32>(m)?;
        for (strategy, reducer) in reducers.iter_mut() {
            if strategy.is_some_and(|s| !measured(s, n)) {
                continue;
            }
            let launch = reducer.plan_typed(layout, T::DTYPE)?.expect("a non-empty layout is launched");
            // Correct before fast: poisoned outputs, the first input, every row checked.
            gpu.fill(&mut out, f32::POISON)?;
            reducer.enqueue(&pool.slice(..total), layout, &mut out.as_view_mut())?;
            let got = gpu.download(&out)?;
            gpu.synchronize()?;
            let name = strategy.map_or(AUTO_KERNEL, |s| s.kernel());
            check_rows(&got, &references, launch.addition_depth(n)).map_err(|why| Error::WrongSum { what: format!("{name} on {layout} of {}", T::DTYPE), why })?;
            let timing = time_graph(gpu, config.target_ms, |j| {
                let start = (j % slots) * step;
                reducer.enqueue(&pool.slice(start..start + total), layout, &mut out.as_view_mut()).map(|_| ())
            })?;
            let title = match strategy {
                Some(s) => s.title().to_string(),
                None => format!("automatic ({})", launch.strategy.name()),
            };
            let working_set = timing.ops_per_graph.min(slots) * total * elem;
            let what = Measured { kernel: name, chapter: CHAPTER, title: &title, status: Status::Correct };
            let measured = row(what, Input { dtype: T::DTYPE, n, block: launch.block, cache: Cache::Rotated, bytes: total * elem, working_set_bytes: working_set }, &timing);
            eprintln!("{:>4} {:>8} × {:<9} {:<11} {:>10.2} µs {:>8.1} GB/s   {launch}", T::DTYPE, m, n, name, measured.median_us, measured.gbps());
            rows.push(measured);
        }
    }
    Ok(rows)
}
