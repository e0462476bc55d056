//! How wrong does a float sum get? The accuracy experiment: the same positive random inputs
//! summed by the CPU's loop, a pairwise loop, the book's tree and cascaded kernels, a
//! compensated kernel and an f64 accumulator, and half-precision inputs summed in f32 and in
//! their own type — each against an exact reference, as N grows.

use crate::data::compensated_sum;
use crate::error::{io_error, During, Error, Result};
use crate::gpu::Gpu;
use crate::kernels;
use crate::results::Machine;
use crate::{Element, Reducer};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use half::{bf16, f16};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One sum of one input by one method.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub method: String,
    /// The input's element type: `f32`, `f16` or `bf16`.
    pub input: String,
    pub n: usize,
    pub seed: u64,
    pub result: f64,
    pub exact: f64,
}

impl Measurement {
    /// |result − exact| / |exact|.
    pub fn relative_error(&self) -> f64 {
        (self.result - self.exact).abs() / self.exact.abs()
    }
}

/// The methods, in the order the chapter discusses them, with what each is.
pub const METHODS: &[(&str, &str)] = &[
    ("cpu_sequential", "CPU loop, f32: s += x, one after another"),
    ("cpu_pairwise", "CPU pairwise, f32: halves summed recursively"),
    ("gpu_tree", "GPU tree, f32 (kernel 3: one element per thread)"),
    ("gpu_cascaded", "GPU cascaded, f32 (kernel 9: 4 accumulators per thread, then the tree)"),
    ("gpu_kahan", "GPU compensated, f32 (Kahan-Neumaier per thread)"),
    ("gpu_f64_accumulator", "GPU, f32 inputs summed in f64"),
    ("gpu_f16_in_f32", "GPU, f16 inputs summed in f32 (kernel 9)"),
    ("gpu_f16_in_f16", "GPU, f16 inputs summed in f16"),
    ("gpu_bf16_in_f32", "GPU, bf16 inputs summed in f32 (kernel 9)"),
    ("gpu_bf16_in_bf16", "GPU, bf16 inputs summed in bf16"),
];

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
    let function = gpu.function(kernels::find("reduce_kahan")?, entry)?;
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
    let in_f32 = sum_with(gpu, "reduce9", &input)?;
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
    let mut record = |method: &str, input: &str, result: f64, exact: f64| {
        out.push(Measurement { method: method.into(), input: input.into(), n, seed, result, exact });
    };
    record("cpu_sequential", "f32", sequential(&xs) as f64, exact);
    record("cpu_pairwise", "f32", pairwise(&xs) as f64, exact);

    let input = gpu.upload(&xs)?;
    record("gpu_tree", "f32", sum_with(gpu, "reduce3", &input)?, exact);
    record("gpu_cascaded", "f32", sum_with(gpu, "reduce9", &input)?, exact);
    record("gpu_kahan", "f32", sum_with(gpu, "reduce_kahan", &input)?, exact);
    let f64_sum = per_block_then_host::<f32, f64>(gpu, "reduce_f64acc", &input, |p| p.iter().sum())?;
    record("gpu_f64_accumulator", "f32", f64_sum, exact);
    drop(input);

    // Half precision: the same values rounded to f16 and to bf16; the exact sum is that of the
    // rounded values.
    let (exact16, in_f32, in_own) = half_precision(gpu, &xs, f16::from_f32, "reduce_f16acc")?;
    record("gpu_f16_in_f32", "f16", in_f32, exact16);
    record("gpu_f16_in_f16", "f16", in_own, exact16);
    let (exact_b, in_f32, in_own) = half_precision(gpu, &xs, bf16::from_f32, "reduce_bf16acc")?;
    record("gpu_bf16_in_f32", "bf16", in_f32, exact_b);
    record("gpu_bf16_in_bf16", "bf16", in_own, exact_b);
    Ok(out)
}

const COLUMNS: &str = "method,input,n,seed,result,exact,relative_error";

pub fn write_csv(path: &Path, machine: &Machine, rows: &[Measurement]) -> Result<()> {
    let mut s = String::new();
    writeln!(s, "# gpu: {}\n# date: {}\n# command: {}", machine.gpu, machine.date, machine.command).unwrap();
    writeln!(s, "{COLUMNS}").unwrap();
    for r in rows {
        writeln!(s, "{},{},{},{},{:e},{:e},{:e}", r.method, r.input, r.n, r.seed, r.result, r.exact, r.relative_error()).unwrap();
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
    }
    std::fs::write(path, s).map_err(|e| io_error(path, e))
}

