//! Launches of the deep-learning kernels: the buffers checked against the layout, the plan
//! ([`super::plan`]) made with the GPU's occupancy, the scratch of the exchanges kept (zeroed
//! counters the kernels leave zeroed), and one launch queued. Nothing here waits for the GPU, so
//! calls can be timed or captured into a graph.

use super::columns::{self, Columns};
use super::plan::{self, Choice, Device, Launch, Team};
use super::DlOp;
use crate::element::{Dtype, Element};
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::KernelSpec;
use crate::rows::RowLayout;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, LaunchArgs, LaunchConfig, PushKernelArg};
use std::collections::HashMap;

/// The dynamic shared memory a launch may take without asking (48 KiB).
const DEFAULT_DYNAMIC_SHARED: u32 = 48 * 1024;

/// The exchanges' scratch, borrowed for one launch: partial states, the per-row (or per-strip)
/// arrive and depart counters, and the ticket.
type Scratch<'a> = (&'a mut CudaSlice<f32>, &'a mut CudaSlice<u32>, &'a mut CudaSlice<u32>, &'a mut CudaSlice<u32>);

/// The deep-learning kernels on one GPU, with their scratch buffers (which only grow).
pub struct DlRunner {
    gpu: Gpu,
    device: Device,
    functions: HashMap<String, CudaFunction>,
    /// Planted bugs of [`crate::check::dl_mutants`]: a file compiled in place of a registered one.
    replaced: Vec<(&'static str, &'static KernelSpec)>,
    choice: Option<Choice>,
    grid_cap: Option<u32>,
    partials: Option<CudaSlice<f32>>,
    /// One counter per row (split, cross-entropy) or strip (γ/β); zero between launches.
    arrive: Option<CudaSlice<u32>>,
    depart: Option<CudaSlice<u32>>,
    ticket: Option<CudaSlice<u32>>,
}

fn refuse(op: DlOp, layout: RowLayout, reason: String) -> Error {
    Error::InvalidLength { kernel: op.name().into(), n: layout.rows.saturating_mul(layout.cols), reason }
}

impl DlRunner {
    /// A runner that chooses every team by the shape ([`plan::choose`]).
    pub fn new(gpu: &Gpu) -> Result<DlRunner> {
        let info = gpu.info();
        let device = Device { sm_count: info.sm_count, arch: info.compute_capability, max_grid_x: i32::MAX as u32 };
        Ok(DlRunner {
            gpu: gpu.clone(),
            device,
            functions: HashMap::new(),
            replaced: Vec::new(),
            choice: None,
            grid_cap: None,
            partials: None,
            arrive: None,
            depart: None,
            ticket: None,
        })
    }

    /// Always use `choice` (`None`: choose by the shape).
    pub fn with_choice(mut self, choice: Option<Choice>) -> DlRunner {
        self.choice = choice;
        self
    }

    /// Launch `planted` (a registered file with one line changed) wherever `original` would be.
    pub fn replacing(mut self, original: &'static KernelSpec, planted: &'static KernelSpec) -> DlRunner {
        self.replaced.push((original.file, planted));
        self.functions.clear();
        self
    }

    /// Use at most `blocks` blocks (lanes, block and split teams), so that a test reaches the
    /// loops over rows that only millions of rows would reach otherwise.
    pub fn limit_grid(&mut self, blocks: u32) {
        self.grid_cap = Some(blocks.max(1));
    }

    pub fn device(&self) -> Device {
        self.device
    }

