//! Inputs, references and checks for the operators of chapter 16 (`crate::kernels::ops`).
//!
//! - **max, min, argmax, argmin are checked exactly**, by torch's rules: NaN propagates (max and
//!   min are NaN if any value is; argmax and argmin answer the first NaN), and among equal values
//!   (−0 and +0 are equal) the lowest index wins. The inputs plant what breaks them: ties, NaN at a
//!   random position, ±∞, all-negative values, the answer at the first or the last element.
//! - **the sum and the sum of squares** against a compensated f64 sum, within the bound of the
//!   launch's depth ([`crate::data::error_bound`]).
//! - **the mean and the variance** against an f64 two-pass reference, within [`mean_var_bound`]:
//!   a first-order bound derived from the kernel's arithmetic (shifted sums per accumulator, then
//!   Chan's merges), in terms of the launch's depth and of the data's spread.

use crate::element::{bf16, f16, Dtype, Element};
use crate::kernels::ops::{Depth, Op, Output, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Unit roundoff of the kernels' arithmetic: every operator computes in f32.
pub const U: f64 = 1.0 / (1u64 << 24) as f64;

/// The element types the operators take, with the conversions the inputs need.
pub trait OpInput: Element {
    /// The nearest value of this type (saturating for i32; NaN stays NaN for the floats).
    fn from_f64(x: f64) -> Self;
}
impl OpInput for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}
impl OpInput for f16 {
    fn from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
}
impl OpInput for bf16 {
    fn from_f64(x: f64) -> Self {
        bf16::from_f64(x)
    }
}
impl OpInput for i32 {
    fn from_f64(x: f64) -> Self {
        x as i32
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs.

// ANCHOR: cases
/// What an input plants for the extremes. Generated for the max side; for min and argmin the
/// values are negated (so "all negative" becomes all positive, where a min from 0 is wrong).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Case {
    /// Uniform in [−1, 1) (small integers for i32).
    Random,
    /// Every value negative: a max that starts from 0 returns 0.
    AllNegative,
    /// The largest value at two to four random positions: only the lowest index is right.
    Ties,
    /// NaN (of either sign) at a random position and another after it: max is NaN, argmax the
    /// first NaN.
    Nan,
    /// +∞ and −∞ at random positions.
    Infinities,
    /// The largest value at the last element.
    Last,
    /// The largest value at the first element (block 0's, thread 0's first value).
    First,
    /// Every value ≤ 0, with −0 and +0 as the largest: −0 and +0 tie, the lowest index wins.
    SignedZeros,
    /// Every value the lowest there is: −∞ (i32::MIN for integers). argmax must still answer
    /// index 0, although every value ties the identity.
    AllLowest,
    /// NaN inside the first 16-byte pack (index 1), where the packed compares see it, and at a
    /// random position after it in the same pack.
    NanInFirstPack,
    /// i32::MAX and i32::MIN planted (integers only).
    IntegerLimits,
}
// ANCHOR_END: cases

impl Case {
    /// The cases an element type can hold.
    pub fn all(dtype: Dtype) -> &'static [Case] {
        if dtype == Dtype::I32 {
            &[Case::Random, Case::AllNegative, Case::Ties, Case::Last, Case::First, Case::AllLowest, Case::IntegerLimits]
        } else {
            &[Case::Random, Case::AllNegative, Case::Ties, Case::Nan, Case::Infinities, Case::Last, Case::First, Case::SignedZeros, Case::AllLowest, Case::NanInFirstPack]
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Case::Random => "random",
            Case::AllNegative => "all_negative",
            Case::Ties => "ties",
            Case::Nan => "nan",
            Case::Infinities => "infinities",
            Case::Last => "last",
            Case::First => "first",
            Case::SignedZeros => "signed_zeros",
            Case::AllLowest => "all_lowest",
            Case::NanInFirstPack => "nan_in_first_pack",
            Case::IntegerLimits => "integer_limits",
        }
    }
}

/// Values one generator thread draws: inputs of any size are drawn on every core, each chunk
/// from its own seed, so that an input depends only on (n, seed).
const CHUNK: usize = 1 << 20;

