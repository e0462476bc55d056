//! Row sums (chapter 13): the `f32` sum of each row of a row-major M × N matrix, M values out.
//! The reductions deep learning runs — LayerNorm's means, softmax's denominators — are these,
//! not one sum of everything.
//!
//! Three kernels (`kernels/13_rows.cu`), and a host that picks one by the shape and says why
//! ([`choose`], tested without a GPU); [`RowReducer`] plans, checks and launches; the references
//! that check its sums are `check::rows`'. The benchmark of the row sums is `measure::rows_bench`, and the chapter's table
//! and chart are drawn by `book::rows`.

use crate::element::{Dtype, Element};
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use std::fmt;

// ---------------------------------------------------------------------------------------------
// The shape, the choice and the launch plan: no GPU needed.

/// Who sums a row. On the command line (`--strategy split`) each is written as its
/// [`Strategy::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Strategy {
    /// A team of lanes of a warp per row, several rows per warp (`rows_warp_f32`).
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

    /// `warp` → [`Strategy::Warp`]: the names the command line takes.
    pub fn parse(s: &str) -> Option<Strategy> {
        <Strategy as clap::ValueEnum>::from_str(s, false).ok()
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

    /// The entry point for `dtype` rows: `rows_warp_f16`.
    pub fn entry_name(self, dtype: Dtype) -> String {
        format!("{}_{}", self.kernel(), dtype.name())
    }

    /// The strategy's place in [`Strategy::ALL`] (and in the arrays of entries loaded in that order).
    pub(crate) fn index(self) -> usize {
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
/// Rows of at most this many 16-byte packs go to a team of lanes each: 1024 f32 values, 2048
/// f16 or bf16 values, at most eight loads per lane for a whole warp.
pub const WARP_MAX_PACKS: usize = 256;
/// The same for f32 rows, in values.
pub const WARP_MAX_COLS: usize = WARP_MAX_PACKS * 4;
/// Rows of at least this many 16-byte packs may be split: at least two of the split's tiles.
pub const SPLIT_MIN_PACKS: usize = 2 * SPLIT_TILE_PACKS;
/// The same for f32 rows, in values.
pub const SPLIT_MIN_COLS: usize = SPLIT_MIN_PACKS * 4;

/// The strategy for `m` rows of `n` f32 values on a GPU of `sm_count` SMs, and why.
pub fn choose(m: usize, n: usize, sm_count: u32) -> (Strategy, &'static str) {
    choose_packs(m, n.div_ceil(4), sm_count)
}

/// The strategy for `m` rows of `packs` 16-byte packs each (of any element type), and why.
pub fn choose_packs(m: usize, packs: usize, sm_count: u32) -> (Strategy, &'static str) {
    if packs <= WARP_MAX_PACKS {
        (Strategy::Warp, "rows of at most 256 16-byte packs (1024 f32 values): a team of lanes per row, up to eight loads per lane, no barrier")
    } else if m >= sm_count as usize {
        (Strategy::Block, "rows longer than 256 packs, and at least one per SM: one block per row")
    } else if packs >= SPLIT_MIN_PACKS {
        (Strategy::Split, "fewer rows than SMs: one block per row would leave SMs idle, so each row is cut into tiles of 16384 f32 values, one block each")
    } else {
        (Strategy::Block, "fewer rows than SMs, but rows under 32768 f32 values, less than two tiles: one block per row")
    }
}
// ANCHOR_END: choose

/// Loads in flight per thread of the block and split kernels (`ROW_LOADS` there): four; the
/// warp kernel makes eight (measured on the H200: eight per thread made the block kernel slower).
pub const BLOCK_LOADS: usize = 4;
pub const WARP_LOADS: usize = 8;
/// Threads per block of the warp strategy.
pub const WARP_BLOCK: u32 = 128;
/// Threads per block of the split strategy.
pub const SPLIT_BLOCK: u32 = 512;
/// 16-byte packs in one tile of a split row: 512 threads, two rounds of four loads each (64 KiB).
pub const SPLIT_TILE_PACKS: usize = SPLIT_BLOCK as usize * BLOCK_LOADS * 2;

/// Threads per block of the block strategy for rows of `packs` 16-byte packs: each thread makes
/// one round of four loads, from 64 threads (rows of up to 256 packs) to 1024.
pub fn block_threads(packs: usize) -> u32 {
    (packs.div_ceil(BLOCK_LOADS).max(1).next_power_of_two()).clamp(64, 1024) as u32
}

/// Lanes per row of the warp strategy for `rows` rows of `packs` 16-byte packs: enough that each
/// lane makes up to eight loads, and more (up to one lane per pack, 32 at most) while the rows
/// are too few to give every SM 2048 threads. The operators' row kernels (`rows_warp_op`) take
/// this; the row sums' own kernel takes [`sum_team`] where the rows are few.
pub fn warp_lanes(rows: usize, packs: usize, sm_count: u32) -> u32 {
    let mut lanes = eight_loads_a_lane(packs);
    while lanes < 32 && lanes < packs && rows.saturating_mul(lanes) < sm_count as usize * 2048 {
        lanes *= 2;
    }
    lanes as u32
}

/// The fewest lanes that leave each at most eight loads of a row of `packs` packs.
fn eight_loads_a_lane(packs: usize) -> usize {
    packs.div_ceil(WARP_LOADS).max(1).next_power_of_two().min(32)
}

// ANCHOR: sum_team
/// Values per lane of a row sum's team where the rows are few: 4 f32 packs, 2 of f16 or bf16.
pub const FEW_ROWS_VALUES_PER_LANE: usize = 16;
/// Threads per block of those teams.
pub const FEW_ROWS_BLOCK: u32 = 64;

/// The row sums' team for `rows` rows of `cols` values in `packs` packs: `(lanes, block)`. Where
/// eight loads a lane would not give every SM 2048 threads (4096 rows of 64 f32 values), a lane
/// takes 16 values and a block 64 threads, the fastest rule of those measured by
/// `plots/rows_short.cu` (its table is in the row-sums chapter: more lanes, one load each, were
/// up to a fifth slower there); otherwise eight loads a lane in blocks of 128.
pub fn sum_team(rows: usize, cols: usize, packs: usize, sm_count: u32) -> (u32, u32) {
    let lanes = eight_loads_a_lane(packs);
    if rows.saturating_mul(lanes) < sm_count as usize * 2048 {
        let lanes = cols.div_ceil(FEW_ROWS_VALUES_PER_LANE).max(1).next_power_of_two().clamp(lanes, 32);
        (lanes as u32, FEW_ROWS_BLOCK)
    } else {
        (lanes as u32, WARP_BLOCK)
    }
}
// ANCHOR_END: sum_team

/// Which kernel a plan is for: the row sums' (`kernels/13_rows.cu`) or an operator's
/// (`kernels/operators.cuh`, which sizes its teams by [`warp_lanes`] in blocks of 128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKernels {
    Sums,
    Operators,
}

/// What the planner needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub sm_count: u32,
    /// The most blocks a launch uses along x (warp and block strategies) and along y (the
    /// split's rows); the kernels loop over the rows past them. The hardware's limits by
    /// default; the tests lower them to reach the loops.
    pub max_grid_x: u32,
    pub max_grid_y: u32,
}

