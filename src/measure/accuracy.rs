//! How wrong does a float sum get? The accuracy experiment: the same positive random inputs
//! summed by the CPU's loop, a pairwise loop, the book's tree and cascaded kernels, a
//! compensated kernel and an f64 accumulator, and half-precision inputs summed in f32 and in
//! their own type — each against an exact reference, as N grows. The results file is
//! [`crate::records::accuracy`]; the chapter's table and chart are drawn from it by the book.

use crate::data::compensated_sum;
use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels;
use crate::records::accuracy::{Conditioned, Measurement};
use crate::element::Dtype;
use crate::{Element, Reducer};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use half::{bf16, f16};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use crate::kernels::names;

/// Uniform in [0, 1): positive, so that the relative error of the sum is the error of the
/// additions and not of cancellation. Generated on every core, reproducibly.
pub fn positive_f32(n: usize, seed: u64) -> Vec<f32> {
    const CHUNK: usize = 1 << 22;
    let mut out = vec![0.0f32; n];
    std::thread::scope(|scope| {
        for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
                chunk.iter_mut().for_each(|x| *x = rng.gen_range(0.0f32..1.0));
            });
        }
    });
    out
}

/// The exact sum (to about one f64 rounding), computed on every core: compensated sums of
/// chunks, then a compensated sum of those.
pub fn exact_sum(xs: &[f64]) -> f64 {
    let parts: Vec<(f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = xs.chunks(1 << 22).map(|c| scope.spawn(move || compensated_sum(c))).collect();
        handles.into_iter().map(|h| h.join().expect("reference thread")).collect()
    });
    let sums: Vec<f64> = parts.iter().map(|p| p.0).collect();
    compensated_sum(&sums).0
}

/// The CPU loop a first implementation writes.
pub fn sequential(xs: &[f32]) -> f32 {
    xs.iter().fold(0.0f32, |s, &x| s + x)
}

