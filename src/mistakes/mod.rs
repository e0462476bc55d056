//! The common mistakes of the last part of the book: broken kernels (under `kernels/broken/`)
//! and broken host code, each run on the GPU in a child process under a deadline
//! ([`crate::guard`]), so that a hang, a fault or a dead CUDA context never reaches the process
//! that asked.
//!
//! - [`all`]: the mistakes, by number; [`kernel_files`]: the broken kernels (a registry of their
//!   own: never in [`crate::kernels::all`], so never tested for correctness nor benchmarked).
//! - [`run_in_process`]: what a child does (and `reduction mistake NAME`, which
//!   compute-sanitizer wraps). [`run_child_if_asked`]: the hook at the top of `main` of every
//!   binary that spawns children.
//! - [`run_guarded`]: the parent's side. [`Mistake::verdict`]: what the tests and
//!   `reduction mistakes` expect of each.
//! - [`write_records`] / [`read_records`]: what was observed, as `plots/data/mistakes/<gpu>.csv`;
//!   [`write_mistakes_table`]: the chapter's tables, drawn from that file.

pub mod guard;

use crate::data::Checked;
use crate::element::{Dtype, Element};
use crate::error::{io_error, During, Error, Result};
use crate::gpu::Gpu;
use crate::guard::{Class, Deadline, Observation, Outcome, Phase, Report};
use crate::kernels::{GridRule, KernelSpec, Shape, Shared, Status};
use crate::plan::{plan_passes, Pass, MAX_GRID};
use crate::results::{quote, split_quoted};
use crate::Reducer;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Environment variable that makes a binary a mistake's child: the mistake's name.
pub const CHILD_ENV: &str = "REDUCTION_MISTAKE";
/// The child's input length, run count and seed.
pub const CHILD_N_ENV: &str = "REDUCTION_MISTAKE_N";
pub const CHILD_RUNS_ENV: &str = "REDUCTION_MISTAKE_RUNS";
pub const CHILD_SEED_ENV: &str = "REDUCTION_MISTAKE_SEED";
/// Where a GPU run records what it observed: a CSV file, or a directory for `<gpu-slug>.csv`.
pub const RECORD_ENV: &str = "MISTAKES_RECORD";

// ---- the broken kernels ----

/// A broken kernel: a [`KernelSpec`] so that [`Gpu::function`] compiles and loads it like any
/// other, but kept out of [`crate::kernels::all`]. (`status` is unused for these: they are never
/// benchmarked; `chapter` 0 means "the mistakes chapter".)
const fn broken(name: &'static str, title: &'static str, file: &'static str, source: &'static str, min_block: u32, elements_per_thread: u32) -> KernelSpec {
    KernelSpec {
        name, chapter: 0, title, file, source, status: Status::Historical, min_block, max_block: 1024,
        block_in_entry_name: false, elements_per_thread, grid: GridRule::OneBlockPerTile,
        shape: Shape::MultiPass, shared: Shared::PerThread, dtypes: &Dtype::CLASSIC, needs_cuda_headers: false,
    }
}

static BROKEN: &[KernelSpec] = &[
    broken("sync_in_branch", "barrier inside a branch", "broken/01_sync_in_branch.cu",
        include_str!("../../kernels/broken/01_sync_in_branch.cu"), 32, 1),
    broken("warp_no_volatile", "last warp without volatile", "broken/02_warp_no_volatile.cu",
        include_str!("../../kernels/broken/02_warp_no_volatile.cu"), 64, 2),
    broken("tail_not_written", "tail of shared memory not written", "broken/04_tail_not_written.cu",
        include_str!("../../kernels/broken/04_tail_not_written.cu"), 32, 1),
    broken("second_load_unchecked", "second load unchecked", "broken/06_second_load_unchecked.cu",
        include_str!("../../kernels/broken/06_second_load_unchecked.cu"), 32, 2),
    broken("grid_barrier_spin", "grid barrier by spinning", "broken/08_grid_barrier_spin.cu",
        include_str!("../../kernels/broken/08_grid_barrier_spin.cu"), 32, 1),
];

/// Every broken kernel file (paths relative to `kernels/`), for the compile check and the
/// book's check that every file under `kernels/broken/` is registered.
pub fn kernel_files() -> Vec<(&'static str, &'static KernelSpec)> {
    BROKEN.iter().map(|k| (k.file, k)).collect()
}

/// A broken kernel by name, or else a registered (correct) one.
pub fn kernel_spec(name: &str) -> Result<&'static KernelSpec> {
    match BROKEN.iter().find(|k| k.name == name) {
        Some(k) => Ok(k),
        None => crate::kernels::find(name),
    }
}

// ---- the mistakes ----

/// How the dynamic shared memory of a launch is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMemory {
    /// One element per thread, as every tree kernel of the book indexes.
    OnePerThread,
    /// Left out of the launch: zero bytes (mistake 7).
    LeftOut,
}

