//! Row sums (chapter 13): the `f32` sum of each row of a row-major M × N matrix, M values out.
//! The reductions deep learning runs — LayerNorm's means, softmax's denominators — are these,
//! not one sum of everything.
//!
//! Three kernels (`kernels/13_rows.cu`), and a host that picks one by the shape and says why
//! ([`choose`], tested without a GPU); [`RowReducer`] plans, checks and launches, and
//! [`bench`] measures the three and the automatic choice at a fixed M·N. Results are ordinary
//! benchmark rows ([`crate::results`]) under `plots/data/rows/`, with one convention: `n` is the
//! row length N, and `bytes` the M·N·4 bytes read, so M = bytes / (4·n). [`render`] draws the
//! chapter's table and chart from them.

use crate::data::{compensated_sum, Checked, Reference};
use crate::element::Element;
use crate::error::{io_error, During, Error, Result};
use crate::gpu::Gpu;
use crate::element::Dtype;
use crate::results::{Cache, Machine, Row, Status};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// The shape, the choice and the launch plan: no GPU needed.

/// Who sums a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// One warp per row, 8 rows per block (`rows_warp_f32`).
    Warp,
    /// One block per row (`rows_block_f32`).
    Block,
    /// Several blocks per row, the last to finish adds the row's partials (`rows_split_f32`).
    Split,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Warp, Strategy::Block, Strategy::Split];

    /// `warp`, `block`, `split`: for command lines and tables.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Warp => "warp",
            Strategy::Block => "block",
            Strategy::Split => "split",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|k| k.name() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            Strategy::Warp => "one warp per row",
            Strategy::Block => "one block per row",
            Strategy::Split => "several blocks per row",
        }
    }

    /// The entry point in `kernels/13_rows.cu`, and the benchmark's name for the strategy.
    pub fn kernel(self) -> &'static str {
        match self {
            Strategy::Warp => "rows_warp",
            Strategy::Block => "rows_block",
            Strategy::Split => "rows_split",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A row-major matrix of `rows` × `cols` values in a buffer, row `r` starting at `r * stride`:
/// `stride > cols` is a view of the first `cols` columns of a wider matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLayout {
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl RowLayout {
    /// Rows one after another.
    pub fn dense(rows: usize, cols: usize) -> RowLayout {
        RowLayout { rows, cols, stride: cols }
    }

    pub fn strided(rows: usize, cols: usize, stride: usize) -> RowLayout {
        RowLayout { rows, cols, stride }
    }

    /// True when there is nothing to add: no rows, or rows of no values (whose sums are zero).
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// The values a buffer must hold: `(rows - 1) · stride + cols` (none if the layout is empty).
    pub fn required_len(&self) -> Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        if self.stride < self.cols {
            return Err(self.refuse(format!("the row stride {} is shorter than a row of {} values: rows would overlap", self.stride, self.cols)));
        }
        (self.rows - 1)
            .checked_mul(self.stride)
            .and_then(|x| x.checked_add(self.cols))
            .ok_or_else(|| self.refuse(format!("{} rows of stride {} do not fit in a 64-bit index", self.rows, self.stride)))
    }

    /// Refuse, before any launch, a buffer of `len` values too short for this layout.
    pub fn check(&self, len: usize) -> Result<()> {
        let need = self.required_len()?;
        if len < need {
            return Err(self.refuse(format!("the input holds {len} values, but {self} needs {need}")));
        }
        Ok(())
    }

    fn refuse(&self, reason: String) -> Error {
        Error::InvalidLength { kernel: "rows".into(), n: self.rows.saturating_mul(self.cols), reason }
    }
}

impl fmt::Display for RowLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} × {}", self.rows, self.cols)?;
        if self.stride != self.cols {
            write!(f, " (row stride {})", self.stride)?;
        }
        Ok(())
    }
}

// ANCHOR: choose
/// Rows this short go to one warp each: at most eight 16-byte loads per lane.
pub const WARP_MAX_COLS: usize = 1024;
/// Rows this long may be split: at least two slices of 4096 values (each of a slice's 256
/// threads then makes four 16-byte loads or more).
pub const SPLIT_MIN_COLS: usize = 8192;

/// The strategy for `m` rows of `n` values on a GPU of `sm_count` SMs, and why.
pub fn choose(m: usize, n: usize, sm_count: u32) -> (Strategy, &'static str) {
    if n <= WARP_MAX_COLS {
        (Strategy::Warp, "rows of at most 1024 values: one warp per row, at most eight 16-byte loads per lane, no barrier")
    } else if m >= sm_count as usize {
        (Strategy::Block, "rows longer than 1024 values, and at least one per SM: one block per row")
    } else if n >= SPLIT_MIN_COLS {
        (Strategy::Split, "fewer rows than SMs: one block per row would leave SMs idle, so each row is split across several blocks")
    } else {
        (Strategy::Block, "fewer rows than SMs, but rows under 8192 values, too short to split: one block per row")
    }
}
// ANCHOR_END: choose