/// `n` values made by `draw` on every core, chunk `c` from the generator seeded by (seed, c).
fn fill_parallel<T: OpInput>(n: usize, seed: u64, draw: impl Fn(&mut SmallRng) -> T + Sync) -> Vec<T> {
    let mut out = vec![T::default(); n];
    if n <= CHUNK {
        // One chunk: drawn here, as a worker would draw it, without a thread to start.
        let mut rng = SmallRng::seed_from_u64(seed);
        out.iter_mut().for_each(|v| *v = draw(&mut rng));
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |w| w.get());
    let mut chunks: Vec<(usize, &mut [T])> = out.chunks_mut(CHUNK).enumerate().collect();
    let per_worker = chunks.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        for group in chunks.chunks_mut(per_worker) {
            let draw = &draw;
            scope.spawn(move || {
                for (c, chunk) in group.iter_mut() {
                    let mut rng = SmallRng::seed_from_u64(seed ^ (*c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    chunk.iter_mut().for_each(|v| *v = draw(&mut rng));
                }
            });
        }
    });
    out
}

/// `n` random values of the max side (uniform in [−1, 1), small integers for i32), in parallel.
fn base<T: OpInput>(n: usize, seed: u64, map: fn(f64, bool) -> f64) -> Vec<T> {
    let int = T::DTYPE == Dtype::I32;
    fill_parallel(n, seed, |rng| {
        let x = if int { rng.gen_range(-1000..1000) as f64 } else { rng.gen_range(-1.0f64..1.0) };
        T::from_f64(map(x, int))
    })
}

// ANCHOR: planting
/// An input of `n` values of type `T` for `op` with `case` planted: made for the max side, and
/// negated for min and argmin.
pub fn input<T: OpInput>(op: Op, case: Case, n: usize, seed: u64) -> Vec<T> {
    let negate = matches!(op, Op::Min | Op::Argmin);
    let int = T::DTYPE == Dtype::I32;
    let side = |x: f64| T::from_f64(if negate { -x } else { x });
    let map: fn(f64, bool) -> f64 = match (case, negate) {
        (Case::AllNegative, false) => |x, int| -x.abs() - if int { 1.0 } else { 0.5 },
        (Case::AllNegative, true) => |x, int| x.abs() + if int { 1.0 } else { 0.5 },
        (Case::SignedZeros, false) => |x, _| -x.abs() - 0.25,
        (Case::SignedZeros, true) => |x, _| x.abs() + 0.25,
        (Case::AllLowest, false) => |_, int| if int { i32::MIN as f64 } else { f64::NEG_INFINITY },
        (Case::AllLowest, true) => |_, int| if int { i32::MAX as f64 } else { f64::INFINITY },
        (_, false) => |x, _| x,
        (_, true) => |x, _| -x,
    };
    let mut x: Vec<T> = base(n, seed, map);
    if n == 0 {
        return x;
    }
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5EED_CA5E);
    let top = if int { 5000.0 } else { 4.0 };
    match case {
        Case::Random | Case::AllNegative | Case::AllLowest => {}
        Case::Ties => {
            for _ in 0..rng.gen_range(2..=4) {
                x[rng.gen_range(0..n)] = side(top);
            }
        }
        // NaN of either sign: a NaN with its sign bit set is a NaN too.
        Case::Nan => {
            let i = rng.gen_range(0..n);
            x[i] = side(if rng.gen() { f64::NAN } else { -f64::NAN });
            x[rng.gen_range(i..n)] = side(if rng.gen() { f64::NAN } else { -f64::NAN });
        }
        Case::NanInFirstPack => {
            // Both NaNs inside the first pack: one past it would reach a scalar compare instead.
            let i = 1.min(n - 1);
            let pack = (16 / std::mem::size_of::<T>()).min(n);
            x[i] = side(if rng.gen() { f64::NAN } else { -f64::NAN });
            x[rng.gen_range(i..pack.max(i + 1))] = side(f64::NAN);
        }
        Case::Infinities => {
            let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
            x[i] = side(f64::INFINITY);
            if j != i {
                x[j] = side(f64::NEG_INFINITY);
            }
        }
        Case::Last => x[n - 1] = side(top),
        Case::First => x[0] = side(top),
        Case::SignedZeros => {
            for k in 0..4 {
                x[rng.gen_range(0..n)] = side(if k % 2 == 0 { -0.0 } else { 0.0 });
            }
        }
        Case::IntegerLimits => {
            x[rng.gen_range(0..n)] = T::from_f64(i32::MAX as f64);
            x[rng.gen_range(0..n)] = T::from_f64(i32::MIN as f64);
        }
    }
    x
}
// ANCHOR_END: planting