/// What the child runs for a mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Kernel decomposition on `i32` (exact, so any lost or extra element shows), with a broken
    /// kernel or a correct one launched wrongly. Each pass is waited for, so that an error
    /// names its pass.
    Passes { kernel: &'static str, block: u32, shared: SharedMemory },
    /// One launch of a kernel with a grid barrier, one block per tile.
    GridBarrier { kernel: &'static str, block: u32 },
    /// A correct kernel's `f32` sum compared with `==` against the CPU loop (the mistake is in
    /// the test), and against the error bound (the fix).
    FloatEquality { kernel: &'static str, block: u32 },
    /// A correct kernel's passes with the partial sums copied to the host and back between
    /// them, timed against the same passes back to back on the GPU.
    HostRoundTrips { kernel: &'static str, block: u32 },
}

/// One mistake of the chapter.
#[derive(Clone, Copy, Debug)]
pub struct Mistake {
    pub number: u32,
    /// The name on the command line and in file names.
    pub name: &'static str,
    /// A few words, in Markdown, for tables.
    pub title: &'static str,
    /// What finds it, in Markdown.
    pub caught_by: &'static str,
    /// The compute-sanitizer tool whose report the chapter shows, if any.
    pub sanitizer: Option<&'static str>,
    /// The outcome the GPU tests assert, where it does not depend on luck (the kernel is wrong
    /// by construction); `None` where the outcome is only recorded.
    pub asserted: Option<Class>,
    pub kind: Kind,
}

static MISTAKES: &[Mistake] = &[
    Mistake {
        number: 1, name: "sync_in_branch", title: "`__syncthreads()` inside `if (tid < s)`",
        caught_by: "reading the code against the rule (synccheck is the tool for barriers: its verdict is below)", sanitizer: Some("synccheck"), asserted: None,
        kind: Kind::Passes { kernel: "sync_in_branch", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 2, name: "warp_no_volatile", title: "warp-synchronous last warp without `volatile`",
        caught_by: "an exact (`i32`) test; racecheck", sanitizer: None, asserted: Some(Class::WrongResult),
        kind: Kind::Passes { kernel: "warp_no_volatile", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 3, name: "warp_volatile_no_syncwarp", title: "warp-synchronous last warp, `volatile`, no `__syncwarp()`",
        caught_by: "compute-sanitizer racecheck", sanitizer: Some("racecheck"), asserted: None,
        kind: Kind::Passes { kernel: "reduce5_volatile", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 4, name: "tail_not_written", title: "shared memory not written for threads past `n`",
        caught_by: "an exact test at a size that is not a multiple of the block", sanitizer: None, asserted: Some(Class::WrongResult),
        kind: Kind::Passes { kernel: "tail_not_written", block: 256, shared: SharedMemory::OnePerThread },
    },
    // ANCHOR: block_300
    Mistake {
        number: 5, name: "block_not_power_of_two", title: "300 threads per block in a halving tree",
        caught_by: "`KernelSpec::check_block`, before any launch", sanitizer: None, asserted: Some(Class::WrongResult),
        // Kernel 3, unchanged. The launcher of the mistakes does not call check_block, on
        // purpose: that check is what refuses this block size.
        kind: Kind::Passes { kernel: "reduce3", block: 300, shared: SharedMemory::OnePerThread },
    },
    // ANCHOR_END: block_300
    Mistake {
        number: 6, name: "second_load_unchecked", title: "second load `in[i + blockDim.x]` without its bound check",
        caught_by: "compute-sanitizer memcheck", sanitizer: Some("memcheck"), asserted: None,
        kind: Kind::Passes { kernel: "second_load_unchecked", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 7, name: "shared_size_missing", title: "dynamic shared memory size left out of the launch",
        caught_by: "the driver's error at the next wait; memcheck names the access", sanitizer: None, asserted: Some(Class::LaunchError),
        kind: Kind::Passes { kernel: "reduce3", block: 256, shared: SharedMemory::LeftOut },
    },
    Mistake {
        number: 8, name: "grid_barrier_spin", title: "blocks spinning on a global counter as a grid barrier",
        caught_by: "a deadline (no tool reports it)", sanitizer: None, asserted: Some(Class::Hang),
        kind: Kind::GridBarrier { kernel: "grid_barrier_spin", block: 256 },
    },
    Mistake {
        number: 9, name: "float_equality", title: "an `f32` sum compared with `==`",
        caught_by: "the error bound `(n − 1)·u·Σ|x|`", sanitizer: None, asserted: None,
        kind: Kind::FloatEquality { kernel: "reduce3", block: 256 },
    },
    Mistake {
        number: 10, name: "partials_to_host", title: "partial sums copied to the host between passes",
        caught_by: "timing it against the passes on the GPU", sanitizer: None, asserted: None,
        kind: Kind::HostRoundTrips { kernel: "reduce3", block: 256 },
    },
];

/// Every mistake, by number.
pub fn all() -> &'static [Mistake] {
    MISTAKES
}

/// A mistake by name.
pub fn find(name: &str) -> Option<&'static Mistake> {
    MISTAKES.iter().find(|m| m.name == name)
}

/// The message for a name that is not a mistake.
pub fn unknown(name: &str) -> String {
    format!("unknown mistake {name:?}; the mistakes are: {}", MISTAKES.iter().map(|m| m.name).collect::<Vec<_>>().join(", "))
}

/// The order the guard runs them in: by number, except that the ones expected to hang go last,
/// so that the teardown of a killed context cannot slow another mistake's measurement.
pub fn run_order() -> Vec<&'static Mistake> {
    let mut order: Vec<&'static Mistake> = MISTAKES.iter().collect();
    order.sort_by_key(|m| (m.asserted == Some(Class::Hang), m.number));
    order
}

/// The compute-sanitizer command whose output the chapter shows for this mistake, as run from
/// the project root on a GPU host with the release bundle; `None` for a mistake without one.
pub fn sanitizer_command(mistake: &Mistake) -> Option<String> {
    mistake.sanitizer.map(|tool| {
        format!("compute-sanitizer --tool {tool} --print-limit 3 --show-backtrace no .gpu-bundle/bin/reduction mistake {} --n 10000 --runs 1", mistake.name)
    })
}

/// Where the chapter expects that output: `plots/data/sanitizer/<tool>-<name>.log`.
pub fn sanitizer_log(mistake: &Mistake) -> Option<String> {
    mistake.sanitizer.map(|tool| format!("plots/data/sanitizer/{tool}-{}.log", mistake.name))
}

/// What one mistake run does: how many values, how many runs, from which seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub n: usize,
    pub runs: usize,
    pub seed: u64,
}

impl Default for RunOptions {
    /// 2^20 + 37 values: large enough for three passes, and not a multiple of any block.
    fn default() -> Self {
        RunOptions { n: (1 << 20) + 37, runs: 20, seed: 2007 }
    }
}

impl RunOptions {
    /// Refuse what cannot run, with the reason.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.n == 0 {
            return Err("n must be at least 1".into());
        }
        if self.n > i32::MAX as usize {
            return Err(format!("n = {} is more than the mistakes' launcher handles (2^31 - 1)", self.n));
        }
        if !(1..=100_000).contains(&self.runs) {
            return Err(format!("runs must be from 1 to 100000, not {}", self.runs));
        }
        Ok(())
    }

    /// The defaults, overridden by whichever of these variables are set.
    pub fn from_env_vars(n: &str, runs: &str, seed: &str) -> std::result::Result<RunOptions, String> {
        let mut options = RunOptions::default();
        let read = |name: &str| -> std::result::Result<Option<u64>, String> {
            match std::env::var(name) {
                Err(_) => Ok(None),
                Ok(v) => v.trim().parse().map(Some).map_err(|_| format!("{name}={v:?} is not a whole number")),
            }
        };
        if let Some(v) = read(n)? {
            options.n = v as usize;
        }
        if let Some(v) = read(runs)? {
            options.runs = v as usize;
        }
        if let Some(v) = read(seed)? {
            options.seed = v;
        }
        options.check()?;
        Ok(options)
    }
}

// ---- the child ----

/// Call first thing in `main` of a binary that spawns mistake children: when this process is
/// one (the environment names a mistake), run it, print its report, and return the exit code
/// for `std::process::exit`. `None` for an ordinary run.
pub fn run_child_if_asked() -> Option<i32> {
    let name = std::env::var(CHILD_ENV).ok()?;
    let result = (|| -> std::result::Result<Report, String> {
        let mistake = find(&name).ok_or_else(|| unknown(&name))?;
        let options = RunOptions::from_env_vars(CHILD_N_ENV, CHILD_RUNS_ENV, CHILD_SEED_ENV)?;
        let gpu = Gpu::open().map_err(|e| e.to_string())?;
        let report = run_in_process(&gpu, mistake, &options, guard::say_ready).map_err(|e| e.to_string());
        // The context may be broken (mistake 7): leave its teardown to the process's exit,
        // after the report is out.
        std::mem::forget(gpu);
        report
    })();
    Some(match result {
        Ok(report) => {
            report.print();
            0
        }
        Err(why) => {
            eprintln!("error: mistake {name}: {why}");
            1
        }
    })
}

/// Run one mistake in this process, on `gpu`, and say what happened. `ready` is called once
/// the kernel is compiled and loaded, and again before each run once its input is made (a
/// child says [`guard::READY`]: the deadline covers the GPU's work, not the host's). Never call this in a process whose
/// GPU context matters: a mistake can hang it or leave it unusable. `Err` means the mistake
/// could not be run (no GPU, a failed allocation, …); what the mistake itself does — a wrong
/// sum, a CUDA error — is in the report.
pub fn run_in_process(gpu: &Gpu, mistake: &Mistake, options: &RunOptions, ready: impl FnMut()) -> Result<Report> {
    options.check().map_err(|why| Error::InvalidLength { kernel: mistake.name.into(), n: options.n, reason: why })?;
    eprintln!("mistake {} ({}): {} runs of n = {}, seed {}", mistake.number, mistake.name, options.runs, options.n, options.seed);
    match mistake.kind {
        Kind::Passes { kernel, block, shared } => run_passes(gpu, kernel, block, shared, options, ready),
        Kind::GridBarrier { kernel, block } => run_grid_barrier(gpu, kernel, block, options, ready),
        Kind::FloatEquality { kernel, block } => run_float_equality(gpu, kernel, block, options, ready),
        Kind::HostRoundTrips { kernel, block } => run_host_round_trips(gpu, kernel, block, options, ready),
    }
}

type Exact = i32;

fn run_passes(gpu: &Gpu, kernel: &str, block: u32, shared: SharedMemory, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
    let spec = kernel_spec(kernel)?;
    // Deliberately no spec.check_block(): mistake 5 is the block size that check refuses.
    let function = gpu.function(spec, &spec.entry_name::<Exact>(block))?;
    let passes = plan_passes(spec, options.n as u64, block, u32::MAX)?;
    let grids: Vec<String> = passes.iter().map(|p| p.grid.to_string()).collect();
    eprintln!("  {} ({}), i32, block {block}, {} passes (grids {}), shared memory {shared:?}",
        spec.name, spec.file, passes.len(), grids.join(" -> "));
    ready();

    let mut report = Report::new(Outcome::Correct);
    for run in 0..options.runs {
        let xs = Exact::random(options.n, options.seed.wrapping_add(run as u64));
        let reference = Exact::reference(&xs);
        let input = gpu.upload(&xs)?;
        ready();
        report.runs += 1;
        match sum_by_passes(gpu, &function, spec, block, shared, &input, &passes)? {
            Err(error) => {
                eprintln!("  run {run}: {error}");
                report.outcome = Outcome::LaunchError(error);
                report.detail = after_an_error(gpu);
                eprintln!("  {}", report.detail);
                return Ok(report);
            }
            Ok(got) => {
                if let Err(why) = Exact::check(got, &reference) {
                    eprintln!("  run {run}: wrong: {why}");
                    if report.wrong_runs == 0 {
                        report.outcome = Outcome::WrongResult { got: got as f64, expected: reference.sum_i64 as f64 };
                    }
                    report.wrong_runs += 1;
                }
            }
        }
    }
    report.detail = format!("{} passes of {}, block {block}", passes.len(), spec.name);
    Ok(report)
}

/// Launch every pass, waiting after each. `Ok(Err(message))` is a CUDA error raised by a launch
/// or by the wait after it (the mistake showing); `Err` is a failure to set the run up.
fn sum_by_passes<T: Element>(gpu: &Gpu, function: &CudaFunction, spec: &KernelSpec, block: u32, shared: SharedMemory,
    input: &CudaSlice<T>, passes: &[Pass]) -> Result<std::result::Result<T, String>> {
    let mut previous: Option<CudaSlice<T>> = None;
    for (i, pass) in passes.iter().enumerate() {
        let mut output = gpu.alloc::<T>(pass.grid as usize)?;
        gpu.fill(&mut output, T::POISON)?;
        let from = match &previous {
            None => input.slice(..),
            Some(p) => p.slice(..),
        };
        let step = format!("pass {} of {} (grid {}, block {block})", i + 1, passes.len(), pass.grid);
        if let Err(e) = launch_pass(gpu, function, spec, block, shared, &from, &mut output, *pass) {
            return Ok(Err(format!("{step}: {e}")));
        }
        if let Err(e) = gpu.synchronize() {
            return Ok(Err(format!("{step}: {e}")));
        }
        previous = Some(output);
    }
    let last = previous.expect("plan_passes plans at least one pass for n >= 1");
    let mut value = [T::default()];
    let read = gpu.stream().memcpy_dtoh(&last.slice(0..1), &mut value).during("copying the sum back");
    match read.and_then(|()| gpu.synchronize()) {
        Ok(()) => Ok(Ok(value[0])),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// One pass: `pass.grid` blocks of `block` threads reduce `pass.n` values of `input`.
#[allow(clippy::too_many_arguments)]
fn launch_pass<T: Element>(gpu: &Gpu, function: &CudaFunction, spec: &KernelSpec, block: u32, shared: SharedMemory,
    input: &CudaView<'_, T>, output: &mut CudaSlice<T>, pass: Pass) -> Result<()> {
    // ANCHOR: shared_memory
    let shared_mem_bytes = match shared {
        SharedMemory::OnePerThread => spec.shared_bytes(block, std::mem::size_of::<T>()) as u32,
        SharedMemory::LeftOut => 0, // mistake 7: the kernel still indexes blockDim.x elements
    };
    let config = LaunchConfig { grid_dim: (pass.grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes };
    // ANCHOR_END: shared_memory
    let n = pass.n;
    let mut launch = gpu.stream().launch_builder(function);
    launch.arg(input).arg(output).arg(&n);
    // SAFETY: the entry takes (const T* in, T* out, u64 n); `input` holds n elements, `output`
    // one per block. Deliberately violated, only ever in a mistake's child process: the block
    // size (300 for mistake 5), the dynamic shared memory (none for mistake 7), and whatever
    // the broken kernel itself gets wrong (mistakes 1, 2, 4, 6).
    unsafe { launch.launch(config) }.during(&format!("launching {}", spec.entry_name::<T>(block)))?;
    Ok(())
}

/// After a CUDA error: does a correct kernel still work in the same process?
fn after_an_error(gpu: &Gpu) -> String {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<std::result::Result<(), String>> {
        let xs = Exact::random(1000, 1);
        let got = Reducer::<Exact>::new(gpu, "reduce3", 256)?.sum_host(&xs)?;
        Ok(Exact::check_sum(got, &xs))
    }));
    match attempt {
        Ok(Ok(Ok(()))) => "afterwards, kernel 3 in the same process still summed correctly".into(),
        Ok(Ok(Err(why))) => format!("afterwards, kernel 3 in the same process gave a wrong sum: {why}"),
        Ok(Err(e)) => format!("afterwards, kernel 3 in the same process failed too: {}", cuda_error_name(&e.to_string())),
        Err(_) => "afterwards, kernel 3 in the same process panicked".into(),
    }
}

fn run_grid_barrier(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
    let spec = kernel_spec(kernel)?;
    let function = gpu.function(spec, &spec.entry_name::<Exact>(block))?;
    let shared = spec.shared_bytes(block, std::mem::size_of::<Exact>());
    let per_sm = function.occupancy_max_active_blocks_per_multiprocessor(block, shared, None).during("asking the occupancy calculator")?;
    let sms = gpu.info().sm_count;
    let resident = per_sm as u64 * sms as u64;
    let grid = (options.n as u64).div_ceil(block as u64);
    if grid > MAX_GRID {
        return Err(Error::InvalidLength { kernel: spec.name.into(), n: options.n, reason: format!("{grid} blocks do not fit in one grid") });
    }
    let grid = grid as u32;
    let mut detail = format!("one launch of {grid} blocks of {block}; at most {resident} fit on the GPU at once ({sms} SMs × {per_sm})");
    if grid as u64 > resident {
        detail.push_str(": the others cannot start before a resident block ends, and none will");
    } else {
        detail.push_str(": all fit, so the barrier completes at this size (try a larger n)");
    }
    eprintln!("  {detail}");
    ready();

    let mut report = Report::new(Outcome::Correct);
    for run in 0..options.runs {
        let xs = Exact::random(options.n, options.seed.wrapping_add(run as u64));
        let reference = Exact::reference(&xs);
        let input = gpu.upload(&xs)?;
        let mut output = gpu.alloc::<Exact>(grid as usize)?;
        gpu.fill(&mut output, Exact::POISON)?;
        let mut arrived = gpu.stream().alloc_zeros::<u32>(1).during("allocating the arrival counter")?;
        gpu.synchronize()?;
        ready();
        report.runs += 1;
        let config = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared as u32 };
        let n = options.n as u64;
        let mut launch = gpu.stream().launch_builder(&function);
        launch.arg(&input).arg(&mut output).arg(&n).arg(&mut arrived);
        // SAFETY: the entry takes (const int* in, int* out, u64 n, unsigned* arrived); `input`
        // holds n elements, `output` one per block, `arrived` one zeroed counter. Deliberately
        // violated: the kernel waits for blocks that cannot all be resident (mistake 8); this
        // runs only in a child process that the guard kills.
        let launched = unsafe { launch.launch(config) }.during("launching grid_barrier_spin");
        let mut value = [0];
        let finished = launched
            .and_then(|_| gpu.synchronize())
            .and_then(|()| gpu.stream().memcpy_dtoh(&output.slice(0..1), &mut value).during("copying the sum back"))
            .and_then(|()| gpu.synchronize());
        if let Err(e) = finished {
            report.outcome = Outcome::LaunchError(e.to_string());
            report.detail = detail;
            return Ok(report);
        }
        if Exact::check(value[0], &reference).is_err() {
            if report.wrong_runs == 0 {
                report.outcome = Outcome::WrongResult { got: value[0] as f64, expected: reference.sum_i64 as f64 };
            }
            report.wrong_runs += 1;
        }
    }
    report.detail = detail;
    Ok(report)
}

fn run_float_equality(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
    let mut reducer = Reducer::<f32>::new(gpu, kernel, block)?;
    ready();
    let mut report = Report::new(Outcome::Correct);
    let (mut bound_rejected, mut worst_ratio) = (0, 0.0f64);
    for run in 0..options.runs {
        let xs = f32::random(options.n, options.seed.wrapping_add(run as u64));
        ready();
        let on_gpu = reducer.sum_host(&xs)?;
        report.runs += 1;
        // ANCHOR: float_equality
        let cpu_loop: f32 = xs.iter().sum();
        let equal = on_gpu == cpu_loop; // the mistake: two correct f32 sums, added in different orders
        let within_bound = f32::check_sum(on_gpu, &xs).is_ok(); // the fix: the error bound
        // ANCHOR_END: float_equality
        let reference = f32::reference(&xs);
        let bound = crate::data::any_order_error_bound(reference.n, reference.abs_sum, crate::data::F32_UNIT_ROUNDOFF);
        worst_ratio = worst_ratio.max((on_gpu as f64 - reference.sum_f64).abs() / bound);
        if !equal {
            if report.wrong_runs == 0 {
                report.outcome = Outcome::WrongResult { got: on_gpu as f64, expected: cpu_loop as f64 };
            }
            report.wrong_runs += 1;
        }
        if !within_bound {
            eprintln!("  run {run}: the error bound rejected a correct kernel's sum: {:?}", f32::check_sum(on_gpu, &xs));
            bound_rejected += 1;
        }
    }
    report.fix_wrong_runs = Some(bound_rejected);
    report.detail = format!("{kernel}, block {block}; the GPU sum's error was at most {:.1}% of the bound", 100.0 * worst_ratio);
    Ok(report)
}

fn run_host_round_trips(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
    let mut reducer = Reducer::<Exact>::new(gpu, kernel, block)?; // checks the block size
    let spec = reducer.kernel();
    let function = gpu.function(spec, &spec.entry_name::<Exact>(block))?;
    let passes = reducer.plan(options.n)?;
    ready();

    let mut report = Report::new(Outcome::Correct);
    let (mut slow_us, mut fast_us, mut fast_wrong) = (Vec::new(), Vec::new(), 0);
    for run in 0..=options.runs {
        let xs = Exact::random(options.n, options.seed.wrapping_add(run as u64));
        let reference = Exact::reference(&xs);
        let input = gpu.upload(&xs)?;
        ready();
        // Alternate which goes first, so that neither always meets a warmer GPU.
        let mut timed = [(0, 0.0), (0, 0.0)];
        for which in [run % 2, 1 - run % 2] {
            gpu.synchronize()?;
            let started = Instant::now();
            let got = if which == 0 {
                sum_with_round_trips(gpu, &function, spec, block, &input, &passes)?
            } else {
                reducer.sum(&input.as_view())?
            };
            timed[which] = (got, started.elapsed().as_secs_f64() * 1e6);
        }
        if run == 0 {
            continue; // a warm-up: first launches load modules and grow pools
        }
        report.runs += 1;
        if Exact::check(timed[0].0, &reference).is_err() {
            if report.wrong_runs == 0 {
                report.outcome = Outcome::WrongResult { got: timed[0].0 as f64, expected: reference.sum_i64 as f64 };
            }
            report.wrong_runs += 1;
        }
        if Exact::check(timed[1].0, &reference).is_err() {
            fast_wrong += 1;
        }
        slow_us.push(timed[0].1);
        fast_us.push(timed[1].1);
    }
    report.fix_wrong_runs = Some(fast_wrong);
    report.mistake_us = Some(median(&mut slow_us));
    report.fix_us = Some(median(&mut fast_us));
    report.detail = format!(
        "{} passes of {kernel}, block {block}, input already on the GPU; median host wall-clock time of {} runs",
        passes.len(), options.runs
    );
    Ok(report)
}

// ANCHOR: round_trips
/// Mistake 10: the same passes, with every pass's partial sums copied to the host and back.
fn sum_with_round_trips<T: Element>(gpu: &Gpu, function: &CudaFunction, spec: &KernelSpec, block: u32,
    input: &CudaSlice<T>, passes: &[Pass]) -> Result<T> {
    let mut on_device: Option<CudaSlice<T>> = None;
    let mut on_host: Vec<T> = Vec::new();
    for (i, pass) in passes.iter().enumerate() {
        let mut partials = gpu.alloc::<T>(pass.grid as usize)?;
        let from = match &on_device {
            None => input.slice(..),
            Some(previous) => previous.slice(..),
        };
        launch_pass(gpu, function, spec, block, SharedMemory::OnePerThread, &from, &mut partials, *pass)?;
        on_host = gpu.download(&partials)?; // waits for the kernel, then crosses the bus
        if i + 1 < passes.len() {
            on_device = Some(gpu.upload(&on_host)?); // and back again, for the next pass
        }
    }
    Ok(on_host[0])
}
// ANCHOR_END: round_trips

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

// ---- the parent ----

/// Run `mistake` in a child process (`exe`, which must call [`run_child_if_asked`] first thing
/// in `main`) under `deadline`, and classify what it did. This process's GPU context is never
/// involved. `Err` only when no child could be started.
pub fn run_guarded(exe: &Path, mistake: &Mistake, options: &RunOptions, deadline: Deadline) -> Result<Observation> {
    options.check().map_err(|why| Error::InvalidLength { kernel: mistake.name.into(), n: options.n, reason: why })?;
    let mut command = Command::new(exe);
    command
        .env(CHILD_ENV, mistake.name)
        .env(CHILD_N_ENV, options.n.to_string())
        .env(CHILD_RUNS_ENV, options.runs.to_string())
        .env(CHILD_SEED_ENV, options.seed.to_string())
        .env_remove(RECORD_ENV);
    let run = guard::run_with_deadline(command, deadline).map_err(|e| io_error(exe, format!("could not start a child process: {e}")))?;
    Ok(guard::classify(&run))
}

impl Mistake {
    /// Is what was observed what the book says this mistake does? `Err` says why not. Only a
    /// mistake that is wrong by construction has its outcome asserted; the others pass with
    /// any outcome the mistake can have, but never with a child that died without a report
    /// (that is a fault of this program, not the mistake's) or a kill later than a second past
    /// the deadline. The fixes (the error bound, the passes on the GPU) must be right.
    pub fn verdict(&self, observed: &Observation, deadline: Deadline) -> std::result::Result<(), String> {
        let outcome = observed.outcome();
        if let Outcome::Crashed { status, message } = outcome {
            return Err(format!("the child process ended ({status}) without a usable report: {message}"));
        }
        if let Outcome::Hang { phase, after } = outcome {
            if *phase == Phase::Startup {
                return Err(format!("the child never finished setting up (no READY line in {:.0} s): {}", after.as_secs_f64(), observed.stderr_tail));
            }
            if *after > deadline.run + Duration::from_secs(1) {
                return Err(format!("killed {:.2} s after it was ready; the deadline is {:.2} s", after.as_secs_f64(), deadline.run.as_secs_f64()));
            }
        }
        if let Some(expected) = self.asserted {
            if outcome.class() != expected {
                return Err(format!("expected {}, observed {}: {}", expected.name(), outcome.class().name(), what_it_did(self, &Recorded::new(self, observed))));
            }
        }
        match self.kind {
            Kind::FloatEquality { .. } | Kind::HostRoundTrips { .. } => {
                if !matches!(outcome.class(), Class::Correct | Class::WrongResult) {
                    return Err(format!("a correct kernel did not finish its runs: {}", what_it_did(self, &Recorded::new(self, observed))));
                }
                match observed.report.fix_wrong_runs {
                    Some(0) => {}
                    Some(k) => return Err(format!("the fix got {k} of {} runs wrong", observed.report.runs)),
                    None => return Err("the child did not report on the fix".into()),
                }
                if matches!(self.kind, Kind::HostRoundTrips { .. }) {
                    if outcome.class() != Class::Correct {
                        return Err(format!("copying partial sums through the host gave wrong sums: {}", what_it_did(self, &Recorded::new(self, observed))));
                    }
                    if observed.report.mistake_us.is_none() || observed.report.fix_us.is_none() {
                        return Err("the child reported no times".into());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

// ---- what was observed, as data ----

/// One mistake's row in `plots/data/mistakes/<gpu>.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub mistake: String,
    pub number: u32,
    pub outcome: Class,
    pub runs: usize,
    pub wrong_runs: usize,
    pub fix_wrong_runs: Option<usize>,
    pub got: Option<f64>,
    pub expected: Option<f64>,
    pub mistake_us: Option<f64>,
    pub fix_us: Option<f64>,
    /// Seconds from the spawn to READY, and from READY to the end (the kill, for a hang).
    pub startup_s: Option<f64>,
    pub elapsed_s: f64,
    /// The error (launch error), the phase (hang), or the status and message (crash).
    pub message: String,
    pub detail: String,
}

impl Recorded {
    pub fn new(mistake: &Mistake, observed: &Observation) -> Recorded {
        let r = &observed.report;
        let (got, expected) = match r.outcome {
            Outcome::WrongResult { got, expected } => (Some(got), Some(expected)),
            _ => (None, None),
        };
        let message = match &r.outcome {
            Outcome::Correct | Outcome::WrongResult { .. } => String::new(),
            Outcome::LaunchError(e) => e.clone(),
            Outcome::Hang { phase, .. } => phase.name().to_string(),
            Outcome::Crashed { status, message } => format!("{status}: {message}"),
        };
        Recorded {
            mistake: mistake.name.to_string(),
            number: mistake.number,
            outcome: r.outcome.class(),
            runs: r.runs,
            wrong_runs: r.wrong_runs,
            fix_wrong_runs: r.fix_wrong_runs,
            got,
            expected,
            mistake_us: r.mistake_us,
            fix_us: r.fix_us,
            startup_s: observed.startup.map(|d| d.as_secs_f64()),
            elapsed_s: observed.run_time.as_secs_f64(),
            message: one_line(&message),
            detail: one_line(&r.detail),
        }
    }
}

/// A recorded run: the header block (what, where, when) and one row per mistake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    pub header: Vec<(String, String)>,
    pub rows: Vec<Recorded>,
}

impl Records {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.header.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

const COLUMNS: &str = "mistake,number,outcome,runs,wrong_runs,fix_wrong_runs,got,expected,mistake_us,fix_us,startup_s,elapsed_s,message,detail";

/// The header block of a recorded run on `gpu`.
pub fn header(gpu: &Gpu, options: &RunOptions, deadline: Deadline, command: &str) -> Vec<(String, String)> {
    let info = gpu.info();
    [
        ("gpu", info.name.clone()),
        ("compute_capability", format!("{}.{}", info.compute_capability.0, info.compute_capability.1)),
        ("driver_cuda", format!("{}.{}", info.driver_cuda_version.0, info.driver_cuda_version.1)),
        ("nvrtc", crate::nvrtc::version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_else(|_| "unknown".into())),
        ("date", crate::results::today()),
        ("n", options.n.to_string()),
        ("runs", options.runs.to_string()),
        ("seed", options.seed.to_string()),
        ("deadline_s", format!("{}", deadline.run.as_secs_f64())),
        ("command", command.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), one_line(&v)))
    .collect()
}

/// Where to record for `RECORD_ENV`-style targets: a directory (existing, or written with a
/// trailing `/`) gets `<gpu-slug>.csv`; anything else is the file itself.
pub fn record_path(target: &Path, gpu_name: &str) -> PathBuf {
    if target.is_dir() || target.to_string_lossy().ends_with('/') {
        target.join(format!("{}.csv", crate::results::slug(gpu_name)))
    } else {
        target.to_path_buf()
    }
}

pub fn write_records(path: &Path, records: &Records) -> Result<()> {
    let mut s = String::new();
    for (key, value) in &records.header {
        writeln!(s, "# {key}: {value}").unwrap();
    }
    writeln!(s, "{COLUMNS}").unwrap();
    let opt = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_default();
    for r in &records.rows {
        writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{:.3},{},{}",
            r.mistake, r.number, r.outcome.name(), r.runs, r.wrong_runs,
            r.fix_wrong_runs.map(|k| k.to_string()).unwrap_or_default(),
            opt(r.got), opt(r.expected), opt(r.mistake_us.map(round3)), opt(r.fix_us.map(round3)),
            r.startup_s.map(|v| format!("{v:.3}")).unwrap_or_default(), r.elapsed_s,
            quote(&r.message), quote(&r.detail)
        )
        .unwrap();
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
    }
    std::fs::write(path, s).map_err(|e| io_error(path, e))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn read_records(path: &Path) -> Result<Records> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_records(&text).map_err(|why| io_error(path, why))
}

pub fn parse_records(text: &str) -> std::result::Result<Records, String> {
    let mut records = Records::default();
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        let at = |what: String| format!("line {}: {what}", i + 1);
        if let Some(meta) = line.strip_prefix("# ") {
            let (key, value) = meta.split_once(": ").ok_or_else(|| at("expected `# key: value`".into()))?;
            records.header.push((key.to_string(), value.to_string()));
            continue;
        }
        if !header_seen {
            if line != COLUMNS {
                return Err(at(format!("expected the column names {COLUMNS}")));
            }
            header_seen = true;
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let f = split_quoted(line);
        if f.len() != 14 {
            return Err(at(format!("expected 14 fields, found {}", f.len())));
        }
        let num = |k: usize| -> std::result::Result<Option<f64>, String> {
            if f[k].is_empty() { Ok(None) } else { f[k].parse().map(Some).map_err(|_| at(format!("field {} is not a number: {:?}", k + 1, f[k]))) }
        };
        let count = |k: usize| -> std::result::Result<usize, String> { f[k].parse().map_err(|_| at(format!("field {} is not a count: {:?}", k + 1, f[k]))) };
        records.rows.push(Recorded {
            mistake: f[0].clone(),
            number: count(1)? as u32,
            outcome: Class::parse(&f[2]).ok_or_else(|| at(format!("unknown outcome {:?}", f[2])))?,
            runs: count(3)?,
            wrong_runs: count(4)?,
            fix_wrong_runs: if f[5].is_empty() { None } else { Some(count(5)?) },
            got: num(6)?,
            expected: num(7)?,
            mistake_us: num(8)?,
            fix_us: num(9)?,
            startup_s: num(10)?,
            elapsed_s: num(11)?.ok_or_else(|| at("no elapsed time".into()))?,
            message: f[12].clone(),
            detail: f[13].clone(),
        });
    }
    if !header_seen {
        return Err("no column header".into());
    }
    Ok(records)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}



// ---- what was observed, in words ----

/// A sum as the reader would write it: an `i32` sum as an integer, an `f32` sum as its shortest
/// `f32` digits.
fn number(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{}", x as f32)
    }
}

/// `CUDA_ERROR_ILLEGAL_ADDRESS` ("an illegal memory access was encountered") out of a driver
/// error's text, or the text itself.
fn cuda_error_name(message: &str) -> String {
    let Some(start) = message.find("CUDA_ERROR_") else { return message.to_string() };
    let name: String = message[start..].chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
    let description = message[start + name.len()..].split('"').nth(1).filter(|d| !d.is_empty());
    match description {
        Some(d) => format!("`{name}` ({d})"),
        None => format!("`{name}`"),
    }
}

/// What a recorded mistake did, in one sentence.
pub fn what_it_did(mistake: &Mistake, r: &Recorded) -> String {
    let runs = r.runs;
    let first = |got: Option<f64>, expected: Option<f64>| match (got, expected) {
        (Some(g), Some(e)) => format!("got {}, expected {}", number(g), number(e)),
        _ => String::new(),
    };
    let mut s = match (mistake.kind, r.outcome) {
        (Kind::FloatEquality { .. }, Class::WrongResult) => format!(
            "`==` rejected {} of {runs} sums of a correct kernel (first: GPU {}, CPU loop {}); the error bound rejected {}",
            r.wrong_runs, number(r.got.unwrap_or(f64::NAN)), number(r.expected.unwrap_or(f64::NAN)), r.fix_wrong_runs.unwrap_or(0)
        ),
        (Kind::FloatEquality { .. }, Class::Correct) => format!(
            "`==` happened to hold in all {runs} runs; the error bound rejected {}", r.fix_wrong_runs.unwrap_or(0)
        ),
        (Kind::HostRoundTrips { .. }, Class::Correct) => match (r.mistake_us, r.fix_us) {
            (Some(slow), Some(fast)) => format!(
                "right sums; {slow:.0} µs with the partial sums copied through the host, {fast:.0} µs with the passes on the GPU ({:.1}× slower)",
                slow / fast
            ),
            _ => format!("right sums in all {runs} runs; no times recorded"),
        },
        (_, Class::Correct) => format!("right sum in all {runs} runs"),
        (_, Class::WrongResult) => format!("wrong sum in {} of {runs} runs (first: {})", r.wrong_runs, first(r.got, r.expected)),
        (_, Class::LaunchError) => format!("CUDA error {}", cuda_error_name(&r.message)),
        (_, Class::Hang) if r.message == Phase::Startup.name() => format!("never finished starting; killed after {:.1} s", r.elapsed_s),
        (_, Class::Hang) => format!("no result {:.1} s after the launch; killed by the guard", r.elapsed_s),
        (_, Class::Crashed) => format!("the child process died: {}", r.message),
    };
    let context = match (mistake.kind, r.outcome) {
        (Kind::HostRoundTrips { .. }, _) | (_, Class::Crashed) => None,
        (Kind::Passes { .. }, Class::Correct | Class::WrongResult) => None, // the grids add nothing
        _ => Some(&r.detail).filter(|d| !d.is_empty()),
    };
    if let Some(detail) = context {
        write!(s, "; {detail}").unwrap();
    }
    s
}

// ---- the chapter's tables ----

/// Where the table generator looks for the recorded run: `plots/data/mistakes/`.
pub fn records_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("mistakes")
}

/// The recorded run the book shows: `mistakes/<slug>.csv` for the GPU named in
/// `book-gpu.txt`, else the first file there; `None` when nothing was measured yet.
pub fn book_records(data_dir: &Path) -> Option<PathBuf> {
    let dir = records_dir(data_dir);
    let chosen = std::fs::read_to_string(data_dir.join("book-gpu.txt")).ok().map(|s| dir.join(format!("{}.csv", s.trim())));
    if let Some(path) = chosen.filter(|p| p.is_file()) {
        return Some(path);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).ok()?.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "csv")).collect();
    files.sort();
    files.into_iter().next()
}

