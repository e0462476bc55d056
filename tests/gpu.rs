//! Every correct kernel against the reference, on the GPU: both element types, the sizes where
//! reductions break, every block size the kernel accepts, fresh random data, outputs poisoned.

mod common;

use common::{gpu_trial, kernel_trial, trial_seed};
use libtest_mimic::{Failed, Trial};
use reduction::check::CheckSum;
use reduction::data::Checked;
use reduction::{kernels, Element, Error, Gpu, Reducer};

/// The sizes every kernel is checked at: tiny, around warp and block edges, around every power
/// of two up to 2^26, and a few drawn at random (different each run, printed in the name).
fn sizes() -> Vec<usize> {
    let mut sizes = vec![1, 2, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 1 << 20, (1 << 20) + 1, (1 << 24) + 3];
    for k in 1..=26 {
        sizes.extend([(1usize << k) - 1, 1 << k, (1 << k) + 1]);
    }
    let mut seed = trial_seed("sizes");
    for _ in 0..3 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        sizes.push(1 + (seed >> 40) as usize % (1 << 24));
    }
    // MAX_TEST_N caps the sizes, for runs under compute-sanitizer (which slows kernels ~100x).
    let cap = std::env::var("MAX_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    sizes.retain(|&n| n <= cap);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Sum fresh data of length n with every block size the kernel takes; poison outputs first.
/// `shift` > 0 sums a view that starts that many elements into the buffer (misaligned for
/// 16-byte loads). Floats get two inputs: random reals, checked against the error bound of the
/// launch's addition depth, and an exact-by-construction one, checked bit for bit (integers are
/// always checked exactly).
fn check_kernel<T: Checked>(gpu: &Gpu, kernel: &'static kernels::KernelSpec, n: usize, shift: usize, seed: u64) -> Result<(), Failed> {
    let inputs: &[bool] = if T::IS_FLOAT { &[false, true] } else { &[false] };
    for &exact in inputs {
        let xs = if exact { T::exact(n + shift, seed ^ 0xE1AC7) } else { T::random(n + shift, seed) };
        let reference = if exact { T::exact_reference(&xs[shift..])? } else { T::reference(&xs[shift..]) };
        let input = gpu.upload(&xs)?;
        let view = input.slice(shift..);
        for block in kernel.block_sizes() {
            let mut reducer = Reducer::<T>::with_spec(gpu, kernel, block)?;
            reducer.poison_outputs(n)?;
            let got = reducer.sum(&view)?;
            let input_kind = if exact { "exact input" } else { "random input" };
            reducer.check(got, &reference).map_err(|e| format!("{} block {block}, {input_kind}: {e}", kernel.name))?;
        }
    }
    Ok(())
}

fn correctness_trials<T: Checked>(trials: &mut Vec<Trial>) {
    for kernel in kernels::correct().filter(|k| k.supports(T::DTYPE)) {
        for n in sizes() {
            let name = format!("{}::{}::n={n}", kernel.name, T::SUFFIX);
            let seed = trial_seed(&name);
            trials.push(kernel_trial(kernel, name, move |gpu| check_kernel::<T>(gpu, kernel, n, 0, seed)));
        }
        // Kernels that load 16 bytes at a time must handle a view that starts anywhere.
        if kernel.elements_per_thread >= 16 {
            for n in [1usize, 2, 3, 5, 7, 9, 1000, (1 << 20) + 7] {
                for shift in 1..=3 {
                    let name = format!("{}::{}::shifted_by_{shift}::n={n}", kernel.name, T::SUFFIX);
                    let seed = trial_seed(&name);
                    trials.push(kernel_trial(kernel, name, move |gpu| check_kernel::<T>(gpu, kernel, n, shift, seed)));
                }
            }
        }
    }
}

/// The yardsticks the benchmark sets the kernels against are kernels too, and checked the same
/// way: the read-only kernel at every launch shape (its partials must add up to the exact sum),
/// and the copy (every word copied, nothing past the end written).
fn yardstick_trials<T: Checked>(trials: &mut Vec<Trial>) {
    use reduction::measure::read_only;
    for shape in kernels::READ_ONLY_SHAPES {
        let tile = shape.tile(std::mem::size_of::<T>());
        let mut sizes = vec![1, 3, 31, 1000, 4097, tile - 1, tile, tile + 1, 3 * tile + 5, (1 << 20) + 3];
        let cap = std::env::var("MAX_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
        sizes.retain(|&n| n <= cap);
        sizes.sort_unstable();
        sizes.dedup();
        for n in sizes {
            let name = format!("read_only::b{}_l{}::{}::n={n}", shape.block, shape.loads, T::SUFFIX);
            let seed = trial_seed(&name);
            trials.push(gpu_trial(name, move |gpu| {
                let xs = T::exact(n, seed);
                let input = gpu.upload(&xs)?;
                let partials = read_only::partials::<T>(gpu, shape, &input.as_view())?;
                if partials.len() != shape.grid(n, std::mem::size_of::<T>()) {
                    return Err(format!("{} partials for {} blocks", partials.len(), shape.grid(n, std::mem::size_of::<T>())).into());
                }
                read_only::partials_add_up(&partials, &T::exact_reference(&xs)?).map_err(Failed::from)
            }));
        }
    }
}

fn copy_trials(trials: &mut Vec<Trial>) {
    for n in [1usize, 3, 4, 5, 1023, 1 << 16, (1 << 20) + 3] {
        trials.push(gpu_trial(format!("copy::u32::n={n}"), move |gpu| {
            use cudarc::driver::{LaunchConfig, PushKernelArg};
            let xs: Vec<i32> = i32::random(n, n as u64);
            let input = gpu.upload(&xs)?;
            // One guard word past the end: the copy must not write it.
            let mut out = gpu.alloc::<i32>(n + 1)?;
            gpu.fill(&mut out, i32::POISON)?;
            let copy = gpu.function(&kernels::COPY, "copy_u32")?;
            let n64 = n as u64;
            let blocks = (n / 4).div_ceil(256).clamp(1, 1024) as u32;
            let mut launch = gpu.stream().launch_builder(&copy);
            launch.arg(&input).arg(&mut out).arg(&n64);
            // SAFETY: copy_u32(const unsigned*, unsigned*, u64): `input` holds n 4-byte words and
            // `out` n + 1, both fresh allocations (16-byte aligned); the kernel loops over n.
            unsafe { launch.launch(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }
                .map_err(|e| format!("launching the copy: {e}"))?;
            let back = gpu.download(&out)?;
            if back[..n] != xs[..] {
                return Err("the copy differs from its input".into());
            }
            if back[n] != i32::POISON {
                return Err("the copy wrote past the end".into());
            }
            Ok(())
        }));
    }
}

/// Deterministic kernels give bitwise the same sum, run after run, on the same input.
fn determinism_trials(trials: &mut Vec<Trial>) {
    for kernel in kernels::correct().filter(|k| k.deterministic(reduction::Dtype::F32)) {
        let name = format!("determinism::{}::f32_20_runs", kernel.name);
        let seed = trial_seed(&name);
        trials.push(kernel_trial(kernel, name, move |gpu| {
            let n = (1 << 24) + 3;
            let xs = f32::random(n, seed);
            let input = gpu.upload(&xs)?;
            let block = kernel.block_sizes().find(|&b| b >= 256).unwrap_or(kernel.max_block);
            let mut reducer = Reducer::<f32>::new(gpu, kernel.name, block)?;
            let first = reducer.sum(&input.as_view())?;
            for run in 1..20 {
                let again = reducer.sum(&input.as_view())?;
                if again.to_bits() != first.to_bits() {
                    return Err(format!("run {run} gave {again:e}, run 0 gave {first:e}").into());
                }
            }
            Ok(())
        }));
    }
}

/// Bad input through the public API: each gets its own error, before any launch.
fn error_trials(trials: &mut Vec<Trial>) {
    // What `bench --scratch-pads` writes beside each time: the addresses of the buffers the
    // reducer really holds, none before its first sum, and elsewhere for a reducer made after a pad.
    trials.push(gpu_trial("reducer::scratch_addresses_are_the_buffers_it_holds", |gpu| {
        let xs = gpu.upload(&f32::random(1 << 20, 5))?;
        let mut first = Reducer::<f32>::new(gpu, "reduce10_last_block", 256)?;
        if !first.scratch_addresses().is_empty() {
            return Err("addresses before the first sum".into());
        }
        first.sum(&xs.as_view())?;
        let a = first.scratch_addresses();
        // The last-block kernel: its result, its partials, its ticket.
        if a.len() != 3 || a.contains(&0) || a[0] == a[1] || a[1] == a[2] || a[0] == a[2] {
            return Err(format!("expected three distinct nonzero addresses, got {a:x?}").into());
        }
        let _pad = gpu.alloc::<f32>(1 << 19)?;
        let mut second = Reducer::<f32>::new(gpu, "reduce10_last_block", 256)?;
        second.sum(&xs.as_view())?;
        let b = second.scratch_addresses();
        if b.iter().any(|at| a.contains(at)) {
            return Err(format!("a second reducer's buffers {b:x?} overlap the first's {a:x?}").into());
        }
        Ok(())
    }));
    trials.push(gpu_trial("errors::block_sizes_are_checked_before_launch", |gpu| {
        for (kernel, block, expect) in [("reduce1", 0, "at least one"), ("reduce1", 300, "power of two"),
            ("reduce6", 32, "64 to 1024"), ("reduce1", 2048, "32 to 1024"), ("reduce7", 3, "power of two")] {
            match Reducer::<f32>::new(gpu, kernel, block) {
                Err(e @ Error::InvalidBlockSize { .. }) if e.to_string().contains(expect) => {}
                Err(e) => return Err(format!("{kernel} block {block}: wrong error: {e}").into()),
                Ok(_) => return Err(format!("{kernel} accepted block {block}").into()),
            }
        }
        Ok(())
    }));
    trials.push(gpu_trial("errors::element_type_without_an_entry_point", |gpu| match Reducer::<f64>::new(gpu, "reduce1", 256) {
        Err(e @ Error::UnsupportedDtype { dtype: reduction::Dtype::F64, .. }) if e.to_string() == "reduce1 takes f32 or i32 (asked for f64)" => Ok(()),
        other => Err(format!("expected a refusal of f64 for reduce1, got {:?}", other.err()).into()),
    }));
    trials.push(gpu_trial("errors::unknown_kernel_is_named", |gpu| match Reducer::<i32>::new(gpu, "reduce0", 256) {
        Err(Error::UnknownKernel { name, known }) if name == "reduce0" && known.contains("reduce1") => Ok(()),
        other => Err(format!("expected UnknownKernel, got {:?}", other.err()).into()),
    }));
    trials.push(gpu_trial("errors::empty_input_is_zero_with_no_launch", |gpu| {
        let mut reducer = Reducer::<f32>::new(gpu, "reduce3", 256)?;
        assert!(reducer.plan(0)?.is_empty(), "a launch was planned for n = 0");
        let empty = gpu.alloc::<f32>(0)?;
        if reducer.sum(&empty.as_view())? != 0.0 || reducer.sum_host(&[])? != 0.0 {
            return Err("the empty sum is not zero".into());
        }
        Ok(())
    }));
    trials.push(gpu_trial("errors::allocation_larger_than_free_memory", |gpu| {
        let (free, _) = gpu.memory()?;
        match gpu.alloc::<f32>(free / 4 + (1 << 30)) {
            Err(Error::OutOfMemory { requested_bytes, free_bytes }) if requested_bytes > free_bytes => {}
            Err(e) => return Err(format!("wrong error: {e}").into()),
            Ok(_) => return Err("an allocation larger than free memory succeeded".into()),
        }
        // Nothing was lost: the GPU still sums.
        let xs = i32::random(1000, 5);
        let got = Reducer::<i32>::new(gpu, "reduce3", 128)?.sum_host(&xs)?;
        i32::check_sum(got, &xs).map_err(Failed::from)
    }));
    trials.push(gpu_trial("errors::compile_errors_carry_the_nvrtc_log", |gpu| {
        let arch = gpu.info().arch();
        match reduction::nvrtc::compile_cubin("broken.cu", "extern \"C\" __global__ void k() { undeclared = 1; }", &arch, &[]) {
            Err(Error::Compile { file, log }) if file == "broken.cu" && log.contains("undeclared") => Ok(()),
            other => Err(format!("expected a compile error naming `undeclared`, got {:?}", other.err()).into()),
        }
    }));
}

/// The rules that decide, on the reader's GPU, whether a trial runs: pure functions, checked
/// here without a GPU (there is no sm_75 GPU or 8 GB card where this project runs).
fn rule_trials(trials: &mut Vec<Trial>) {
    use common::{not_on_this_gpu, MemoryLedger, Needs};
    use reduction::arch::Arch;
    trials.push(Trial::test("rules::a_kernel_newer_than_the_gpu_is_ignored_with_the_reason", || {
        let k9 = kernels::find(kernels::names::REDUCE9)?;
        // Every kernel of the book runs on sm_75 today; one that needs sm_90, like a Hopper-only
        // kernel would, is ignored below it and runs from it on.
        for arch in [Arch::SM_75, Arch::SM_86, Arch::SM_90] {
            if let Some(why) = not_on_this_gpu(&Needs::kernel(k9), arch, 8 << 30, None) {
                return Err(format!("reduce9 on {arch}: ignored ({why})").into());
            }
        }
        let hopper: &'static kernels::KernelSpec = Box::leak(Box::new(kernels::KernelSpec { name: "reduce9_hopper", min_arch: Arch::SM_90, ..*k9 }));
        let why = not_on_this_gpu(&Needs::kernel(hopper), Arch::SM_89, 80 << 30, None).ok_or("a sm_90 kernel ran on sm_89")?;
        if why != "reduce9_hopper is not on this GPU: it needs sm_90 or newer, and this GPU is sm_89" {
            return Err(format!("reason: {why}").into());
        }
        if not_on_this_gpu(&Needs::kernel(hopper), Arch::new(10, 0), 80 << 30, None).is_some() {
            return Err("a sm_90 kernel was ignored on sm_100".into());
        }
        // Among several kernels, the first that is not on the GPU is named.
        let both = Needs { kernels: vec![k9, hopper], device_bytes: 0 };
        match not_on_this_gpu(&both, Arch::SM_75, 80 << 30, None) {
            Some(why) if why.starts_with("reduce9_hopper") => Ok(()),
            other => Err(format!("two kernels on sm_75: {other:?}").into()),
        }
    }));
    trials.push(Trial::test("rules::a_test_needing_more_memory_than_the_gpu_had_is_ignored_with_the_reason", || {
        const GIB: u64 = 1 << 30;
        let large = Needs::memory(9 * GIB);
        // An 8 GB card that had 7.5 GiB free, and the cap of tests/gpu-host.sh's capped stage.
        let why = not_on_this_gpu(&large, Arch::SM_86, 15 * GIB / 2, None).ok_or("9 GiB ran in 7.5")?;
        if why != "needs 9.0 GiB of device memory; this GPU had 7.5 GiB free when the tests began" {
            return Err(format!("reason: {why}").into());
        }
        let why = not_on_this_gpu(&large, Arch::SM_90, 6 * GIB, Some(6 * GIB)).ok_or("9 GiB ran under a 6 GiB cap")?;
        if !why.ends_with("free when the tests began, REDUCTION_DEVICE_MEMORY=6.0 GiB") {
            return Err(format!("reason: {why}").into());
        }
        // A cap larger than what is free is not the reason, and is not named.
        let why = not_on_this_gpu(&large, Arch::SM_90, 5 * GIB, Some(6 * GIB)).ok_or("9 GiB ran in 5")?;
        if why.contains("REDUCTION_DEVICE_MEMORY") {
            return Err(format!("reason: {why}").into());
        }
        // Up to the last byte it runs; with no memory declared it always runs.
        for (need, budget) in [(9 * GIB, 9 * GIB), (0, 0), (1, 139 * GIB)] {
            if let Some(why) = not_on_this_gpu(&Needs::memory(need), Arch::SM_75, budget, None) {
                return Err(format!("{need} bytes in {budget}: ignored ({why})").into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("rules::declared_memory_is_held_so_two_large_trials_never_overlap", || {
        let ledger: &'static MemoryLedger = Box::leak(Box::new(MemoryLedger::new()));
        let first = ledger.take(6, 10);
        let (sender, receiver) = std::sync::mpsc::channel();
        let (started, has_started) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            started.send(()).ok();
            let _second = ledger.take(6, 10); // 6 + 6 > 10: waits for the first
            sender.send(ledger.held()).ok();
        });
        has_started.recv().map_err(|_| "the waiter did not start")?;
        std::thread::sleep(std::time::Duration::from_millis(200));
        if receiver.try_recv().is_ok() || ledger.held() != 6 {
            return Err(format!("the second 6 of 10 did not wait for the first ({} held)", ledger.held()).into());
        }
        let small = ledger.take(4, 10); // 6 + 4 fits beside the first
        drop(small);
        drop(first);
        let held = receiver.recv_timeout(std::time::Duration::from_secs(10)).map_err(|_| "the second never got its memory")?;
        waiter.join().map_err(|_| "the waiter panicked")?;
        // Alone, a need larger than the budget still gets through (the ignore rule keeps it out).
        let _alone = ledger.take(20, 10);
        if held != 6 || ledger.held() != 20 {
            return Err(format!("held {held} while the second ran, {} now", ledger.held()).into());
        }
        Ok(())
    }));
}

/// The integer bf16 rounding that kernels/14_accuracy.cu takes below sm_80, against the
/// instruction (cvt.rn.bf16.f32) on this GPU, for every one of the 2^32 f32 bit patterns.
fn bf16_trial(trials: &mut Vec<Trial>) {
    let kahan = kernels::find(kernels::names::REDUCE_KAHAN).expect("registered");
    trials.push(kernel_trial(kahan, "portable::bf16_rounding_is_the_instructions_on_every_f32", move |gpu| {
        use cudarc::driver::{LaunchConfig, PushKernelArg};
        if gpu.info().architecture() < reduction::arch::Arch::SM_80 {
            eprintln!("{}: below sm_80 both paths are the integer one; nothing to compare", gpu.info().arch());
            return Ok(());
        }
        let function = gpu.function(kahan, kernels::entries::BF16_ROUNDING_MISMATCHES)?;
        let mut counts = gpu.stream().alloc_zeros::<u64>(2)?;
        let mut first_wrong = gpu.stream().clone_htod(&[u32::MAX])?;
        let (first, n) = (0u64, 1u64 << 32);
        let mut launch = gpu.stream().launch_builder(&function);
        launch.arg(&first).arg(&n).arg(&mut counts).arg(&mut first_wrong);
        let config = LaunchConfig { grid_dim: (gpu.info().sm_count * 8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: bf16_rounding_mismatches(u64, u64, unsigned long long*, unsigned*): two
        // counters, zeroed, and one word set to the largest u32; no other memory is touched.
        unsafe { launch.launch(config) }?;
        let (counts, first_wrong) = (gpu.stream().clone_dtoh(&counts)?, gpu.stream().clone_dtoh(&first_wrong)?[0]);
        eprintln!("bf16 rounding on {}: {} numbers differ, {} NaNs keep another payload", gpu.info().arch(), counts[0], counts[1]);
        if counts[0] != 0 {
            let x = f32::from_bits(first_wrong);
            return Err(format!("{} of the 2^32 f32 values round differently; the first is {first_wrong:#010x} ({x:e})", counts[0]).into());
        }
        Ok(())
    }));
}

fn main() {
    let mut trials = vec![gpu_trial("device::info_is_plausible", |gpu| {
        let info = gpu.info();
        eprintln!("{info}");
        if info.sm_count == 0 || info.l2_cache_bytes == 0 || info.max_threads_per_block < 1024 {
            return Err(format!("implausible device attributes: {info:?}").into());
        }
        Ok(())
    })];
    correctness_trials::<i32>(&mut trials);
    correctness_trials::<f32>(&mut trials);
    correctness_trials::<f64>(&mut trials);
    correctness_trials::<half::f16>(&mut trials);
    correctness_trials::<half::bf16>(&mut trials);
    yardstick_trials::<i32>(&mut trials);
    yardstick_trials::<f32>(&mut trials);
    yardstick_trials::<f64>(&mut trials);
    yardstick_trials::<half::f16>(&mut trials);
    yardstick_trials::<half::bf16>(&mut trials);
    copy_trials(&mut trials);
    determinism_trials(&mut trials);
    error_trials(&mut trials);
    rule_trials(&mut trials);
    bf16_trial(&mut trials);
    common::run(trials)
}
