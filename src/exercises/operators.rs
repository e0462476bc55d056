//! The child's side of the operator exercises (chapter 16): the reader's file instantiates an
//! operator's entry points into the book's machinery (`kernels/operators.cuh`), and these are
//! launched by [`OpReducer`] on the hidden cases — whole arrays and rows, the planted inputs of
//! [`crate::check::ops`] (ties, NaN of either sign, ±∞, all-negative values, the answer first or
//! last) — and checked as `tests/ops.rs` checks the book's own operators: exactly for the
//! extremes, within the mean/variance bound for Welford.

use super::cases::{size_shape, SANITIZER_MAX_N, SIZES};
use super::catalogue::Exercise;
use super::report::{ChildReport, Failure, Speed};
use super::{CASE_DONE_LINE, CASE_LINE};
use crate::check::ops::{self as checks, Case, Expected, OpInput};
use crate::element::{bf16, f16, Dtype};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::ops::{row_depth, Op, OpReducer, Value};
use crate::kernels::KernelSpec;
use crate::child::say_ready;
use crate::rows::RowLayout;

/// One hidden case of an operator exercise.
#[derive(Clone, Debug)]
pub struct OpCase {
    pub number: usize,
    /// Values (of each row, for rows).
    pub n: usize,
    /// 0: a whole array; otherwise this many rows.
    pub rows: usize,
    pub dtype: Dtype,
    pub case: Case,
    pub shift: usize,
    pub seed: u64,
}

impl OpCase {
    /// `n = 1025 (2^10 + 1), f32, ties, view starting 1 element past a 16-byte boundary`.
    pub fn label(&self) -> String {
        let mut s = format!("n = {}{}, {}, {}", self.n, size_shape(self.n), self.dtype.name(), input_name(self.case));
        if self.rows > 0 {
            s += &format!(", {} rows of it", self.rows);
        }
        if self.shift > 0 {
            s += &format!(", view starting {} element{} past a 16-byte boundary", self.shift, if self.shift == 1 { "" } else { "s" });
        }
        s
    }
}

fn input_name(case: Case) -> &'static str {
    match case {
        Case::Random => "random values",
        Case::AllNegative => "every value negative",
        Case::Ties => "the largest value planted at several positions",
        Case::Nan => "NaN (of either sign) at random positions",
        Case::NanInFirstPack => "NaN in the first 16 bytes",
        Case::Infinities => "+inf and -inf planted",
        Case::Last => "the largest value last",
        Case::First => "the largest value first",
        Case::SignedZeros => "-0 and +0 as the largest",
        Case::AllLowest => "every value the lowest there is (-inf, or INT_MIN)",
        Case::IntegerLimits => "INT_MAX and INT_MIN planted",
    }
}

/// The cases, smallest first: for the extremes every planted input at the sizes up to 2^16 + 1
/// (a few past), for the mean and variance normal values; whole arrays, some through shifted
/// views, and 3-row matrices up to 4097 values a row.
pub fn cases(op: Op, dtypes: &[Dtype], quick: bool, seed: u64) -> Vec<OpCase> {
    let mut out = Vec::new();
    for (k, &n) in SIZES.iter().enumerate() {
        if quick && n > SANITIZER_MAX_N {
            break;
        }
        for &dtype in dtypes {
            let planted: Vec<Case> = match op {
                Op::Max | Op::Min | Op::Argmax | Op::Argmin => {
                    let all = Case::all(dtype).to_vec();
                    if n > 1 << 17 { all.into_iter().filter(|c| matches!(c, Case::Ties | Case::Nan | Case::First | Case::AllNegative)).collect() } else { all }
                }
                _ => vec![Case::Random],
            };
            for case in planted {
                let mut push = |rows: usize, shift: usize| {
                    let number = out.len() + 1;
                    out.push(OpCase { number, n, rows, dtype, case, shift, seed: seed.wrapping_add(number as u64 * 0x9e37_79b9) });
                };
                push(0, k % 4);
                if n <= 4097 {
                    push(3, 0);
                }
            }
        }
    }
    out
}

