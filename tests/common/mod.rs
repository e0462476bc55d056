//! What every test binary of the book shares: the GPU requirement rules and a seed that can be
//! replayed. A test that needs a GPU is reported `ignored`, with the reason, where there is
//! none — never passed — and fails instead when `REQUIRE_GPU=1`.
#![allow(dead_code)] // each test binary uses its own part of this module

pub mod planted;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use reduction::arch::Arch;
use reduction::kernels::KernelSpec;
use reduction::Gpu;
use std::sync::{Condvar, Mutex, OnceLock};

/// `REQUIRE_GPU=1`: a missing GPU fails the GPU tests instead of ignoring them.
pub fn gpu_required() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// `REQUIRE_NVRTC=1` (set by CI, and implied by `REQUIRE_GPU=1`): a missing NVRTC fails the
/// compile checks instead of ignoring them.
pub fn nvrtc_required() -> bool {
    gpu_required() || std::env::var("REQUIRE_NVRTC").is_ok_and(|v| v == "1")
}

/// `REQUIRE_GPUS=N`: the multi-GPU trials fail where fewer than N GPUs are visible (1 where
/// unset); a value that is not a count is an error, not a quiet 1.
pub fn required_gpus() -> Result<usize, String> {
    match std::env::var("REQUIRE_GPUS") {
        Err(_) => Ok(1),
        Ok(v) => v.trim().parse::<usize>().map_err(|_| format!("REQUIRE_GPUS={v:?} is not a number of GPUs")),
    }
}

static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();

/// The GPU, opened once per test binary and shared by every trial.
pub fn gpu() -> Result<&'static Gpu, String> {
    GPU.get_or_init(|| Gpu::open().map_err(|e| e.to_string())).as_ref().map_err(|e| e.clone())
}

/// A trial that needs a GPU: run where there is one, ignored with the reason where there is
/// none, failed where there is none and `REQUIRE_GPU=1`.
pub fn gpu_trial(name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<(), Failed> + Send + 'static) -> Trial {
    gpu_trial_with(name, Needs::default(), body)
}

/// What a GPU trial needs besides a GPU: kernels (their CUDA headers and their minimum
/// architecture) and device memory.
#[derive(Clone, Debug, Default)]
pub struct Needs {
    pub kernels: Vec<&'static KernelSpec>,
    /// Bytes of device memory the trial allocates at most, counted against the free memory the
    /// GPU had when this test binary opened it (under `REDUCTION_DEVICE_MEMORY`, if set).
    pub device_bytes: u64,
}

impl Needs {
    pub fn kernel(kernel: &'static KernelSpec) -> Needs {
        Needs { kernels: vec![kernel], device_bytes: 0 }
    }

    pub fn memory(bytes: u64) -> Needs {
        Needs { kernels: Vec::new(), device_bytes: bytes }
    }

    pub fn and_memory(self, bytes: u64) -> Needs {
        Needs { device_bytes: bytes, ..self }
    }
}

/// Why a trial with `needs` does not run on a GPU of architecture `arch` that had `budget` bytes
/// free when the tests began (`cap`: what `REDUCTION_DEVICE_MEMORY` set, for the reason), or
/// `None` if it runs. "Not on this GPU" and "not enough memory" are the reader's GPU, not a
/// defect: they are ignored with the reason even when `REQUIRE_GPU=1`.
pub fn not_on_this_gpu(needs: &Needs, arch: Arch, budget: u64, cap: Option<u64>) -> Option<String> {
    if let Some(Err(why)) = needs.kernels.iter().map(|k| k.available_on(arch)).find(Result::is_err) {
        return Some(why.to_string());
    }
    if needs.device_bytes > budget {
        let capped = match cap {
            Some(cap) if cap <= budget => format!(", {}={}", reduction::device_memory::VAR, human_bytes(cap)),
            _ => String::new(),
        };
        return Some(format!("needs {} of device memory; this GPU had {} free when the tests began{capped}",
            human_bytes(needs.device_bytes), human_bytes(budget)));
    }
    None
}

