//! The deep-learning reductions' benchmark (chapters 17–20): every op at M·N = 2^28 for N = 2^8
//! … 2^18 and at the LLM shapes 4096 × 4096 and 8192 × 128256, f32 and bf16, the automatic team
//! of each, and the variants the chapter compares (softmax read three times and twice; a
//! cluster and co-resident blocks for long rows; LayerNorm's column sums in the row kernels'
//! layouts), beside the yardsticks of [`super::dl_yardsticks`] in the same run. Each is checked
//! against the float64 reference on the rows it is timed on (a sample of rows; every column of
//! the column sums) before it is timed: inputs rotated through a pool of at least 4× L2, CUDA
//! graphs of back-to-back launches between CUDA events (back-to-back launches where a graph
//! cannot be captured, which `method` says), medians. Bytes: every input read once and every
//! output written once ([`DlOp::bytes`]). Records: [`crate::records::dl`].

use super::{row, Input, Measured};
use crate::check::dl::{self as check, FromF32};
use crate::element::{bf16, Dtype, Element};
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::dl::plan::{self, Choice, Team};
use crate::kernels::dl::runner::DlRunner;
use crate::kernels::dl::DlOp;
use crate::records::bench::{Cache, Status};
use crate::records::dl::{self as records, DlRow};
use crate::rows::RowLayout;
use crate::runtime::timing::time_graph_or_batches as time;
use cudarc::driver::CudaSlice;

/// M·N of the sweep: 2^28 values.
pub const SWEEP_VALUES: usize = 1 << 28;