/// The case's values: the planted input for the extremes, normal values (mean 3, sd 2) for the
/// mean and variance; `shift` values before the view.
fn values<T: OpInput>(op: Op, c: &OpCase) -> Vec<T> {
    let len = c.shift + c.n * c.rows.max(1);
    match op {
        Op::Max | Op::Min | Op::Argmax | Op::Argmin if c.rows > 0 => {
            let mut xs = checks::input::<T>(op, Case::Random, c.shift, c.seed ^ 1);
            xs.extend(checks::row_input::<T>(op, c.case, c.rows, c.n, c.n, c.seed));
            xs
        }
        Op::Max | Op::Min | Op::Argmax | Op::Argmin => {
            let mut xs = checks::input::<T>(op, Case::Random, c.shift, c.seed ^ 1);
            xs.extend(checks::input::<T>(op, c.case, c.n, c.seed));
            xs
        }
        _ => checks::normal::<T>(len, 3.0, 2.0, c.seed),
    }
}

/// The reader's file as a registry entry of `op`'s file (its entry points, the header splice),
/// for [`OpReducer::with_spec`]. Leaked: one small source per process, alive as long as its
/// compiled module.
pub fn spec_for(op: Op, file: &str, text: &str) -> &'static KernelSpec {
    let file: &'static str = Box::leak(file.to_string().into_boxed_str());
    let source: &'static str = Box::leak(text.to_string().into_boxed_str());
    Box::leak(Box::new(KernelSpec { file, source, ..*op.spec() }))
}

#[allow(clippy::too_many_arguments)]
pub fn run(gpu: &Gpu, exercise: &Exercise, op: Op, dtypes: &[Dtype], spec: &'static KernelSpec, seed: u64, quick: bool, time: bool) -> Result<ChildReport> {
    let all = cases(op, dtypes, quick, seed);
    let total = all.len();
    for (passed, case) in all.iter().enumerate() {
        let label = format!("{} of {total} ({})", case.number, case.label());
        println!("{CASE_LINE} {label}");
        eprintln!("case {label}");
        let outcome = match case.dtype {
            Dtype::F32 => one_case::<f32>(gpu, op, spec, case),
            Dtype::F16 => one_case::<f16>(gpu, op, spec, case),
            Dtype::BF16 => one_case::<bf16>(gpu, op, spec, case),
            Dtype::I32 => one_case::<i32>(gpu, op, spec, case),
            Dtype::F64 => Err(crate::Error::Config { setting: "an operator exercise on f64".into(), reason: "the operators take no f64".into() }),
        };
        let failure = match outcome {
            Ok((None, seconds)) => {
                // For the checker to tell a kernel too slow from one that hung (exercises::pace).
                println!("{CASE_DONE_LINE} {} {seconds:.6}", case.n);
                continue;
            }
            Ok((Some(mut failure), _)) => {
                failure.case = label;
                failure
            }
            Err(e) => Failure { case: label, expected: None, got: None, error: Some(e.to_string()), diagnosis: None },
        };
        return Ok(ChildReport { cases_passed: passed, cases_total: total, failure: Some(failure), speed: None, skipped: Vec::new() });
    }
    let speed = if time { Some(speed(gpu, exercise, op, dtypes[0], spec, seed)?) } else { None };
    Ok(ChildReport { cases_passed: total, cases_total: total, failure: None, speed, skipped: Vec::new() })
}