fn human_bytes(bytes: u64) -> String {
    reduction::error::human_bytes_wide(bytes as u128)
}

/// A trial that needs a GPU and `needs`: as [`gpu_trial`], and ignored with the reason where a
/// kernel is not on this GPU, where its CUDA headers are missing (failed instead when
/// `REQUIRE_GPU=1`), or where it needs more device memory than the GPU had free. Trials that
/// declare device memory hold it while they run, so that two large ones never run at once
/// past the GPU's memory.
pub fn gpu_trial_with(name: impl Into<String>, needs: Needs, body: impl FnOnce(&'static Gpu) -> Result<(), Failed> + Send + 'static) -> Trial {
    let _ = gpu(); // opened now, so that `run` knows whether to explain the ignored trials
    Trial::ignorable_test(name, move || {
        // A cap that is not a size is the reader's mistake to see, not a reason to skip.
        reduction::device_memory::cap_from_env()?;
        let gpu = match gpu() {
            Ok(gpu) => gpu,
            Err(why) if gpu_required() => return Err(format!("REQUIRE_GPU=1 but {why}").into()),
            Err(_) => return Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
        };
        let budget = gpu.memory_at_open() as u64;
        if let Some(why) = not_on_this_gpu(&needs, gpu.info().architecture(), budget, gpu.memory_cap()) {
            return Ok(Completion::ignored_with(why));
        }
        if !gpu_required() {
            if let Some(k) = needs.kernels.iter().find(|k| k.needs_cuda_headers) {
                if let Err(why) = reduction::nvrtc::cuda_include_dir() {
                    return Ok(Completion::ignored_with(format!("{}: {why}", k.name)));
                }
            }
        }
        let _held = LEDGER.take(needs.device_bytes, budget);
        body(gpu).map(|()| Completion::Completed)
    })
}

/// A GPU trial for one kernel: ignored with the reason where the kernel is not on this GPU or
/// its CUDA headers are missing (see [`gpu_trial_with`]).
pub fn kernel_trial(kernel: &'static KernelSpec, name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<(), Failed> + Send + 'static) -> Trial {
    gpu_trial_with(name, Needs::kernel(kernel), body)
}

/// Device memory that running trials have declared, held from the start of a trial to its end:
/// a trial waits while what it needs would take the total past the budget.
pub struct MemoryLedger {
    held: Mutex<u64>,
    freed: Condvar,
}

/// The ledger of this test binary's trials.
static LEDGER: MemoryLedger = MemoryLedger::new();

/// `bytes` of a [`MemoryLedger`], given back when dropped.
pub struct MemoryHeld<'a>(&'a MemoryLedger, u64);

impl MemoryLedger {
    pub const fn new() -> MemoryLedger {
        MemoryLedger { held: Mutex::new(0), freed: Condvar::new() }
    }

