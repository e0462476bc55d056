//! Past the happy path, for every correct kernel: more than 2^31 elements, one-hot inputs that
//! catch any element counted twice or never, NaN and infinities, overflow and denormals, a
//! thousand random cases, bitwise determinism, and ten thousand sums in one process without a
//! leak. What CUB and PyTorch test, the book tests.

mod common;

use common::{gpu_trial, trial_seed};
use libtest_mimic::{Failed, Trial};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use reduction::check::CheckSum;
use reduction::data::Checked;
use reduction::{kernels, Dtype, Element, Gpu, Reducer};

/// The correct kernels with an entry point for `dtype`, whose headers (if any) can be found.
fn kernels_for(dtype: Dtype) -> Vec<&'static kernels::KernelSpec> {
    kernels::correct()
        .filter(|k| k.supports(dtype))
        .filter(|k| !k.needs_cuda_headers || common::gpu_required() || reduction::nvrtc::cuda_include_dir().is_ok())
        .collect()
}

/// `x_i = (i mod 1000) − 500`: an exact closed-form sum that stays inside `i32` for any length
/// up to 4·10^9, and that a wrapped or truncated index would change.
fn pattern_sum(n: u64) -> i64 {
    let cycles = (n / 1000) as i64;
    let rest = (n % 1000) as i64;
    cycles * -500 + (0..rest).map(|r| r - 500).sum::<i64>()
}

fn past_2_pow_31(trials: &mut Vec<Trial>) {
    let n = (1usize << 31) + 4097;
    // The input, and room for the partial sums and the driver: ignored on a GPU with less.
    let needs = common::Needs::memory((n * 4 + (1 << 30)) as u64);
    trials.push(common::gpu_trial_with("large::i32_2^31+4097_every_kernel", needs, move |gpu| {
        let mut host = vec![0i32; n];
        std::thread::scope(|scope| {
            for (c, chunk) in host.chunks_mut(1 << 26).enumerate() {
                scope.spawn(move || {
                    for (j, x) in chunk.iter_mut().enumerate() {
                        *x = (((c << 26) + j) % 1000) as i32 - 500;
                    }
                });
            }
        });
        let input = gpu.upload(&host)?;
        drop(host);
        let expected = pattern_sum(n as u64);
        let mut failures = Vec::new();
        for kernel in common::on_this_gpu(gpu, kernels_for(Dtype::I32)) {
            let block = kernel.preferred_block(n);
            let mut reducer = Reducer::<i32>::new(gpu, kernel.name, block)?;
            reducer.poison_outputs(n)?;
            match reducer.sum(&input.as_view()) {
                Ok(got) if got as i64 == expected => {}
                Ok(got) => failures.push(format!("{}: got {got}, expected {expected}", kernel.name)),
                Err(e) => failures.push(format!("{}: {e}", kernel.name)),
            }
        }
        if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
    }));
}

/// A single 1 at each of the first and last 100 positions of 2^26 + 3 zeros, and of a view
/// shifted by one element, must sum to exactly 1: every element is counted, and counted once.
fn one_hot<T: Checked>(gpu: &Gpu, kernel: &kernels::KernelSpec, one: T) -> Result<(), Failed> {
    let n = (1usize << 26) + 3;
    let mut buffer = gpu.stream().alloc_zeros::<T>(n + 1)?;
    let block = kernel.preferred_block(n);
    let mut reducer = Reducer::<T>::new(gpu, kernel.name, block)?;
    let positions: Vec<usize> = (0..100).chain(n - 100..n).collect();
    for shift in [0, 1] {
        for &p in &positions {
            gpu.stream().memcpy_htod(&[one], &mut buffer.slice_mut(shift + p..shift + p + 1))?;
            reducer.poison_outputs(n)?;
            let got = reducer.sum(&buffer.slice(shift..shift + n))?;
            gpu.stream().memcpy_htod(&[T::default()], &mut buffer.slice_mut(shift + p..shift + p + 1))?;
            if got.to_f64() != 1.0 {
                return Err(format!("{} {}: a single one at position {p} (view shifted by {shift}) summed to {got:?}", kernel.name, T::SUFFIX).into());
            }
        }
    }
    Ok(())
}