/// A matrix of `rows` × `stride` values, each row an independent input of `cols` values with
/// `case` planted (the padding past `cols` random).
pub fn row_input<T: OpInput>(op: Op, case: Case, rows: usize, cols: usize, stride: usize, seed: u64) -> Vec<T> {
    let mut out = Vec::with_capacity(rows * stride);
    for r in 0..rows {
        out.extend(input::<T>(op, case, cols, seed ^ (r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        out.extend(input::<T>(op, Case::Random, stride - cols, seed ^ 0xDEAD ^ r as u64));
    }
    out
}

/// Normal values of mean `mean` and standard deviation `sd` (Box–Muller), as `T`, drawn in
/// parallel chunks as [`input`]'s are.
pub fn normal<T: OpInput>(n: usize, mean: f64, sd: f64, seed: u64) -> Vec<T> {
    fill_parallel(n, seed ^ 0xD1B5_4A32_D192_ED03, |rng| {
        let (u1, u2): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
        T::from_f64(mean + sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos())
    })
}

// ---------------------------------------------------------------------------------------------
// References.

/// What a correct result is, computed on the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expected {
    /// A max or min: exactly this number (NaN if the input holds one).
    Value(f64),
    /// An argmax or argmin: exactly this index.
    Index(u64),
    /// A sum (or a sum of squares): the compensated f64 sum of the terms, and of their magnitudes.
    Sum { value: f64, abs: f64 },
    /// The f64 two-pass mean and population variance, the largest |x − mean|, and the count.
    MeanVar { mean: f64, var: f64, max_dev: f64, n: u64 },
}

// ANCHOR: reference_extreme
/// torch's order for argmax (`MAX`) and argmin: NaN beats every number, and of two equal values
/// the first one seen (the lower index) stays. A scan in index order that replaces the best only
/// when strictly beaten.
fn beats(max: bool, a: f64, b: f64) -> bool {
    if a.is_nan() {
        !b.is_nan()
    } else if max {
        a > b
    } else {
        a < b
    }
}

/// The index and value of the extreme of `xs`, by that order.
pub fn extreme<T: Element>(max: bool, xs: &[T]) -> Option<(u64, f64)> {
    let mut best: Option<(u64, f64)> = None;
    for (i, x) in xs.iter().enumerate() {
        let v = x.to_f64();
        if best.is_none_or(|(_, b)| beats(max, v, b)) {
            best = Some((i as u64, v));
        }
    }
    best
}
// ANCHOR_END: reference_extreme

/// The f64 two-pass mean and population variance, and the largest |x − mean|.
pub fn two_pass<T: Element>(xs: &[T]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let (sum, _) = crate::data::compensated_sum(xs);
    let mean = sum / n;
    let (mut m2, mut carry, mut dev) = (0.0f64, 0.0f64, 0.0f64);
    for x in xs {
        let d = x.to_f64() - mean;
        let t = m2 + d * d;
        carry += (m2 - t) + d * d; // d² ≥ 0 and m2 ≥ 0, so m2 is never the smaller operand's error
        m2 = t;
        dev = dev.max(d.abs());
    }
    (mean, (m2 + carry) / n, dev)
}

/// The reference of `op` over `xs` (`None` for an empty input of an operator that needs a value).
pub fn reference<T: Element>(op: Op, xs: &[T]) -> Option<Expected> {
    match op {
        Op::Max | Op::Min => {
            let any_nan = xs.iter().any(|x| x.to_f64().is_nan());
            extreme(op == Op::Max, xs).map(|(_, v)| Expected::Value(if any_nan { f64::NAN } else { v }))
        }
        Op::Argmax | Op::Argmin => extreme(op == Op::Argmax, xs).map(|(i, _)| Expected::Index(i)),
        Op::Sum => {
            let (value, abs) = crate::data::compensated_sum(xs);
            Some(Expected::Sum { value, abs })
        }
        Op::Sumsq => {
            let squares: Vec<f64> = xs.iter().map(|x| x.to_f64() * x.to_f64()).collect();
            let (value, abs) = crate::data::compensated_sum(&squares);
            Some(Expected::Sum { value, abs })
        }
        _ => {
            if xs.is_empty() {
                return None;
            }
            let (mean, var, max_dev) = two_pass(xs);
            Some(Expected::MeanVar { mean, var, max_dev, n: xs.len() as u64 })
        }
    }
}

/// [`reference()`] computed on every core, chunk by chunk, the chunks combined by the same rules
/// (the extremes by torch's order, the lower index first; the sums added; the means and
/// variances by Chan's merge in f64): the benchmark checks inputs of 2^30 values with it.
pub fn reference_parallel<T: Element>(op: Op, xs: &[T]) -> Option<Expected> {
    const PART: usize = 1 << 22;
    if xs.len() <= PART {
        return reference(op, xs);
    }
    #[derive(Clone, Copy)]
    enum Part {
        Extreme(Option<(u64, f64)>, bool),
        Sum(f64, f64),
        Moments { n: f64, mean: f64, m2: f64, lo: f64, hi: f64 },
    }
    let part = |(c, chunk): (usize, &[T])| -> Part {
        match op {
            Op::Max | Op::Min | Op::Argmax | Op::Argmin => {
                let max = matches!(op, Op::Max | Op::Argmax);
                let any_nan = chunk.iter().any(|x| x.to_f64().is_nan());
                Part::Extreme(extreme(max, chunk).map(|(i, v)| (i + (c * PART) as u64, v)), any_nan)
            }
            Op::Sum | Op::Sumsq => match reference(op, chunk) {
                Some(Expected::Sum { value, abs }) => Part::Sum(value, abs),
                _ => Part::Sum(f64::NAN, f64::NAN),
            },
            _ => {
                let (mean, var, _) = two_pass(chunk);
                let (lo, hi) = chunk.iter().map(|x| x.to_f64()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
                Part::Moments { n: chunk.len() as f64, mean, m2: var * chunk.len() as f64, lo, hi }
            }
        }
    };
    let chunks: Vec<(usize, &[T])> = xs.chunks(PART).enumerate().collect();
    let workers = std::thread::available_parallelism().map_or(4, |w| w.get());
    let per = chunks.len().div_ceil(workers).max(1);
    let parts: Vec<Part> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks.chunks(per).map(|group| scope.spawn(move || group.iter().map(|&c| part(c)).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().expect("a reference worker panicked")).collect()
    });
    let max = matches!(op, Op::Max | Op::Argmax);
    let mut result = parts[0];
    for &p in &parts[1..] {
        result = match (result, p) {
            (Part::Extreme(a, na), Part::Extreme(b, nb)) => {
                let best = match (a, b) {
                    (Some(a), Some(b)) => Some(if beats(max, b.1, a.1) { b } else { a }), // ties: a, the lower index
                    (a, b) => a.or(b),
                };
                Part::Extreme(best, na || nb)
            }
            (Part::Sum(a, aa), Part::Sum(b, ab)) => Part::Sum(a + b, aa + ab),
            (Part::Moments { n: na, mean: ma, m2: qa, lo: la, hi: ha }, Part::Moments { n: nb, mean: mb, m2: qb, lo: lb, hi: hb }) => {
                let n = na + nb;
                let d = mb - ma;
                Part::Moments { n, mean: ma + d * nb / n, m2: qa + qb + d * d * na * nb / n, lo: la.min(lb), hi: ha.max(hb) }
            }
            _ => unreachable!("every part of one reference is of one kind"),
        };
    }
    match result {
        Part::Extreme(best, any_nan) => best.map(|(i, v)| match op {
            Op::Max | Op::Min => Expected::Value(if any_nan { f64::NAN } else { v }),
            _ => Expected::Index(i),
        }),
        Part::Sum(value, abs) => Some(Expected::Sum { value, abs }),
        Part::Moments { n, mean, m2, lo, hi } => Some(Expected::MeanVar { mean, var: m2 / n, max_dev: (mean - lo).abs().max((hi - mean).abs()), n: n as u64 }),
    }
}

// ---------------------------------------------------------------------------------------------
// Bounds and checks.

// ANCHOR: mean_var_bound
/// How far the kernels' mean and variance may be from the exact ones, for `n` values of mean
/// `mean`, population variance `var` and largest deviation `A = max |x − mean|`, computed with
/// `depth` (m values per accumulator one after another, then D merges), all in f32.
///
/// First order in u (Chan, Golub & LeVeque's style of analysis, here for shifted sums and then
/// Chan's merge), each rounding |δ| ≤ u. An accumulator folds m values around its pivot K (one of
/// its own values, so |x − K| ≤ 2A): s1 = Σ(x − K) is off by at most m·u·Σ|x − K|, s2 = Σ(x − K)²
/// by (m + 1)·u·Σ(x − K)², so its mean K + s1/m by 2(m + 2)·A·u and its M2 = s2 − s1²/m by
/// (3m + 3)·u·Σ(x − K)² ≤ (3m + 3)·u·m·4A². A merge rounds its mean at most three times
/// (|mean| ≤ √(σ² + μ²) + 2A, |δ| ≤ 2A) and its M2 five; the error in δ enters M2 as
/// 2|δ|·Δδ·n_a·n_b/n, whose sum over the tree is at most 2Δδ·√(M2·D·n/2) (Cauchy–Schwarz: the
/// δ² terms of all merges add up to at most M2). Summed over D levels and divided by n:
///
///   |mean − μ| ≤ u·E,   E = 2(m + 2)·2A + 3(D + 1)·(√(σ² + μ²) + 2A)
///   |var − σ²| ≤ u·V,   V = 12(m + 1)·A² + 6(D + 1)·σ² + √(2D)·σ·E
///
/// Both are doubled for the second-order terms left out. Returns (mean bound, variance bound).
pub fn mean_var_bound(depth: Depth, mean: f64, var: f64, max_dev: f64) -> (f64, f64) {
    let (m, d) = (depth.per_accumulator as f64, depth.merges as f64);
    let sd = var.max(0.0).sqrt();
    let e = 2.0 * (m + 2.0) * 2.0 * max_dev + 3.0 * (d + 1.0) * ((var + mean * mean).sqrt() + 2.0 * max_dev);
    let v = 12.0 * (m + 1.0) * max_dev * max_dev + 6.0 * (d + 1.0) * var + (2.0 * d).sqrt() * sd * e;
    (2.0 * U * e, 2.0 * U * v)
}
// ANCHOR_END: mean_var_bound

fn same_number(got: f64, want: f64) -> bool {
    got == want || (got.is_nan() && want.is_nan())
}

/// `Ok` if `got` is the result `expected` describes (exactly for the extremes, within the bound
/// of `depth` otherwise); `Err` says how it is not.
pub fn check(op: Op, got: Value, expected: &Expected, depth: Depth) -> Result<(), String> {
    match (got, expected) {
        (Value::Number(g), Expected::Value(w)) => {
            if same_number(g, *w) { Ok(()) } else { Err(format!("{op} is {g:e}, should be {w:e}")) }
        }
        (Value::Index(g), Expected::Index(w)) => {
            if g == *w { Ok(()) } else { Err(format!("{op} is index {g}, should be {w}")) }
        }
        (Value::Number(g), Expected::Sum { value, abs }) => {
            let extra = if op == Op::Sumsq { 1 } else { 0 }; // the square's own rounding
            let bound = crate::data::error_bound(depth.sum_depth() + extra, *abs, U);
            if (g - value).abs() <= bound { Ok(()) } else { Err(format!("{op} is {g:e}, should be {value:e} within {bound:.3e}")) }
        }
        (Value::MeanVar { mean, var }, Expected::MeanVar { mean: want_mean, var: want_var, max_dev, .. }) => {
            let (mb, vb) = mean_var_bound(depth, *want_mean, *want_var, *max_dev);
            let (em, ev) = ((mean as f64 - want_mean).abs(), (var as f64 - want_var).abs());
            if em <= mb && ev <= vb {
                Ok(())
            } else {
                Err(format!("mean {mean:e} (should be {want_mean:e} within {mb:.3e}), variance {var:e} (should be {want_var:e} within {vb:.3e})"))
            }
        }
        (got, expected) => Err(format!("{op} gave {got:?}, which is not the kind of result {expected:?} is")),
    }
}

/// The kind of result `op` gives, for messages.
pub fn output_name(op: Op) -> &'static str {
    match op.output() {
        Output::Value => "value",
        Output::Index => "index",
        Output::MeanVar => "mean and variance",
    }
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
