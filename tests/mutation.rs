//! Planted bugs (mutation tests): a check that has never caught a bug proves nothing. Each bug
//! of [`reduction::mutants`] (a dropped value, a value counted twice, a lost or unwritten
//! partial, a zero, an off-by-one in the tail, a row's tile left out) is run on the GPU at every
//! size 2^k ± 1 up to 2^26 (rows: 2^k ± 1 values up to 2^24 + 1), on exact-by-construction
//! inputs of every element type its kernel takes, and must be caught every time, while the
//! unchanged kernel on the same input must pass. Without a GPU, the same bug classes are
//! planted in the CPU's sum (the checker against CPU-side mutants of the reference), and every
//! planted kernel is compiled with NVRTC.
//!
//! A planted bug can give the right sum by chance on one input (block 0's partial may be 0):
//! then a fresh input is drawn, up to three; a bug that survives three is reported as missed.
//! The score (caught / planted) is printed at the end; anything under 100% fails.

mod common;

use common::{gpu_trial, nvrtc_trial, trial_seed};
use half::{bf16, f16};
use libtest_mimic::{Arguments, Failed, Trial};
use reduction::check::CheckSum;
use reduction::data::{check_float, exact_parallel, Checked, F32_UNIT_ROUNDOFF, F64_UNIT_ROUNDOFF};
use reduction::mutants::{self, Mutant};
use reduction::rows::{RowLayout, RowReducer};
use reduction::{Dtype, Element, Gpu, Reducer};


/// 2^k ± 1 for k = 1 ..= max_log2, capped by MAX_TEST_N (runs under compute-sanitizer).
fn sizes(max_log2: u32) -> Vec<usize> {
    let cap = std::env::var("MAX_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    let mut out: Vec<usize> = (1..=max_log2).flat_map(|k| [(1usize << k) - 1, (1 << k) + 1]).filter(|&n| n <= cap).collect();
    out.sort_unstable();
    out.dedup();
    out
}
use common::planted::{plant, Score, DRAWS};

static GPU_SCORE: Score = Score::new();
static CPU_SCORE: Score = Score::new();

// ---------------------------------------------------------------------------------------------
// On the GPU.

fn whole_array_trial<T: Checked>(mutant: &'static Mutant) -> Trial {
    let name = format!("gpu::{}::{}::{}", mutant.kernel, mutant.name, T::SUFFIX);
    let what = name.clone();
    gpu_trial(name, move |gpu: &'static Gpu| {
        let block = 256;
        let mut unchanged = Reducer::<T>::new(gpu, mutant.kernel, block)?;
        let mut planted = Reducer::<T>::with_spec(gpu, mutant.spec()?, block)?;
        for n in sizes(26) {
            plant(&GPU_SCORE, &what, n, |draw| {
                let xs: Vec<T> = exact_parallel(n, trial_seed(&format!("{what}/{n}/{draw}")));
                let reference = T::exact_reference(&xs)?;
                let input = gpu.upload(&xs)?;
                let sum = |reducer: &mut Reducer<T>| -> Result<Result<(), String>, Failed> {
                    reducer.poison_outputs(n)?;
                    let got = reducer.sum(&input.as_view())?;
                    Ok(reducer.check(got, &reference))
                };
                Ok((sum(&mut unchanged)?, sum(&mut planted)?))
            })?;
        }
        Ok(())
    })
}

fn rows_trial(mutant: &'static Mutant) -> Trial {
    let strategy = mutant.strategy.expect("row bugs name their strategy");
    let name = format!("gpu::rows_{}::{}::f32", strategy.name(), mutant.name);
    let what = name.clone();
    gpu_trial(name, move |gpu: &'static Gpu| {
        let mut unchanged = RowReducer::with_strategy(gpu, Some(strategy))?;
        let mut planted = RowReducer::with_spec(gpu, mutant.spec()?, Some(strategy))?;
        for cols in sizes(24) {
            // Three rows of `cols` values, two ways: back to back (a row of 2^k ± 1 values starts
            // wherever the one before it ends), and each row on a 16-byte boundary, the stride a
            // whole number of packs (where the kernels may skip their per-row alignment walk).
            // The unchanged kernel must pass both; the bug must be caught in one of them.
            let layouts = [RowLayout::dense(3, cols), RowLayout::strided(3, cols, cols.next_multiple_of(8))];
            plant(&GPU_SCORE, &what, cols, |draw| {
                let (mut control, mut caught) = (Ok(()), Ok(()));
                for (l, layout) in layouts.into_iter().enumerate() {
                    let len = layout.required_len()?;
                    let xs: Vec<f32> = exact_parallel(len, trial_seed(&format!("{what}/{cols}/{l}/{draw}")));
                    let references = reduction::check::rows::exact_row_references(&xs, layout)?;
                    let input = gpu.upload(&xs)?;
                    let sum = |reducer: &mut RowReducer| -> Result<Result<(), String>, Failed> {
                        let launch = reducer.plan(layout)?.expect("rows of values are launched");
                        let mut out = gpu.alloc::<f32>(layout.rows)?;
                        gpu.fill(&mut out, f32::POISON)?;
                        reducer.enqueue(&input.as_view(), layout, &mut out.as_view_mut())?;
                        let got = gpu.download(&out)?;
                        gpu.synchronize()?;
                        Ok(reduction::check::rows::check_rows(&got, &references, launch.addition_depth(cols)).map_err(|why| format!("{layout}: {why}")))
                    };
                    control = control.and(sum(&mut unchanged)?);
                    caught = caught.and(sum(&mut planted)?);
                }
                Ok((control, caught))
            })?;
        }
        Ok(())
    })
}