/// Threads per block of the warp strategy: 8 rows per block.
pub const WARP_BLOCK: u32 = 256;
/// Threads per block of the split strategy.
pub const SPLIT_BLOCK: u32 = 256;
/// Values one slice of a split row holds at least: four 16-byte loads per thread.
pub const SPLIT_MIN_SLICE: usize = SPLIT_BLOCK as usize * 16;

/// Threads per block of the block strategy: enough that each makes about four 16-byte loads,
/// from 128 (rows up to 2048 values) to 1024 (rows of 16384 values and more).
pub fn block_threads(cols: usize) -> u32 {
    (cols.div_ceil(16).max(1).next_power_of_two()).clamp(128, 1024) as u32
}

/// What the planner needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub sm_count: u32,
    /// Blocks of the split kernel the GPU holds at once (SMs × resident blocks per SM).
    pub split_resident_blocks: u32,
    /// The most blocks a launch uses along x (warp and block strategies) and along y (the
    /// split's rows); the kernels loop over the rows past them. The hardware's limits by
    /// default; the tests lower them to reach the loops.
    pub max_grid_x: u32,
    pub max_grid_y: u32,
}

impl Limits {
    pub const HARDWARE_GRID_X: u32 = i32::MAX as u32;
    pub const HARDWARE_GRID_Y: u32 = 65535;

    /// An H200's numbers (132 SMs, 8 resident blocks of 256 threads each), for tests and
    /// examples without a GPU.
    pub fn h200() -> Limits {
        Limits { sm_count: 132, split_resident_blocks: 132 * 8, max_grid_x: Limits::HARDWARE_GRID_X, max_grid_y: Limits::HARDWARE_GRID_Y }
    }
}

/// One launch: which kernel, why, and its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub strategy: Strategy,
    pub reason: &'static str,
    pub grid: (u32, u32),
    pub block: u32,
    /// Blocks per row (the split strategy; 1 otherwise).
    pub slices: u32,
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): grid {} × {} of {} threads", self.strategy.title(), self.strategy.kernel(), self.grid.0, self.grid.1, self.block)?;
        if self.strategy == Strategy::Split {
            write!(f, ", {} blocks per row", self.slices)?;
        }
        write!(f, "; because {}", self.reason)
    }
}

impl Launch {
    /// The most roundings any one value of a row of `cols` values goes through in this launch:
    /// what the row's error bound is computed from ([`crate::data::error_bound`]). A warp adds its
    /// lanes' shares in 5 shuffle steps; a block adds its threads' in its tree; a split row adds
    /// its slices' partials with one more block.
    pub fn addition_depth(&self, cols: usize) -> u64 {
        use crate::plan::{block_depth, thread_depth};
        let cols = cols as u64;
        match self.strategy {
            Strategy::Warp => thread_depth(cols, 32) + 5,
            Strategy::Block => thread_depth(cols, self.block as u64) + block_depth(self.block),
            Strategy::Split => {
                let slices = self.slices.max(1) as u64;
                let per = cols.div_ceil(slices).div_ceil(4) * 4;
                thread_depth(per, self.block as u64) + thread_depth(slices, self.block as u64) + 2 * block_depth(self.block)
            }
        }
    }
}

/// The reason given for a strategy the caller chose.
pub const FORCED: &str = "the caller asked for it";

/// The launch that sums `layout`: `strategy`, or the automatic choice when `None`. `None` for
/// an empty layout (no launch: no rows, or rows whose sums are zero).
pub fn plan(layout: RowLayout, strategy: Option<Strategy>, limits: Limits) -> Result<Option<Launch>> {
    layout.required_len()?;
    if layout.is_empty() {
        return Ok(None);
    }
    let (m, n) = (layout.rows, layout.cols);
    let (strategy, reason) = match strategy {
        Some(s) => (s, FORCED),
        None => choose(m, n, limits.sm_count),
    };
    let rows_per_block = (WARP_BLOCK / 32) as usize;
    let capped = |blocks: usize, cap: u32| blocks.min(cap.max(1) as usize) as u32;
    let launch = match strategy {
        Strategy::Warp => Launch { strategy, reason, grid: (capped(m.div_ceil(rows_per_block), limits.max_grid_x), 1), block: WARP_BLOCK, slices: 1 },
        Strategy::Block => Launch { strategy, reason, grid: (capped(m, limits.max_grid_x), 1), block: block_threads(n), slices: 1 },
        Strategy::Split => {
            // Enough blocks in all to fill the GPU once, but no slice under SPLIT_MIN_SLICE.
            let wanted = (limits.split_resident_blocks.max(1) as usize).div_ceil(m);
            let slices = wanted.min(n / SPLIT_MIN_SLICE).clamp(1, limits.max_grid_x as usize) as u32;
            m.checked_mul(slices as usize).ok_or_else(|| layout.refuse(format!("{m} rows × {slices} partial sums overflow")))?;
            Launch { strategy, reason, grid: (slices, capped(m, limits.max_grid_y)), block: SPLIT_BLOCK, slices }
        }
    };
    Ok(Some(launch))
}