impl Limits {
    pub const HARDWARE_GRID_X: u32 = i32::MAX as u32;
    pub const HARDWARE_GRID_Y: u32 = 65535;

    /// An H200's numbers (132 SMs), for tests and examples without a GPU.
    pub fn h200() -> Limits {
        Limits { sm_count: 132, max_grid_x: Limits::HARDWARE_GRID_X, max_grid_y: Limits::HARDWARE_GRID_Y }
    }
}

/// One launch: which kernel, why, and its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub strategy: Strategy,
    pub reason: &'static str,
    pub grid: (u32, u32),
    pub block: u32,
    /// Lanes per row (the warp strategy; the block size otherwise).
    pub lanes: u32,
    /// Blocks per row (the split strategy; 1 otherwise).
    pub slices: u32,
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): grid {} × {} of {} threads", self.strategy.title(), self.strategy.kernel(), self.grid.0, self.grid.1, self.block)?;
        match self.strategy {
            Strategy::Warp => write!(f, ", {} lanes per row", self.lanes)?,
            Strategy::Split => write!(f, ", {} blocks per row", self.slices)?,
            Strategy::Block => {}
        }
        write!(f, "; because {}", self.reason)
    }
}

impl Launch {
    /// The most roundings any one value of a row of `cols` values goes through in this launch:
    /// what the row's error bound is computed from ([`crate::data::error_bound`]). A team adds
    /// its lanes' shares in at most 5 shuffle steps; a block adds its threads' in its tree; a
    /// split row adds its slices' partials with one more block.
    pub fn addition_depth(&self, cols: usize) -> u64 {
        use crate::plan::{block_depth, thread_depth};
        let cols = cols as u64;
        match self.strategy {
            Strategy::Warp => thread_depth(cols, self.lanes as u64) + 5,
            Strategy::Block => thread_depth(cols, self.block as u64) + block_depth(self.block),
            Strategy::Split => {
                let slices = self.slices.max(1) as u64;
                let per = cols.div_ceil(slices);
                thread_depth(per, self.block as u64) + thread_depth(slices, self.block as u64) + 2 * block_depth(self.block)
            }
        }
    }
}