/// `None` when every result of the case is right; and the seconds the kernels took (from the
/// ready line to their results, what the deadline times).
fn one_case<T: OpInput>(gpu: &Gpu, op: Op, spec: &'static KernelSpec, c: &OpCase) -> Result<(Option<Failure>, f64)> {
    let xs: Vec<T> = values(op, c);
    let device = gpu.upload(&xs)?;
    let mut reducer = OpReducer::with_spec(gpu, op, c.dtype, spec)?;
    let data = &xs[c.shift..];
    say_ready(); // the input is made and on the GPU: the deadline covers the kernels only
    let started = std::time::Instant::now();
    let (results, depth) = if c.rows == 0 {
        let launch = reducer.plan_whole(c.n)?;
        (vec![reducer.whole(&device.slice(c.shift..c.shift + c.n))?], launch.depth(c.n as u64, c.dtype))
    } else {
        let layout = RowLayout::dense(c.rows, c.n);
        let launch = reducer.plan_rows(layout)?.expect("rows of values are launched");
        (reducer.rows(&device.slice(c.shift..c.shift + c.rows * c.n), layout)?, row_depth(&launch, c.n as u64, c.dtype))
    };
    let seconds = started.elapsed().as_secs_f64();
    for (r, got) in results.iter().enumerate() {
        let row = if c.rows == 0 { data } else { &data[r * c.n..(r + 1) * c.n] };
        let Some(expected) = checks::reference(op, row) else { continue };
        if let Err(why) = checks::check(op, *got, &expected, depth) {
            let at = if c.rows > 0 { format!(" (row {r})") } else { String::new() };
            return Ok((Some(Failure {
                case: String::new(),
                expected: Some(format!("{}{at}", show_expected(&expected))),
                got: Some(show_got(*got)),
                error: None,
                diagnosis: Some(diagnose(op, row, *got, &expected).unwrap_or(why)),
            }), seconds));
        }
    }
    Ok((None, seconds))
}

fn show_expected(e: &Expected) -> String {
    match e {
        Expected::Value(v) => format!("{v:?}"),
        Expected::Index(i) => format!("index {i}"),
        Expected::Sum { value, .. } => format!("{value:?}"),
        Expected::MeanVar { mean, var, .. } => format!("mean {mean:.7}, variance {var:.7}"),
    }
}

fn show_got(v: Value) -> String {
    match v {
        Value::Number(x) if x.is_nan() => "NaN".into(),
        Value::Number(x) => format!("{x:?}"),
        Value::Index(u64::MAX) => "no index (2^64 - 1: the identity's, or the poison written before the launch)".into(),
        Value::Index(i) => format!("index {i}"),
        Value::MeanVar { mean, var } => format!("mean {mean:.7}, variance {var:.7}"),
    }
}