    fn spec(&self, op: DlOp) -> &'static KernelSpec {
        let original = op.spec();
        self.replaced.iter().find(|(file, _)| *file == original.file).map_or(original, |(_, planted)| planted)
    }

    fn function(&mut self, op: DlOp, entry: &str) -> Result<CudaFunction> {
        if let Some(f) = self.functions.get(entry) {
            return Ok(f.clone());
        }
        let f = self.gpu.function(self.spec(op), entry)?;
        if cluster_width(&f)? > plan::PORTABLE_CLUSTER {
            // Past 8 blocks a cluster is a non-portable size: the launch is refused unless asked for.
            // Where the driver refuses this, co_resident finds no room and the plan falls back.
            let _ = f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        }
        self.functions.insert(entry.to_string(), f.clone());
        Ok(f)
    }

    /// Blocks of `entry` the whole GPU holds at once; for a cluster entry, the blocks of the
    /// clusters it holds (0 where it refuses the size: a GPU without the non-portable sizes).
    fn co_resident(&mut self, op: DlOp, entry: &str, block: u32) -> Result<u32> {
        let f = self.function(op, entry)?;
        let width = cluster_width(&f)?;
        if width > 1 {
            let config = LaunchConfig { grid_dim: (width, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            return Ok(match f.occupancy_max_active_clusters(config, self.gpu.stream()) {
                Ok(clusters) => clusters * width,
                Err(_) if width > plan::PORTABLE_CLUSTER => 0,
                Err(e) => return Err(e).during("asking the occupancy calculator for clusters"),
            });
        }
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(block, 0, None).during("asking the occupancy calculator")?;
        Ok(per_sm * self.device.sm_count)
    }

    /// The launch this runner makes for `op` on `rows` × `cols` of `dtype` (`None`: nothing to do).
    pub fn plan(&mut self, op: DlOp, dtype: Dtype, rows: usize, cols: usize) -> Result<Option<Launch>> {
        // The occupancy is asked of the entry the plan picks: compile and ask lazily.
        // The first failure to ask is the error (a plan may ask twice: a cluster of 16, then the
        // team it falls back to).
        let mut failed: Option<Error> = None;
        let choice = self.choice;
        let device = self.device;
        let mut ask = |entry: &str, block: u32| -> u32 {
            match self.co_resident(op, entry, block) {
                Ok(n) => n,
                Err(e) => {
                    failed.get_or_insert(e);
                    0
                }
            }
        };
        let launch = plan::plan(op, dtype, rows as u64, cols as u64, device, choice, &mut ask);
        if let Some(e) = failed {
            return Err(e);
        }
        let mut launch = launch?;
        if let (Some(cap), Some(l)) = (self.grid_cap, launch.as_mut()) {
            match l.team {
                Team::Lanes(_) | Team::Block | Team::StagedBlock | Team::ThreePass => l.grid = l.grid.min(cap),
                Team::Split(s) if l.cooperative => l.grid = l.grid.min((cap / s).max(1) * s),
                _ => {}
            }
        }
        if let Some(l) = launch.as_mut().filter(|l| l.shared_bytes > DEFAULT_DYNAMIC_SHARED) {
            // Past 48 KiB a launch's dynamic shared memory must be asked for first (the staged
            // clusters' parameters: 64 KiB a block of 512 threads × 8 packs of RMSNorm's γ). A GPU
            // that has less to give (a consumer card's 99 KiB) gets none: the kernels then load
            // the parameters from L2 as they write.
            let f = self.function(op, &l.entry())?;
            if f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l.shared_bytes as i32).is_err() {
                l.shared_bytes = 0;
            }
        }
        Ok(launch)
    }

    /// Grow the scratch: `partials` floats, `counters` zeroed counters, and the ticket.
    fn scratch(&mut self, partials: usize, counters: usize) -> Result<Scratch<'_>> {
        let stream = self.gpu.stream().clone();
        if self.partials.as_ref().is_none_or(|p| p.len() < partials.max(1)) {
            self.partials = None; // free first, so that growth never holds both
            self.partials = Some(self.gpu.alloc::<f32>(partials.max(1))?);
        }
        if self.arrive.as_ref().is_none_or(|c| c.len() < counters.max(1)) {
            self.arrive = None;
            self.depart = None;
            self.arrive = Some(stream.alloc_zeros::<u32>(counters.max(1)).during("allocating the row counters")?);
            self.depart = Some(stream.alloc_zeros::<u32>(counters.max(1)).during("allocating the row counters")?);
        }
        if self.ticket.is_none() {
            self.ticket = Some(stream.alloc_zeros::<u32>(1).during("allocating the ticket")?);
        }
        Ok((self.partials.as_mut().unwrap(), self.arrive.as_mut().unwrap(), self.depart.as_mut().unwrap(), self.ticket.as_mut().unwrap()))
    }

    fn check_dtype<T: Element>(op: DlOp) -> Result<()> {
        if super::DTYPES.contains(&T::DTYPE) {
            Ok(())
        } else {
            Err(Error::UnsupportedDtype { kernel: op.name().into(), dtype: T::DTYPE, supported: super::DTYPES.to_vec() })
        }
    }

    /// The layout checked against the inputs (strided) and outputs (dense) of a row op.
    fn check_rows<T: Element>(op: DlOp, layout: RowLayout, inputs: &[usize], outputs: &[usize], stats: &[usize]) -> Result<()> {
        Self::check_dtype::<T>(op)?;
        for &len in inputs {
            layout.check(len).map_err(|e| refuse(op, layout, e.to_string()))?;
        }
        let dense = layout.rows * layout.cols;
        for &len in outputs {
            if len < dense {
                return Err(refuse(op, layout, format!("an output holds {len} values; {layout} needs {dense}")));
            }
        }
        for &len in stats {
            if len < layout.rows {
                return Err(refuse(op, layout, format!("a per-row output holds {len} values; there are {} rows", layout.rows)));
            }
        }
        Ok(())
    }

    /// What one launch needs beside the caller's buffers: the function, the stream, the tail
    /// arguments and the scratch sizes.
    fn prepare(&mut self, launch: &Launch, layout: RowLayout) -> Result<Prepared> {
        let function = self.function(launch.op, &launch.entry())?;
        let split = matches!(launch.team, Team::Split(_));
        let words = launch.op.state_words();
        Ok(Prepared {
            function,
            stream: self.gpu.stream().clone(),
            rows: layout.rows as u64,
            cols: layout.cols as u64,
            ld: layout.stride as u64,
            team: launch.team_arg(),
            partials: if split { layout.rows * launch.team.blocks_per_row() as usize * words } else { 2 * launch.grid as usize },
            counters: if split { layout.rows } else { 1 },
            three_pass: launch.team == Team::ThreePass,
            cooperative: launch.cooperative,
            config: LaunchConfig { grid_dim: (launch.grid, 1, 1), block_dim: (launch.block, 1, 1), shared_mem_bytes: launch.shared_bytes },
            what: format!("launching {} on {layout}", launch.entry()),
        })
    }

    /// softmax (or log_softmax) of every row of `x` into `y` (dense, `rows × cols`).
    pub fn softmax<T: Element>(&mut self, x: &CudaView<'_, T>, layout: RowLayout, y: &mut CudaViewMut<'_, T>, log: bool) -> Result<Option<Launch>> {
        let op = if log { DlOp::LogSoftmax } else { DlOp::Softmax };
        Self::check_rows::<T>(op, layout, &[x.len()], &[y.len()], &[])?;
        let Some(launch) = self.plan(op, T::DTYPE, layout.rows, layout.cols)? else { return Ok(None) };
        if launch.team == Team::ThreePass && log {
            return Err(refuse(op, layout, "the three-pass softmax has no log_softmax entry".into()));
        }
        let p = self.prepare(&launch, layout)?;
        let (partials, arrive, depart, _) = self.scratch(p.partials, p.counters)?;
        let mut args = p.stream.launch_builder(&p.function);
        args.arg(x).arg(y);
        p.tail(&mut args, partials, arrive, depart);
        p.fire(args)?;
        Ok(Some(launch))
    }

    /// dx = y · (dy − Σ y·dy) per row: softmax's backward.
    pub fn softmax_backward<T: Element>(&mut self, y: &CudaView<'_, T>, dy: &CudaView<'_, T>, layout: RowLayout, dx: &mut CudaViewMut<'_, T>) -> Result<Option<Launch>> {
        let op = DlOp::SoftmaxBwd;
        Self::check_rows::<T>(op, layout, &[y.len(), dy.len()], &[dx.len()], &[])?;
        let Some(launch) = self.plan(op, T::DTYPE, layout.rows, layout.cols)? else { return Ok(None) };
        let p = self.prepare(&launch, layout)?;
        let (partials, arrive, depart, _) = self.scratch(p.partials, p.counters)?;
        let mut args = p.stream.launch_builder(&p.function);
        args.arg(y).arg(dy).arg(dx);
        p.tail(&mut args, partials, arrive, depart);
        p.fire(args)?;
        Ok(Some(launch))
    }

    /// LayerNorm of every row: y, and the row's mean and rstd (f32).
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm<T: Element>(&mut self, x: &CudaView<'_, T>, gamma: &CudaView<'_, T>, beta: &CudaView<'_, T>, layout: RowLayout, eps: f32,
                                  y: &mut CudaViewMut<'_, T>, mean: &mut CudaViewMut<'_, f32>, rstd: &mut CudaViewMut<'_, f32>) -> Result<Option<Launch>> {
        let op = DlOp::LayerNorm;
        Self::check_rows::<T>(op, layout, &[x.len()], &[y.len()], &[mean.len(), rstd.len()])?;
        if gamma.len() < layout.cols || beta.len() < layout.cols {
            return Err(refuse(op, layout, format!("γ and β hold {} and {} values; a row has {}", gamma.len(), beta.len(), layout.cols)));
        }
        let Some(launch) = self.plan(op, T::DTYPE, layout.rows, layout.cols)? else { return Ok(None) };
        let p = self.prepare(&launch, layout)?;
        let (partials, arrive, depart, _) = self.scratch(p.partials, p.counters)?;
        let mut args = p.stream.launch_builder(&p.function);
        args.arg(x).arg(gamma).arg(beta).arg(y).arg(mean).arg(rstd).arg(&eps);
        p.tail(&mut args, partials, arrive, depart);
        p.fire(args)?;
        Ok(Some(launch))
    }

    /// RMSNorm of every row: y, and the row's 1/rms (f32).
    pub fn rms_norm<T: Element>(&mut self, x: &CudaView<'_, T>, gamma: &CudaView<'_, T>, layout: RowLayout, eps: f32, y: &mut CudaViewMut<'_, T>,
                                rrms: &mut CudaViewMut<'_, f32>) -> Result<Option<Launch>> {
        let op = DlOp::RmsNorm;
        Self::check_rows::<T>(op, layout, &[x.len()], &[y.len()], &[rrms.len()])?;
        if gamma.len() < layout.cols {
            return Err(refuse(op, layout, format!("γ holds {} values; a row has {}", gamma.len(), layout.cols)));
        }
        let Some(launch) = self.plan(op, T::DTYPE, layout.rows, layout.cols)? else { return Ok(None) };
        let p = self.prepare(&launch, layout)?;
        let (partials, arrive, depart, _) = self.scratch(p.partials, p.counters)?;
        let mut args = p.stream.launch_builder(&p.function);
        args.arg(x).arg(gamma).arg(y).arg(rrms).arg(&eps);
        p.tail(&mut args, partials, arrive, depart);
        p.fire(args)?;
        Ok(Some(launch))
    }

    /// Cross-entropy of every row of logits against its target: `loss` per row (0 where the
    /// target is `ignore_index`, NaN where it is out of range) and their `mean` over the rows not
    /// ignored (NaN if all are).
    #[allow(clippy::too_many_arguments)]
    pub fn cross_entropy<T: Element>(&mut self, x: &CudaView<'_, T>, targets: &CudaView<'_, i64>, layout: RowLayout, ignore_index: i64,
                                     loss: &mut CudaViewMut<'_, f32>, mean: &mut CudaViewMut<'_, f32>) -> Result<Option<Launch>> {
        let op = DlOp::CrossEntropy;
        Self::check_rows::<T>(op, layout, &[x.len()], &[], &[loss.len(), targets.len()])?;
        if mean.is_empty() {
            return Err(refuse(op, layout, "the mean needs an output of one value".into()));
        }
        if layout.rows > 0 && layout.cols == 0 {
            return Err(refuse(op, layout, "a row of no logits has no cross-entropy".into()));
        }
        let Some(launch) = self.plan(op, T::DTYPE, layout.rows, layout.cols)? else {
            // No rows, so none counted: the mean is 0 / 0, NaN, as torch's and the reference's.
            let mut first = mean.slice_mut(0..1);
            self.gpu.stream().memcpy_htod(&[f32::NAN], &mut first).during("writing the mean of no rows")?;
            return Ok(None);
        };
        let p = self.prepare(&launch, layout)?;
        let (partials, arrive, _, ticket) = self.scratch(p.partials, p.counters)?;
        let mut args = p.stream.launch_builder(&p.function);
        args.arg(x).arg(targets).arg(loss).arg(mean).arg(&ignore_index);
        p.tail(&mut args, partials, arrive, ticket);
        p.fire(args)?;
        Ok(Some(launch))
    }

    /// LayerNorm's dγ and dβ in one of the row kernels' layouts, kept to show why they are the
    /// wrong ones for a column sum: a warp per column (`team`), or a thread per column.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm_grad_naive<T: Element>(&mut self, team: bool, x: &CudaView<'_, T>, dy: &CudaView<'_, T>, mean: &CudaView<'_, f32>, rstd: &CudaView<'_, f32>,
                                             layout: RowLayout, dgamma: &mut CudaViewMut<'_, T>, dbeta: &mut CudaViewMut<'_, T>) -> Result<()> {
        let op = DlOp::LayerNormBwdGammaBeta;
        Self::check_dtype::<T>(op)?;
        for len in [x.len(), dy.len()] {
            layout.check(len).map_err(|e| refuse(op, layout, e.to_string()))?;
        }
        if mean.len() < layout.rows || rstd.len() < layout.rows || dgamma.len() < layout.cols || dbeta.len() < layout.cols {
            return Err(refuse(op, layout, "mean and rstd need one value per row, dγ and dβ one per column".into()));
        }
        if layout.is_empty() {
            return Ok(());
        }
        let entry = format!("layer_norm_grad_{}_per_column_{}", if team { "team" } else { "thread" }, T::DTYPE.name());
        let f = self.function(op, &entry)?;
        let block = 256u32;
        let grid = if team { layout.cols.div_ceil((block / 32) as usize) } else { layout.cols.div_ceil(block as usize) } as u32;
        let (rows, cols, ld) = (layout.rows as u64, layout.cols as u64, layout.stride as u64);
        let stream = self.gpu.stream().clone();
        let mut args = stream.launch_builder(&f);
        args.arg(x).arg(dy).arg(mean).arg(rstd).arg(dgamma).arg(dbeta).arg(&rows).arg(&cols).arg(&ld);
        let config = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: layer_norm_grad_{team,thread}_per_column_<T>(x, dy, mean, rstd, dgamma, dbeta,
        // rows, cols, ld): buffers checked as above; the grid covers every column (a warp or a
        // thread each); no launch bound beyond the default 1024.
        unsafe { args.launch(config) }.during(&format!("launching {entry} on {layout}"))?;
        Ok(())
    }

    /// The plan of LayerNorm's γ/β gradients for `layout`, from the blocks of the column kernel the
    /// occupancy calculator says the GPU holds at once.
    pub fn plan_columns(&mut self, dtype: Dtype, layout: RowLayout) -> Result<Option<Columns>> {
        if layout.is_empty() {
            return Ok(None);
        }
        let entry = format!("layer_norm_grad_columns_{}", dtype.name());
        let resident = self.co_resident(DlOp::LayerNormBwdGammaBeta, &entry, columns::COLUMN_WARPS * 32)?;
        Ok(columns::plan_columns(dtype, layout.rows as u64, layout.cols as u64, resident as u64, self.device.sm_count))
    }

    /// LayerNorm's dγ and dβ: Σ over rows of dy · (x − mean) · rstd, and of dy.
    #[allow(clippy::too_many_arguments)]
    pub fn layer_norm_grad<T: Element>(&mut self, x: &CudaView<'_, T>, dy: &CudaView<'_, T>, mean: &CudaView<'_, f32>, rstd: &CudaView<'_, f32>,
                                       layout: RowLayout, dgamma: &mut CudaViewMut<'_, T>, dbeta: &mut CudaViewMut<'_, T>) -> Result<Option<Columns>> {
        let op = DlOp::LayerNormBwdGammaBeta;
        Self::check_dtype::<T>(op)?;
        for len in [x.len(), dy.len()] {
            layout.check(len).map_err(|e| refuse(op, layout, e.to_string()))?;
        }
        if mean.len() < layout.rows || rstd.len() < layout.rows || dgamma.len() < layout.cols || dbeta.len() < layout.cols {
            return Err(refuse(op, layout, "mean and rstd need one value per row, dγ and dβ one per column".into()));
        }
        let Some(c) = self.plan_columns(T::DTYPE, layout)? else {
            if layout.cols > 0 {
                // No rows: the sums are zero.
                self.gpu.stream().memset_zeros(&mut dgamma.slice_mut(..layout.cols)).during("zeroing dγ of no rows")?;
                self.gpu.stream().memset_zeros(&mut dbeta.slice_mut(..layout.cols)).during("zeroing dβ of no rows")?;
            }
            return Ok(None);
        };
        let entry = format!("layer_norm_grad_columns_{}", T::DTYPE.name());
        let f = self.function(op, &entry)?;
        let stream = self.gpu.stream().clone();
        let (rows, cols, ld, rpc) = (layout.rows as u64, layout.cols as u64, layout.stride as u64, c.rows_per_chunk);
        let (partials, tickets, _, _) = self.scratch(2 * c.chunks as usize * layout.cols, c.strips as usize)?;
        let mut args = stream.launch_builder(&f);
        args.arg(x).arg(dy).arg(mean).arg(rstd).arg(dgamma).arg(dbeta).arg(partials).arg(tickets).arg(&rows).arg(&cols).arg(&ld).arg(&rpc);
        let config = LaunchConfig { grid_dim: (c.strips, c.chunks, 1), block_dim: (c.block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: layer_norm_grad_columns_<T>(x, dy, mean, rstd, dgamma, dbeta, partials, tickets,
        // rows, cols, ld, rows_per_chunk): the inputs checked against the layout, mean/rstd one
        // value per row, dγ/dβ one per column; partials 2 · chunks · cols floats and one zeroed
        // ticket per strip; 256 threads, the entry's launch bound; gridDim.y · rows_per_chunk ≥ rows.
        unsafe { args.launch(config) }.during(&format!("launching {entry} on {layout}"))?;
        Ok(Some(c))
    }
}

/// The blocks per cluster an entry was compiled for (`__cluster_dims__`), 1 for the others.
fn cluster_width(f: &CudaFunction) -> Result<u32> {
    let width = f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH).during("reading an entry's cluster size")?;
    Ok(width.max(1) as u32)
}

/// One launch, prepared: see [`DlRunner::prepare`].
struct Prepared {
    function: CudaFunction,
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    rows: u64,
    cols: u64,
    ld: u64,
    team: u32,
    partials: usize,
    counters: usize,
    three_pass: bool,
    cooperative: bool,
    config: LaunchConfig,
    what: String,
}

impl Prepared {
    /// The arguments every row entry ends with: (rows, cols, ld, team, partials, arrive, last),
    /// `last` the depart counters (row entries) or the ticket (cross-entropy); the three-pass
    /// softmax takes (rows, cols, ld) only.
    fn tail<'a>(&'a self, args: &mut LaunchArgs<'a>, partials: &'a mut CudaSlice<f32>, arrive: &'a mut CudaSlice<u32>, last: &'a mut CudaSlice<u32>) {
        args.arg(&self.rows).arg(&self.cols).arg(&self.ld);
        if !self.three_pass {
            args.arg(&self.team).arg(partials).arg(arrive).arg(last);
        }
    }

    fn fire(&self, mut args: LaunchArgs<'_>) -> Result<()> {
        // SAFETY: every entry's parameters are the head its caller pushed (buffers checked against
        // the layout by check_rows), then `tail` as dl_rows.cuh's DL_TAIL_PARAMS and
        // 19_cross_entropy.cu's CE_PARAMS declare them (the three-pass softmax: rows, cols, ld);
        // the scratch holds rows × slices × state words (split) or two floats per block, with
        // zeroed counters; the plan keeps the block within the entry's launch bound and a split's
        // grid within what the GPU holds at once (launched cooperatively: the driver refuses it
        // otherwise, instead of a hang).
        let fired = unsafe { if self.cooperative { args.launch_cooperative(self.config).map(|_| ()) } else { args.launch(self.config).map(|_| ()) } };
        fired.during(&self.what)
    }
}