/// The reason given for a strategy the caller chose.
pub const FORCED: &str = "the caller asked for it";

/// The launch that sums `layout` of f32 values: `strategy`, or the automatic choice when
/// `None`. `None` for an empty layout (no launch: no rows, or rows whose sums are zero).
pub fn plan(layout: RowLayout, strategy: Option<Strategy>, limits: Limits) -> Result<Option<Launch>> {
    plan_typed(layout, Dtype::F32, strategy, limits)
}

/// [`plan`] for values of `dtype` (f32, f16 or bf16): the thresholds are in 16-byte packs.
pub fn plan_typed(layout: RowLayout, dtype: Dtype, strategy: Option<Strategy>, limits: Limits) -> Result<Option<Launch>> {
    plan_for(RowKernels::Sums, layout, dtype, strategy, limits)
}

/// [`plan_typed`] for the row sums' kernels or the operators'.
pub fn plan_for(kernels: RowKernels, layout: RowLayout, dtype: Dtype, strategy: Option<Strategy>, limits: Limits) -> Result<Option<Launch>> {
    layout.required_len()?;
    if layout.is_empty() {
        return Ok(None);
    }
    let (m, n) = (layout.rows, layout.cols);
    let packs = n.div_ceil(16 / dtype.size_bytes());
    let (strategy, reason) = match strategy {
        Some(s) => (s, FORCED),
        None => choose_packs(m, packs, limits.sm_count),
    };
    let capped = |blocks: usize, cap: u32| blocks.min(cap.max(1) as usize) as u32;
    let launch = match strategy {
        Strategy::Warp => {
            let (lanes, block) = match kernels {
                RowKernels::Sums => sum_team(m, n, packs, limits.sm_count),
                RowKernels::Operators => (warp_lanes(m, packs, limits.sm_count), WARP_BLOCK),
            };
            let rows_per_block = (block / lanes) as usize;
            Launch { strategy, reason, grid: (capped(m.div_ceil(rows_per_block), limits.max_grid_x), 1), block, lanes, slices: 1 }
        }
        Strategy::Block => {
            let block = block_threads(packs);
            Launch { strategy, reason, grid: (capped(m, limits.max_grid_x), 1), block, lanes: block, slices: 1 }
        }
        Strategy::Split => {
            // One tile per block, no loop: the read-only kernel's best shape, row by row.
            let slices = packs.div_ceil(SPLIT_TILE_PACKS).clamp(1, limits.max_grid_x as usize) as u32;
            m.checked_mul(slices as usize).ok_or_else(|| layout.refuse(format!("{m} rows × {slices} partial sums overflow")))?;
            Launch { strategy, reason, grid: (slices, capped(m, limits.max_grid_y)), block: SPLIT_BLOCK, lanes: SPLIT_BLOCK, slices }
        }
    };
    Ok(Some(launch))
}

// ---------------------------------------------------------------------------------------------
// On the GPU.

/// The input types the row kernels have entry points for: f32, f16 and bf16, summed in f32.
pub const DTYPES: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::BF16];

/// Sums the rows of matrices on one GPU: the entry points for every input type, loaded once,
/// and the split's scratch buffers (partial sums and one ticket per row), which only grow.
pub struct RowReducer {
    gpu: Gpu,
    /// Indexed by [`DTYPES`] position, then by [`Strategy`].
    functions: Vec<[CudaFunction; 3]>,
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
        let mut functions = Vec::new();
        for dtype in DTYPES {
            let load = |s: Strategy| gpu.function(kernels, &s.entry_name(dtype));
            functions.push([load(Strategy::Warp)?, load(Strategy::Block)?, load(Strategy::Split)?]);
        }
        let sm_count = gpu.info().sm_count;
        let limits = Limits { sm_count, max_grid_x: Limits::HARDWARE_GRID_X, max_grid_y: Limits::HARDWARE_GRID_Y };
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

    /// The launch this reducer makes for `layout` of f32 values (`None`: nothing to launch).
    pub fn plan(&self, layout: RowLayout) -> Result<Option<Launch>> {
        plan(layout, self.strategy, self.limits)
    }

    /// The launch this reducer makes for `layout` of `dtype` values.
    pub fn plan_typed(&self, layout: RowLayout, dtype: Dtype) -> Result<Option<Launch>> {
        plan_typed(layout, dtype, self.strategy, self.limits)
    }