fn one_hot_trials(trials: &mut Vec<Trial>) {
    for kernel in kernels_for(Dtype::F32) {
        trials.push(common::kernel_trial(kernel, format!("one_hot::{}::f32", kernel.name), move |gpu| one_hot(gpu, kernel, 1.0f32)));
    }
    for kernel in kernels_for(Dtype::I32) {
        trials.push(common::kernel_trial(kernel, format!("one_hot::{}::i32", kernel.name), move |gpu| one_hot(gpu, kernel, 1i32)));
    }
    for kernel in kernels_for(Dtype::F16) {
        trials.push(common::kernel_trial(kernel, format!("one_hot::{}::f16", kernel.name), move |gpu| one_hot(gpu, kernel, half::f16::ONE)));
    }
}

/// f32 inputs whose sum is known without a reference: NaN propagates, +Inf and −Inf make NaN,
/// one +Inf wins, overflow becomes +Inf, and exact cases stay exact.
fn special_values(gpu: &Gpu, kernel: &kernels::KernelSpec) -> Result<(), Failed> {
    let n = 100_003;
    let block = kernel.preferred_block(n);
    let mut reducer = Reducer::<f32>::new(gpu, kernel.name, block)?;
    let mut sum = |xs: &[f32]| -> Result<f32, Failed> {
        reducer.poison_outputs(xs.len())?;
        Ok(reducer.sum_host(xs)?)
    };
    let base = reduction::data::random_f32(n, 11);
    let with = |changes: &[(usize, f32)]| {
        let mut xs = base.clone();
        changes.iter().for_each(|&(i, v)| xs[i] = v);
        xs
    };
    let mut problems = Vec::new();
    let mut expect = |what: &str, got: f32, ok: bool| {
        if !ok {
            problems.push(format!("{what}: got {got:e}"));
        }
    };
    for at in [0, 1, n / 2, n - 1] {
        let got = sum(&with(&[(at, f32::NAN)]))?;
        expect(&format!("a NaN at {at} gives NaN"), got, got.is_nan());
    }
    let got = sum(&with(&[(7, f32::INFINITY), (n - 3, f32::NEG_INFINITY)]))?;
    expect("+Inf and -Inf give NaN", got, got.is_nan());
    let got = sum(&with(&[(n / 3, f32::INFINITY)]))?;
    expect("a single +Inf gives +Inf", got, got == f32::INFINITY);
    let got = sum(&with(&[(n / 3, f32::NEG_INFINITY)]))?;
    expect("a single -Inf gives -Inf", got, got == f32::NEG_INFINITY);
    let got = sum(&[f32::MAX / 2.0; 4])?;
    expect("values near f32::MAX overflow to +Inf", got, got == f32::INFINITY);
    let alternating: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let got = sum(&alternating)?;
    expect("alternating ±1 sums to exactly 1 (n odd)", got, got == 1.0);
    let equal = vec![0.1f32; n];
    let got = sum(&equal)?;
    expect("all values equal: within the error bound", got, f32::check_sum(got, &equal).is_ok());
    let denormal = vec![1e-40f32; n];
    let got = sum(&denormal)?;
    expect("denormals are summed, not flushed to zero", got, got > 0.0 && f32::check_sum(got, &denormal).is_ok());
    if problems.is_empty() { Ok(()) } else { Err(format!("{}: {}", kernel.name, problems.join("; ")).into()) }
}

/// One random case: kernel, size (log-uniform in [1, 2^24]), block size and element type.
fn property_case(gpu: &Gpu, case: usize, seed: u64) -> Result<(), Failed> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let dtype = Dtype::ALL[rng.gen_range(0..Dtype::ALL.len())];
    // Drawn among the kernels on this GPU, so that a case never lands on one that cannot run.
    let candidates: Vec<_> = kernels_for(dtype).into_iter().filter(|k| k.available_on(gpu.info().architecture()).is_ok()).collect();
    let kernel = candidates[rng.gen_range(0..candidates.len())];
    let n = (2f64.powf(rng.gen_range(0.0..24.0)) as usize).max(1);
    let blocks: Vec<u32> = kernel.block_sizes().collect();
    let block = blocks[rng.gen_range(0..blocks.len())];
    let data_seed = rng.gen();
    let describe = || format!("case {case}: {} {} n={n} block={block} (seed {seed})", kernel.name, dtype.name());
    let outcome = reduction::with_dtype!(dtype, T => check::<T>(gpu, kernel.name, n, block, data_seed));
    outcome.map_err(|e| format!("{}: {e}", describe()).into())
}