// ---------------------------------------------------------------------------------------------
// On the GPU.

/// Sums the rows of matrices on one GPU: the three entry points, loaded once, and the split's
/// scratch buffers (partial sums and one ticket per row), which only grow.
pub struct RowReducer {
    gpu: Gpu,
    /// Indexed by [`Strategy`].
    functions: [CudaFunction; 3],
    strategy: Option<Strategy>,
    limits: Limits,
    partials: Option<CudaSlice<f32>>,
    /// One counter per row; zero between launches (the split kernel leaves them so).
    tickets: Option<CudaSlice<u32>>,
}

impl RowReducer {
    /// A reducer that picks the strategy by the shape ([`choose`]).
    pub fn new(gpu: &Gpu) -> Result<RowReducer> {
        RowReducer::with_strategy(gpu, None)
    }

    /// A reducer that always uses `strategy` (`None`: choose by the shape). Compiles
    /// `kernels/13_rows.cu` if this process has not.
    pub fn with_strategy(gpu: &Gpu, strategy: Option<Strategy>) -> Result<RowReducer> {
        RowReducer::with_spec(gpu, &crate::kernels::ROWS, strategy)
    }

    /// As [`RowReducer::with_strategy`], with the row kernels of `kernels` (a planted bug of
    /// [`crate::mutants`] in place of [`crate::kernels::ROWS`]).
    pub fn with_spec(gpu: &Gpu, kernels: &'static crate::kernels::KernelSpec, strategy: Option<Strategy>) -> Result<RowReducer> {
        let load = |s: Strategy| gpu.function(kernels, &format!("{}_f32", s.kernel()));
        let functions = [load(Strategy::Warp)?, load(Strategy::Block)?, load(Strategy::Split)?];
        let per_sm = functions[Strategy::Split.index()]
            .occupancy_max_active_blocks_per_multiprocessor(SPLIT_BLOCK, 0, None)
            .during("asking the occupancy calculator")?;
        if per_sm == 0 {
            return Err(Error::InvalidBlockSize { kernel: "rows_split".into(), block: SPLIT_BLOCK, reason: "not one block of this size fits on an SM".into() });
        }
        let sm_count = gpu.info().sm_count;
        let limits = Limits { sm_count, split_resident_blocks: sm_count * per_sm, max_grid_x: Limits::HARDWARE_GRID_X, max_grid_y: Limits::HARDWARE_GRID_Y };
        Ok(RowReducer { gpu: gpu.clone(), functions, strategy, limits, partials: None, tickets: None })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Use at most `max_blocks` blocks along x (warp, block) and y (split), so that a test can
    /// reach the loops over rows that only billions of rows would reach otherwise.
    pub fn limit_grid(&mut self, max_blocks: u32) {
        self.limits.max_grid_x = max_blocks.clamp(1, Limits::HARDWARE_GRID_X);
        self.limits.max_grid_y = max_blocks.clamp(1, Limits::HARDWARE_GRID_Y);
    }

    /// The launch this reducer makes for `layout` (`None`: nothing to launch).
    pub fn plan(&self, layout: RowLayout) -> Result<Option<Launch>> {
        plan(layout, self.strategy, self.limits)
    }

    /// Queue the row sums of `input` (laid out as `layout`) into `out[0 .. rows)`, and return the
    /// launch made. Nothing waits for the GPU, so calls can be timed or captured into a graph.
    /// An empty layout launches nothing: rows of no values get zeros (a memset), no rows nothing.
    pub fn enqueue(&mut self, input: &CudaView<'_, f32>, layout: RowLayout, out: &mut CudaViewMut<'_, f32>) -> Result<Option<Launch>> {
        layout.check(input.len())?;
        if out.len() < layout.rows {
            return Err(layout.refuse(format!("the output holds {} values, one per row needs {}", out.len(), layout.rows)));
        }
        let Some(launch) = self.plan(layout)? else {
            if layout.rows > 0 {
                self.gpu.stream().memset_zeros(&mut out.slice_mut(..layout.rows)).during("zeroing the sums of empty rows")?;
            }
            return Ok(None);
        };
        let (rows, cols, stride) = (layout.rows as u64, layout.cols as u64, layout.stride as u64);
        let config = LaunchConfig { grid_dim: (launch.grid.0, launch.grid.1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: 0 };
        let stream = self.gpu.stream().clone();
        let function = &self.functions[launch.strategy.index()];
        let mut args = stream.launch_builder(function);
        args.arg(input).arg(out).arg(&rows).arg(&cols).arg(&stride);
        let fired = match launch.strategy {
            // SAFETY: rows_{warp,block}_f32(const float*, float*, u64, u64, u64): layout.check
            // proved the input holds (rows - 1) * stride + cols values, and out holds >= rows.
            Strategy::Warp | Strategy::Block => unsafe { args.launch(config) },
            Strategy::Split => {
                let partials_len = layout.rows * launch.slices as usize; // plan checked it fits
                if self.partials.as_ref().map_or(true, |p| p.len() < partials_len) {
                    self.partials = None; // free first, so that growth never holds both
                    self.partials = Some(self.gpu.alloc::<f32>(partials_len)?);
                }
                if self.tickets.as_ref().map_or(true, |t| t.len() < layout.rows) {
                    self.tickets = None;
                    self.tickets = Some(stream.alloc_zeros::<u32>(layout.rows).during("allocating one ticket per row")?);
                }
                let (partials, tickets) = (self.partials.as_mut().unwrap(), self.tickets.as_mut().unwrap());
                args.arg(partials).arg(tickets);
                // SAFETY: rows_split_f32(..., float* partials, unsigned* tickets): as above, plus
                // partials for rows × gridDim.x values and one zeroed ticket per row.
                unsafe { args.launch(config) }
            }
        };
        fired.map_err(|e| Error::Cuda { during: format!("launching {} on {layout}", launch), message: e.to_string() })?;
        Ok(Some(launch))
    }

    /// The row sums of a device matrix, read back (waits for the GPU).
    pub fn sum(&mut self, input: &CudaView<'_, f32>, layout: RowLayout) -> Result<Vec<f32>> {
        layout.check(input.len())?;
        if layout.rows == 0 {
            return Ok(Vec::new());
        }
        let mut out = self.gpu.alloc::<f32>(layout.rows)?;
        self.enqueue(input, layout, &mut out.as_view_mut())?;
        let sums = self.gpu.download(&out)?;
        self.gpu.synchronize()?;
        Ok(sums)
    }

    /// Copy `host` to the GPU and sum its rows there.
    pub fn sum_host(&mut self, host: &[f32], layout: RowLayout) -> Result<Vec<f32>> {
        layout.check(host.len())?;
        if layout.rows == 0 {
            return Ok(Vec::new());
        }
        let device = self.gpu.upload(&host[..layout.required_len()?])?;
        self.sum(&device.as_view(), layout)
    }
}

// ---------------------------------------------------------------------------------------------
// The reference: one compensated f64 sum per row, and the f32 error bound of data.rs.

/// The reference of every row of `host`, computed on every core.
pub fn row_references(host: &[f32], layout: RowLayout) -> Vec<Reference> {
    let row = |r: usize| -> Reference {
        let start = r * layout.stride;
        let (sum_f64, abs_sum) = compensated_sum(&host[start..start + layout.cols]);
        Reference { n: layout.cols, sum_f64, sum_i64: 0, abs_sum, exact: false }
    };
    let mut out = vec![Reference { n: layout.cols, ..Reference::EMPTY }; layout.rows];
    if layout.cols == 0 {
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let per = layout.rows.div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        for (w, chunk) in out.chunks_mut(per).enumerate() {
            let row = &row;
            scope.spawn(move || chunk.iter_mut().enumerate().for_each(|(i, r)| *r = row(w * per + i)));
        }
    });
    out
}

/// The exact reference of every row of an exact-by-construction `host` ([`Checked::fill_exact`],
/// drawn for rows of `layout.cols` values): each row's sum must come back bit for bit. `Err` if
/// a row is not such an input.
pub fn exact_row_references(host: &[f32], layout: RowLayout) -> std::result::Result<Vec<Reference>, String> {
    (0..layout.rows)
        .map(|r| {
            let start = r * layout.stride;
            f32::exact_reference(&host[start..start + layout.cols]).map_err(|why| format!("row {r}: {why}"))
        })
        .collect()
}

/// `Ok` if there is one sum per reference and each is right: bit for bit for an exact reference,
/// within the f32 error bound at addition depth `depth` ([`Launch::addition_depth`]) otherwise
/// (NaN never is); otherwise how many rows are wrong, and the first few.
pub fn check_rows(got: &[f32], references: &[Reference], depth: u64) -> std::result::Result<(), String> {
    if got.len() != references.len() {
        return Err(format!("{} sums for {} rows", got.len(), references.len()));
    }
    let wrong: Vec<String> = got.iter().zip(references).enumerate()
        .filter_map(|(r, (&g, reference))| f32::check_with(g, reference, depth).err().map(|why| format!("row {r}: {why}")))
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} rows wrong; {}", wrong.len(), got.len(), wrong.iter().take(3).cloned().collect::<Vec<_>>().join("; ")))
    }
}