/// Pairwise summation: split in halves down to 8 values, add those in a loop. Its error grows
/// like log n instead of n.
pub fn pairwise(xs: &[f32]) -> f32 {
    if xs.len() <= 8 {
        return sequential(xs);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    pairwise(left) + pairwise(right)
}

/// Sum `xs` (already on the GPU as `input`) with a kernel that writes one partial sum per block
/// in `Partial`, and add the partial sums on the host with `combine` (in the same type).
fn per_block_then_host<In: Element, Partial: Element>(
    gpu: &Gpu, entry: &str, input: &cudarc::driver::CudaSlice<In>, combine: impl Fn(&[Partial]) -> f64,
) -> Result<f64> {
    let n = input.len();
    let blocks = n.div_ceil(256).min(gpu.info().sm_count as usize * 8).max(1);
    let function = gpu.function(kernels::find(names::REDUCE_KAHAN)?, entry)?;
    let mut partials = gpu.alloc::<Partial>(blocks)?;
    gpu.fill(&mut partials, Partial::POISON)?;
    let n64 = n as u64;
    let stream = gpu.stream();
    let mut launch = stream.launch_builder(&function);
    launch.arg(input).arg(&mut partials).arg(&n64);
    let config = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: the entry takes (const In*, Partial*, u64); `input` holds n values and
    // `partials` one per block; its shared memory is static.
    unsafe { launch.launch(config) }.during(&format!("launching {entry}"))?;
    Ok(combine(&gpu.download(&partials)?))
}

/// The sum of a device buffer by a registered kernel at its preferred block size, outputs
/// poisoned first.
fn sum_with<T: Element>(gpu: &Gpu, kernel: &str, input: &cudarc::driver::CudaSlice<T>) -> Result<f64> {
    let n = input.len();
    let mut reducer = Reducer::<T>::new(gpu, kernel, kernels::find(kernel)?.preferred_block(n))?;
    reducer.poison_outputs(n)?;
    Ok(reducer.sum(&input.as_view())?.to_f64())
}

/// `xs` rounded to a half type: (its exact sum, kernel 9's sum in f32, the sum kept in the half
/// type by `entry`, whose per-block partial sums are added on the host with the same rounding).
fn half_precision<H: Element>(gpu: &Gpu, xs: &[f32], to_half: fn(f32) -> H, entry: &str) -> Result<(f64, f64, f64)> {
    let halves: Vec<H> = xs.iter().map(|&x| to_half(x)).collect();
    let exact = exact_sum(&halves.iter().map(|x| x.to_f64()).collect::<Vec<_>>());
    let input = gpu.upload(&halves)?;
    let in_f32 = sum_with(gpu, names::REDUCE9, &input)?;
    let in_own = per_block_then_host::<H, f32>(gpu, entry, &input, |partials| {
        partials.iter().fold(0.0f64, |s, &x| to_half(s as f32 + x).to_f64())
    })?;
    Ok((exact, in_f32, in_own))
}

/// Every method on one input of n positive values.
pub fn measure_one(gpu: &Gpu, n: usize, seed: u64) -> Result<Vec<Measurement>> {
    let xs = positive_f32(n, seed);
    let wide: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    let exact = exact_sum(&wide);
    let mut out = Vec::new();
    let mut record = |method: &str, input: Dtype, result: f64, exact: f64| {
        out.push(Measurement { method: method.into(), input, n, seed, result, exact });
    };
    record("cpu_sequential", Dtype::F32, sequential(&xs) as f64, exact);
    record("cpu_pairwise", Dtype::F32, pairwise(&xs) as f64, exact);

    let input = gpu.upload(&xs)?;
    record("gpu_tree", Dtype::F32, sum_with(gpu, names::REDUCE3, &input)?, exact);
    record("gpu_cascaded", Dtype::F32, sum_with(gpu, names::REDUCE9, &input)?, exact);
    record("gpu_kahan", Dtype::F32, sum_with(gpu, names::REDUCE_KAHAN, &input)?, exact);
    for (method, kernel) in CHUNKED_METHODS {
        record(method, Dtype::F32, sum_with(gpu, kernel, &input)?, exact);
    }
    let f64_sum = per_block_then_host::<f32, f64>(gpu, kernels::entries::F64_ACCUMULATOR, &input, |p| p.iter().sum())?;
    record("gpu_f64_accumulator", Dtype::F32, f64_sum, exact);
    drop(input);

    // Half precision: the same values rounded to f16 and to bf16; the exact sum is that of the
    // rounded values.
    let (exact16, in_f32, in_own) = half_precision(gpu, &xs, f16::from_f32, kernels::entries::F16_ACCUMULATOR)?;
    record("gpu_f16_in_f32", Dtype::F16, in_f32, exact16);
    record("gpu_f16_in_f16", Dtype::F16, in_own, exact16);
    let (exact_b, in_f32, in_own) = half_precision(gpu, &xs, bf16::from_f32, kernels::entries::BF16_ACCUMULATOR)?;
    record("gpu_bf16_in_f32", Dtype::BF16, in_f32, exact_b);
    record("gpu_bf16_in_bf16", Dtype::BF16, in_own, exact_b);
    Ok(out)
}

/// Run the experiment at `sizes` with `seeds` inputs each, with a line of progress per size.
pub fn run(gpu: &Gpu, sizes: &[usize], seeds: u64) -> Result<Vec<Measurement>> {
    let mut rows = Vec::new();
    for &n in sizes {
        let started = std::time::Instant::now();
        for seed in 0..seeds {
            rows.extend(measure_one(gpu, n, seed + 1)?);
        }
        eprintln!("accuracy: n = 2^{:<2} done in {:.1} s", n.trailing_zeros(), started.elapsed().as_secs_f64());
    }
    if rows.is_empty() {
        return Err(Error::Io { path: "accuracy".into(), message: "no sizes to measure".into() });
    }
    Ok(rows)
}

/// The methods of kernel 15, and their kernels.
const CHUNKED_METHODS: [(&str, &str); 3] =
    [("gpu_reproducible", names::REDUCE15_REPRODUCIBLE), ("gpu_reproducible_neumaier", names::REDUCE15_NEUMAIER), ("gpu_reproducible_f64", names::REDUCE15_F64)];

// ANCHOR: conditioned
/// `n` f32 values whose sum has a condition number Σ|x| / |Σx| near `condition`: pairs +a, −a
/// (|a| in [1, 2)·2^k, k uniform in 0..=12) that cancel exactly, and n/8 small positive
/// residuals that make the sum, sized so that (2·Σ|a| + Σd) / Σd = condition; shuffled. At
/// condition 1 there are no pairs: every value is a positive residual.
pub fn conditioned_f32(n: usize, condition: f64, seed: u64) -> Vec<f32> {
    let mut rng = SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9).wrapping_add(condition.to_bits()));
    let residuals = if condition <= 1.0 { n } else { (n / 8).max(1).min(n) };
    let pairs = (n - residuals) / 2;
    let mut xs: Vec<f32> = Vec::with_capacity(n);
    let mut pair_sum = 0.0f64; // Σ|a| over the pairs
    for _ in 0..pairs {
        let a = rng.gen_range(1.0f32..2.0) * (1u32 << rng.gen_range(0..=12)) as f32;
        let a = if rng.gen::<bool>() { a } else { -a };
        pair_sum += a.abs() as f64;
        xs.push(a);
        xs.push(-a);
    }
    let count = n - xs.len();
    // Σd = 2Σ|a| / (condition − 1); each residual is its share, times a factor in [0.5, 1.5).
    let share = if pairs == 0 { 1.0 } else { 2.0 * pair_sum / (condition - 1.0) / count as f64 };
    for _ in 0..count {
        xs.push((share * rng.gen_range(0.5..1.5)) as f32);
    }
    // Fisher–Yates: the pairs meet at random places in every order of addition.
    for i in (1..xs.len()).rev() {
        xs.swap(i, rng.gen_range(0..=i));
    }
    xs
}
// ANCHOR_END: conditioned

