//! The four kinds of run a mistake's child can do ([`Kind`](crate::kernels::broken::Kind)): kernel passes with a
//! broken kernel or a broken launch, one launch with a grid barrier, a float sum compared with
//! `==`, and partial sums copied through the host. Each returns a [`Report`] of what the
//! mistake did; `Err` only when the run could not be set up.

use super::options::RunOptions;
use super::report::{Outcome, Report};
use crate::data::Checked;
use crate::element::Element;
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels::broken::{kernel_spec, SharedMemory};
use crate::kernels::KernelSpec;
use crate::records::mistakes::CudaCode;
use crate::records::summary::median;
use crate::plan::{plan_passes, Pass, MAX_GRID};
use crate::Reducer;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};
use std::time::Instant;
use crate::kernels::names;

type Exact = i32;

pub(super) fn run_passes(gpu: &Gpu, kernel: &str, block: u32, shared: SharedMemory, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
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
            Err((step, error)) => {
                eprintln!("  run {run}: {step}: {error}");
                report.outcome = launch_error(&format!("{step}: {error}"), &error);
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

/// A launch error as the report keeps it: the message in full, and the driver's code.
fn launch_error(message: &str, error: &Error) -> Outcome {
    Outcome::LaunchError { error: message.to_string(), cuda: error.driver_error().map(CudaCode::of) }
}

/// Launch every pass, waiting after each. `Ok(Err((step, error)))` is an error raised by a
/// launch or by the wait after it (the mistake showing), in the pass `step` names; `Err` is a
/// failure to set the run up.
fn sum_by_passes<T: Element>(gpu: &Gpu, function: &CudaFunction, spec: &KernelSpec, block: u32, shared: SharedMemory,
    input: &CudaSlice<T>, passes: &[Pass]) -> Result<std::result::Result<T, (String, Error)>> {
    let mut previous: Option<CudaSlice<T>> = None;
    for (i, pass) in passes.iter().enumerate() {
        let mut output = gpu.alloc::<T>(pass.grid as usize)?;
        gpu.fill(&mut output, T::POISON)?;
        let from = match &previous {
            None => input.slice(..),
            Some(p) => p.slice(..),
        };
        let step = format!("pass {} of {} (grid {}, block {block})", i + 1, passes.len(), pass.grid);
        if let Err(e) = launch_pass(gpu, function, spec, block, shared, &from, &mut output, *pass).and_then(|()| gpu.synchronize()) {
            return Ok(Err((step, e)));
        }
        previous = Some(output);
    }
    let last = previous.expect("plan_passes plans at least one pass for n >= 1");
    let mut value = [T::default()];
    let read = gpu.stream().memcpy_dtoh(&last.slice(0..1), &mut value).during("copying the sum back");
    match read.and_then(|()| gpu.synchronize()) {
        Ok(()) => Ok(Ok(value[0])),
        Err(e) => Ok(Err(("reading the sum".into(), e))),
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
        let got = Reducer::<Exact>::new(gpu, names::REDUCE3, 256)?.sum_host(&xs)?;
        Ok(Exact::check_sum(got, &xs))
    }));
    match attempt {
        Ok(Ok(Ok(()))) => "afterwards, kernel 3 in the same process still summed correctly".into(),
        Ok(Ok(Err(why))) => format!("afterwards, kernel 3 in the same process gave a wrong sum: {why}"),
        Ok(Err(e)) => match e.driver_error() {
            Some(code) => format!("afterwards, kernel 3 in the same process failed too: {}", CudaCode::of(code).words()),
            None => format!("afterwards, kernel 3 in the same process failed too: {e}"),
        },
        Err(_) => "afterwards, kernel 3 in the same process panicked".into(),
    }
}

pub(super) fn run_grid_barrier(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
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
            report.outcome = launch_error(&e.to_string(), &e);
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

pub(super) fn run_float_equality(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
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

pub(super) fn run_host_round_trips(gpu: &Gpu, kernel: &str, block: u32, options: &RunOptions, mut ready: impl FnMut()) -> Result<Report> {
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
    report.mistake_us = Some(median(&slow_us));
    report.fix_us = Some(median(&fast_us));
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
