//! What every test binary of the book shares: the GPU requirement rules and a seed that can be
//! replayed. A test that needs a GPU is reported `ignored`, with the reason, where there is
//! none — never passed — and fails instead when `REQUIRE_GPU=1`.
#![allow(dead_code)] // each test binary uses its own part of this module

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use reduction::Gpu;
use std::sync::OnceLock;

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
    let _ = gpu(); // opened now, so that `run` knows whether to explain the ignored trials
    Trial::ignorable_test(name, move || match gpu() {
        Ok(gpu) => body(gpu).map(|()| Completion::Completed),
        Err(why) if gpu_required() => Err(format!("REQUIRE_GPU=1 but {why}").into()),
        Err(_) => Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
    })
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
    let _ = gpu();
    Trial::ignorable_test(name, move || match (gpu(), reduction::multigpu::nccl::available()) {
        (Err(why), _) if gpu_required() => Err(format!("REQUIRE_GPU=1 but {why}").into()),
        (Err(_), _) => Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
        (Ok(_), Err(why)) if gpu_required() => Err(format!("REQUIRE_GPU=1 and there is a GPU, but {why}").into()),
        (Ok(_), Err(why)) => Ok(Completion::ignored_with(format!("needs NCCL: {why}"))),
        (Ok(gpu), Ok(())) => body(gpu).map(|()| Completion::Completed),
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
    if let Some(Err(why)) = GPU.get() {
        if !gpu_required() {
            eprintln!("note: tests that need a GPU are ignored here: {why} (REQUIRE_GPU=1 makes them fail instead)");
        }
    }
    libtest_mimic::run(&args, trials).exit()
}
