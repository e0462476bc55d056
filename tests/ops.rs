//! The operators of chapter 16 (max, min, argmax, argmin, mean and variance, sum of squares, and
//! the sum as one more instance) on the GPU, and their planted bugs.
//!
//! - **Correctness**: every operator × input type × size where reductions break (1, 2^k ± 1, up
//!   to 2^24 + 3 and 2^26 + 1, views shifted off the 16-byte boundary), whole arrays and rows with
//!   every strategy (dense and strided, grids small enough to loop), on inputs with planted ties,
//!   NaN, ±∞, all-negative values, signed zeros and the answer at the first or the last element.
//!   max / min / argmax / argmin are checked exactly; the sums and the mean / variance within the
//!   bounds of `reduction::check::ops`. Outputs poisoned first. argmax past 2^31 values, where
//!   the GPU has the memory.
//! - **Planted bugs** (`reduction::check::ops_mutants`): each on its operators and types at every
//!   size 2^k ± 1 up to 2^26 (rows of 3 × 2^k ± 1 up to 2^24 + 1), beside the unchanged kernel on
//!   the same input, which must pass; the mutation score is printed at the end, and must be 100%.
//! - **Without a GPU**: every operator file and every planted kernel compiles with NVRTC (for
//!   sm_75 up), and the checks catch the same bug classes planted in a CPU implementation.

mod common;

use common::{gpu, gpu_required, nvrtc_trial, trial_seed};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use reduction::check::ops::{self as checks, Case, Expected, OpInput};
use reduction::check::ops_mutants::{self, OpMutant, Shows};
use reduction::element::{bf16, f16};
use reduction::kernels::ops::{owner_slice, row_depth, Depth, Op, OpReducer, Value, WholeLaunch};
use reduction::rows::{RowLayout, Strategy};
use reduction::{Dtype, Gpu};

/// A trial that takes longer than this is named on stderr with its time.
const SLOW_TRIAL_S: f64 = 2.0;

/// A GPU trial that may be skipped at run time with a reason (too little memory, an older
/// architecture): `Ok(Some(reason))` reports it ignored. Without a GPU: ignored with the reason,
/// or failed where `REQUIRE_GPU=1`.
fn gpu_trial(name: impl Into<String>, body: impl FnOnce(&'static Gpu) -> Result<Option<String>, Failed> + Send + 'static) -> Trial {
    let _ = gpu();
    let name = name.into();
    let label = name.clone();
    Trial::ignorable_test(name, move || match gpu() {
        Ok(gpu) => {
            let started = std::time::Instant::now();
            let outcome = body(gpu).map(|skipped| skipped.map_or(Completion::Completed, Completion::ignored_with));
            // Where the suite's time goes, for the GPU host's log (libtest-mimic times nothing).
            let took = started.elapsed().as_secs_f64();
            if took > SLOW_TRIAL_S {
                eprintln!("slow trial: {label} took {took:.1} s");
            }
            outcome
        }
        Err(why) if gpu_required() => Err(format!("REQUIRE_GPU=1 but {why}").into()),
        Err(_) => Ok(Completion::ignored_with("needs a CUDA GPU; the note above says why there is none")),
    })
}

/// Room for `bytes` of device memory, held until the guard is dropped, or why there is none: the
/// suite's rule (`common::hold_device_memory`: the memory the GPU had free when the tests began,
/// under `REDUCTION_DEVICE_MEMORY` if set), so that whether a trial runs does not depend on what
/// runs beside it, and two large trials never overlap past the GPU's memory.
fn device_room(gpu: &Gpu, what: &str, bytes: usize) -> Result<common::MemoryHeld<'static>, String> {
    common::hold_device_memory(gpu, bytes as u64).map_err(|why| format!("{what}: {why}"))
}