// ---------------------------------------------------------------------------------------------
// The benchmark.

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

/// Whether the benchmark measures `strategy` on rows of `cols` values: where it could win. A
/// warp per row up to 8192 values (past that, one warp per SM-sized row is hopeless); the
/// split from 4096 (below, it is one block per row with a ticket); one block per row always.
pub fn measured(strategy: Strategy, cols: usize) -> bool {
    match strategy {
        Strategy::Warp => cols <= 8 * WARP_MAX_COLS,
        Strategy::Block => true,
        Strategy::Split => cols >= SPLIT_MIN_COLS / 2,
    }
}

/// The name of the automatic choice's rows, and of the library peer's.
pub const AUTO_KERNEL: &str = "rows_auto";
pub const TORCH_KERNEL: &str = "torch_sum_dim1";
/// The chapter of the kernels, in the results' `chapter` column.
pub const CHAPTER: u32 = 13;

/// What to measure.
#[derive(Clone, Debug)]
pub struct RowsBenchConfig {
    /// (M, N) pairs.
    pub shapes: Vec<(usize, usize)>,
    pub target_ms: f64,
    pub seed: u64,
}

impl Default for RowsBenchConfig {
    fn default() -> Self {
        RowsBenchConfig { shapes: default_shapes(), target_ms: 3.0, seed: 2007 }
    }
}

