//! The operators of chapter 16: max, min, argmax, argmin, mean and variance, sum of squares (and
//! the sum, as one more instance), each one operator of `kernels/operators.cuh`'s generic warp /
//! block / grid / row machinery. Whole arrays in one launch (the last block combines, as kernel
//! 10), rows with kernel 13's three strategies, chosen by the same planner
//! ([`crate::rows::plan_for`] with [`crate::rows::RowKernels::Operators`]).
//!
//! The host owns every grid: [`plan_whole`] and the row planner are pure arithmetic, tested
//! without a GPU; [`OpReducer`] checks, plans and launches; [`decode`] turns the bytes a kernel
//! wrote into a [`Value`].

use crate::element::{Dtype, Element};
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelSpec;
use crate::rows::{Launch as RowLaunch, Limits, RowLayout, Strategy};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, LaunchConfig, PushKernelArg};
use std::collections::HashMap;

/// One operator of `kernels/operators.cuh`, as its entry points name it (`argmax_whole_f16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Op {
    Max,
    Min,
    Argmax,
    Argmin,
    /// Welford / Chan: (count, mean, M2), folded per thread as shifted sums.
    MeanVar,
    Sumsq,
    /// The plain sum as an instance of the same machinery.
    Sum,
    /// Welford with an IEEE division per value (the other walks are measured beside mean_var).
    WelfordDivide,
    WelfordFastDivide,
    WelfordPack,
    /// The broken `E[x²] − E[x]²`, kept for the chapter.
    MeanVarTextbook,
}

/// What one result of an operator is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// A value: f32 (i32 for i32 inputs to max / min), 4 bytes.
    Value,
    /// An index, u64.
    Index,
    /// (mean, population variance), two f32.
    MeanVar,
}

/// One result, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A max, min, sum or sum of squares (f32 or i32, exactly as f64).
    Number(f64),
    Index(u64),
    MeanVar { mean: f32, var: f32 },
}

const FLOATS: &[Dtype] = &[Dtype::F32, Dtype::F16, Dtype::BF16];
const FLOATS_AND_I32: &[Dtype] = &[Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I32];

impl Op {
    pub const ALL: [Op; 11] = [
        Op::Max, Op::Min, Op::Argmax, Op::Argmin, Op::MeanVar, Op::Sumsq, Op::Sum,
        Op::WelfordDivide, Op::WelfordFastDivide, Op::WelfordPack, Op::MeanVarTextbook,
    ];
    /// The operators the chapter's goal is about (the list), in its order.
    pub const CHAPTER: [Op; 6] = [Op::Max, Op::Min, Op::Argmax, Op::Argmin, Op::MeanVar, Op::Sumsq];
    /// The four walks of the mean and variance beside the one [`Op::MeanVar`] uses.
    pub const MEAN_VAR_WALKS: [Op; 4] = [Op::WelfordDivide, Op::WelfordFastDivide, Op::WelfordPack, Op::MeanVarTextbook];