fn gpu_trials(trials: &mut Vec<Trial>) {
    for mutant in mutants::WHOLE_ARRAY {
        let kernel = mutant.original().expect("planted in a registered kernel");
        for dtype in kernel.dtypes.iter().filter(|d| mutant.applies_to(**d)) {
            trials.push(reduction::with_dtype!(*dtype, T => whole_array_trial::<T>(mutant)));
        }
    }
    for mutant in mutants::ROWS {
        trials.push(rows_trial(mutant));
    }
}

// ---------------------------------------------------------------------------------------------
// Without a GPU: every planted kernel compiles, and the checker catches the same bug classes
// planted in the CPU's sum.

fn compile_trials(trials: &mut Vec<Trial>) {
    for mutant in mutants::all() {
        trials.push(nvrtc_trial(format!("compile::planted::{}", mutant.name), move || {
            let spec = mutant.spec()?;
            let compiled = reduction::nvrtc::compile_cubin(spec.file, &spec.full_source(), "sm_90", &spec.compile_options()?)?;
            if !compiled.cubin.starts_with(b"\x7fELF") {
                return Err(format!("{}: not an ELF CUBIN", spec.file).into());
            }
            // Planted in code the build leaves out (an #ifdef's other branch), it could not be caught.
            let original = mutant.original()?;
            let unplanted = reduction::nvrtc::compile_cubin(spec.file, &original.full_source(), "sm_90", &original.compile_options()?)?;
            if unplanted.cubin == compiled.cubin {
                return Err(format!("{}: the planted bug changes no machine code at sm_90", spec.file).into());
            }
            Ok(())
        }));
    }
}

/// A bug class and the CPU's sum with that bug, in f64 (exact for these inputs).
type CpuBug = (&'static str, fn(&[f64]) -> f64);

/// The bug classes of the catalogue, planted in a sequential sum of the values (as f64).
const CPU_BUGS: &[CpuBug] = &[
    ("skip_last_element", |x| x[..x.len() - 1].iter().sum()),
    ("tail_off_by_one", |x| {
        // The tail after the last whole 16-byte pack of f32 loses its last value.
        let tail = x.len() % 4;
        x.iter().sum::<f64>() - if tail > 0 { x[x.len() - 1] } else { 0.0 }
    }),
    ("count_one_twice", |x| x.iter().sum::<f64>() + x[0]),
    ("return_zero", |_| 0.0),
    ("skip_block_partial", |x| x[x.len().min(1024)..].iter().sum()),
    ("partial_unwritten", |x| x[x.len().min(1024)..].iter().sum::<f64>() + f64::NAN),
    ("row_tile_left_out", |x| x[x.len().min(4096)..].iter().sum()),
];

/// The checker is the same code for every float type (only the unit roundoff differs), so f32 and
/// i32 go to 2^26 and the other types to 2^22, which keeps this under a minute without a GPU.
fn cpu_trial<T: Checked>(max_log2: u32) -> Trial {
    let name = format!("cpu::planted_in_the_reference::{}", T::SUFFIX);
    let what = name.clone();
    Trial::test(name, move || {
        let u = if T::DTYPE == Dtype::F64 { F64_UNIT_ROUNDOFF } else { F32_UNIT_ROUNDOFF };
        for n in sizes(max_log2) {
            // One input per size and draw, shared by every bug (generating it is the cost here).
            let mut inputs: Vec<Option<(Vec<f64>, reduction::data::Reference)>> = vec![None; DRAWS];
            for (bug, planted_sum) in CPU_BUGS {
                plant(&CPU_SCORE, &format!("{what}::{bug}"), n, |draw| {
                    let (values, reference) = match &inputs[draw] {
                        Some(made) => made,
                        None => {
                            let xs: Vec<T> = exact_parallel(n, 0x5eed ^ ((n as u64) << 8) ^ draw as u64);
                            let reference = T::exact_reference(&xs)?;
                            inputs[draw] = Some((xs.iter().map(|x| x.to_f64()).collect(), reference));
                            inputs[draw].as_ref().unwrap()
                        }
                    };
                    // Integers: these f64 sums are exact, so any order of additions gives them.
                    let sequential: f64 = values.iter().sum();
                    let depth = n as u64;
                    Ok((check_float(sequential, reference, u, depth), check_float(planted_sum(values), reference, u, depth)))
                })?;
            }
        }
        Ok(())
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    gpu_trials(&mut trials);
    compile_trials(&mut trials);
    trials.push(cpu_trial::<f32>(26));
    trials.push(cpu_trial::<i32>(26));
    trials.push(cpu_trial::<f64>(22));
    trials.push(cpu_trial::<f16>(22));
    trials.push(cpu_trial::<bf16>(22));
    if let Err(why) = common::gpu() {
        if !common::gpu_required() {
            eprintln!("note: tests that need a GPU are ignored here: {why} (REQUIRE_GPU=1 makes them fail instead)");
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    for line in [GPU_SCORE.line("GPU kernels"), CPU_SCORE.line("CPU reference")].into_iter().flatten() {
        println!("{line}");
    }
    conclusion.exit()
}