/// Measure each shape with each strategy that [`measured`] names and with the automatic choice:
/// each checked row by row against the reference before it is timed, timed like the full sums
/// (CUDA graphs of back-to-back sums, CUDA events, inputs rotated through a pool larger than
/// L2). One line per measurement goes to stderr as it is made.
pub fn bench(gpu: &Gpu, config: &RowsBenchConfig) -> Result<Vec<Row>> {
    let elem = std::mem::size_of::<f32>();
    let largest = config.shapes.iter().map(|&(m, n)| m * n).max().unwrap_or(0);
    let want = (2 * largest).max(8 * gpu.info().l2_cache_bytes / elem);
    let (free, _) = gpu.memory()?;
    let pool_len = want.min((free as f64 * 0.45) as usize / elem);
    if pool_len < largest {
        return Err(Error::OutOfMemory { requested_bytes: largest * elem, free_bytes: free });
    }
    // Exact by construction for the longest row, so that every row of every shape is checked bit
    // for bit before it is timed (the time of an f32 add does not depend on its operands).
    let longest = config.shapes.iter().map(|&(_, n)| n).max().unwrap_or(1);
    eprintln!("input pool of {} values ({}), exact by construction (nonzero integers up to {}, random signs), seed {}",
        pool_len, crate::error::human_bytes(pool_len * elem), f32::exact_limit(longest), config.seed);
    let host: Vec<f32> = crate::data::exact_parallel_for(pool_len, longest, config.seed);
    let mut pool = gpu.alloc::<f32>(pool_len)?;
    for (i, chunk) in host.chunks(1 << 26).enumerate() {
        let start = i << 26;
        gpu.stream().memcpy_htod(chunk, &mut pool.slice_mut(start..start + chunk.len())).during("uploading the input pool")?;
    }
    gpu.synchronize()?;
    let mut reducers: Vec<(Option<Strategy>, RowReducer)> = Vec::new();
    for s in [Some(Strategy::Warp), Some(Strategy::Block), Some(Strategy::Split), None] {
        reducers.push((s, RowReducer::with_strategy(gpu, s)?));
    }
    let mut rows = Vec::new();
    for &(m, n) in &config.shapes {
        let layout = RowLayout::dense(m, n);
        let total = m * n;
        if total == 0 || total > pool_len {
            eprintln!("skipped {layout}: empty, or larger than the pool");
            continue;
        }
        // Consecutive inputs start 1 KiB apart at least and do not overlap.
        let step = total.div_ceil(256) * 256;
        let slots = (pool_len - total) / step + 1;
        let references = exact_row_references(&host[..total], layout).map_err(|why| Error::Cuda { during: format!("making the reference of {layout}"), message: why })?;
        let mut out = gpu.alloc::<f32>(m)?;
        for (strategy, reducer) in reducers.iter_mut() {
            if strategy.is_some_and(|s| !measured(s, n)) {
                continue;
            }
            let launch = reducer.plan(layout)?.expect("a non-empty layout is launched");
            // Correct before fast: poisoned outputs, the first input, every row checked.
            gpu.fill(&mut out, f32::POISON)?;
            reducer.enqueue(&pool.slice(..total), layout, &mut out.as_view_mut())?;
            let got = gpu.download(&out)?;
            gpu.synchronize()?;
            let name = strategy.map_or(AUTO_KERNEL, |s| s.kernel());
            check_rows(&got, &references, launch.addition_depth(n)).map_err(|why| Error::Cuda { during: format!("checking {name} on {layout}"), message: why })?;
            let timing = crate::bench::time_graph(gpu, config.target_ms, |j| {
                let start = (j % slots) * step;
                reducer.enqueue(&pool.slice(start..start + total), layout, &mut out.as_view_mut()).map(|_| ())
            })?;
            let title = match strategy {
                Some(s) => s.title().to_string(),
                None => format!("automatic ({})", launch.strategy.name()),
            };
            let working_set = timing.ops_per_graph.min(slots) * total * elem;
            let row = timing.row(name, CHAPTER, &title, Status::Correct, Dtype::F32, n, launch.block, Cache::Rotated, total * elem, working_set);
            eprintln!("{:>8} × {:<9} {:<11} {:>10.2} µs {:>8.1} GB/s   {launch}", m, n, name, row.median_us, row.gbps());
            rows.push(row);
        }
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// The chapter's table and chart, drawn from plots/data/rows/.

/// Where the row-sum results of a GPU are: `plots/data/rows/<gpu-slug>.csv`, and
/// `<gpu-slug>-peers.csv` from `plots/peers.py --rows`.
pub fn results_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("rows")
}

/// The command that measures what the table and chart show.
pub const MEASURE_COMMAND: &str = "cargo run --release -- rows-bench";

/// The rows of one GPU (by slug) under `rows_dir`, both files merged, the benchmark's header
/// kept; `None` where neither file exists.
pub fn load(rows_dir: &Path, slug: &str) -> Result<Option<(Machine, Vec<Row>)>> {
    let mut found: Option<(Machine, Vec<Row>)> = None;
    for file in [format!("{slug}.csv"), format!("{slug}-peers.csv")] {
        let path = rows_dir.join(file);
        if !path.is_file() {
            continue;
        }
        let (machine, rows) = crate::results::read_csv(&path)?;
        match found.as_mut() {
            Some((_, existing)) => existing.extend(rows),
            None => found = Some((machine, rows)),
        }
    }
    Ok(found)
}

/// M of a row-sum result: bytes / (4 · n).
pub fn rows_of(row: &Row) -> usize {
    row.bytes / (4 * row.n.max(1))
}

/// Write `book/generated/rows.md` (the table), `book/generated/rows_chart.md` (the chart, or
/// why there is none) and, where there are measurements, `plots/rows.svg`, for the GPU the
/// book shows. With no row data, the two notes say how to measure, and no chart is drawn.
pub fn render(data_dir: &Path, book: &Machine, root: &Path) -> Result<Vec<PathBuf>> {
    let slug = crate::results::slug(&book.gpu);
    let loaded = load(&results_dir(data_dir), &slug)?;
    let generated = root.join("book/generated");
    std::fs::create_dir_all(&generated).map_err(|e| io_error(&generated, e))?;
    let mut written = Vec::new();
    let (table, chart_note) = match &loaded {
        Some((machine, rows)) if !rows.is_empty() => {
            let svg = root.join("plots/rows.svg");
            let (title, y_desc, series) = chart_series(machine, rows);
            written.push(crate::plots::draw_line_chart(&svg, title, y_desc, series)?);
            (table(machine, rows), "{{#include ../../plots/rows.svg}}\n".to_string())
        }
        _ => {
            let note = format!("*Not yet measured on the {}: run `{MEASURE_COMMAND}` on it (on a GPU host without Rust, \
                `bash tests/gpu-host.sh rows` and copy `$OUT/rows/*.csv` to `plots/data/rows/`), then \
                `cargo run -- bench --plot-only`.*\n", book.gpu);
            (note, format!("*Not yet measured on the {}: no chart yet.*\n", book.gpu))
        }
    };
    for (name, text) in [("rows.md", table), ("rows_chart.md", chart_note)] {
        let path = generated.join(name);
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// The series the chart draws: time against N at the M·N most shapes share (the fixed product
/// of the sweep), one line per strategy, the automatic choice and the library peer (dashed).
fn chart_series(machine: &Machine, rows: &[Row]) -> (String, String, crate::plots::PlainSeries) {
    let product = common_product(rows);
    let mut series = Vec::new();
    let names: Vec<(&str, String, bool)> = Strategy::ALL.iter().map(|s| (s.kernel(), format!("{}: {}", s.kernel(), s.title()), false))
        .chain([(AUTO_KERNEL, format!("{AUTO_KERNEL}: the host's choice"), false), (TORCH_KERNEL, "torch.sum(x, dim=1)".to_string(), true)])
        .collect();
    for (kernel, label, dashed) in names {
        let mut points: Vec<(f64, f64)> = rows.iter()
            .filter(|r| r.kernel == kernel && r.bytes == product)
            .map(|r| (r.n as f64, r.median_us))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !points.is_empty() {
            series.push((label, points, dashed));
        }
    }
    let values = product / 4;
    let size = if values.is_power_of_two() { format!("2^{}", values.trailing_zeros()) } else { values.to_string() };
    (format!("Row sums of M × N = {size} f32 values, {}: time vs row length N", machine.gpu), "median time per M row sums (µs)".into(), series)
}

/// The bytes per operation that most rows share.
fn common_product(rows: &[Row]) -> usize {
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for r in rows {
        match counts.iter_mut().find(|(b, _)| *b == r.bytes) {
            Some((_, c)) => *c += 1,
            None => counts.push((r.bytes, 1)),
        }
    }
    // The most common; on a tie the largest, so that the sweep wins over a lone small shape.
    counts.into_iter().max_by_key(|&(b, c)| (c, b)).map_or(0, |(b, _)| b)
}

fn find<'a>(rows: &'a [Row], kernel: &str, m: usize, n: usize) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.n == n && rows_of(r) == m && r.cache == Cache::Rotated)
}