    /// The stem of its entry points and its name in results files (`mean_var`).
    pub fn name(self) -> &'static str {
        match self {
            Op::Max => "max",
            Op::Min => "min",
            Op::Argmax => "argmax",
            Op::Argmin => "argmin",
            Op::MeanVar => "mean_var",
            Op::Sumsq => "sumsq",
            Op::Sum => "sum",
            Op::WelfordDivide => "welford_divide",
            Op::WelfordFastDivide => "welford_fast_divide",
            Op::WelfordPack => "welford_pack",
            Op::MeanVarTextbook => "mean_var_textbook",
        }
    }

    /// `mean_var` → [`Op::MeanVar`].
    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == s)
    }

    /// A few words for tables and legends.
    pub fn title(self) -> &'static str {
        match self {
            Op::Max => "max",
            Op::Min => "min",
            Op::Argmax => "argmax",
            Op::Argmin => "argmin",
            Op::MeanVar => "mean and variance (shifted sums, Chan's merge)",
            Op::Sumsq => "sum of squares",
            Op::Sum => "sum (the generic instance)",
            Op::WelfordDivide => "mean and variance: Welford, a division per value",
            Op::WelfordFastDivide => "mean and variance: Welford, __fdividef",
            Op::WelfordPack => "mean and variance: per-pack mean and M2, Chan's merge",
            Op::MeanVarTextbook => "variance as E[x²] − E[x]² (broken)",
        }
    }

    /// The kernel file that holds its entry points.
    pub fn spec(self) -> &'static KernelSpec {
        match self {
            Op::Max | Op::Min | Op::Argmax | Op::Argmin => &crate::kernels::EXTREMES,
            Op::MeanVar | Op::Sumsq | Op::Sum => &crate::kernels::MOMENTS,
            _ => &crate::kernels::MEAN_VAR_WALKS,
        }
    }

    /// The input types it has entry points for.
    pub fn dtypes(self) -> &'static [Dtype] {
        match self {
            Op::Max | Op::Min | Op::Argmax | Op::Argmin => FLOATS_AND_I32,
            _ => FLOATS,
        }
    }

    pub fn supports(self, dtype: Dtype) -> bool {
        self.dtypes().contains(&dtype)
    }

    pub fn output(self) -> Output {
        match self {
            Op::Argmax | Op::Argmin => Output::Index,
            Op::MeanVar | Op::WelfordDivide | Op::WelfordFastDivide | Op::WelfordPack | Op::MeanVarTextbook => Output::MeanVar,
            _ => Output::Value,
        }
    }

    /// Bytes of the operator's State (`sizeof(Op::State)` in operators.cuh): what one block or
    /// slice leaves in the partials.
    pub fn state_bytes(self) -> usize {
        match self.output() {
            Output::Value => 4,
            Output::Index => 16,   // ValueIndex: value, pad, u64 index
            Output::MeanVar => 12, // MeanM2 / SumsOfPowers: three f32
        }
    }

    /// Bytes of one result (`sizeof(Op::Out)`).
    pub fn out_bytes(self) -> usize {
        match self.output() {
            Output::Value => 4,
            Output::Index | Output::MeanVar => 8,
        }
    }

    /// True if a result needs at least one value (a max of nothing is no number); the sums of
    /// nothing are 0.
    pub fn needs_values(self) -> bool {
        !matches!(self, Op::Sum | Op::Sumsq)
    }

    /// The entry point of this operator for `shape` and `dtype`: `argmax_rows_split_bf16`.
    pub fn entry(self, shape: EntryShape, dtype: Dtype) -> String {
        format!("{}_{}_{}", self.name(), shape.name(), dtype.name())
    }

    fn unsupported(self, dtype: Dtype) -> Error {
        Error::UnsupportedDtype { kernel: self.name().to_string(), dtype, supported: self.dtypes().to_vec() }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The four entry points of every operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryShape {
    Whole,
    Rows(Strategy),
}

impl EntryShape {
    pub const ALL: [EntryShape; 4] = [EntryShape::Whole, EntryShape::Rows(Strategy::Warp), EntryShape::Rows(Strategy::Block), EntryShape::Rows(Strategy::Split)];

    pub fn name(self) -> &'static str {
        match self {
            EntryShape::Whole => "whole",
            EntryShape::Rows(Strategy::Warp) => "rows_warp",
            EntryShape::Rows(Strategy::Block) => "rows_block",
            EntryShape::Rows(Strategy::Split) => "rows_split",
        }
    }
}

/// Decode one result from the bytes a kernel wrote (little-endian, `op.out_bytes()` of them).
pub fn decode(op: Op, dtype: Dtype, bytes: &[u8]) -> Value {
    let word = |k: usize| u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().expect("4 bytes"));
    match op.output() {
        Output::Value if dtype == Dtype::I32 && !matches!(op, Op::Sum | Op::Sumsq) => Value::Number(word(0) as i32 as f64),
        Output::Value => Value::Number(f32::from_bits(word(0)) as f64),
        Output::Index => Value::Index(u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))),
        Output::MeanVar => Value::MeanVar { mean: f32::from_bits(word(0)), var: f32::from_bits(word(1)) },
    }
}

// The launches as arithmetic (the grid, who reads which value, the depth of each result).
mod plan;
pub use plan::*;

// ---------------------------------------------------------------------------------------------
// On the GPU.