    /// Take `bytes` of `budget`, waiting while others hold too much for them to fit beside.
    /// Alone, a need always gets through (whether it fits at all is decided before).
    pub fn take(&self, bytes: u64, budget: u64) -> MemoryHeld<'_> {
        if bytes == 0 {
            return MemoryHeld(self, 0);
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held > 0 && *held + bytes > budget {
            held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        *held += bytes;
        MemoryHeld(self, bytes)
    }

    pub fn held(&self) -> u64 {
        *self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for MemoryHeld<'_> {
    fn drop(&mut self) {
        if self.1 > 0 {
            *self.0.held.lock().unwrap_or_else(|p| p.into_inner()) -= self.1;
            self.0.freed.notify_all();
        }
    }
}

/// `bytes` of device memory for a trial that decides for itself whether it runs: `Err` with the
/// reason where the GPU had less free when the tests began ([`not_on_this_gpu`]); otherwise the
/// bytes, held in this binary's ledger until the guard is dropped (as [`gpu_trial_with`] holds a
/// trial's declared memory).
pub fn hold_device_memory(gpu: &Gpu, bytes: u64) -> Result<MemoryHeld<'static>, String> {
    let budget = gpu.memory_at_open() as u64;
    match not_on_this_gpu(&Needs::memory(bytes), gpu.info().architecture(), budget, gpu.memory_cap()) {
        Some(why) => Err(why),
        None => Ok(LEDGER.take(bytes, budget)),
    }
}

/// The kernels of `kernels` that are on this GPU, for a trial that runs several in one body;
/// the others are named on stderr with the reason.
pub fn on_this_gpu<'a>(gpu: &Gpu, kernels: impl IntoIterator<Item = &'a KernelSpec>) -> Vec<&'a KernelSpec> {
    kernels.into_iter().filter(|k| match k.available_on(gpu.info().architecture()) {
        Ok(()) => true,
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }).collect()
}

/// [`gpu_trial`] for a body that may itself find it cannot run here, and says why
/// (`Completion::ignored_with`): a near miss only a case this GPU has no memory for can show.
pub fn gpu_trial_with_completion(name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<Completion, Failed> + Send + 'static) -> Trial {
    let _ = gpu();
    Trial::ignorable_test(name, move || match gpu() {
        Ok(gpu) => body(gpu),
        Err(why) if gpu_required() => Err(format!("REQUIRE_GPU=1 but {why}").into()),
        Err(_) => Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
    })
}

/// A trial that needs a GPU and NCCL (the multi-GPU sum): run where both are; ignored with the
/// reason where either is missing; failed when `REQUIRE_GPU=1` and either is missing (a GPU
/// host is expected to have NCCL).
pub fn nccl_trial(name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<(), Failed> + Send + 'static) -> Trial {
    nccl_trial_ignorable(name, move |gpu| body(gpu).map(|()| Completion::Completed))
}

/// As [`nccl_trial`], for a body that may itself find the trial cannot run here (a GPU with too
/// little memory: see [`not_on_this_gpu`]) and return [`Completion::ignored_with`] the reason.
pub fn nccl_trial_ignorable(name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<Completion, Failed> + Send + 'static) -> Trial {
    let _ = gpu();
    Trial::ignorable_test(name, move || match (gpu(), reduction::multigpu::nccl::available()) {
        (Err(why), _) if gpu_required() => Err(format!("REQUIRE_GPU=1 but {why}").into()),
        (Err(_), _) => Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
        (Ok(_), Err(why)) if gpu_required() => Err(format!("REQUIRE_GPU=1 and there is a GPU, but {why}").into()),
        (Ok(_), Err(why)) => Ok(Completion::ignored_with(format!("needs NCCL: {why}"))),
        (Ok(gpu), Ok(())) => body(gpu),
    })
}

/// A trial that needs NVRTC but no GPU (compiling the kernels).
pub fn nvrtc_trial(name: impl Into<String>, body: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || match reduction::nvrtc::available() {
        Ok(()) => body().map(|()| Completion::Completed),
        Err(why) if nvrtc_required() => Err(format!("NVRTC is required here but {why}").into()),
        Err(why) => Ok(Completion::ignored_with(why)),
    })
}

/// What a compile trial does here: run, be ignored with the reason, or fail with it.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Run,
    Ignore(String),
    Fail(String),
}

/// Where CUDA headers come from when there is no toolkit, for the reasons below.
pub const HEADERS_HINT: &str = "or set CUDA_INCLUDE_DIR to a folder that has cooperative_groups.h and cccl/";