fn check<T: Checked>(gpu: &Gpu, kernel: &str, n: usize, block: u32, seed: u64) -> Result<(), String> {
    let xs = T::random(n, seed);
    let mut reducer = Reducer::<T>::new(gpu, kernel, block).map_err(|e| e.to_string())?;
    reducer.poison_outputs(n).map_err(|e| e.to_string())?;
    let got = reducer.sum_host(&xs).map_err(|e| e.to_string())?;
    reducer.check(got, &T::reference(&xs))
}

/// Ten thousand sums of mixed sizes with every kind of kernel, in one process: every result
/// checked, and the device memory in use the same before and after.
fn load(gpu: &Gpu) -> Result<(), Failed> {
    let sizes = [1usize, 33, 1000, 65_537, 1 << 20, (1 << 22) + 5];
    let names = ["reduce3", "reduce7", "reduce9", "reduce10_atomic", "reduce10_last_block"];
    let round = |count: usize| -> Result<(), Failed> {
        let inputs: Vec<(Vec<i32>, reduction::data::Reference)> = sizes.iter().map(|&n| {
            let xs = i32::random(n, n as u64);
            let r = i32::reference(&xs);
            (xs, r)
        }).collect();
        let device: Vec<_> = inputs.iter().map(|(xs, _)| gpu.upload(xs)).collect::<Result<_, _>>()?;
        let mut reducers: Vec<Reducer<i32>> = names.iter().map(|k| Reducer::new(gpu, k, 256)).collect::<Result<_, _>>()?;
        for i in 0..count {
            let (which, reducer) = (i % sizes.len(), i % names.len());
            let got = reducers[reducer].sum(&device[which].as_view())?;
            i32::check(got, &inputs[which].1).map_err(|e| format!("sum {i} ({}): {e}", names[reducer]))?;
        }
        Ok(())
    };
    round(60)?; // compiles, and lets the allocator reach its steady state
    gpu.synchronize()?;
    // The driver's numbers: under REDUCTION_DEVICE_MEMORY the capped ones would hide a leak.
    let (before, total) = gpu.driver_memory()?;
    let started = std::time::Instant::now();
    round(10_000)?;
    gpu.synchronize()?;
    let (after, _) = gpu.driver_memory()?;
    eprintln!(
        "load: 10000 sums in {:.2} s; device memory free before {} and after {} of {} (difference {} bytes)",
        started.elapsed().as_secs_f64(), before, after, total, before as i64 - after as i64
    );
    if after < before {
        return Err(format!("{} bytes of device memory were not given back", before - after).into());
    }
    Ok(())
}

fn main() {
    let mut trials = Vec::new();
    past_2_pow_31(&mut trials);
    one_hot_trials(&mut trials);
    for kernel in kernels_for(Dtype::F32) {
        trials.push(common::kernel_trial(kernel, format!("special_values::{}::f32", kernel.name), move |gpu| special_values(gpu, kernel)));
    }
    for case in 0..1000 {
        let name = format!("property::case_{case:04}");
        let seed = trial_seed(&name);
        trials.push(gpu_trial(name, move |gpu| property_case(gpu, case, seed)));
    }
    for kernel in kernels::correct().filter(|k| k.deterministic(Dtype::F32)) {
        let name = format!("determinism::{}::f32_100_runs", kernel.name);
        let seed = trial_seed(&name);
        trials.push(common::kernel_trial(kernel, name, move |gpu| {
            let xs = f32::random((1 << 22) + 3, seed);
            let input = gpu.upload(&xs)?;
            let mut reducer = Reducer::<f32>::new(gpu, kernel.name, kernel.preferred_block(xs.len()))?;
            let first = reducer.sum(&input.as_view())?.to_bits();
            for run in 1..100 {
                if reducer.sum(&input.as_view())?.to_bits() != first {
                    return Err(format!("{}: run {run} differs from run 0", kernel.name).into());
                }
            }
            Ok(())
        }));
    }
    trials.push(gpu_trial("load::10000_mixed_sums_no_leak", load));
    trials.push(Trial::test("no_gpu::open_says_why", || {
        // Meaningful only where there is no GPU; where there is one, it must open.
        match (reduction::gpu::probe(), Gpu::open()) {
            (Ok(_), Ok(_)) => Ok(()),
            (Err(_), Err(reduction::Error::NoGpu(why))) if !why.is_empty() => Ok(()),
            (probe, open) => Err(format!("probe {probe:?} but open {:?}", open.err()).into()),
        }
    }));
    common::run(trials)
}