/// One operator on one input type, bound to a GPU: its four entry points, loaded once, and the
/// scratch of the single-pass finishes (partial states, tickets), which only grow.
pub struct OpReducer {
    gpu: Gpu,
    op: Op,
    dtype: Dtype,
    spec: &'static KernelSpec,
    whole: CudaFunction,
    /// Indexed by [`Strategy`]: warp, block, split.
    rows: [CudaFunction; 3],
    /// The whole-array block size; `None`: [`preferred_block`].
    block: Option<u32>,
    /// The row strategy; `None`: the planner's choice.
    strategy: Option<Strategy>,
    limits: Limits,
    resident: HashMap<u32, u32>,
    partials: Option<CudaSlice<u8>>,
    /// Zero between launches (the kernels leave them so).
    tickets: Option<CudaSlice<u32>>,
}

impl OpReducer {
    /// `op` on inputs of `dtype`; compiles its kernel file if this process has not.
    pub fn new(gpu: &Gpu, op: Op, dtype: Dtype) -> Result<OpReducer> {
        OpReducer::with_spec(gpu, op, dtype, op.spec())
    }

    /// As [`OpReducer::new`], with the entry points of `spec` (a planted bug of
    /// [`crate::check::ops_mutants`] in place of the operator's file).
    pub fn with_spec(gpu: &Gpu, op: Op, dtype: Dtype, spec: &'static KernelSpec) -> Result<OpReducer> {
        if !op.supports(dtype) {
            return Err(op.unsupported(dtype));
        }
        let load = |shape: EntryShape| gpu.function(spec, &op.entry(shape, dtype));
        let whole = load(EntryShape::Whole)?;
        let rows = [load(EntryShape::Rows(Strategy::Warp))?, load(EntryShape::Rows(Strategy::Block))?, load(EntryShape::Rows(Strategy::Split))?];
        let limits = Limits { sm_count: gpu.info().sm_count, max_grid_x: Limits::HARDWARE_GRID_X, max_grid_y: Limits::HARDWARE_GRID_Y };
        Ok(OpReducer {
            gpu: gpu.clone(), op, dtype, spec, whole, rows, block: None, strategy: None, limits,
            resident: HashMap::new(), partials: None, tickets: None,
        })
    }