const NOT_MEASURED: &str = "Not yet measured on a GPU";

/// How to produce the data, for the note shown until it exists.
pub const MEASURE_COMMAND: &str = "MISTAKES_RECORD=plots/data/mistakes/ cargo test --release --test mistakes";
pub const TABLE_COMMAND: &str = "cargo run --release -- mistakes --table-only";

/// Write the chapter's tables from the recorded run under `data_dir` (`plots/data`) into
/// `out_dir` (`book/generated`): `mistakes.md`, the table of every mistake, and
/// `mistakes/<name>.md`, one sentence per mistake for its section. With nothing recorded yet,
/// each says so and how to measure. Needs no GPU.
pub fn write_mistakes_table(data_dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let source = book_records(data_dir);
    let records = match &source {
        Some(path) => Some(read_records(path)?),
        None => None,
    };
    let mut written = Vec::new();
    let table_path = out_dir.join("mistakes.md");
    write_file(&table_path, &table_markdown(source.as_deref(), records.as_ref()))?;
    written.push(table_path);
    for mistake in all() {
        let path = out_dir.join("mistakes").join(format!("{}.md", mistake.name));
        write_file(&path, &sentence_markdown(mistake, records.as_ref()))?;
        written.push(path);
    }
    Ok(written)
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
    }
    std::fs::write(path, text).map_err(|e| io_error(path, e))
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn where_measured(records: &Records) -> String {
    let gpu = records.get("gpu").unwrap_or("an unnamed GPU");
    let mut s = format!("**{gpu}**");
    let mut facts = Vec::new();
    if let Some(cc) = records.get("compute_capability") {
        facts.push(format!("compute capability {cc}"));
    }
    if let Some(cuda) = records.get("driver_cuda") {
        facts.push(format!("CUDA {cuda} driver"));
    }
    if let Some(nvrtc) = records.get("nvrtc") {
        facts.push(format!("NVRTC {nvrtc}"));
    }
    if !facts.is_empty() {
        write!(s, " ({})", facts.join(", ")).unwrap();
    }
    if let Some(date) = records.get("date") {
        write!(s, " on {date}").unwrap();
    }
    s
}