fn power(v: usize) -> String {
    if v.is_power_of_two() && v >= 1 << 14 { format!("2^{}", v.trailing_zeros()) } else { v.to_string() }
}

/// The table of every shape: each strategy's time, the automatic choice, the library peer, the
/// fastest in bold and its bandwidth; then how often the automatic choice was the fastest of
/// the three kernels.
pub fn table(machine: &Machine, rows: &[Row]) -> String {
    let mut shapes: Vec<(usize, usize)> = rows.iter().map(|r| (rows_of(r), r.n)).collect();
    shapes.sort_by_key(|&(m, n)| (n, m));
    shapes.dedup();
    let has_peer = rows.iter().any(|r| r.kernel == TORCH_KERNEL);
    let mut s = String::new();
    let mut header = "| M × N | automatic choice | warp per row (µs) | block per row (µs) | split rows (µs) | automatic (µs) |".to_string();
    let mut rule = "|---|---|--:|--:|--:|--:|".to_string();
    if has_peer {
        header.push_str(" torch.sum(x, dim=1) (µs) |");
        rule.push_str("--:|");
    }
    header.push_str(" fastest: GB/s | % of peak |");
    rule.push_str("--:|--:|");
    writeln!(s, "{header}\n{rule}").unwrap();
    let (mut picked_best, mut compared, mut worst): (usize, usize, Option<(f64, usize, usize)>) = (0, 0, None);
    for &(m, n) in &shapes {
        let auto = find(rows, AUTO_KERNEL, m, n);
        let mut kernels: Vec<&str> = Strategy::ALL.iter().map(|s| s.kernel()).collect();
        kernels.push(AUTO_KERNEL);
        if has_peer {
            kernels.push(TORCH_KERNEL);
        }
        let fastest = kernels.iter().filter_map(|k| find(rows, k, m, n)).min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let cell = |k: &str| match find(rows, k, m, n) {
            Some(r) if fastest.is_some_and(|f| std::ptr::eq(f, r)) => format!("**{:.2}**", r.median_us),
            Some(r) => format!("{:.2}", r.median_us),
            None => "–".into(),
        };
        let pick = auto.and_then(|a| a.title.split_once('(').map(|(_, rest)| rest.trim_end_matches(')').to_string()));
        let mut line = format!("| {} × {} | {} |", power(m), power(n), pick.clone().unwrap_or_else(|| "–".into()));
        for k in &kernels {
            write!(line, " {} |", cell(k)).unwrap();
        }
        match fastest {
            Some(f) => {
                let pct = machine.peak_gbps.filter(|p| *p > 0.0).map(|p| format!("{:.1} %", 100.0 * f.gbps() / p)).unwrap_or_else(|| "–".into());
                write!(line, " {:.1} | {pct} |", f.gbps()).unwrap();
            }
            None => line.push_str(" – | – |"),
        }
        writeln!(s, "{line}").unwrap();
        // The automatic choice against the fastest of the three kernels at this shape.
        let best_kernel = Strategy::ALL.iter().filter_map(|k| find(rows, k.kernel(), m, n)).min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let chosen = pick.as_deref().and_then(Strategy::parse).and_then(|p| find(rows, p.kernel(), m, n));
        if let (Some(best), Some(chosen)) = (best_kernel, chosen) {
            compared += 1;
            if std::ptr::eq(best, chosen) {
                picked_best += 1;
            } else {
                let slower = chosen.median_us / best.median_us;
                if worst.map_or(true, |(w, _, _)| slower > w) {
                    worst = Some((slower, m, n));
                }
            }
        }
    }
    writeln!(s).unwrap();
    if compared > 0 {
        write!(s, "The automatic choice picked the fastest of the three kernels at {picked_best} of {compared} shapes").unwrap();
        match worst {
            Some((slower, m, n)) => writeln!(s, "; where it did not, its pick took at most {slower:.2}× the fastest one's time (at {} × {}).", power(m), power(n)).unwrap(),
            None => writeln!(s, ".").unwrap(),
        }
        writeln!(s).unwrap();
    }
    let peak = machine.peak_gbps.map(|p| format!(", theoretical peak {p:.0} GB/s")).unwrap_or_default();
    writeln!(s, "*Measured on an {} ({} SMs, {:.0} MiB of L2{peak}; driver CUDA {}, NVRTC {}) on {} by `{}`; inputs rotated through a pool larger than L2, \
        median of CUDA-event timings of graphs of back-to-back calls; every result checked row by row before it was timed.*",
        machine.gpu, machine.sm_count, machine.l2_bytes as f64 / (1 << 20) as f64, machine.driver_cuda, machine.nvrtc, machine.date, machine.command).unwrap();
    if has_peer {
        writeln!(s, "*`torch.sum(x, dim=1)` measured by `python3 plots/peers.py --rows`, the same way.*").unwrap();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, title: &str, m: usize, n: usize, median_us: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: CHAPTER, title: title.into(), status: Status::Correct, dtype: Dtype::F32, n, block: 256,
            cache: Cache::Rotated, median_us, min_us: median_us, max_us: median_us, bytes: 4 * m * n, working_set_bytes: 4 * m * n,
            repeats: 15, method: "test".into(),
        }
    }

    fn sample() -> (Machine, Vec<Row>) {
        let machine = Machine { gpu: "Test GPU".into(), sm_count: 132, peak_gbps: Some(4800.0), date: "2026-01-01".into(), command: "reduction rows-bench".into(), ..Default::default() };
        let rows = vec![
            row("rows_warp", "one warp per row", 1 << 20, 1 << 8, 270.0),
            row("rows_block", "one block per row", 1 << 20, 1 << 8, 290.0),
            row("rows_auto", "automatic (warp)", 1 << 20, 1 << 8, 271.0),
            row("rows_block", "one block per row", 16, 1 << 24, 1600.0),
            row("rows_split", "several blocks per row", 16, 1 << 24, 240.0),
            row("rows_auto", "automatic (split)", 16, 1 << 24, 241.0),
            row("rows_warp", "one warp per row", 4096, 64, 4.0),
            row("rows_block", "one block per row", 4096, 64, 3.0),
            row("rows_auto", "automatic (warp)", 4096, 64, 4.1),
        ];
        (machine, rows)
    }

    #[test]
    fn the_table_marks_the_fastest_and_counts_the_automatic_choice() {
        let (machine, rows) = sample();
        let t = table(&machine, &rows);
        assert!(t.contains("| 2^20 × 256 | warp | **270.00** | 290.00 | – | 271.00 |"), "{t}");
        assert!(t.contains("| 16 × 2^24 | split | – | 1600.00 | **240.00** | 241.00 |"), "{t}");
        // 4096 × 64: the block was faster than the warp the host picked, by 4/3.
        assert!(t.contains("fastest of the three kernels at 2 of 3 shapes"), "{t}");
        assert!(t.contains("at most 1.33× the fastest one's time (at 4096 × 64)"), "{t}");
        assert!(t.contains("Test GPU") && !t.contains("torch"), "{t}");
        // 2^28 values (2^30 bytes) in 240 µs: 4473.9 GB/s, 93.2 % of 4800.
        assert!(t.contains("| 4473.9 | 93.2 % |"), "{t}");
    }

    #[test]
    fn the_chart_shows_the_fixed_product_only() {
        let (machine, mut rows) = sample();
        rows.push(row(TORCH_KERNEL, "torch", 16, 1 << 24, 250.0));
        let (title, _, series) = chart_series(&machine, &rows);
        assert!(title.contains("2^28") && title.contains("Test GPU"), "{title}");
        let warp = series.iter().find(|s| s.0.starts_with("rows_warp")).unwrap();
        assert_eq!(warp.1, vec![(256.0, 270.0)], "the 4096 × 64 shape is off the fixed product");
        let torch = series.iter().find(|s| s.0.starts_with("torch")).unwrap();
        assert!(torch.2, "the peer is dashed");
        assert_eq!(series.len(), 5);
    }

    #[test]
    fn rows_are_recovered_from_bytes() {
        assert_eq!(rows_of(&row("rows_warp", "", 4096, 64, 1.0)), 4096);
    }
}