/// What a wrong result most likely means, from the input and the numbers.
fn diagnose<T: OpInput>(_op: Op, xs: &[T], got: Value, expected: &Expected) -> Option<String> {
    let value = |i: u64| xs.get(i as usize).map(|x| x.to_f64());
    match (got, expected) {
        (Value::Index(g), Expected::Index(w)) => {
            let (gv, wv) = (value(g)?, value(*w)?);
            if wv.is_nan() && !gv.is_nan() {
                Some("the input holds a NaN, and a NaN counts as larger than every number (torch's rule): the answer is the first NaN".into())
            } else if gv == wv || (gv.is_nan() && wv.is_nan()) {
                Some(format!("index {g} holds the same value as index {w}: a tie, and ties go to the lower index"))
            } else {
                None
            }
        }
        (Value::Number(g), Expected::Value(w)) => {
            if w.is_nan() {
                Some("the input holds a NaN, and a max is NaN if any value is (torch.amax): a NaN of either sign must win".into())
            } else if g == 0.0 && *w < 0.0 {
                Some("0 is larger than every value of this input: the identity (or a state with nothing in it) must be -inf, not 0".into())
            } else if *w < 0.0 && g < *w {
                Some("smaller than the answer, on negative values: the bits of a negative f16 grow as its value falls (sign and magnitude)".into())
            } else {
                None
            }
        }
        (Value::MeanVar { mean, var }, Expected::MeanVar { mean: wm, var: wv, .. }) => {
            if mean.is_nan() || var.is_nan() {
                Some("NaN: two empty states (count 0) merged divide 0 by 0; merge them into an empty state".into())
            } else if (var as f64) > 1.5 * wv {
                Some("the variance is too large: a merged state's count must be the sum of both counts".into())
            } else if (var as f64) < *wv && ((mean as f64) - wm).abs() <= 1e-3 * wv.sqrt() {
                Some("the mean is right and the variance too small: the spread between the two states' means (delta² · n_a · n_b / n) is missing from M2".into())
            } else if ((mean as f64) - wm).abs() > 1e-3 * wv.sqrt() {
                Some("the mean is off: each state's mean weighs as much as its count (mean_a + delta · n_b / n)".into())
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A solved operator exercise timed beside the book's own operator, on 2^26 f32 values (2^27 of
/// a half-precision type: the same 256 MiB).
fn speed(gpu: &Gpu, exercise: &Exercise, op: Op, dtype: Dtype, spec: &'static KernelSpec, seed: u64) -> Result<Speed> {
    let bytes = 1usize << 28;
    let n = bytes / dtype.size_bytes();
    let (yours_us, book_us) = match dtype {
        Dtype::F16 => time_pair::<f16>(gpu, op, spec, n, seed)?,
        Dtype::BF16 => time_pair::<bf16>(gpu, op, spec, n, seed)?,
        Dtype::I32 => time_pair::<i32>(gpu, op, spec, n, seed)?,
        _ => time_pair::<f32>(gpu, op, spec, n, seed)?,
    };
    Ok(Speed {
        n,
        yours_us,
        book_kernel: format!("{}_whole", op.name()),
        book_us,
        peak_gbps: gpu.info().peak_bandwidth_bytes_per_s().map(|b| b / 1e9),
        target: Some(format!("the book's {} ({})", op.entry(crate::kernels::ops::EntryShape::Whole, dtype), exercise.chapter)),
        dtype: dtype.name().into(),
        value_bytes: dtype.size_bytes(),
    })
}

fn time_pair<T: OpInput>(gpu: &Gpu, op: Op, spec: &'static KernelSpec, n: usize, seed: u64) -> Result<(f64, f64)> {
    let xs: Vec<T> = checks::input(op, Case::Random, n, seed);
    let device = gpu.upload(&xs)?;
    let mut yours = OpReducer::with_spec(gpu, op, T::DTYPE, spec)?;
    let mut book = OpReducer::new(gpu, op, T::DTYPE)?;
    let mut out = yours.poisoned_output(1)?;
    let yours_us = super::child::median_us(gpu, || yours.enqueue_whole(&device.as_view(), &mut out).map(|_| ()))?;
    let book_us = super::child::median_us(gpu, || book.enqueue_whole(&device.as_view(), &mut out).map(|_| ()))?;
    Ok((yours_us, book_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_cover_the_planted_inputs_rows_and_shifts() {
        let all = cases(Op::Argmax, &[Dtype::F32, Dtype::I32], false, 1);
        assert!(all.iter().any(|c| c.case == Case::Ties && c.rows > 0));
        assert!(all.iter().any(|c| c.case == Case::Nan && c.dtype == Dtype::F32));
        assert!(!all.iter().any(|c| c.case == Case::Nan && c.dtype == Dtype::I32), "integers have no NaN");
        assert!(all.iter().any(|c| c.shift > 0) && all.iter().any(|c| c.n == (1 << 24) + 3));
        assert!(all.iter().all(|c| c.label().contains("n = ")));
        assert!(cases(Op::MeanVar, &[Dtype::F16], true, 1).iter().all(|c| c.n <= SANITIZER_MAX_N));
        let numbers: Vec<usize> = all.iter().map(|c| c.number).collect();
        assert_eq!(numbers, (1..=all.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_tie_and_a_swallowed_nan_are_named() {
        let xs = [1.0f32, 5.0, 2.0, 5.0];
        let d = diagnose(Op::Argmax, &xs, Value::Index(3), &Expected::Index(1)).unwrap();
        assert!(d.contains("tie"), "{d}");
        let xs = [1.0f32, f32::NAN, 2.0];
        let d = diagnose(Op::Argmax, &xs, Value::Index(2), &Expected::Index(1)).unwrap();
        assert!(d.contains("NaN"), "{d}");
        let d = diagnose::<f32>(Op::Max, &[], Value::Number(0.0), &Expected::Value(-1.5)).unwrap();
        assert!(d.contains("-inf"), "{d}");
        let mv = Expected::MeanVar { mean: 3.0, var: 4.0, max_dev: 9.0, n: 100 };
        assert!(diagnose::<f32>(Op::MeanVar, &[], Value::MeanVar { mean: 3.0, var: 8.0 }, &mv).unwrap().contains("count"));
        assert!(diagnose::<f32>(Op::MeanVar, &[], Value::MeanVar { mean: f32::NAN, var: 4.0 }, &mv).unwrap().contains("0 by 0"));
    }
}