/// The table; `source` and `records` are `None` when nothing was measured.
pub fn table_markdown(source: Option<&Path>, records: Option<&Records>) -> String {
    let mut s = String::new();
    let (Some(source), Some(records)) = (source, records) else {
        writeln!(s, "<!-- Generated by reduction::mistakes::write_mistakes_table; do not edit. -->\n").unwrap();
        writeln!(s, "> **{NOT_MEASURED}.** This table is drawn from `plots/data/mistakes/<gpu>.csv`, which the mistakes").unwrap();
        writeln!(s, "> test writes on a machine with an NVIDIA GPU: `{MEASURE_COMMAND}`,").unwrap();
        writeln!(s, "> then `{TABLE_COMMAND}` redraws it.\n").unwrap();
        writeln!(s, "| # | mistake | what it did | caught by |\n|---:|---|---|---|").unwrap();
        for m in all() {
            writeln!(s, "| {} | {} | *not measured yet* | {} |", m.number, cell(m.title), cell(m.caught_by)).unwrap();
        }
        return s;
    };
    let file = source.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    writeln!(s, "<!-- Generated by reduction::mistakes::write_mistakes_table from plots/data/mistakes/{file}; do not edit. -->\n").unwrap();
    let n = records.get("n").unwrap_or("?");
    let runs = records.get("runs").unwrap_or("?");
    let deadline = records.get("deadline_s").map(|d| format!(", a deadline of {d} s after start-up")).unwrap_or_default();
    writeln!(s, "Measured on the {}: each mistake in a child process of its own, {runs} runs of N = {n} random", where_measured(records)).unwrap();
    writeln!(s, "values (`i32`; `f32` for mistake 9){deadline}.\n").unwrap();
    writeln!(s, "| # | mistake | what it did | caught by |\n|---:|---|---|---|").unwrap();
    for m in all() {
        let did = match records.rows.iter().find(|r| r.mistake == m.name) {
            Some(r) => what_it_did(m, r),
            None => "*not in this run*".into(),
        };
        writeln!(s, "| {} | {} | {} | {} |", m.number, cell(m.title), cell(&did), cell(m.caught_by)).unwrap();
    }
    s
}