/// The issue's shapes: M·N = 2^28 for N = 2^8 … 2^18, then 4096 × 4096 and 8192 × 128256, in the
/// order a run cut short by its budget should keep them: first those `plots/dl_peers.py --quick`
/// measures too (N = 256, 16384, 262144 and the two LLM shapes), then N = 1024, then the rest.
pub fn default_shapes() -> Vec<(usize, usize)> {
    let mut shapes = quick_shapes();
    shapes.push((SWEEP_VALUES >> 10, 1 << 10));
    for k in 8..=18 {
        let s = (SWEEP_VALUES >> k, 1usize << k);
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    shapes
}

/// A few of them, for `--quick`: the shapes of `plots/dl_peers.py --quick`.
pub fn quick_shapes() -> Vec<(usize, usize)> {
    vec![(1 << 20, 256), (1 << 14, 1 << 14), (1 << 10, 1 << 18), (4096, 4096), (8192, 128_256)]
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct DlBenchConfig {
    pub shapes: Vec<(usize, usize)>,
    pub dtypes: Vec<Dtype>,
    pub ops: Vec<DlOp>,
    pub target_ms: f64,
    pub seed: u64,
    /// No new shape is started after this long (compiles included); `None`: every shape.
    pub budget: Option<std::time::Duration>,
    /// Only the planner's team of each op: no variants and no yardsticks (a quick run, to profile).
    pub planner_only: bool,
    /// With `planner_only`: this team in place of the planner's, for every op and shape (forced
    /// teams measured by turns against the planner's are the evidence behind its rules).
    pub team: Option<Choice>,
}

impl Default for DlBenchConfig {
    fn default() -> Self {
        DlBenchConfig { shapes: default_shapes(), dtypes: vec![Dtype::F32, Dtype::BF16], ops: DlOp::ALL.to_vec(), target_ms: 10.0, seed: 2018, budget: None, planner_only: false, team: None }
    }
}

/// One variant to time: the row's kernel name and title, and the team (None: automatic).
struct Variant {
    kernel: String,
    title: String,
    choice: Option<Choice>,
}

/// The variants of `op` at rows of `cols`: the automatic choice always; for softmax the textbook
/// three passes and the online softmax read twice; for rows past one block, a cluster (sm_90)
/// and co-resident blocks, forced.
fn variants(op: DlOp, dtype: Dtype, cols: usize, device: plan::Device) -> Vec<Variant> {
    let mut v = vec![Variant { kernel: records::kernel_name(op.name()), title: format!("{}: the planner's team", op.title()), choice: None }];
    let packs = plan::packs(dtype, cols as u64);
    if op == DlOp::Softmax {
        v.push(Variant { kernel: records::THREE_PASS.into(), title: "softmax, three reads of each row (max, sum, output)".into(),
            choice: Some(Choice { team: Team::ThreePass, vpt: 4, block: 512 }) });
        if packs > 512 {
            v.push(Variant { kernel: records::TWO_PASS.into(), title: "online softmax, one block of 256 × 2 packs: read twice past 512 packs".into(),
                choice: Some(Choice { team: Team::Block, vpt: 2, block: 256 }) });
        }
    }
    // A long row over blocks of 1024 threads, as the smallest block or cluster of them that holds
    // it, where the planner takes blocks of 512 (plan::cluster_for: the measurement behind it).
    let planned = plan::choose(op, dtype, 1, cols as u64, device).0;
    if op != DlOp::SoftmaxBwd && packs > plan::SLICE_PACKS && planned.block != 1024 {
        let blocks = packs.div_ceil(1024 * 8).next_power_of_two();
        let team = match blocks {
            1 => Some(Team::Block),
            2..=8 if device.has_clusters() && op != DlOp::CrossEntropy => Some(Team::Cluster(blocks as u32)),
            _ => None,
        };
        if let Some(team) = team {
            v.push(Variant { kernel: records::wide_block_name(op.name()), title: format!("{}: {team}, 1024 threads × 8 packs", op.title()),
                choice: Some(Choice { team, vpt: 8, block: 1024 }) });
        }
    }
    // The long rows' two teams of 512-thread blocks, forced: co-resident blocks, and a cluster.
    if op.writes_rows() && packs > plan::SLICE_PACKS {
        let slices = packs.div_ceil(plan::SLICE_PACKS) as u32;
        let (vpt, block, per) = if op == DlOp::SoftmaxBwd { (4, 512, 2048u64) } else { (8, 512, 4096u64) };
        v.push(Variant { kernel: records::split_name(op.name()), title: format!("{}: co-resident blocks per row", op.title()),
            choice: Some(Choice { team: Team::Split(packs.div_ceil(per).min(64) as u32), vpt, block }) });
        if device.has_clusters() && slices <= 8 {
            let (cvpt, cblock) = if op == DlOp::SoftmaxBwd { (4, 1024) } else { (8, 512) };
            v.push(Variant { kernel: records::cluster_name(op.name()), title: format!("{}: a thread-block cluster per row", op.title()),
                choice: Some(Choice { team: Team::Cluster(slices.next_power_of_two().max(2)), vpt: cvpt, block: cblock }) });
        }
    }
    v
}

/// Rows checked before timing: the first and last eight, and 48 spread between.
fn sample_rows(m: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = (0..m.min(8)).chain(m.saturating_sub(8)..m).chain((0..48).map(|i| i * m / 48)).collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Measure everything the config names, shape by shape (each in every type); one line per
/// measurement to stderr as it is made, and `progress(rows so far)` after each shape (the command
/// line writes its CSV there, so that a run cut short keeps what it measured). Shapes that do not
/// fit in the GPU's free memory are skipped with the reason; past `config.budget` no new shape is
/// started, and the ones left are listed in [`DlBench::not_measured`].
pub fn bench(gpu: &Gpu, config: &DlBenchConfig, progress: &mut dyn FnMut(&[DlRow]) -> Result<()>) -> Result<DlBench> {
    let started = std::time::Instant::now();
    // The four files at once, one core each, rather than one after another as they are first used.
    let files = crate::kernels::dl::files();
    gpu.preload(&files.map(|f| f as &(dyn crate::gpu::KernelSource + Sync)))?;
    let yardsticks = if config.planner_only { Default::default() } else { super::dl_yardsticks::measure(gpu, config.target_ms, config.seed)? };
    let mut rows = yardsticks.rows;
    let mut not_measured = Vec::new();
    for &(m, n) in &config.shapes {
        for &dtype in &config.dtypes {
            if config.budget.is_some_and(|b| started.elapsed() > b) {
                not_measured.push(format!("{dtype} {m} × {n}"));
                continue;
            }
            let one = DlBenchConfig { shapes: vec![(m, n)], dtypes: vec![dtype], ..config.clone() };
            match dtype {
                Dtype::F32 => rows.extend(bench_typed::<f32>(gpu, &one)?),
                Dtype::BF16 => rows.extend(bench_typed::<bf16>(gpu, &one)?),
                Dtype::F16 => rows.extend(bench_typed::<crate::element::f16>(gpu, &one)?),
                other => return Err(Error::Config { setting: format!("dl-bench --dtypes {other}"), reason: "the deep-learning kernels take f32, f16 or bf16".into() }),
            }
        }
        progress(&rows)?;
    }
    Ok(DlBench { rows, copy_shapes: yardsticks.copy_shapes, not_measured, seconds: started.elapsed().as_secs_f64() })
}

/// What [`bench()`] measured.
#[derive(Clone, Debug)]
pub struct DlBench {
    pub rows: Vec<DlRow>,
    /// The copy's median at every tile shape checked (the yardstick row is the fastest).
    pub copy_shapes: Vec<records::CopyShapeTime>,
    /// The (type, shape) cases not started because the budget was spent.
    pub not_measured: Vec<String>,
    /// How long it took, compiles included.
    pub seconds: f64,
}

/// The shapes measured, in the order they were (the yardsticks left out).
pub fn shapes_measured(rows: &[DlRow]) -> Vec<(usize, usize)> {
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.op != "copy" && r.op != "read") {
        if !shapes.contains(&(r.rows, r.n)) {
            shapes.push((r.rows, r.n));
        }
    }
    shapes
}

/// Device buffers of one shape: `slots` input matrices (and dy, γ, β, targets, saved statistics),
/// the outputs, and the host copy of slot 0 the checks use.
struct Pool<T: Element> {
    slots: usize,
    x: CudaSlice<T>,
    dy: CudaSlice<T>,
    gamma: CudaSlice<T>,
    beta: CudaSlice<T>,
    targets: CudaSlice<i64>,
    mean: CudaSlice<f32>,
    rstd: CudaSlice<f32>,
    host: Host<T>,
}

/// The outputs a launch writes (one set per shape).
struct Outputs<T: Element> {
    y: CudaSlice<T>,
    stats: CudaSlice<f32>,
    loss: CudaSlice<f32>,
    dgamma: CudaSlice<T>,
    dbeta: CudaSlice<T>,
}

/// The host copy of slot 0 the checks use.
struct Host<T: Element> {
    host_x: Vec<T>,
    host_dy: Vec<T>,
    host_gamma: Vec<T>,
    host_beta: Vec<T>,
    host_targets: Vec<i64>,
}

fn bench_typed<T: FromF32>(gpu: &Gpu, config: &DlBenchConfig) -> Result<Vec<DlRow>> {
    let mut rows = Vec::new();
    let mut runner = DlRunner::new(gpu)?;
    let device = runner.device();
    let elem = std::mem::size_of::<T>();
    for &(m, n) in &config.shapes {
        let values = m * n;
        let l2 = gpu.info().l2_cache_bytes;
        let slots = (4 * l2).div_ceil(values * elem).max(2);
        // x and dy slots, y, and room for the checks: refuse a shape that does not fit.
        let need = (2 * slots + 1) * values * elem + 32 * m + (1 << 28);
        let (free, _) = gpu.memory()?;
        if need > free {
            eprintln!("{} {m} × {n}: skipped, needs {} of device memory, {} free", T::DTYPE, crate::error::human_bytes(need), crate::error::human_bytes(free));
            continue;
        }
        let layout = RowLayout::dense(m, n);
        let started = std::time::Instant::now();
        let pool = make_pool::<T>(gpu, m, n, slots, config.seed)?;
        let made = started.elapsed().as_secs_f64();
        let before = rows.len();
        let mut outputs = Outputs { y: gpu.alloc::<T>(values)?, stats: gpu.alloc::<f32>(2 * m + 2)?, loss: gpu.alloc::<f32>(m + 1)?, dgamma: gpu.alloc::<T>(n)?, dbeta: gpu.alloc::<T>(n)? };
        for &op in &config.ops {
            if op == DlOp::LayerNormBwdGammaBeta {
                rows.extend(measure_columns(gpu, &mut runner, config, &pool, &mut outputs, layout)?);
                continue;
            }
            let mut measured = variants(op, T::DTYPE, n, device);
            if config.planner_only {
                measured.truncate(1);
                if let Some(choice) = config.team {
                    // The planner's row, with the team asked for: its title says which.
                    measured[0].title = format!("{}: a forced team, {} × {} packs, block {}", op.title(), choice.team, choice.vpt, choice.block);
                    measured[0].choice = Some(choice);
                }
            }
            for variant in measured {
                let mut runner_v = DlRunner::new(gpu)?.with_choice(variant.choice);
                let r = {
                    match measure_op(gpu, &mut runner_v, config, &pool, &mut outputs, op, layout, &variant) {
                        Ok(r) => r,
                        Err(e @ Error::WrongSum { .. }) => return Err(e),
                        Err(e) => {
                            eprintln!("{} {op} {layout} {}: not measured: {e}", T::DTYPE, variant.kernel);
                            continue;
                        }
                    }
                };
                rows.extend(r);
            }
        }
        // Where a shape's time goes, for planning a run: making the inputs, or checking and timing.
        eprintln!("{} {m} × {n}: inputs made in {made:.1} s, {} measurements checked and timed in {:.1} s", T::DTYPE, rows.len() - before,
            started.elapsed().as_secs_f64() - made);
    }
    drop(runner);
    Ok(rows)
}

fn make_pool<T: FromF32>(gpu: &Gpu, m: usize, n: usize, slots: usize, seed: u64) -> Result<Pool<T>> {
    let values = m * n;
    let host_x: Vec<T> = check::uniform(values, -1.0, 1.0, seed);
    let host_dy: Vec<T> = check::uniform(values, -1.0, 1.0, seed ^ 1);
    let host_gamma: Vec<T> = check::uniform(n, 0.5, 1.5, seed ^ 2);
    let host_beta: Vec<T> = check::uniform(n, -0.5, 0.5, seed ^ 3);
    let host_targets = check::targets(m, n, -100, 16, seed ^ 4);
    let mut x = gpu.alloc::<T>(slots * values)?;
    let mut dy = gpu.alloc::<T>(slots * values)?;
    for s in 0..slots {
        // The same values in every slot: the point of the slots is their addresses (past L2).
        gpu.upload_chunked(&host_x, &mut x, s * values, "uploading the input pool")?;
        gpu.upload_chunked(&host_dy, &mut dy, s * values, "uploading dy")?;
    }
    // The statistics the forward saved (for the column sums): each row's mean and rstd.
    let mut stats_host = vec![(0.0f32, 0.0f32); m];
    let threads = std::thread::available_parallelism().map_or(4, |t| t.get()).min(m.max(1));
    std::thread::scope(|scope| {
        for (i, chunk) in stats_host.chunks_mut(m.div_ceil(threads).max(1)).enumerate() {
            let first = i * m.div_ceil(threads).max(1);
            let host_x = &host_x;
            scope.spawn(move || {
                for (j, out) in chunk.iter_mut().enumerate() {
                    let row = &host_x[(first + j) * n..(first + j + 1) * n];
                    let mu = row.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
                    let var = row.iter().map(|v| (v.to_f64() - mu).powi(2)).sum::<f64>() / n as f64;
                    *out = (mu as f32, (1.0 / (var + 1e-5).sqrt()) as f32);
                }
            });
        }
    });
    Ok(Pool {
        slots,
        x,
        dy,
        gamma: gpu.upload(&host_gamma)?,
        beta: gpu.upload(&host_beta)?,
        targets: gpu.stream().clone_htod(&host_targets).during("uploading the targets")?,
        mean: gpu.upload(&stats_host.iter().map(|s| s.0).collect::<Vec<_>>())?,
        rstd: gpu.upload(&stats_host.iter().map(|s| s.1).collect::<Vec<_>>())?,
        host: Host { host_x, host_dy, host_gamma, host_beta, host_targets },
    })
}

/// One row op: checked on slot 0 (a sample of rows against the reference), then timed.
#[allow(clippy::too_many_arguments)]
fn measure_op<T: FromF32>(gpu: &Gpu, runner: &mut DlRunner, config: &DlBenchConfig, pool: &Pool<T>, outputs: &mut Outputs<T>, op: DlOp, layout: RowLayout,
                          variant: &Variant) -> Result<Vec<DlRow>> {
    let (m, n) = (layout.rows, layout.cols);
    let values = m * n;
    let Outputs { y, stats, loss, .. } = outputs;
    let enqueue = |runner: &mut DlRunner, j: usize, y: &mut CudaSlice<T>, stats: &mut CudaSlice<f32>, loss: &mut CudaSlice<f32>| -> Result<Option<plan::Launch>> {
        let s = j % pool.slots;
        let x = pool.x.slice(s * values..(s + 1) * values);
        let (mut yv, mut sv) = (y.as_view_mut(), stats.as_view_mut());
        match op {
            DlOp::Softmax | DlOp::LogSoftmax => runner.softmax(&x, layout, &mut yv, op == DlOp::LogSoftmax),
            DlOp::SoftmaxBwd => {
                let dy = pool.dy.slice(((s + 1) % pool.slots) * values..((s + 1) % pool.slots + 1) * values);
                runner.softmax_backward(&x, &dy, layout, &mut yv)
            }
            DlOp::LayerNorm => {
                let (mut mean, mut rstd) = sv.split_at_mut(m + 1);
                runner.layer_norm(&x, &pool.gamma.as_view(), &pool.beta.as_view(), layout, 1e-5, &mut yv, &mut mean, &mut rstd)
            }
            DlOp::RmsNorm => runner.rms_norm(&x, &pool.gamma.as_view(), layout, 1e-6, &mut yv, &mut sv),
            DlOp::CrossEntropy => {
                let (mut l, mut mean) = (loss.as_view_mut(), sv.slice_mut(..1));
                runner.cross_entropy(&x, &pool.targets.as_view(), layout, -100, &mut l, &mut mean)
            }
            DlOp::LayerNormBwdGammaBeta => unreachable!(),
        }
    };
    // Correct before fast: poisoned outputs, slot 0, a sample of rows against the reference.
    gpu.fill(y, T::POISON)?;
    gpu.fill(stats, f32::NAN)?;
    gpu.fill(loss, f32::NAN)?;
    let launch = enqueue(runner, 0, y, stats, loss)?.ok_or_else(|| Error::Config { setting: format!("{op} on {layout}"), reason: "nothing to launch".into() })?;
    gpu.synchronize()?;
    check_sample(gpu, pool, op, layout, &launch, y, stats, loss).map_err(|why| Error::WrongSum { what: format!("{} on {layout} of {} ({launch})", variant.kernel, T::DTYPE), why })?;
    let timing = time(gpu, config.target_ms, |j| enqueue(runner, j, y, stats, loss).map(|_| ()))?;
    let bytes = op.bytes(T::DTYPE, m as u64, n as u64) as usize;
    let inputs = op.row_inputs() * values * std::mem::size_of::<T>();
    let working_set = timing.ops_per_graph.min(pool.slots) * inputs;
    let what = Measured { kernel: &variant.kernel, chapter: op.spec().chapter, title: &format!("{} [{}]", variant.title, launch.entry()), status: Status::Correct };
    let r = row(what, Input { dtype: T::DTYPE, n, block: launch.block, cache: Cache::Rotated, bytes, working_set_bytes: working_set }, &timing);
    let peak = gpu.info().peak_bandwidth_bytes_per_s().unwrap_or(f64::NAN) / 1e9;
    // Everything the row holds but its configuration: a CSV that is lost can be rebuilt from this.
    eprintln!("{:<14} {:>4} {:>8} × {:<7} {:<26} {:>10.2} µs {:>8.1} GB/s {:>5.1}%   [{:.3} … {:.3} µs, {} repeats, {}]   {launch}", op.name(), T::DTYPE, m, n,
        variant.kernel, r.median_us, r.gbps(), 100.0 * r.gbps() / peak, r.min_us, r.max_us, r.repeats, r.method);
    Ok(vec![DlRow::of(r, op.name(), m)])
}

/// The sampled rows of slot 0 against the float64 reference, within the bounds of check::dl.
#[allow(clippy::too_many_arguments)]
fn check_sample<T: FromF32>(gpu: &Gpu, pool: &Pool<T>, op: DlOp, layout: RowLayout, launch: &plan::Launch, y: &CudaSlice<T>,
                            stats: &CudaSlice<f32>, loss: &CudaSlice<f32>) -> std::result::Result<(), String> {
    let (m, n) = (layout.rows, layout.cols);
    let rows = sample_rows(m);
    let sub = RowLayout::dense(rows.len(), n);
    let gather = |host: &[T]| -> Vec<T> { rows.iter().flat_map(|&r| host[r * n..(r + 1) * n].iter().copied()).collect() };
    let x = gather(&pool.host.host_x);
    // The tests' conditioning (tests/dl.rs): until session 61 this left out the rows' mean |x|
    // and LayerNorm's |mean|·rstd, and so held the means to a tighter bound than the tests do.
    let c = check::conditioning(&x, sub);
    let depth = launch.depth(n as u64);
    let dl = |e: cudarc::driver::DriverError| e.to_string();
    // Only the sampled rows of y come back: the whole output is up to 4 GiB (2^13 × 128256 f32,
    // where with it a measurement took 6.9 s on the H200, checked and timed); cross-entropy
    // writes no y.
    let mut y_sampled: Vec<T> = Vec::with_capacity(if op.writes_rows() { rows.len() * n } else { 0 });
    if op.writes_rows() {
        for &r in &rows {
            y_sampled.extend(gpu.stream().clone_dtoh(&y.slice(r * n..(r + 1) * n)).map_err(dl)?);
        }
    }
    let stats_host: Vec<f32> = gpu.stream().clone_dtoh(stats).map_err(dl)?;
    let loss_host: Vec<f32> = gpu.stream().clone_dtoh(loss).map_err(dl)?;
    gpu.synchronize().map_err(|e| e.to_string())?;
    let got_rows = |sampled: &[T]| -> Vec<f64> { sampled.iter().map(|v| v.to_f64()).collect() };
    let b = |what: &str| check::bound(op, what, T::DTYPE, depth, c);
    match op {
        DlOp::Softmax | DlOp::LogSoftmax => check::compare("y", &got_rows(&y_sampled), &check::softmax(&x, sub, op == DlOp::LogSoftmax), b("y")),
        DlOp::SoftmaxBwd => {
            let dy = gather(&pool.host.host_dy);
            check::compare("dx", &got_rows(&y_sampled), &check::softmax_backward(&x, &dy, sub), b("dx"))
        }
        DlOp::LayerNorm => {
            let (want, mean, rstd) = check::layer_norm(&x, &pool.host.host_gamma, &pool.host.host_beta, sub, 1e-5);
            let b = |what: &str| check::bound(op, what, T::DTYPE, depth, check::with_mean_rstd(c, &mean, &rstd));
            check::compare("y", &got_rows(&y_sampled), &want, b("y"))?;
            let pick = |base: usize| -> Vec<f64> { rows.iter().map(|&r| stats_host[base + r] as f64).collect() };
            check::compare("mean", &pick(0), &mean, b("mean"))?;
            check::compare("rstd", &pick(m + 1), &rstd, b("rstd"))
        }
        DlOp::RmsNorm => {
            let (want, rrms) = check::rms_norm(&x, &pool.host.host_gamma, sub, 1e-6);
            check::compare("y", &got_rows(&y_sampled), &want, b("y"))?;
            check::compare("rrms", &rows.iter().map(|&r| stats_host[r] as f64).collect::<Vec<_>>(), &rrms, b("rrms"))
        }
        DlOp::CrossEntropy => {
            let targets: Vec<i64> = rows.iter().map(|&r| pool.host.host_targets[r]).collect();
            let (want, _) = check::cross_entropy(&x, &targets, sub, -100);
            check::compare("loss", &rows.iter().map(|&r| loss_host[r] as f64).collect::<Vec<_>>(), &want, b("loss"))?;
            // The mean: of the kernel's own losses (checked above on the sample), in f64.
            let live: Vec<f64> = (0..m).filter(|&r| pool.host.host_targets[r] != -100).map(|r| loss_host[r] as f64).collect();
            let mean = live.iter().sum::<f64>() / live.len() as f64;
            check::compare("mean", &[stats_host[0] as f64], &[mean], b("mean"))
        }
        DlOp::LayerNormBwdGammaBeta => unreachable!(),
    }
}

/// LayerNorm's dγ and dβ: the planner's column kernel and the two row-kernel layouts, every
/// column checked against the f64 sums.
fn measure_columns<T: FromF32>(gpu: &Gpu, runner: &mut DlRunner, config: &DlBenchConfig, pool: &Pool<T>, outputs: &mut Outputs<T>, layout: RowLayout) -> Result<Vec<DlRow>> {
    let (m, n) = (layout.rows, layout.cols);
    let values = m * n;
    let op = DlOp::LayerNormBwdGammaBeta;
    let mean_h: Vec<f32> = gpu.download(&pool.mean)?;
    let rstd_h: Vec<f32> = gpu.download(&pool.rstd)?;
    gpu.synchronize()?;
    let [wg, wb, sg, sb] = check::layer_norm_grad(&pool.host.host_x, &pool.host.host_dy, &mean_h, &rstd_h, layout);
    let (dg, db) = (&mut outputs.dgamma, &mut outputs.dbeta);
    let plan = runner.plan_columns(T::DTYPE, layout)?;
    let mut rows = Vec::new();
    // The row layouts are slow by orders of magnitude where rows are many: measured only where
    // a call takes well under a second (the chapter's point needs no more).
    let mut kinds: Vec<(String, &str, Option<bool>)> = vec![(records::kernel_name(op.name()), "LayerNorm dγ, dβ: strips of columns × chunks of rows", None)];
    if m <= 1 << 16 {
        kinds.push((records::TEAM_PER_COLUMN.into(), "dγ, dβ with a warp per column (the row kernels' team, turned)", Some(true)));
        kinds.push((records::THREAD_PER_COLUMN.into(), "dγ, dβ with a thread per column, all rows", Some(false)));
    }
    for (kernel, title, naive) in kinds {
        let kernel = kernel.as_str();
        let mut enqueue = |j: usize, dg: &mut CudaSlice<T>, db: &mut CudaSlice<T>| -> Result<()> {
            let s = j % pool.slots;
            let x = pool.x.slice(s * values..(s + 1) * values);
            let dy = pool.dy.slice(((s + 1) % pool.slots) * values..((s + 1) % pool.slots + 1) * values);
            match naive {
                None => runner.layer_norm_grad(&x, &dy, &pool.mean.as_view(), &pool.rstd.as_view(), layout, &mut dg.as_view_mut(), &mut db.as_view_mut()).map(|_| ()),
                Some(team) => runner.layer_norm_grad_naive(team, &x, &dy, &pool.mean.as_view(), &pool.rstd.as_view(), layout, &mut dg.as_view_mut(), &mut db.as_view_mut()),
            }
        };
        gpu.fill(dg, T::POISON)?;
        gpu.fill(db, T::POISON)?;
        // Every slot holds the same values: the reference is that of any of them.
        enqueue(0, dg, db)?;
        let (gg, gb) = (gpu.download(dg)?, gpu.download(db)?);
        gpu.synchronize()?;
        let depth = plan.map_or(m as u64, |p| p.rows_per_chunk.div_ceil(8) + p.chunks as u64 + 16).max(if naive.is_some() { m as u64 } else { 0 }) as f64;
        let out = check::unit(T::DTYPE);
        for j in 0..n {
            let (g, b) = (gg[j].to_f64(), gb[j].to_f64());
            if (g - wg[j]).abs() > out * wg[j].abs() + (depth + 8.0) * check::U32 * sg[j] || (b - wb[j]).abs() > out * wb[j].abs() + (depth + 8.0) * check::U32 * sb[j] {
                return Err(Error::WrongSum { what: format!("{kernel} on {layout} of {}", T::DTYPE), why: format!("column {j}: dγ {g} (want {}), dβ {b} (want {})", wg[j], wb[j]) });
            }
        }
        let timing = time(gpu, config.target_ms, |j| enqueue(j, dg, db))?;
        let bytes = op.bytes(T::DTYPE, m as u64, n as u64) as usize;
        let working_set = timing.ops_per_graph.min(pool.slots) * 2 * values * std::mem::size_of::<T>();
        let what = Measured { kernel, chapter: op.spec().chapter, title, status: Status::Correct };
        let r = row(what, Input { dtype: T::DTYPE, n, block: 256, cache: Cache::Rotated, bytes, working_set_bytes: working_set }, &timing);
        eprintln!("{:<14} {:>4} {:>8} × {:<7} {:<26} {:>10.2} µs {:>8.1} GB/s", "ln_bwd_γβ", T::DTYPE, m, n, kernel, r.median_us, r.gbps());
        rows.push(DlRow::of(r, op.name(), m));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_are_the_issues_with_the_peers_quick_ones_first() {
        let shapes = default_shapes();
        let mut sorted = shapes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 13, "{shapes:?}");
        assert!((8..=18).all(|k| shapes.contains(&(SWEEP_VALUES >> k, 1 << k))) && shapes.contains(&(4096, 4096)) && shapes.contains(&(8192, 128_256)));
        assert_eq!(&shapes[..5], quick_shapes().as_slice());
        assert_eq!(shapes[5], (1 << 18, 1024));
    }

    #[test]
    fn long_rows_are_also_measured_over_blocks_of_1024_threads_where_the_planner_takes_512() {
        let wide = |op: DlOp, dtype: Dtype, cols: usize, device: plan::Device| {
            variants(op, dtype, cols, device).into_iter().find(|v| v.kernel == records::wide_block_name(op.name())).and_then(|v| v.choice)
        };
        let (h200, sm80) = (plan::Device::h200(), plan::Device { arch: (8, 0), ..plan::Device::h200() });
        let pick = |c: Option<Choice>| c.map(|c| (c.team, c.vpt, c.block));
        assert_eq!(pick(wide(DlOp::Softmax, Dtype::F32, 1 << 17, h200)), Some((Team::Cluster(4), 8, 1024)), "the planner: 8 × 512");
        assert_eq!(pick(wide(DlOp::RmsNorm, Dtype::BF16, 1 << 18, h200)), Some((Team::Cluster(4), 8, 1024)));
        assert_eq!(pick(wide(DlOp::Softmax, Dtype::F32, 128_256, h200)), Some((Team::Cluster(4), 8, 1024)));
        assert_eq!(pick(wide(DlOp::Softmax, Dtype::F32, 1 << 16, h200)), Some((Team::Cluster(2), 8, 1024)), "the planner: 4 × 512");
        assert_eq!(pick(wide(DlOp::Softmax, Dtype::BF16, 1 << 17, h200)), Some((Team::Cluster(2), 8, 1024)));
        assert!(wide(DlOp::Softmax, Dtype::F32, 1 << 15, h200).is_none(), "f32 2^15: the planner's own block is 1024 threads");
        // f32 2^18: the planner's 16 × 512 beside the 8 × 1024 it took before the cluster of 16.
        assert_eq!(pick(wide(DlOp::RmsNorm, Dtype::F32, 1 << 18, h200)), Some((Team::Cluster(8), 8, 1024)));
        assert!(wide(DlOp::LogSoftmax, Dtype::BF16, 1 << 16, h200).is_none());
        // Softmax's 16-bit rows of 8192 packs: the planner's cluster of two 512s beside one block of 1024.
        assert_eq!(pick(wide(DlOp::Softmax, Dtype::BF16, 1 << 16, h200)), Some((Team::Block, 8, 1024)));
        assert!(wide(DlOp::Softmax, Dtype::F32, 1 << 17, sm80).is_none(), "no clusters below sm_90");
        assert!(wide(DlOp::Softmax, Dtype::F32, 1 << 14, h200).is_none() && wide(DlOp::SoftmaxBwd, Dtype::F32, 1 << 17, h200).is_none());
        // The 512-thread teams stay measured beside the planner's 1024: a cluster and a split.
        let kernels: Vec<String> = variants(DlOp::LayerNorm, Dtype::F32, 1 << 15, h200).into_iter().map(|v| v.kernel).collect();
        assert!(kernels.contains(&records::cluster_name("layer_norm")) && kernels.contains(&records::split_name("layer_norm")), "{kernels:?}");
    }

    #[test]
    fn the_shapes_measured_come_in_their_order_without_the_yardsticks() {
        let row = |op: &str, rows: usize, n: usize| DlRow {
            kernel: op.into(), chapter: 17, title: op.into(), status: Status::Correct, dtype: Dtype::F32, n, block: 0, cache: Cache::Rotated,
            median_us: 1.0, min_us: 1.0, max_us: 1.0, bytes: 1, working_set_bytes: 1, repeats: 1, method: String::new(), op: op.into(), rows,
        };
        let rows = [row("copy", 1, 1 << 28), row("softmax", 4096, 4096), row("layer_norm", 4096, 4096), row("softmax", 1 << 20, 256)];
        assert_eq!(shapes_measured(&rows), vec![(4096, 4096), (1 << 20, 256)]);
    }
}