fn cap() -> usize {
    std::env::var("MAX_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX)
}

/// The sizes of the correctness trials: tiny, around warp, block and pack edges, and around
/// powers of two up to 2^24 (every fourth), 2^24 + 3 and 2^26 + 1; MAX_TEST_N caps them.
fn sizes() -> Vec<usize> {
    let mut sizes = vec![1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 127, 128, 129, 1000, 1023, 1024, 1025, 4097, (1 << 24) + 3, (1 << 26) + 1];
    for k in (12..=24).step_by(4) {
        sizes.extend([(1usize << k) - 1, (1 << k) + 1]);
    }
    sizes.retain(|&n| n <= cap());
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The cases a correctness trial of `op` on `n` values runs (fewer at the largest sizes).
fn cases(op: Op, dtype: Dtype, n: usize) -> Vec<Case> {
    if !matches!(op, Op::Max | Op::Min | Op::Argmax | Op::Argmin) {
        return vec![Case::Random];
    }
    let all = Case::all(dtype).to_vec();
    if n <= 1 << 20 {
        return all;
    }
    all.into_iter().filter(|c| matches!(c, Case::Random | Case::Ties | Case::Nan | Case::First | Case::Last)).collect()
}

/// The inputs of a correctness trial: the planted cases for the extremes; for the moments,
/// uniform values, normal values of mean 3 and sd 2, and of mean 1000 and sd 1.
fn trial_inputs<T: OpInput>(op: Op, n: usize, seed: u64) -> Vec<(String, Vec<T>)> {
    if matches!(op, Op::Max | Op::Min | Op::Argmax | Op::Argmin) {
        return cases(op, T::DTYPE, n).into_iter().map(|c| (c.name().to_string(), checks::input::<T>(op, c, n, seed ^ c as u64))).collect();
    }
    vec![
        ("uniform".to_string(), checks::input::<T>(op, Case::Random, n, seed)),
        ("normal(3, 2)".to_string(), checks::normal::<T>(n, 3.0, 2.0, seed ^ 1)),
        ("normal(1000, 1)".to_string(), checks::normal::<T>(n, 1000.0, 1.0, seed ^ 2)),
    ]
}

fn check_value(op: Op, got: Value, expected: Option<Expected>, depth: Depth) -> Result<(), String> {
    match expected {
        Some(e) => checks::check(op, got, &e, depth),
        None => Err("no reference for an empty input".into()),
    }
}

/// One whole-array trial: every input of [`trial_inputs`], shifted by `shift` values off the
/// buffer's start, checked with the launch's depth.
fn whole<T: OpInput>(gpu: &Gpu, op: Op, n: usize, shift: usize, seed: u64) -> Result<Option<String>, Failed> {
    let _room = match device_room(gpu, "the input", (n + shift) * std::mem::size_of::<T>() * 2) {
        Ok(room) => room,
        Err(why) => return Ok(Some(why)),
    };
    let mut reducer = OpReducer::new(gpu, op, T::DTYPE)?;
    for (name, xs) in trial_inputs::<T>(op, n + shift, seed) {
        let input = gpu.upload(&xs)?;
        let view = input.slice(shift..);
        let launch = reducer.plan_whole(n)?;
        let got = reducer.whole(&view)?;
        check_value(op, got, checks::reference_parallel(op, &xs[shift..]), launch.depth(n as u64, T::DTYPE))
            .map_err(|why| format!("{} on {n} {} values ({name}, shifted by {shift}), grid {} × {}: {why}", op, T::DTYPE, launch.grid, launch.block))?;
    }
    Ok(None)
}

/// One row trial: `rows` rows of `cols` values `stride` apart, each row its own planted input.
fn rows<T: OpInput>(gpu: &Gpu, op: Op, strategy: Option<Strategy>, shape: (usize, usize, usize), grid_limit: Option<u32>, seed: u64) -> Result<Option<String>, Failed> {
    let (m, cols, stride) = shape;
    let layout = RowLayout::strided(m, cols, stride);
    let _room = match device_room(gpu, "the matrix", m * stride * std::mem::size_of::<T>() * 2) {
        Ok(room) => room,
        Err(why) => return Ok(Some(why)),
    };
    let mut reducer = OpReducer::new(gpu, op, T::DTYPE)?;
    reducer.set_strategy(strategy);
    if let Some(limit) = grid_limit {
        reducer.limit_grid(limit);
    }
    let row_cases: Vec<(String, Vec<T>)> = if matches!(op, Op::Max | Op::Min | Op::Argmax | Op::Argmin) {
        cases(op, T::DTYPE, cols).into_iter().map(|c| (c.name().to_string(), checks::row_input::<T>(op, c, m, cols, stride, seed ^ c as u64))).collect()
    } else {
        vec![("normal(3, 2)".to_string(), checks::normal::<T>(m * stride, 3.0, 2.0, seed)), ("uniform".to_string(), checks::row_input::<T>(op, Case::Random, m, cols, stride, seed ^ 7))]
    };
    for (name, xs) in row_cases {
        let input = gpu.upload(&xs)?;
        let launch = reducer.plan_rows(layout)?.expect("rows of values are launched");
        let got = reducer.rows(&input.as_view(), layout)?;
        let depth = row_depth(&launch, cols as u64, T::DTYPE);
        for (r, g) in got.iter().enumerate() {
            let row = &xs[r * stride..r * stride + cols];
            check_value(op, *g, checks::reference(op, row), depth).map_err(|why| format!("{op} on {layout} of {} ({name}), {launch}: row {r}: {why}", T::DTYPE))?;
        }
    }
    Ok(None)
}

/// The operators with correctness trials: the chapter's, the sum, and the three walks of the
/// mean and variance that have a bound (the textbook formula has none: it is the broken one).
fn checked_ops() -> Vec<Op> {
    let mut ops = Op::CHAPTER.to_vec();
    ops.extend([Op::Sum, Op::WelfordDivide, Op::WelfordFastDivide, Op::WelfordPack]);
    ops
}

fn correctness_trials(trials: &mut Vec<Trial>) {
    for op in checked_ops() {
        for &dtype in op.dtypes() {
            for n in sizes() {
                let name = format!("whole::{op}::{dtype}::n={n}");
                let seed = trial_seed(&name);
                trials.push(gpu_trial(name, move |gpu| typed_whole(gpu, dtype, op, n, 0, seed)));
            }
            for n in [1usize, 2, 3, 5, 7, 9, 1000, (1 << 20) + 7] {
                for shift in 1..=3 {
                    let name = format!("whole::{op}::{dtype}::shifted_by_{shift}::n={n}");
                    let seed = trial_seed(&name);
                    trials.push(gpu_trial(name, move |gpu| typed_whole(gpu, dtype, op, n, shift, seed)));
                }
            }
            let shapes = [(3, 1, 1), (3, 7, 7), (5, 8, 8), (3, 255, 255), (3, 257, 257), (7, 1023, 1023), (3, 1025, 1028), (3, 4097, 4097),
                (2, 16385, 16385), (3, (1 << 17) + 1, (1 << 17) + 1), (2, (1 << 20) + 1, (1 << 20) + 1), (1000, 33, 35), (4096, 64, 64), (2, (1 << 24) + 1, (1 << 24) + 1)];
            for (m, cols, stride) in shapes {
                if m * stride > cap() {
                    continue;
                }
                for strategy in [None, Some(Strategy::Warp), Some(Strategy::Block), Some(Strategy::Split)] {
                    if strategy == Some(Strategy::Warp) && cols > 1 << 17 {
                        continue; // one team of lanes per 16M-value row: correct, and minutes slow
                    }
                    let label = strategy.map_or("auto", |s| s.name());
                    let name = format!("rows::{op}::{dtype}::{label}::{m}x{cols}/{stride}");
                    let seed = trial_seed(&name);
                    trials.push(gpu_trial(name, move |gpu| typed_rows(gpu, dtype, op, strategy, (m, cols, stride), None, seed)));
                }
            }
            // Grids smaller than the rows: every kernel's loop over rows runs.
            for strategy in Strategy::ALL {
                let name = format!("rows::{op}::{dtype}::{}::1000x33_on_3_blocks", strategy.name());
                let seed = trial_seed(&name);
                trials.push(gpu_trial(name, move |gpu| typed_rows(gpu, dtype, op, Some(strategy), (1000, 33, 33), Some(3), seed)));
            }
        }
    }
}

// The four input types the operators take, from a Dtype chosen at run time.
fn typed_whole(gpu: &Gpu, dtype: Dtype, op: Op, n: usize, shift: usize, seed: u64) -> Result<Option<String>, Failed> {
    match dtype {
        Dtype::F32 => whole::<f32>(gpu, op, n, shift, seed),
        Dtype::F16 => whole::<f16>(gpu, op, n, shift, seed),
        Dtype::BF16 => whole::<bf16>(gpu, op, n, shift, seed),
        Dtype::I32 => whole::<i32>(gpu, op, n, shift, seed),
        Dtype::F64 => Err("the operators take no f64".into()),
    }
}

fn typed_rows(gpu: &Gpu, dtype: Dtype, op: Op, strategy: Option<Strategy>, shape: (usize, usize, usize), limit: Option<u32>, seed: u64) -> Result<Option<String>, Failed> {
    match dtype {
        Dtype::F32 => rows::<f32>(gpu, op, strategy, shape, limit, seed),
        Dtype::F16 => rows::<f16>(gpu, op, strategy, shape, limit, seed),
        Dtype::BF16 => rows::<bf16>(gpu, op, strategy, shape, limit, seed),
        Dtype::I32 => rows::<i32>(gpu, op, strategy, shape, limit, seed),
        Dtype::F64 => Err("the operators take no f64".into()),
    }
}

/// argmax and argmin of more than 2^31 values, the answer past index 2^31 (where the GPU has the
/// memory: 4 GiB of f16 or bf16).
fn large_trials(trials: &mut Vec<Trial>) {
    for (op, dtype) in [(Op::Argmax, Dtype::F16), (Op::Argmin, Dtype::BF16), (Op::Max, Dtype::F16)] {
        let name = format!("large::{op}::{dtype}::n=2^31+2^20");
        trials.push(gpu_trial(name, move |gpu| {
            let n = (1usize << 31) + (1 << 20);
            let _room = match device_room(gpu, "2^31 + 2^20 half-precision values", n * 2 + (64 << 20)) {
                Ok(room) => room,
                Err(why) => return Ok(Some(why)),
            };
            past_int32(gpu, dtype, op, n)
        }));
    }
}

/// Every value 0.5 (−0.5 for argmin) but the answer, planted at 2^31 + 12345.
fn past_int32(gpu: &Gpu, dtype: Dtype, op: Op, n: usize) -> Result<Option<String>, Failed> {
    fn run<T: OpInput>(gpu: &Gpu, op: Op, n: usize) -> Result<Option<String>, Failed> {
        let sign = if op == Op::Argmin { -1.0 } else { 1.0 };
        let at = (1usize << 31) + 12345;
        let mut xs = vec![T::from_f64(0.5 * sign); n];
        xs[at] = T::from_f64(2.0 * sign);
        let input = gpu.upload(&xs)?;
        drop(xs);
        let got = OpReducer::new(gpu, op, T::DTYPE)?.whole(&input.as_view())?;
        let want = if op == Op::Max { Value::Number(2.0) } else { Value::Index(at as u64) };
        if got != want {
            return Err(format!("{op} of {n} {} values: {got:?}, should be {want:?}", T::DTYPE).into());
        }
        Ok(None)
    }
    match dtype {
        Dtype::F16 => run::<f16>(gpu, op, n),
        Dtype::BF16 => run::<bf16>(gpu, op, n),
        _ => Err("only the half-precision types are tried past 2^31".into()),
    }
}

/// The same input gives the same bits, run after run: the last block combines in a fixed order.
fn determinism_trials(trials: &mut Vec<Trial>) {
    for op in [Op::Argmax, Op::MeanVar, Op::Sumsq, Op::Sum] {
        let name = format!("determinism::{op}::f32_20_runs");
        let seed = trial_seed(&name);
        trials.push(gpu_trial(name, move |gpu| {
            let n = (1 << 24) + 3;
            let xs: Vec<f32> = checks::normal(n, 3.0, 2.0, seed);
            let input = gpu.upload(&xs)?;
            let mut reducer = OpReducer::new(gpu, op, Dtype::F32)?;
            let first = reducer.whole(&input.as_view())?;
            for run in 1..20 {
                let again = reducer.whole(&input.as_view())?;
                if format!("{again:?}") != format!("{first:?}") {
                    return Err(format!("run {run} gave {again:?}, run 0 gave {first:?}").into());
                }
            }
            Ok(None)
        }));
    }
}

/// The entry points (reduction::reduce and reduce_rows) against the reducers they stand for: the
/// max and argmax of fresh random values as the host's reference finds them, the rows' mean and variance bit
/// for bit as an `OpReducer` of the same operator returns them.
fn entry_trials(trials: &mut Vec<Trial>) {
    for n in [1000, (1 << 20) + 3] {
        let name = format!("entry::reduce::max_and_argmax::n={n}");
        let seed = trial_seed(&name);
        trials.push(gpu_trial(name, move |gpu| {
            let host = reduction::data::random_f32(n, seed);
            let input = gpu.upload(&host)?;
            let (at, max) = checks::extreme(true, &host).ok_or("no values")?;
            match reduction::reduce(gpu, Op::Max, &input.as_view())? {
                Value::Number(got) if got == max => {}
                other => return Err(format!("max of {n} values: {other:?}, the host's {max}").into()),
            }
            match reduction::reduce(gpu, Op::Argmax, &input.as_view())? {
                Value::Index(i) if i == at => Ok(None),
                other => Err(format!("argmax of {n} values: {other:?}, the host's {at}").into()),
            }
        }));
    }
    trials.push(gpu_trial("entry::reduce_rows::mean_var::300x5000", |gpu| {
        let layout = RowLayout::dense(300, 5000);
        let input = gpu.upload(&reduction::data::random_f32(300 * 5000, trial_seed("entry::reduce_rows")))?;
        let got = reduction::reduce_rows(gpu, Op::MeanVar, &input.as_view(), layout)?;
        let expected = OpReducer::new(gpu, Op::MeanVar, Dtype::F32)?.rows(&input.as_view(), layout)?;
        match got.iter().zip(&expected).position(|(g, e)| g != e) {
            None if got.len() == 300 => Ok(None),
            None => Err(format!("{} results for 300 rows", got.len()).into()),
            Some(r) => Err(format!("row {r}: {:?} through the entry point, {:?} from the reducer", got[r], expected[r]).into()),
        }
    }));
}

fn error_trials(trials: &mut Vec<Trial>) {
    trials.push(gpu_trial("errors::an_operator_without_the_type_is_refused", |gpu| match OpReducer::new(gpu, Op::MeanVar, Dtype::I32) {
        Err(e @ reduction::Error::UnsupportedDtype { .. }) if e.to_string() == "mean_var takes f32, f16 or bf16 (asked for i32)" => Ok(None),
        other => Err(format!("expected a refusal of i32 for mean_var, got {:?}", other.err()).into()),
    }));
    trials.push(gpu_trial("errors::the_max_of_nothing_is_refused_and_the_sum_of_squares_of_nothing_is_zero", |gpu| {
        let empty = gpu.alloc::<f32>(0)?;
        match OpReducer::new(gpu, Op::Max, Dtype::F32)?.whole(&empty.as_view()) {
            Err(reduction::Error::InvalidLength { .. }) => {}
            other => return Err(format!("max of nothing: {other:?}").into()),
        }
        match OpReducer::new(gpu, Op::Sumsq, Dtype::F32)?.whole(&empty.as_view())? {
            Value::Number(0.0) => Ok(None),
            other => Err(format!("sum of squares of nothing: {other:?}").into()),
        }
    }));
    trials.push(gpu_trial("errors::an_input_of_another_type_is_refused", |gpu| {
        let xs = gpu.upload(&[1.0f32, 2.0])?;
        match OpReducer::new(gpu, Op::Max, Dtype::F16)?.whole(&xs.as_view()) {
            Err(reduction::Error::Config { .. }) => Ok(None),
            other => Err(format!("an f16 reducer took f32 values: {other:?}").into()),
        }
    }));
    trials.push(gpu_trial("errors::a_short_matrix_is_refused_before_any_launch", |gpu| {
        let xs = gpu.upload(&[1.0f32; 10])?;
        match OpReducer::new(gpu, Op::Argmax, Dtype::F32)?.rows(&xs.as_view(), RowLayout::dense(3, 4)) {
            Err(reduction::Error::InvalidLength { .. }) => Ok(None),
            other => Err(format!("3 × 4 from 10 values: {other:?}").into()),
        }
    }));
}

// ---------------------------------------------------------------------------------------------
// Planted bugs.

use common::planted::{plant, Score};

static GPU_SCORE: Score = Score::new();
static CPU_SCORE: Score = Score::new();

/// The inputs that show `mutant` on `n` values (whole, with the planted kernel's launch) or on
/// rows of `cols` values (`rows`, with its row launch).
fn bug_inputs<T: OpInput>(mutant: &OpMutant, op: Op, n: usize, whole: Option<WholeLaunch>, split: Option<&reduction::rows::Launch>, cols: usize, seed: u64) -> Vec<Vec<T>> {
    mutant.shows.iter().map(|shows| match *shows {
        Shows::Case(case) if whole.is_some() => checks::input::<T>(op, case, n, seed),
        Shows::Case(case) => checks::row_input::<T>(op, case, n / cols, cols, cols, seed),
        Shows::ShiftedFirstShare => {
            let mut xs: Vec<T> = checks::normal(n, 3.0, 2.0, seed);
            for (i, x) in xs.iter_mut().enumerate() {
                let first = match (whole, split) {
                    (Some(launch), _) => launch.owner_block(i as u64, n as u64, T::DTYPE) == 0,
                    (None, Some(launch)) => owner_slice(launch, (i % cols) as u64, cols as u64, T::DTYPE) == 0,
                    (None, None) => true,
                };
                if first {
                    *x = T::from_f64(x.to_f64() + 16.0);
                }
            }
            xs
        }
        Shows::PastInt32 => {
            let mut xs = vec![T::from_f64(0.5); n];
            xs[((1usize << 31) + 12345).min(n - 1)] = T::from_f64(2.0);
            xs
        }
        Shows::NanLast => {
            let mut xs = if whole.is_some() { checks::input::<T>(op, Case::Random, n, seed) } else { checks::row_input::<T>(op, Case::Random, n / cols, cols, cols, seed) };
            for end in (cols - 1..n).step_by(cols) {
                xs[end] = T::from_f64(f64::NAN);
            }
            xs
        }
    }).collect()
}

/// How many of `threads` threads get at least one of `n` values that begin `head` values before
/// a 16-byte boundary (span_reduce deals the values before the boundary one per thread, whole
/// packs of `per` round-robin, the values after the last pack one per thread: threads 0, 1, …).
fn valued_threads(n: u64, threads: u64, per: u64, head: u64) -> u64 {
    let head = head.min(n);
    let packs = (n - head) / per;
    let tail = n - head - packs * per;
    head.max(packs).max(tail).min(threads)
}

/// One group of states that are combined with one another: how many hold values, of how many;
/// whether block_reduce pads its last warp with the identity (a block of fewer than 32 warps);
/// whether a finish combines the identity with the group's first state (the last block of a
/// whole-array grid of two or more blocks, every split row).
#[derive(Clone, Copy, Debug)]
struct Group {
    valued: u64,
    threads: u64,
    padded: bool,
    finish_from_identity: bool,
}

/// Whether `mutant`'s change can alter the answer of `op` in any of `groups`; if not, why.
fn reachable(mutant: &OpMutant, op: Op, groups: &[Group]) -> Result<(), String> {
    use reduction::check::ops_mutants::Reach;
    let acts = |g: &Group| match mutant.reach {
        Reach::Always => true,
        Reach::MergeIntoAnother => g.valued >= 2 || g.finish_from_identity,
        Reach::TwoStatesMeet => g.valued >= 2 || g.valued < g.threads || g.padded || g.finish_from_identity,
        Reach::EmptyState => matches!(op, Op::Max | Op::Min) || g.valued < g.threads || g.padded || g.finish_from_identity,
    };
    if groups.iter().any(acts) {
        return Ok(());
    }
    let g = groups[0];
    Err(format!("{:?}: {} of {} threads hold values, {}, no finish from the identity", mutant.reach, g.valued, g.threads, if g.padded { "padded" } else { "no padding" }))
}

/// The groups of a whole-array launch: one, the grid's threads (the input starts on a boundary).
fn whole_groups(launch: WholeLaunch, n: usize, dtype: Dtype) -> Vec<Group> {
    let threads = launch.grid as u64 * launch.block as u64;
    vec![Group { valued: valued_threads(n as u64, threads, 16 / dtype.size_bytes() as u64, 0), threads, padded: launch.block < 1024, finish_from_identity: launch.grid > 1 }]
}

/// The groups of a row launch over `rows` dense rows of `cols` values: each row's team of lanes
/// (warp), its block (block) or its slices (split, finished from the identity), each row
/// starting where its offset puts it against the 16-byte boundary.
fn row_groups(launch: &reduction::rows::Launch, rows: usize, cols: usize, dtype: Dtype) -> Vec<Group> {
    let size = dtype.size_bytes() as u64;
    let per = 16 / size;
    (0..rows as u64).map(|r| {
        let offset = r * cols as u64 * size;
        let head = ((16 - offset % 16) % 16) / size;
        match launch.strategy {
            Strategy::Split => Group { valued: 1, threads: launch.slices as u64 * launch.block as u64, padded: launch.block < 1024, finish_from_identity: true },
            // A team of lanes combines within the warp; a block through block_reduce.
            strategy => {
                let threads = launch.lanes as u64;
                Group { valued: valued_threads(cols as u64, threads, per, head), threads, padded: strategy == Strategy::Block && launch.block < 1024, finish_from_identity: false }
            }
        }
    }).collect()
}

/// Where the launch's model says (`why`) that the change cannot act at `place`: on every input of
/// `answers` (the unchanged kernel's answer and the planted one's) the bug must answer exactly as
/// the unchanged code; the size then counts apart in the score.
fn answers_alike<V: std::fmt::Debug>(place: &str, why: &str, answers: impl IntoIterator<Item = Result<(V, V), Failed>>) -> Result<(), Failed> {
    for answer in answers {
        let (good, bad) = answer?;
        if format!("{good:?}") != format!("{bad:?}") {
            return Err(format!("{place}: the launch's model says the change cannot act here ({why}), but the bug answered {bad:?} where the unchanged code answered {good:?}").into());
        }
    }
    GPU_SCORE.cannot_act();
    Ok(())
}

fn mutant_whole<T: OpInput>(gpu: &Gpu, mutant: &'static OpMutant, op: Op, what: &str) -> Result<Option<String>, Failed> {
    let mut unchanged = OpReducer::new(gpu, op, T::DTYPE)?;
    let mut planted = OpReducer::with_spec(gpu, op, T::DTYPE, mutant.spec()?)?;
    let sizes: Vec<usize> = if mutant.min_n > 1 << 30 {
        vec![mutant.min_n, (1 << 31) + (1 << 20)]
    } else {
        (1..=26).flat_map(|k| [(1usize << k) - 1, (1 << k) + 1]).filter(|&n| n >= mutant.min_n && n <= cap()).collect()
    };
    for n in sizes {
        let _room = match device_room(gpu, "the input", n * std::mem::size_of::<T>() + (64 << 20)) {
            Ok(room) => room,
            Err(why) => return Ok(Some(why)),
        };
        let launch = planted.plan_whole(n)?;
        if let Err(why) = reachable(mutant, op, &whole_groups(launch, n, T::DTYPE)) {
            let inputs = bug_inputs::<T>(mutant, op, n, Some(launch), None, n, trial_seed(&format!("{what}/{n}/idle")));
            answers_alike(&format!("{what} n = {n}"), &why, inputs.iter().map(|xs| {
                let input = gpu.upload(xs)?;
                Ok((unchanged.whole(&input.as_view())?, planted.whole(&input.as_view())?))
            }))?;
            continue;
        }
        plant(&GPU_SCORE, what, n, |draw| {
            let mut control = Ok(());
            let mut caught = Ok(());
            for xs in bug_inputs::<T>(mutant, op, n, Some(launch), None, n, trial_seed(&format!("{what}/{n}/{draw}"))) {
                let expected = checks::reference_parallel(op, &xs);
                let input = gpu.upload(&xs)?;
                drop(xs);
                let depth = unchanged.plan_whole(n)?.depth(n as u64, T::DTYPE);
                let good = unchanged.whole(&input.as_view())?;
                control = control.and(check_value(op, good, expected, depth));
                let bad = planted.whole(&input.as_view())?;
                if let Err(why) = check_value(op, bad, expected, launch.depth(n as u64, T::DTYPE)) {
                    caught = Err(why);
                }
            }
            Ok((control, caught))
        })?;
    }
    Ok(None)
}

fn mutant_rows<T: OpInput>(gpu: &Gpu, mutant: &'static OpMutant, op: Op, strategy: Strategy, what: &str) -> Result<Option<String>, Failed> {
    let mut unchanged = OpReducer::new(gpu, op, T::DTYPE)?;
    let mut planted = OpReducer::with_spec(gpu, op, T::DTYPE, mutant.spec()?)?;
    unchanged.set_strategy(Some(strategy));
    planted.set_strategy(Some(strategy));
    let rows = 3;
    for cols in (1..=24).flat_map(|k| [(1usize << k) - 1, (1 << k) + 1]).filter(|&c| c >= mutant.min_n.max(2) && rows * c <= cap()) {
        let layout = RowLayout::dense(rows, cols);
        let launch = planted.plan_rows(layout)?.expect("rows of values are launched");
        if let Err(why) = reachable(mutant, op, &row_groups(&launch, rows, cols, T::DTYPE)) {
            let inputs = bug_inputs::<T>(mutant, op, rows * cols, None, Some(&launch), cols, trial_seed(&format!("{what}/{cols}/idle")));
            answers_alike(&format!("{what} {rows} rows of {cols}"), &why, inputs.iter().map(|xs| {
                let input = gpu.upload(xs)?;
                Ok((unchanged.rows(&input.as_view(), layout)?, planted.rows(&input.as_view(), layout)?))
            }))?;
            continue;
        }
        plant(&GPU_SCORE, what, cols, |draw| {
            let mut control = Ok(());
            let mut caught = Ok(());
            for xs in bug_inputs::<T>(mutant, op, rows * cols, None, Some(&launch), cols, trial_seed(&format!("{what}/{cols}/{draw}"))) {
                let input = gpu.upload(&xs)?;
                let depth = row_depth(&launch, cols as u64, T::DTYPE);
                let good = unchanged.rows(&input.as_view(), layout)?;
                let bad = planted.rows(&input.as_view(), layout)?;
                for r in 0..rows {
                    let expected = checks::reference(op, &xs[r * cols..(r + 1) * cols]);
                    control = control.and(check_value(op, good[r], expected, depth).map_err(|w| format!("row {r}: {w}")));
                    if let Err(why) = check_value(op, bad[r], expected, depth) {
                        caught = Err(why);
                    }
                }
            }
            Ok((control, caught))
        })?;
    }
    Ok(None)
}

/// A mutant's trial: ignored with the reason where the GPU is older than the code it changes.
fn mutant_trial(name: String, mutant: &'static OpMutant, body: impl FnOnce(&'static Gpu) -> Result<Option<String>, Failed> + Send + 'static) -> Trial {
    gpu_trial(name, move |gpu| {
        let (major, minor) = gpu.info().compute_capability;
        let arch = (major * 10 + minor) as u32;
        if arch < mutant.min_arch {
            return Ok(Some(format!("{} changes code that runs from sm_{} on; this GPU is sm_{arch}", mutant.name, mutant.min_arch)));
        }
        body(gpu)
    })
}

fn mutant_trials(trials: &mut Vec<Trial>) {
    for mutant in ops_mutants::ALL {
        for &op in mutant.ops {
            for &dtype in mutant.dtypes {
                if mutant.whole() {
                    let name = format!("planted::{}::{op}::{dtype}::whole", mutant.name);
                    let what = name.clone();
                    trials.push(mutant_trial(name, mutant, move |gpu| match dtype {
                        Dtype::F32 => mutant_whole::<f32>(gpu, mutant, op, &what),
                        Dtype::F16 => mutant_whole::<f16>(gpu, mutant, op, &what),
                        Dtype::BF16 => mutant_whole::<bf16>(gpu, mutant, op, &what),
                        Dtype::I32 => mutant_whole::<i32>(gpu, mutant, op, &what),
                        Dtype::F64 => Err("no f64".into()),
                    }));
                }
                if let Some(strategy) = mutant.row_strategy() {
                    let name = format!("planted::{}::{op}::{dtype}::rows_{}", mutant.name, strategy.name());
                    let what = name.clone();
                    trials.push(mutant_trial(name, mutant, move |gpu| match dtype {
                        Dtype::F32 => mutant_rows::<f32>(gpu, mutant, op, strategy, &what),
                        Dtype::F16 => mutant_rows::<f16>(gpu, mutant, op, strategy, &what),
                        Dtype::BF16 => mutant_rows::<bf16>(gpu, mutant, op, strategy, &what),
                        Dtype::I32 => mutant_rows::<i32>(gpu, mutant, op, strategy, &what),
                        Dtype::F64 => Err("no f64".into()),
                    }));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Without a GPU.

/// The architecture the operator files must also compile for: sm_75 (T4, RTX 20xx), the oldest
/// CUDA 13 supports (tests/nvrtc.rs compiles every kernel file for sm_80 and sm_90).
const ARCHES: &[&str] = &["sm_75"];

fn compile_trials(trials: &mut Vec<Trial>) {
    for spec in [&reduction::kernels::EXTREMES, &reduction::kernels::MOMENTS, &reduction::kernels::MEAN_VAR_WALKS] {
        for arch in ARCHES {
            trials.push(nvrtc_trial(format!("compile::{arch}::{}", spec.file), move || {
                let compiled = reduction::nvrtc::compile_cubin(spec.file, &spec.full_source(), arch, &[])?;
                if !compiled.cubin.starts_with(b"\x7fELF") {
                    return Err(format!("{}: not an ELF CUBIN", spec.file).into());
                }
                if compiled.log.contains("warning") {
                    return Err(format!("{} compiles with warnings for {arch}:\n{}", spec.file, compiled.log).into());
                }
                Ok(())
            }));
        }
    }
    for mutant in ops_mutants::ALL {
        trials.push(nvrtc_trial(format!("compile::planted::{}", mutant.name), move || {
            let spec = mutant.spec()?;
            let compiled = reduction::nvrtc::compile_cubin(spec.file, &spec.full_source(), "sm_90", &[])?;
            if !compiled.cubin.starts_with(b"\x7fELF") {
                return Err(format!("{}: not an ELF CUBIN", spec.file).into());
            }
            // Planted in code the build leaves out (an #ifdef's other branch), it could not be caught.
            let unplanted = reduction::nvrtc::compile_cubin(spec.file, &mutant.original().full_source(), "sm_90", &[])?;
            if unplanted.cubin == compiled.cubin {
                return Err(format!("{}: the planted bug changes no machine code at sm_90", spec.file).into());
            }
            Ok(())
        }));
    }
}

/// The same bug classes planted in a CPU implementation of the operators: the checks must catch
/// each on the same kinds of input, at sizes 2^k ± 1 up to 2^22.
fn cpu_trials(trials: &mut Vec<Trial>) {
    // The launch model that decides where a planted change cannot act, on the launches where the
    // GPU showed it: a team of one lane per 3-value row never combines; a block of 32 warps whose
    // every thread holds values never meets an empty state (one of 512 threads pads its last warp
    // with the identity: caught there); one thread that holds all five values never merges.
    trials.push(Trial::test("cpu::where_a_planted_change_cannot_act", || {
        use reduction::rows::{plan_for, Limits, RowKernels};
        let mutant = |name: &str| ops_mutants::ALL.iter().find(|m| m.name == name).unwrap();
        let rows = |cols: usize, strategy| plan_for(RowKernels::Operators, RowLayout::dense(3, cols), Dtype::F32, Some(strategy), Limits::h200()).unwrap().unwrap();
        let ties = mutant("ties_to_highest_index");
        let (three, five) = (rows(3, Strategy::Warp), rows(5, Strategy::Warp));
        assert_eq!(three.lanes, 1);
        assert!(reachable(ties, Op::Argmax, &row_groups(&three, 3, 3, Dtype::F32)).is_err());
        assert!(reachable(ties, Op::Argmax, &row_groups(&five, 3, 5, Dtype::F32)).is_ok());
        let identity = mutant("identity_zero");
        for (cols, acts) in [(8193, false), (4097, true), (1025, true)] {
            let launch = rows(cols, Strategy::Block);
            assert_eq!(reachable(identity, Op::Argmin, &row_groups(&launch, 3, cols, Dtype::F32)).is_ok(), acts, "{cols}: {launch:?}");
            assert!(reachable(identity, Op::Max, &row_groups(&launch, 3, cols, Dtype::F32)).is_ok(), "a max starts from the identity");
        }
        let merge = mutant("count_dropped_in_merge");
        let whole = |n: usize| reduction::kernels::ops::plan_whole(n as u64, 256, 264);
        assert!(reachable(merge, Op::MeanVar, &whole_groups(whole(5), 5, Dtype::F32)).is_err());
        assert!(reachable(merge, Op::MeanVar, &whole_groups(whole(3), 3, Dtype::F32)).is_ok());
        assert!(reachable(merge, Op::MeanVar, &whole_groups(whole(1 << 20), 1 << 20, Dtype::F32)).is_ok());
        // A split row is finished from the identity: every change can act there.
        let split = rows(3, Strategy::Split);
        assert!(reachable(merge, Op::MeanVar, &row_groups(&split, 3, 3, Dtype::F32)).is_ok());
        Ok(())
    }));
    type Planted = fn(&[f32]) -> Value;
    let bugs: &[(&str, Op, Case, Planted)] = &[
        ("identity_zero", Op::Max, Case::AllNegative, |xs| Value::Number(xs.iter().fold(0.0f32, |a, &b| a.max(b)) as f64)),
        ("ties_to_highest_index", Op::Argmax, Case::Ties, |xs| {
            let m = xs.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            Value::Index(xs.iter().rposition(|&x| x == m).unwrap_or(0) as u64)
        }),
        ("nan_swallowed", Op::Max, Case::Nan, |xs| Value::Number(xs.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64)),
        ("block_state_left_out", Op::Max, Case::First, |xs| Value::Number(xs[1.min(xs.len() - 1)..].iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64)),
        ("count_dropped_in_merge", Op::MeanVar, Case::Random, |xs| {
            // Two halves merged with the first half's count.
            let (a, b) = xs.split_at(xs.len() / 2);
            let stats = |v: &[f32]| {
                let (m, var, _) = checks::two_pass(v);
                (v.len() as f64, m, var * v.len() as f64)
            };
            let ((na, ma, m2a), (nb, mb, m2b)) = (stats(a), stats(b));
            let n = na + nb;
            let d = mb - ma;
            let mean = ma + d * nb / n;
            let m2 = m2a + m2b + d * d * na * nb / n;
            Value::MeanVar { mean: mean as f32, var: (m2 / na) as f32 }
        }),
    ];
    for &(name, op, case, planted) in bugs {
        trials.push(Trial::test(format!("cpu::planted_in_a_cpu_{op}::{name}"), move || {
            for n in (1..=22).flat_map(|k| [(1usize << k) - 1, (1 << k) + 1]).filter(|&n| n >= 2) {
                let what = format!("cpu {name}");
                plant(&CPU_SCORE, &what, n, |draw| {
                    let xs: Vec<f32> = checks::input(op, case, n, 0x5eed ^ ((n as u64) << 8) ^ draw as u64);
                    let expected = checks::reference(op, &xs);
                    // The bound of the kernels' own launch at this size (an H200's grid).
                    let depth = WholeLaunch { grid: 264, block: 1024 }.depth(n as u64, Dtype::F32);
                    // The unchanged CPU implementation: the reference's own scan.
                    let good = match expected {
                        Some(Expected::Value(v)) => Value::Number(v),
                        Some(Expected::Index(i)) => Value::Index(i),
                        Some(Expected::MeanVar { mean, var, .. }) => Value::MeanVar { mean: mean as f32, var: var as f32 },
                        _ => return Err("no reference".into()),
                    };
                    Ok((check_value(op, good, expected, depth), check_value(op, planted(&xs), expected, depth)))
                })?;
            }
            Ok(())
        }));
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    // The planted bugs first: each is one long trial over many sizes, better begun early than
    // left as the run's tail while the short trials are done.
    mutant_trials(&mut trials);
    large_trials(&mut trials);
    correctness_trials(&mut trials);
    determinism_trials(&mut trials);
    error_trials(&mut trials);
    entry_trials(&mut trials);
    compile_trials(&mut trials);
    cpu_trials(&mut trials);
    if let Err(why) = gpu() {
        if !gpu_required() {
            eprintln!("note: tests that need a GPU are ignored here: {why} (REQUIRE_GPU=1 makes them fail instead)");
        }
    }
    let mut files: Vec<&'static reduction::kernels::KernelSpec> = vec![&reduction::kernels::EXTREMES, &reduction::kernels::MOMENTS, &reduction::kernels::MEAN_VAR_WALKS];
    files.extend(ops_mutants::ALL.iter().filter_map(|m| m.spec().ok()));
    common::preload_for_a_whole_run(&args, &files);
    let conclusion = libtest_mimic::run(&args, trials);
    for line in [GPU_SCORE.line("operator kernels on the GPU"), CPU_SCORE.line("a CPU implementation")].into_iter().flatten() {
        println!("{line}");
    }
    conclusion.exit()
}