/// One mistake's sentence for its section of the chapter.
pub fn sentence_markdown(mistake: &Mistake, records: Option<&Records>) -> String {
    let row = records.and_then(|r| r.rows.iter().find(|row| row.mistake == mistake.name).map(|row| (r, row)));
    match row {
        None => format!(
            "*{NOT_MEASURED}* (this sentence is drawn from `plots/data/mistakes/<gpu>.csv`; the note above the table at the top of the chapter says how to measure).\n"
        ),
        Some((records, row)) => {
            let gpu = records.get("gpu").unwrap_or("the GPU");
            format!("**On the {gpu}:** {}.\n", what_it_did(mistake, row))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_are_numbered_in_order_with_unique_names() {
        for (i, m) in all().iter().enumerate() {
            assert_eq!(m.number as usize, i + 1, "{}", m.name);
            assert!(all()[..i].iter().all(|o| o.name != m.name), "duplicate {}", m.name);
            assert_eq!(find(m.name).unwrap().number, m.number);
        }
        assert!(unknown("nope").contains("sync_in_branch") && unknown("nope").contains("partials_to_host"));
    }

    #[test]
    fn every_kernel_a_mistake_names_exists_and_every_broken_kernel_is_used() {
        for m in all() {
            let name = match m.kind {
                Kind::Passes { kernel, .. } | Kind::GridBarrier { kernel, .. } | Kind::FloatEquality { kernel, .. } | Kind::HostRoundTrips { kernel, .. } => kernel,
            };
            kernel_spec(name).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        }
        for k in BROKEN {
            assert!(all().iter().any(|m| matches!(m.kind, Kind::Passes { kernel, .. } | Kind::GridBarrier { kernel, .. } if kernel == k.name)), "{} unused", k.name);
            assert!(k.source.contains(k.name), "{} does not define {}", k.file, k.name);
            assert!(crate::kernels::find(k.name).is_err(), "{} is also in the correct registry", k.name);
        }
    }

    #[test]
    fn the_hang_runs_last() {
        let order = run_order();
        assert_eq!(order.len(), all().len());
        assert_eq!(order.last().unwrap().name, "grid_barrier_spin");
        assert_eq!(order[0].name, "sync_in_branch");
    }

    #[test]
    fn the_block_of_300_is_one_check_block_refuses() {
        let m = find("block_not_power_of_two").unwrap();
        let Kind::Passes { kernel, block, .. } = m.kind else { panic!() };
        assert!(crate::kernels::find(kernel).unwrap().check_block(block, 4, 1024, 48 * 1024).is_err());
    }

    #[test]
    fn options_refuse_what_cannot_run() {
        assert!(RunOptions::default().check().is_ok());
        assert!(RunOptions { n: 0, ..Default::default() }.check().unwrap_err().contains("n must"));
        assert!(RunOptions { runs: 0, ..Default::default() }.check().unwrap_err().contains("runs"));
    }

    fn observation(outcome: Outcome) -> Observation {
        let mut report = Report::new(outcome);
        report.runs = 20;
        report.wrong_runs = 20;
        Observation { report, startup: Some(Duration::from_millis(900)), run_time: Duration::from_millis(5010), stderr_tail: String::new() }
    }

    #[test]
    fn verdicts_follow_the_assertions() {
        let d = Deadline { startup: Duration::from_secs(60), run: Duration::from_secs(5) };
        let wrong = observation(Outcome::WrongResult { got: 1.0, expected: 2.0 });
        assert!(find("tail_not_written").unwrap().verdict(&wrong, d).is_ok());
        assert!(find("grid_barrier_spin").unwrap().verdict(&wrong, d).unwrap_err().contains("expected hang"));
        let hang = observation(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(5010) });
        assert!(find("grid_barrier_spin").unwrap().verdict(&hang, d).is_ok());
        let late = observation(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(6500) });
        assert!(find("grid_barrier_spin").unwrap().verdict(&late, d).unwrap_err().contains("killed"));
        // A recorded-only mistake may do anything a mistake can, but not crash the child.
        assert!(find("sync_in_branch").unwrap().verdict(&hang, d).is_ok());
        let crashed = observation(Outcome::Crashed { status: "exit code 101".into(), message: "panicked".into() });
        assert!(find("sync_in_branch").unwrap().verdict(&crashed, d).is_err());
        // The fixes must be right.
        let mut eq = observation(Outcome::WrongResult { got: 1.0, expected: 1.0000001 });
        eq.report.fix_wrong_runs = Some(0);
        assert!(find("float_equality").unwrap().verdict(&eq, d).is_ok());
        eq.report.fix_wrong_runs = Some(1);
        assert!(find("float_equality").unwrap().verdict(&eq, d).is_err());
    }

    fn sample_records() -> Records {
        let mut rows = Vec::new();
        for m in all() {
            let outcome = match m.asserted {
                Some(Class::WrongResult) => Outcome::WrongResult { got: -1234.0, expected: 4411.0 },
                Some(Class::LaunchError) => Outcome::LaunchError("CUDA error while pass 1 of 3: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")".into()),
                Some(Class::Hang) => Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(5004) },
                _ => Outcome::Correct,
            };
            let mut o = observation(outcome);
            o.report.detail = "one launch of 4097 blocks, \"quoted\" | piped".into();
            if matches!(m.kind, Kind::HostRoundTrips { .. }) {
                o.report.mistake_us = Some(181.2345);
                o.report.fix_us = Some(40.0);
                o.report.fix_wrong_runs = Some(0);
            }
            rows.push(Recorded::new(m, &o));
        }
        let header = vec![("gpu".to_string(), "NVIDIA Test GPU".to_string()), ("n".into(), "1048613".into()), ("runs".into(), "20".into())];
        Records { header, rows }
    }

    #[test]
    fn records_round_trip_through_the_csv() {
        let records = sample_records();
        let path = std::env::temp_dir().join(format!("reduction-mistakes-{}.csv", std::process::id()));
        write_records(&path, &records).unwrap();
        let back = read_records(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back.header, records.header);
        for (a, b) in back.rows.iter().zip(&records.rows) {
            assert_eq!(a.mistake, b.mistake);
            assert_eq!(a.outcome, b.outcome);
            assert_eq!(a.got, b.got);
            assert_eq!(a.message, b.message);
            assert_eq!(a.detail, b.detail);
            assert_eq!(a.mistake_us, b.mistake_us.map(round3));
        }
        assert!(parse_records("nonsense\n").unwrap_err().contains("line 1"));
        assert!(parse_records(&format!("{COLUMNS}\nx,1\n")).unwrap_err().contains("line 2"));
    }

    #[test]
    fn sentences_say_what_happened() {
        let records = sample_records();
        let row = |name: &str| records.rows.iter().find(|r| r.mistake == name).unwrap();
        let m = |name: &str| find(name).unwrap();
        assert_eq!(what_it_did(m("tail_not_written"), row("tail_not_written")), "wrong sum in 20 of 20 runs (first: got -1234, expected 4411)");
        assert!(what_it_did(m("shared_size_missing"), row("shared_size_missing")).starts_with("CUDA error `CUDA_ERROR_ILLEGAL_ADDRESS` (an illegal memory access was encountered)"));
        assert!(what_it_did(m("grid_barrier_spin"), row("grid_barrier_spin")).starts_with("no result 5.0 s after the launch; killed by the guard; one launch of 4097"));
        assert!(what_it_did(m("partials_to_host"), row("partials_to_host")).contains("(4.5× slower)"));
        let table = table_markdown(Some(Path::new("plots/data/mistakes/nvidia-test-gpu.csv")), Some(&records));
        assert!(table.contains("**NVIDIA Test GPU**") && table.contains("\\| piped"), "{table}");
        assert_eq!(table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| #")).count(), all().len());
        assert!(sentence_markdown(m("sync_in_branch"), Some(&records)).starts_with("**On the NVIDIA Test GPU:** right sum in all 20 runs."));
        assert!(table_markdown(None, None).contains(NOT_MEASURED));
        assert!(sentence_markdown(m("sync_in_branch"), None).contains(NOT_MEASURED));
    }

    #[test]
    fn record_targets_are_files_or_directories() {
        assert_eq!(record_path(Path::new("out/"), "NVIDIA H200"), Path::new("out/nvidia-h200.csv"));
        assert_eq!(record_path(Path::new("out/h200.csv"), "NVIDIA H200"), Path::new("out/h200.csv"));
        assert_eq!(record_path(&std::env::temp_dir(), "NVIDIA H200"), std::env::temp_dir().join("nvidia-h200.csv"));
    }

    #[test]
    fn cuda_error_names_are_pulled_out_of_driver_messages() {
        assert_eq!(cuda_error_name("x: DriverError(CUDA_ERROR_LAUNCH_FAILED, \"unspecified launch failure\")"), "`CUDA_ERROR_LAUNCH_FAILED` (unspecified launch failure)");
        assert_eq!(cuda_error_name("something else"), "something else");
    }
}