/// The methods of the conditioning sweep: the CPU's two, the book's tree and cascade, the
/// compensated kernel of chapter 14, and kernel 15's three.
pub const CONDITIONING_METHODS: &[(&str, Option<&str>)] = &[
    ("cpu_sequential", None),
    ("cpu_pairwise", None),
    ("gpu_tree", Some(names::REDUCE3)),
    ("gpu_cascaded", Some(names::REDUCE9)),
    ("gpu_kahan", Some(names::REDUCE_KAHAN)),
    ("gpu_reproducible", Some(names::REDUCE15_REPRODUCIBLE)),
    ("gpu_reproducible_neumaier", Some(names::REDUCE15_NEUMAIER)),
    ("gpu_reproducible_f64", Some(names::REDUCE15_F64)),
];

/// Every method on inputs of `n` values at each condition number 10^0 … 10^max_exponent,
/// `seeds` inputs each.
pub fn run_conditioning(gpu: &Gpu, n: usize, max_exponent: u32, seeds: u64) -> Result<Vec<Conditioned>> {
    let mut rows = Vec::new();
    for exponent in 0..=max_exponent {
        let target = 10f64.powi(exponent as i32);
        for seed in 1..=seeds {
            let xs = conditioned_f32(n, target, seed);
            let wide: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
            let exact = exact_sum(&wide);
            let abs_sum = exact_sum(&wide.iter().map(|x| x.abs()).collect::<Vec<_>>());
            let input = gpu.upload(&xs)?;
            for &(method, kernel) in CONDITIONING_METHODS {
                let result = match (method, kernel) {
                    ("cpu_sequential", _) => sequential(&xs) as f64,
                    ("cpu_pairwise", _) => pairwise(&xs) as f64,
                    (_, Some(kernel)) => sum_with(gpu, kernel, &input)?,
                    (other, None) => unreachable!("{other} has no kernel"),
                };
                rows.push(Conditioned { method: method.into(), n, target, seed, condition: abs_sum / exact.abs(), result, exact });
            }
        }
        eprintln!("accuracy: condition 1e{exponent} done");
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditioned_inputs_reach_their_condition_number() {
        for exponent in [0, 3, 6, 9, 12] {
            let target = 10f64.powi(exponent);
            let xs = conditioned_f32(1 << 16, target, 4);
            assert_eq!(xs.len(), 1 << 16);
            let wide: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
            let exact = exact_sum(&wide);
            let condition = wide.iter().map(|x| x.abs()).sum::<f64>() / exact.abs();
            assert!(condition / target < 1.1 && target / condition < 1.1, "target {target:e}, got {condition:e}");
        }
    }

    #[test]
    fn pairwise_beats_the_loop_on_many_positive_values() {
        let xs = positive_f32(1 << 22, 3);
        let exact = exact_sum(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>());
        let loop_error = (sequential(&xs) as f64 - exact).abs() / exact;
        let pair_error = (pairwise(&xs) as f64 - exact).abs() / exact;
        assert!(pair_error < loop_error / 10.0, "pairwise {pair_error:e}, loop {loop_error:e}");
        // Both within the bound for any order.
        assert!(loop_error <= (xs.len() - 1) as f64 * crate::data::F32_UNIT_ROUNDOFF);
    }

    #[test]
    fn positive_inputs_are_reproducible_and_in_range() {
        let a = positive_f32(5_000_000, 9);
        assert_eq!(a, positive_f32(5_000_000, 9));
        assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
    }
}