    /// Queue the row sums of `input` (laid out as `layout`; f32, f16 or bf16) into
    /// `out[0 .. rows)` in f32, and return the launch made. Nothing waits for the GPU, so calls
    /// can be timed or captured into a graph. An empty layout launches nothing: rows of no values
    /// get zeros (a memset), no rows nothing.
    pub fn enqueue<T: Element<Acc = f32>>(&mut self, input: &CudaView<'_, T>, layout: RowLayout, out: &mut CudaViewMut<'_, f32>) -> Result<Option<Launch>> {
        let Some(index) = DTYPES.iter().position(|&d| d == T::DTYPE) else {
            return Err(Error::Config { setting: format!("row sums of {}", T::DTYPE), reason: "the row kernels take f32, f16 or bf16".into() });
        };
        layout.check(input.len())?;
        if out.len() < layout.rows {
            return Err(layout.refuse(format!("the output holds {} values, one per row needs {}", out.len(), layout.rows)));
        }
        let Some(launch) = self.plan_typed(layout, T::DTYPE)? else {
            if layout.rows > 0 {
                self.gpu.stream().memset_zeros(&mut out.slice_mut(..layout.rows)).during("zeroing the sums of empty rows")?;
            }
            return Ok(None);
        };
        let (rows, cols, stride) = (layout.rows as u64, layout.cols as u64, layout.stride as u64);
        let config = LaunchConfig { grid_dim: (launch.grid.0, launch.grid.1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: 0 };
        let stream = self.gpu.stream().clone();
        let function = &self.functions[index][launch.strategy.index()];
        let mut args = stream.launch_builder(function);
        args.arg(input).arg(out).arg(&rows).arg(&cols).arg(&stride);
        let fired = match launch.strategy {
            Strategy::Warp => {
                args.arg(&launch.lanes);
                // SAFETY: rows_warp_<T>(const In*, float*, u64, u64, u64, unsigned lanes):
                // layout.check proved the input holds (rows - 1) * stride + cols values, out holds
                // >= rows, and the planner's lanes is a power of two up to 32.
                unsafe { args.launch(config) }
            }
            // SAFETY: rows_block_<T>(const In*, float*, u64, u64, u64): as above; the block
            // is at most 1024 threads, the entry's launch bound.
            Strategy::Block => unsafe { args.launch(config) },
            Strategy::Split => {
                let partials_len = layout.rows * launch.slices as usize; // plan checked it fits
                if self.partials.as_ref().is_none_or(|p| p.len() < partials_len) {
                    self.partials = None; // free first, so that growth never holds both
                    self.partials = Some(self.gpu.alloc::<f32>(partials_len)?);
                }
                if self.tickets.as_ref().is_none_or(|t| t.len() < layout.rows) {
                    self.tickets = None;
                    self.tickets = Some(stream.alloc_zeros::<u32>(layout.rows).during("allocating one ticket per row")?);
                }
                let (partials, tickets) = (self.partials.as_mut().unwrap(), self.tickets.as_mut().unwrap());
                args.arg(partials).arg(tickets);
                // SAFETY: rows_split_<T>(..., float* partials, unsigned* tickets): as above, plus
                // partials for rows × gridDim.x values and one zeroed ticket per row; 512 threads,
                // the entry's launch bound.
                unsafe { args.launch(config) }
            }
        };
        fired.map_err(|source| Error::Cuda { during: format!("launching {} on {layout}", launch), source })?;
        Ok(Some(launch))
    }

    /// The row sums of a device matrix, read back (waits for the GPU).
    pub fn sum<T: Element<Acc = f32>>(&mut self, input: &CudaView<'_, T>, layout: RowLayout) -> Result<Vec<f32>> {
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
    pub fn sum_host<T: Element<Acc = f32>>(&mut self, host: &[T], layout: RowLayout) -> Result<Vec<f32>> {
        layout.check(host.len())?;
        if layout.rows == 0 {
            return Ok(Vec::new());
        }
        let device = self.gpu.upload(&host[..layout.required_len()?])?;
        self.sum(&device.as_view(), layout)
    }
}

/// The entry point for row sums, as [`crate::sum`] is for a whole array: the row sums of
/// `input` laid out as `layout` (f32, f16 or bf16 in, f32 out), by the strategy [`choose`] picks
/// for the shape, read back. A caller who sums many matrices keeps a [`RowReducer::new`]
/// instead, whose scratch stays allocated.
pub fn row_sums<T: Element<Acc = f32>>(gpu: &Gpu, input: &CudaView<'_, T>, layout: RowLayout) -> Result<Vec<f32>> {
    RowReducer::new(gpu)?.sum(input, layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_names_are_the_tables_names() {
        use clap::ValueEnum;
        assert_eq!(Strategy::value_variants(), Strategy::ALL);
        for strategy in Strategy::ALL {
            assert_eq!(strategy.to_possible_value().unwrap().get_name(), strategy.name());
            assert_eq!(Strategy::parse(strategy.name()), Some(strategy));
        }
        assert_eq!(Strategy::parse("auto"), None);
    }
}