    pub fn op(&self) -> Op {
        self.op
    }

    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    pub fn spec(&self) -> &'static KernelSpec {
        self.spec
    }

    /// Use `block` threads per block for whole arrays (a power of two from 32 to 1024).
    pub fn set_block(&mut self, block: u32) -> Result<()> {
        if !block.is_power_of_two() || !(32..=1024).contains(&block) {
            return Err(Error::InvalidBlockSize { kernel: self.op.entry(EntryShape::Whole, self.dtype), block, reason: "it takes a power of two from 32 to 1024 threads".into() });
        }
        self.block = Some(block);
        Ok(())
    }

    /// Always use `strategy` for rows (`None`: the planner's choice).
    pub fn set_strategy(&mut self, strategy: Option<Strategy>) {
        self.strategy = strategy;
    }

    /// Use at most `max_blocks` blocks along x and y for rows, so that a test reaches the loops
    /// over rows that only billions of rows would reach otherwise.
    pub fn limit_grid(&mut self, max_blocks: u32) {
        self.limits.max_grid_x = max_blocks.clamp(1, Limits::HARDWARE_GRID_X);
        self.limits.max_grid_y = max_blocks.clamp(1, Limits::HARDWARE_GRID_Y);
    }

    fn resident_blocks(&mut self, block: u32) -> Result<u32> {
        if let Some(&r) = self.resident.get(&block) {
            return Ok(r);
        }
        let per_sm = self.whole.occupancy_max_active_blocks_per_multiprocessor(block, 0, None).during("asking the occupancy calculator")?;
        if per_sm == 0 {
            return Err(Error::InvalidBlockSize {
                kernel: self.op.entry(EntryShape::Whole, self.dtype), block,
                reason: "not one block of this size fits on an SM (registers or shared memory)".into(),
            });
        }
        let r = per_sm * self.gpu.info().sm_count;
        self.resident.insert(block, r);
        Ok(r)
    }

    /// The whole-array launch for `n > 0` values.
    pub fn plan_whole(&mut self, n: usize) -> Result<WholeLaunch> {
        let block = self.block.unwrap_or_else(|| preferred_block(n as u64));
        let resident = self.resident_blocks(block)?;
        Ok(plan_whole(n as u64, block, resident))
    }

    /// The row launch for `layout` (`None`: nothing to launch).
    pub fn plan_rows(&self, layout: RowLayout) -> Result<Option<RowLaunch>> {
        crate::rows::plan_for(crate::rows::RowKernels::Operators, layout, self.dtype, self.strategy, self.limits)
    }

    fn check_input<T: Element>(&self) -> Result<()> {
        if T::DTYPE != self.dtype {
            return Err(Error::Config { setting: format!("{} on {} values", self.op.entry(EntryShape::Whole, self.dtype), T::DTYPE), reason: format!("this reducer was made for {}", self.dtype) });
        }
        Ok(())
    }

    fn scratch(&mut self, partial_bytes: usize, tickets: usize) -> Result<()> {
        if self.partials.as_ref().is_none_or(|p| p.len() < partial_bytes) {
            self.partials = None; // free first, so that growth never holds both
            self.partials = Some(alloc_bytes(&self.gpu, partial_bytes.max(16))?);
        }
        if self.tickets.as_ref().is_none_or(|t| t.len() < tickets) {
            self.tickets = None;
            self.tickets = Some(self.gpu.stream().alloc_zeros::<u32>(tickets.max(1)).during("allocating the tickets")?);
        }
        Ok(())
    }

    /// Queue the operator over all of `input` into `out[0 .. op.out_bytes())`, and return the
    /// launch. Nothing waits for the GPU, so calls can be timed or captured into a graph. An
    /// empty input is refused for the operators that need a value (a max of nothing), and
    /// launches nothing for the sums (whose result is then 0: [`OpReducer::whole`]).
    pub fn enqueue_whole<T: Element>(&mut self, input: &CudaView<'_, T>, out: &mut CudaSlice<u8>) -> Result<Option<WholeLaunch>> {
        self.check_input::<T>()?;
        let n = input.len();
        if n == 0 {
            return if self.op.needs_values() {
                Err(Error::InvalidLength { kernel: self.op.entry(EntryShape::Whole, self.dtype), n, reason: format!("the {} of no values is undefined", self.op) })
            } else {
                Ok(None)
            };
        }
        if out.len() < self.op.out_bytes() {
            return Err(Error::Config { setting: format!("an output of {} bytes", out.len()), reason: format!("{} writes {} bytes", self.op, self.op.out_bytes()) });
        }
        let launch = self.plan_whole(n)?;
        self.scratch(launch.grid as usize * self.op.state_bytes(), 1)?;
        let n64 = n as u64;
        let config = LaunchConfig { grid_dim: (launch.grid, 1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: 0 };
        let stream = self.gpu.stream().clone();
        let (partials, tickets) = (self.partials.as_mut().expect("scratch made it"), self.tickets.as_mut().expect("scratch made it"));
        let mut args = stream.launch_builder(&self.whole);
        args.arg(input).arg(out).arg(&n64).arg(partials).arg(tickets);
        // SAFETY: <op>_whole_<type>(const In* in, Out* out, u64 n, State* partials, unsigned*
        // ticket): the input holds n values of the entry's type (checked above), out at least
        // sizeof(Out) bytes, partials grid × sizeof(State) bytes, the ticket one zeroed counter;
        // the block is at most 1024 threads, the entry's launch bound.
        unsafe { args.launch(config) }.map_err(|source| Error::Cuda { during: format!("launching {} (grid {}, block {})", self.op.entry(EntryShape::Whole, self.dtype), launch.grid, launch.block), source })?;
        Ok(Some(launch))
    }

    /// Queue the operator over each row of `input` (laid out as `layout`) into
    /// `out[r · out_bytes ..]`, and return the launch. Rows of no values are refused for the
    /// operators that need a value; for the sums they get zeros.
    pub fn enqueue_rows<T: Element>(&mut self, input: &CudaView<'_, T>, layout: RowLayout, out: &mut CudaViewMut<'_, u8>) -> Result<Option<RowLaunch>> {
        self.check_input::<T>()?;
        layout.check(input.len())?;
        let need = layout.rows * self.op.out_bytes();
        if out.len() < need {
            return Err(Error::Config { setting: format!("an output of {} bytes", out.len()), reason: format!("{} rows of {} need {need}", layout.rows, self.op) });
        }
        let Some(launch) = self.plan_rows(layout)? else {
            if layout.rows > 0 && self.op.needs_values() {
                return Err(Error::InvalidLength { kernel: self.op.entry(EntryShape::Rows(Strategy::Block), self.dtype), n: 0, reason: format!("the {} of a row of no values is undefined", self.op) });
            }
            if layout.rows > 0 {
                self.gpu.stream().memset_zeros(&mut out.slice_mut(..need)).during("zeroing the sums of empty rows")?;
            }
            return Ok(None);
        };
        if launch.strategy == Strategy::Split {
            self.scratch(layout.rows * launch.slices as usize * self.op.state_bytes(), layout.rows)?;
        }
        let (rows, cols, stride) = (layout.rows as u64, layout.cols as u64, layout.stride as u64);
        let config = LaunchConfig { grid_dim: (launch.grid.0, launch.grid.1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: 0 };
        let stream = self.gpu.stream().clone();
        let mut args = stream.launch_builder(&self.rows[launch.strategy.index()]);
        args.arg(input).arg(out).arg(&rows).arg(&cols).arg(&stride);
        let fired = match launch.strategy {
            Strategy::Warp => {
                args.arg(&launch.lanes);
                // SAFETY: <op>_rows_warp_<type>(const In*, Out*, u64 rows, u64 cols, u64 stride,
                // unsigned lanes): layout.check proved the input holds (rows − 1) · stride + cols
                // values, out holds rows results; lanes is a power of two up to 32 and the block
                // (128) is within the entry's launch bound (OP_WARP_MAX_BLOCK, 256).
                unsafe { args.launch(config) }
            }
            // SAFETY: as above; the block is at most 1024 threads, the entry's launch bound.
            Strategy::Block => unsafe { args.launch(config) },
            Strategy::Split => {
                let (partials, tickets) = (self.partials.as_mut().expect("scratch made it"), self.tickets.as_mut().expect("scratch made it"));
                args.arg(partials).arg(tickets);
                // SAFETY: as above, plus partials for rows × slices states and one zeroed ticket
                // per row; 512 threads, the entry's launch bound.
                unsafe { args.launch(config) }
            }
        };
        fired.map_err(|source| Error::Cuda { during: format!("launching {} of {} on {layout}", launch, self.op), source })?;
        Ok(Some(launch))
    }

    /// Bytes for `results` results, filled with 0xFF (NaN, index 2^64 − 1) so that a result
    /// nothing wrote cannot pass for one.
    pub fn poisoned_output(&self, results: usize) -> Result<CudaSlice<u8>> {
        let bytes = (results * self.op.out_bytes()).max(self.op.out_bytes());
        let mut out = alloc_bytes(&self.gpu, bytes)?;
        self.gpu.stream().memcpy_htod(&vec![0xFFu8; bytes], &mut out).during("poisoning the output")?;
        Ok(out)
    }

    /// The operator over a device buffer, read back (waits for the GPU).
    pub fn whole<T: Element>(&mut self, input: &CudaView<'_, T>) -> Result<Value> {
        let mut out = self.poisoned_output(1)?;
        if self.enqueue_whole(input, &mut out)?.is_none() {
            return Ok(Value::Number(0.0)); // the sum of nothing
        }
        let bytes = download_bytes(&self.gpu, &out)?;
        Ok(decode(self.op, self.dtype, &bytes))
    }

    /// The operator over each row of a device matrix, read back (waits for the GPU).
    pub fn rows<T: Element>(&mut self, input: &CudaView<'_, T>, layout: RowLayout) -> Result<Vec<Value>> {
        layout.check(input.len())?;
        if layout.rows == 0 {
            return Ok(Vec::new());
        }
        let mut out = self.poisoned_output(layout.rows)?;
        self.enqueue_rows(input, layout, &mut out.as_view_mut())?;
        let bytes = download_bytes(&self.gpu, &out)?;
        Ok(bytes.chunks(self.op.out_bytes()).take(layout.rows).map(|b| decode(self.op, self.dtype, b)).collect())
    }
}

/// `len` bytes of device memory, uninitialised, after checking that they fit.
pub fn alloc_bytes(gpu: &Gpu, len: usize) -> Result<CudaSlice<u8>> {
    let (free, _) = gpu.memory()?;
    if len > free {
        return Err(Error::OutOfMemory { requested_bytes: len, free_bytes: free });
    }
    // SAFETY: every user writes before it reads (a poison fill, a kernel's output, partials that
    // each block writes before the last block reads them).
    unsafe { gpu.stream().alloc::<u8>(len.max(1)) }.during("allocating device bytes")
}

/// A device byte buffer copied back (waits for the GPU, so a kernel fault surfaces here).
pub fn download_bytes(gpu: &Gpu, device: &CudaSlice<u8>) -> Result<Vec<u8>> {
    let bytes = gpu.stream().clone_dtoh(device).during("copying results from the GPU")?;
    gpu.synchronize()?;
    Ok(bytes)
}

/// The entry point for the other operators, as [`crate::sum`] is for the sum: `op` (a max, an
/// argmax, the mean and variance, ...) over all of `input`, by the launch [`OpReducer::new`]
/// plans for its length and type, read back. A caller who reduces often keeps an
/// [`OpReducer`] instead, whose scratch stays allocated.
pub fn reduce<T: Element>(gpu: &Gpu, op: Op, input: &CudaView<'_, T>) -> Result<Value> {
    OpReducer::new(gpu, op, T::DTYPE)?.whole(input)
}

/// `op` over each row of `input` laid out as `layout`, by the row strategy the planner picks
/// for the shape and type ([`OpReducer::plan_rows`]), read back.
pub fn reduce_rows<T: Element>(gpu: &Gpu, op: Op, input: &CudaView<'_, T>, layout: RowLayout) -> Result<Vec<Value>> {
    OpReducer::new(gpu, op, T::DTYPE)?.rows(input, layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_entry_stems_and_the_command_line_names() {
        use clap::ValueEnum;
        for op in Op::ALL {
            assert_eq!(Op::parse(op.name()), Some(op));
            assert_eq!(op.to_possible_value().unwrap().get_name(), op.name());
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{}\"", op.name()));
            // Every entry point the host loads is instantiated in the operator's file.
            let source = op.spec().source;
            assert!(source.contains(&format!("OP_ENTRIES({}, ", op.name())), "{} is not instantiated in {}", op, op.spec().file);
            if op.supports(Dtype::I32) {
                assert!(source.contains(&format!("OP_ENTRIES_I32({}, ", op.name())), "{op} has no i32 entries");
            }
        }
        assert_eq!(Op::Argmax.entry(EntryShape::Rows(Strategy::Split), Dtype::BF16), "argmax_rows_split_bf16");
        assert_eq!(Op::MeanVar.entry(EntryShape::Whole, Dtype::F16), "mean_var_whole_f16");
    }

    #[test]
    fn results_decode_from_the_bytes_the_kernels_write() {
        assert_eq!(decode(Op::Max, Dtype::F32, &(-2.5f32).to_le_bytes()), Value::Number(-2.5));
        assert_eq!(decode(Op::Min, Dtype::I32, &(-7i32).to_le_bytes()), Value::Number(-7.0));
        assert_eq!(decode(Op::Argmax, Dtype::F16, &((1u64 << 33) + 5).to_le_bytes()), Value::Index((1 << 33) + 5));
        let mut mv = 1.5f32.to_le_bytes().to_vec();
        mv.extend(0.25f32.to_le_bytes());
        assert_eq!(decode(Op::MeanVar, Dtype::BF16, &mv), Value::MeanVar { mean: 1.5, var: 0.25 });
        // The poison every output starts as reads as NaN and as no index.
        assert!(matches!(decode(Op::Max, Dtype::F32, &[0xFF; 4]), Value::Number(x) if x.is_nan()));
        assert_eq!(decode(Op::Argmin, Dtype::F32, &[0xFF; 8]), Value::Index(u64::MAX));
    }
}
