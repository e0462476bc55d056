//! The child's side: a process that runs one mistake on its own GPU context, says READY when
//! the deadline should start, and prints its [`Report`] as the last line.

use super::experiments::{run_float_equality, run_grid_barrier, run_host_round_trips, run_passes};
use super::options::RunOptions;
use super::report::Report;
use super::{CHILD_ENV, CHILD_N_ENV, CHILD_RUNS_ENV, CHILD_SEED_ENV};
use crate::child::{say_ready, Role};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::broken::{find, unknown, Kind, Mistake};

/// A mistake's child: [`CHILD_ENV`] names the mistake, [`crate::child::run_if_asked`] runs it.
pub const CHILD: Role = Role { what: "mistake", env: CHILD_ENV, run: run_child };

/// Run the mistake `name` in this process, as its child, and print its report.
fn run_child(name: &str) -> std::result::Result<(), String> {
    let mistake = find(name).ok_or_else(|| unknown(name))?;
    let options = RunOptions::from_env_vars(CHILD_N_ENV, CHILD_RUNS_ENV, CHILD_SEED_ENV)?;
    let gpu = Gpu::open().map_err(|e| e.to_string())?;
    let report = run_in_process(&gpu, mistake, &options, say_ready).map_err(|e| e.to_string());
    // The context may be broken (mistake 7): leave its teardown to the process's exit, after
    // the report is out.
    std::mem::forget(gpu);
    report?.print()
}

/// Run one mistake in this process, on `gpu`, and say what happened. `ready` is called once
/// the kernel is compiled and loaded, and again before each run once its input is made (a
/// child says [`READY`](crate::child::READY): the deadline covers the GPU's work, not the
/// host's). Never call this in a process whose GPU context matters: a mistake can hang it or
/// leave it unusable. `Err` means the mistake
/// could not be run (no GPU, a failed allocation, …); what the mistake itself does — a wrong
/// sum, a CUDA error — is in the report.
pub fn run_in_process(gpu: &Gpu, mistake: &Mistake, options: &RunOptions, ready: impl FnMut()) -> Result<Report> {
    options.validate()?;
    eprintln!("mistake {} ({}): {} runs of n = {}, seed {}", mistake.number, mistake.name, options.runs, options.n, options.seed);
    match mistake.kind {
        Kind::Passes { kernel, block, shared } => run_passes(gpu, kernel, block, shared, options, ready),
        Kind::GridBarrier { kernel, block } => run_grid_barrier(gpu, kernel, block, options, ready),
        Kind::FloatEquality { kernel, block } => run_float_equality(gpu, kernel, block, options, ready),
        Kind::HostRoundTrips { kernel, block } => run_host_round_trips(gpu, kernel, block, options, ready),
    }
}