/// The rule of [`nvrtc_kernel_trial`], apart from what this machine has: `nvrtc` is whether
/// NVRTC loads, `headers` whether the CUDA headers were found (`None`: the kernel includes
/// none), `required` whether `REQUIRE_NVRTC=1`. A missing NVRTC is named first.
pub fn compile_verdict(nvrtc: Result<(), String>, headers: Option<Result<(), String>>, required: bool) -> Verdict {
    match (nvrtc, headers) {
        (Err(why), _) if required => Verdict::Fail(format!("NVRTC is required here but {why}")),
        (Err(why), _) => Verdict::Ignore(why),
        (Ok(()), Some(Err(why))) if required => {
            Verdict::Fail(format!("REQUIRE_NVRTC=1, so this kernel must compile, but {why}; {HEADERS_HINT}"))
        }
        (Ok(()), Some(Err(why))) => Verdict::Ignore(format!("{why}; {HEADERS_HINT} (REQUIRE_NVRTC=1 makes this a failure)")),
        (Ok(()), None | Some(Ok(()))) => Verdict::Run,
    }
}

/// Whether the CUDA headers that cooperative groups and CUB need can be found; `Err` says why not.
pub fn cuda_headers() -> Result<(), String> {
    reduction::nvrtc::cuda_include_dir().map(|_| ()).map_err(|e| e.to_string())
}

/// A trial that compiles one kernel file with NVRTC but needs no GPU: as [`nvrtc_trial`], and
/// where the kernel includes CUDA headers (`needs_headers`) that this machine lacks, ignored
/// with the reason and how to get them — failed instead when `REQUIRE_NVRTC=1` (CI, which
/// installs them).
pub fn nvrtc_kernel_trial(name: impl Into<String>, needs_headers: bool, body: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || {
        let nvrtc = reduction::nvrtc::available().map_err(|e| e.to_string());
        let headers = needs_headers.then(cuda_headers);
        match compile_verdict(nvrtc, headers, nvrtc_required()) {
            Verdict::Run => body().map(|()| Completion::Completed),
            Verdict::Ignore(why) => Ok(Completion::ignored_with(why)),
            Verdict::Fail(why) => Err(why.into()),
        }
    })
}

/// The seed of this run's random inputs: `TEST_SEED` if set, otherwise fresh, and printed
/// either way so that a failure can be replayed.
pub fn run_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let seed = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
        });
        eprintln!("random inputs: TEST_SEED={seed} (set it to replay this run)");
        seed
    })
}

/// A seed for one trial, derived from the run seed and the trial's name.
pub fn trial_seed(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (run_seed(), name).hash(&mut h);
    h.finish()
}

/// Run the trials with the usual libtest command line, saying once why GPU trials are ignored.
pub fn run(trials: Vec<Trial>) -> ! {
    let args = Arguments::from_args();
    match GPU.get() {
        Some(Err(why)) if !gpu_required() => {
            eprintln!("note: tests that need a GPU are ignored here: {why} (REQUIRE_GPU=1 makes them fail instead)");
        }
        Some(Ok(gpu)) => {
            if let Some(note) = gpu.memory_note() {
                eprintln!("note: {note}; tests that need more are ignored with the reason");
            }
        }
        _ => {}
    }
    libtest_mimic::run(&args, trials).exit()
}

/// Before a whole run (no name filter, not `--list`) on a GPU: compile `files` at once, one core
/// each, rather than one after another under the GPU's module lock as the trials first need them.
/// A failure is only reported: each trial then compiles and reports its own.
pub fn preload_for_a_whole_run(args: &Arguments, files: &[&'static KernelSpec]) {
    let (Ok(gpu), None, false) = (gpu(), &args.filter, args.list) else { return };
    let started = std::time::Instant::now();
    let sources: Vec<&(dyn reduction::gpu::KernelSource + Sync)> = files.iter().map(|&s| s as _).collect();
    match gpu.preload(&sources) {
        Ok(()) => eprintln!("compiled {} kernel files in {:.1} s", sources.len(), started.elapsed().as_secs_f64()),
        Err(e) => eprintln!("preloading the kernel files failed (each trial compiles and reports its own): {e}"),
    }
}