/// (GPU name, measurements) from a file written by [`write_csv`].
pub fn read_csv(path: &Path) -> Result<(String, Vec<Measurement>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    let gpu = text.lines().find_map(|l| l.strip_prefix("# gpu: ")).unwrap_or("unknown GPU").to_string();
    let mut rows = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.starts_with('#')).enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || io_error(path, format!("line {}: expected {COLUMNS}", i + 1));
        if f.len() != 7 {
            return Err(bad());
        }
        rows.push(Measurement {
            method: f[0].into(),
            input: f[1].into(),
            n: f[2].parse().map_err(|_| bad())?,
            seed: f[3].parse().map_err(|_| bad())?,
            result: f[4].parse().map_err(|_| bad())?,
            exact: f[5].parse().map_err(|_| bad())?,
        });
    }
    Ok((gpu, rows))
}

/// The median relative error of each method at each n (over the seeds), in method order.
pub fn medians(rows: &[Measurement]) -> Vec<(&'static str, &'static str, Vec<(usize, f64)>)> {
    METHODS
        .iter()
        .filter_map(|&(method, what)| {
            let mut sizes: Vec<usize> = rows.iter().filter(|r| r.method == method).map(|r| r.n).collect();
            sizes.sort_unstable();
            sizes.dedup();
            let points: Vec<(usize, f64)> = sizes
                .into_iter()
                .map(|n| {
                    let mut errors: Vec<f64> = rows.iter().filter(|r| r.method == method && r.n == n).map(|r| r.relative_error()).collect();
                    errors.sort_by(|a, b| a.total_cmp(b));
                    (n, errors[errors.len() / 2])
                })
                .collect();
            (!points.is_empty()).then_some((method, what, points))
        })
        .collect()
}

/// The chapter's table: each method's median relative error at 2^20 and 2^30 (or the largest
/// sizes measured), next to the two textbook bounds.
pub fn table(gpu: &str, rows: &[Measurement]) -> String {
    let medians = medians(rows);
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let shown: Vec<usize> = [1usize << 20, 1 << 30].into_iter().filter(|n| sizes.contains(n)).collect();
    let seeds = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let mut s = String::new();
    writeln!(s, "Median relative error over {seeds} inputs of uniform random values in [0, 1), measured on an {gpu}; an error of 0 means the sum was exact.\n").unwrap();
    let head: Vec<String> = shown.iter().map(|n| format!("n = 2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| method | {} |\n|---|{}", head.join(" | "), "--:|".repeat(shown.len())).unwrap();
    for (method, what, points) in &medians {
        let cells: Vec<String> = shown
            .iter()
            .map(|n| match points.iter().find(|(m, _)| m == n) {
                None => "–".into(),
                Some((_, e)) if e.is_infinite() => "∞ (the sum overflowed)".into(),
                Some((_, e)) => format!("{e:.1e}"),
            })
            .collect();
        writeln!(s, "| {what} (`{method}`) | {} |", cells.join(" | ")).unwrap();
    }
    let u = crate::data::F32_UNIT_ROUNDOFF;
    let bound = |f: &dyn Fn(f64) -> f64| shown.iter().map(|&n| format!("{:.1e}", f(n as f64))).collect::<Vec<_>>().join(" | ");
    writeln!(s, "| bound for any order of additions, (n − 1)·u (f32) | {} |", bound(&|n| (n - 1.0) * u)).unwrap();
    writeln!(s, "| bound for a balanced tree, ⌈log₂ n⌉·u (f32) | {} |", bound(&|n| n.log2().ceil() * u)).unwrap();
    s
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

/// The results file of the GPU the book shows, if the experiment has run on it.
pub fn book_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("accuracy").join(format!("{}.csv", crate::results::slug(gpu)))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn csv_round_trips_and_the_table_reads_it() {
        let rows = vec![
            Measurement { method: "cpu_sequential".into(), input: "f32".into(), n: 1 << 20, seed: 1, result: 524_300.0, exact: 524_288.0 },
            Measurement { method: "gpu_tree".into(), input: "f32".into(), n: 1 << 20, seed: 1, result: 524_288.0, exact: 524_288.0 },
        ];
        let path = std::env::temp_dir().join(format!("reduction-accuracy-{}.csv", std::process::id()));
        let machine = Machine { gpu: "Test GPU".into(), date: "2026-11-30".into(), command: "reduction accuracy".into(), ..Default::default() };
        write_csv(&path, &machine, &rows).unwrap();
        let (gpu, back) = read_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(gpu, "Test GPU");
        assert_eq!(back, rows);
        let t = table(&gpu, &back);
        assert!(t.contains("(`cpu_sequential`) | 2.3e-5 |"), "{t}");
        assert!(t.contains("(`gpu_tree`) | 0.0e0 |"), "{t}");
    }
}
