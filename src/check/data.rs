//! Inputs and references: fresh random data, exact or f64 reference sums, and the error bound
//! a float sum is checked against. Never zeros: an unwritten output or a skipped element would
//! pass unseen on zeros.
//!
//! Two kinds of float input, because a bound alone cannot catch a lost element at large n:
//! - **Exact by construction** ([`Checked::fill_exact`]): small nonzero integers with random
//!   signs, sized so that every partial sum any kernel forms is an integer the accumulator holds
//!   exactly. Every correct kernel must then return the exact sum, bit for bit, and a dropped,
//!   doubled or unwritten value shows however large n is.
//! - **Random reals** ([`Checked::fill_random`]): checked against an error bound derived from the
//!   launch ([`error_bound`]): the most additions any one value goes through, not n.

use crate::element::Element;
use half::{bf16, f16};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Uniform in [-1, 1): signs mixed, so that cancellation is exercised.
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut out = vec![0.0; n];
    f32::fill_random(&mut out, n, seed);
    out
}

/// The largest magnitude `random_i32` draws for `n` values: small enough that no partial sum
/// of `n` of them can overflow `i32`, so the GPU's wrapping adds are exact.
pub fn i32_bound(n: usize) -> i32 {
    (i32::MAX as usize / n.max(1)).clamp(1, 1000) as i32
}

/// Uniform in [-i32_bound(n), i32_bound(n)].
pub fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    let mut out = vec![0; n];
    i32::fill_random(&mut out, n, seed);
    out
}

/// The exact sum, in a type that cannot overflow.
pub fn exact_sum_i32(xs: &[i32]) -> i64 {
    xs.iter().map(|&x| x as i64).sum()
}

/// The sum in f64, and the sum of magnitudes (for the error bound).
pub fn sum_f64(xs: &[f32]) -> (f64, f64) {
    let (sum, abs) = compensated_sum(xs);
    (sum, abs)
}

/// Neumaier's compensated sum in f64 of any element type, and the sum of magnitudes: accurate
/// to about one f64 rounding of the result, whatever n is, so that it can check an f64 kernel.
pub fn compensated_sum<T: Element>(xs: &[T]) -> (f64, f64) {
    let (mut sum, mut carry, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for x in xs {
        let x = x.to_f64();
        let t = sum + x;
        carry += if sum.abs() >= x.abs() { (sum - t) + x } else { (x - t) + sum };
        sum = t;
        abs += x.abs();
    }
    (sum + carry, abs)
}

/// Unit roundoff of f32 and f64.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;
pub const F64_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 53) as f64;

// ANCHOR: bound
/// How far a float sum may be from the exact sum when no value goes through more than `depth`
/// roundings on its way to the result (the depth of the addition tree the launch builds):
/// `γ(depth)·Σ|x|` with `γ(d) = d·u / (1 − d·u)` (Higham, *Accuracy and Stability of Numerical
/// Algorithms*, 2nd ed., §4.2, eq. 4.6), plus a few f64 roundings of the compensated reference.
///
/// For a sequential loop `depth = n − 1`: the classic `(n − 1)·u·Σ|x|`, which says nothing once
/// `n·u ≥ 1` (n ≥ 2^24 in f32): it is then at least Σ|x|, and a sum of 0 passes. A launch's depth
/// is far smaller (about n / threads + the tree depths of its passes, see
/// [`crate::plan::addition_depth`]), which is what makes the bound useful for the GPU's sums.
/// Returns infinity where `depth·u ≥ 1`: no bound can be given.
pub fn error_bound(depth: u64, abs_sum: f64, u: f64) -> f64 {
    let du = depth as f64 * u;
    if du >= 1.0 {
        return f64::INFINITY;
    }
    (du / (1.0 - du) + 4.0 * F64_UNIT_ROUNDOFF) * abs_sum
}
// ANCHOR_END: bound

/// The bound for a sum of `n` values added in any order (a sequential loop: depth `n − 1`).
pub fn any_order_error_bound(n: usize, abs_sum: f64, u: f64) -> f64 {
    error_bound(n.saturating_sub(1) as u64, abs_sum, u)
}

// ANCHOR: exact_magnitude
/// The largest magnitude [`Checked::fill_exact`] draws for an input of `n` values whose sums are
/// kept in an accumulator with a `mantissa_bits`-bit significand (24 for f32, 53 for f64), with
/// `cap` the largest integer the input type itself holds comfortably.
///
/// Every partial sum of integers is exact while its magnitude stays ≤ 2^mantissa_bits. With
/// magnitudes ≤ M, a partial sum of k values is at most k·M ≤ n·M, so `M = 2^p / n` makes every
/// partial sum exact in any order. Past n = 2^p that would be M < 1: the values are then ±1 with
/// random signs, and a partial sum of k of them is a random walk. The subsets a launch adds are
/// fixed by the launch, not by the values, so by Hoeffding's inequality each leaves ±2^p with
/// probability at most 2·exp(−2^(2p) / (2k)); a launch forms fewer than 2n partial sums, so for
/// f32 and any n ≤ 2^40 the chance that any of them is inexact is below 4n·exp(−2^48 / 2^41) =
/// 4n·e^−128 < 10^−40.
pub fn exact_magnitude(n: usize, mantissa_bits: u32, cap: u64) -> u64 {
    ((1u64 << mantissa_bits) / n.max(1) as u64).clamp(1, cap)
}
// ANCHOR_END: exact_magnitude

/// Element types with a random generator and a reference check.
pub trait Checked: Element {
    /// Fresh random values for a test or a benchmark.
    fn random(n: usize, seed: u64) -> Vec<Self> {
        let mut out = vec![Self::default(); n];
        Self::fill_random(&mut out, n, seed);
        out
    }
    /// Fill `out` with random values drawn for an input of `total_len` values (integers are
    /// kept small enough that no partial sum of `total_len` of them overflows).
    fn fill_random(out: &mut [Self], total_len: usize, seed: u64);
    /// Fill `out` with values exact by construction for sums of `total_len` values: nonzero
    /// integers with random signs and magnitudes up to [`Checked::exact_limit`] (see
    /// [`exact_magnitude`]). Integers are always exact; for them this is `fill_random`.
    fn fill_exact(out: &mut [Self], total_len: usize, seed: u64) {
        Self::fill_random(out, total_len, seed);
    }
    /// The largest magnitude `fill_exact` draws for `total_len` values.
    fn exact_limit(total_len: usize) -> u64;
    /// Fresh exact-by-construction values.
    fn exact(n: usize, seed: u64) -> Vec<Self> {
        let mut out = vec![Self::default(); n];
        Self::fill_exact(&mut out, n, seed);
        out
    }
    /// What the check needs to know of the input: computed once, reusable for every kernel.
    fn reference(xs: &[Self]) -> Reference {
        let (sum_f64, abs_sum) = chunked(xs, compensated_sum, |a, b| (a.0 + b.0, a.1 + b.1));
        Reference { n: xs.len(), sum_f64, sum_i64: 0, abs_sum, exact: false }
    }
    /// The reference of an input made by [`Checked::fill_exact`]: its exact sum, which a
    /// correct kernel must return bit for bit. `Err` if `xs` is not such an input (a value that
    /// is not an integer, or larger than the construction allows for this length).
    fn exact_reference(xs: &[Self]) -> Result<Reference, String> {
        let limit = Self::exact_limit(xs.len()) as f64;
        // Per chunk: the exact sum, the sum of magnitudes, and the first value that disqualifies.
        let per_chunk = |chunk: &[Self]| -> (i64, f64, Option<f64>) {
            let (mut sum, mut abs) = (0i64, 0.0f64);
            for x in chunk {
                let v = x.to_f64();
                if v.fract() != 0.0 || v.abs() > limit || v == 0.0 {
                    return (sum, abs, Some(v));
                }
                sum += v as i64;
                abs += v.abs();
            }
            (sum, abs, None)
        };
        let (sum_i64, abs_sum, bad) = chunked(xs, per_chunk, |a, b| (a.0 + b.0, a.1 + b.1, a.2.or(b.2)));
        if let Some(v) = bad {
            return Err(format!("{v} is not a nonzero integer of magnitude at most {limit}: not an exact-by-construction input of {} values", xs.len()));
        }
        Ok(Reference { n: xs.len(), sum_f64: sum_i64 as f64, sum_i64, abs_sum, exact: true })
    }
    /// `Ok` if `got` is the sum the reference describes: exactly for integers and for
    /// exact-by-construction inputs, within [`error_bound`] at `depth` otherwise (`depth`: the
    /// most roundings a value goes through in the launch that computed `got`). `Err` says by
    /// how much it is not. NaN never passes.
    fn check_with(got: Self::Acc, reference: &Reference, depth: u64) -> Result<(), String>;
    /// [`Checked::check_with`] for a sum computed in an unknown order (depth `n − 1`). For
    /// random reals that bound is weak, and says nothing past `n·u ≥ 1`: the launch's own depth
    /// (`Reducer::check`) is the check to use.
    fn check(got: Self::Acc, reference: &Reference) -> Result<(), String> {
        Self::check_with(got, reference, reference.n.saturating_sub(1) as u64)
    }
    /// [`Checked::reference`] and [`Checked::check`] in one step.
    fn check_sum(got: Self::Acc, xs: &[Self]) -> Result<(), String> {
        Self::check(got, &Self::reference(xs))
    }
}

/// The exact sum of an input (in compensated f64 for floats, exactly in i64 for integers), the
/// sum of its magnitudes, and its length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    pub n: usize,
    pub sum_f64: f64,
    pub sum_i64: i64,
    pub abs_sum: f64,
    /// A float input exact by construction: `sum_i64` is its exact sum, and a correct kernel
    /// returns it bit for bit.
    pub exact: bool,
}

impl Reference {
    /// The reference of no values.
    pub const EMPTY: Reference = Reference { n: 0, sum_f64: 0.0, sum_i64: 0, abs_sum: 0.0, exact: false };

    /// Two references of disjoint inputs as one (exact only if both are).
    pub fn combine(self, other: Reference) -> Reference {
        Reference {
            n: self.n + other.n,
            sum_f64: self.sum_f64 + other.sum_f64,
            sum_i64: self.sum_i64 + other.sum_i64,
            abs_sum: self.abs_sum + other.abs_sum,
            exact: (self.exact || self.n == 0) && (other.exact || other.n == 0) && self.n + other.n > 0,
        }
    }
}

/// Large inputs are summed on every core, in fixed chunks so that the result does not depend
/// on the number of cores.
fn chunked<T: Sync, R: Send + Default>(xs: &[T], per_chunk: impl Fn(&[T]) -> R + Sync, combine: impl Fn(R, R) -> R) -> R {
    const CHUNK: usize = 1 << 22;
    if xs.len() <= CHUNK {
        return per_chunk(xs);
    }
    let chunks: Vec<&[T]> = xs.chunks(CHUNK).collect();
    let mut partials: Vec<R> = (0..chunks.len()).map(|_| R::default()).collect();
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    std::thread::scope(|scope| {
        // Worker w takes chunks w, w + workers, ...; each partial lands in its chunk's slot.
        let mut slots: Vec<Vec<(usize, &mut R)>> = (0..workers).map(|_| Vec::new()).collect();
        for (i, slot) in partials.iter_mut().enumerate() {
            slots[i % workers].push((i, slot));
        }
        for mine in slots {
            let (chunks, per_chunk) = (&chunks, &per_chunk);
            scope.spawn(move || mine.into_iter().for_each(|(i, slot)| *slot = per_chunk(chunks[i])));
        }
    });
    partials.into_iter().fold(R::default(), combine)
}

/// A float sum `got` (accumulated with unit roundoff `u`, at most `depth` roundings per value)
/// against the reference: bit for bit for an exact-by-construction input, within
/// [`error_bound`] otherwise. NaN and infinities never pass.
pub fn check_float(got: f64, r: &Reference, u: f64, depth: u64) -> Result<(), String> {
    if r.exact {
        return if got == r.sum_i64 as f64 {
            Ok(())
        } else {
            Err(format!("got {got}, expected exactly {} (an exact-by-construction input of n = {}: every partial sum is an integer the accumulator holds exactly), off by {}",
                r.sum_i64, r.n, got - r.sum_i64 as f64))
        };
    }
    let bound = error_bound(depth, r.abs_sum, u);
    let error = (got - r.sum_f64).abs();
    if error <= bound {
        Ok(())
    } else {
        Err(format!("got {got:e}, expected {:e}: error {error:.3e} exceeds the bound {bound:.3e} for n = {} at an addition depth of {depth}", r.sum_f64, r.n))
    }
}

/// Uniform in [-1, 1), rounded to the element type.
fn fill_uniform<T>(out: &mut [T], seed: u64, from_f32: impl Fn(f32) -> T) {
    let mut rng = SmallRng::seed_from_u64(seed);
    out.iter_mut().for_each(|x| *x = from_f32(rng.gen_range(-1.0f32..1.0)));
}

// ANCHOR: fill_exact
/// Nonzero integers in [−limit, limit] with random signs, converted to the element type.
fn fill_integers<T>(out: &mut [T], limit: u64, seed: u64, from_f64: impl Fn(f64) -> T) {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xE8AC_7B1D_5EED_0001);
    for x in out.iter_mut() {
        let magnitude = rng.gen_range(1..=limit) as f64;
        *x = from_f64(if rng.gen::<bool>() { magnitude } else { -magnitude });
    }
}
// ANCHOR_END: fill_exact

/// Largest magnitudes the exact inputs use: small enough for every input type to hold them
/// exactly (bf16 holds the integers up to 256, f16 up to 2048).
const EXACT_CAP_F32: u64 = 128;
const EXACT_CAP_F64: u64 = 1 << 20;

impl Checked for f32 {
    fn fill_random(out: &mut [f32], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, |x| x);
    }
    fn fill_exact(out: &mut [f32], total_len: usize, seed: u64) {
        fill_integers(out, Self::exact_limit(total_len), seed, |x| x as f32);
    }
    fn exact_limit(total_len: usize) -> u64 {
        exact_magnitude(total_len, f32::MANTISSA_DIGITS, EXACT_CAP_F32)
    }
    fn check_with(got: f32, r: &Reference, depth: u64) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF, depth)
    }
}

impl Checked for f64 {
    fn fill_random(out: &mut [f64], _total_len: usize, seed: u64) {
        // Full 53-bit mantissas, not f32 values widened: those would sum exactly in f64.
        let mut rng = SmallRng::seed_from_u64(seed);
        out.iter_mut().for_each(|x| *x = rng.gen_range(-1.0f64..1.0));
    }
    fn fill_exact(out: &mut [f64], total_len: usize, seed: u64) {
        fill_integers(out, Self::exact_limit(total_len), seed, |x| x);
    }
    fn exact_limit(total_len: usize) -> u64 {
        exact_magnitude(total_len, f64::MANTISSA_DIGITS, EXACT_CAP_F64)
    }
    fn check_with(got: f64, r: &Reference, depth: u64) -> Result<(), String> {
        check_float(got, r, F64_UNIT_ROUNDOFF, depth)
    }
}

impl Checked for f16 {
    fn fill_random(out: &mut [f16], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, f16::from_f32);
    }
    fn fill_exact(out: &mut [f16], total_len: usize, seed: u64) {
        fill_integers(out, Self::exact_limit(total_len), seed, f16::from_f64);
    }
    /// Accumulated in f32: the f32 accumulator decides the magnitudes.
    fn exact_limit(total_len: usize) -> u64 {
        f32::exact_limit(total_len)
    }
    /// Accumulated in f32, so the f32 bound applies; the inputs are exact in f64.
    fn check_with(got: f32, r: &Reference, depth: u64) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF, depth)
    }
}

impl Checked for bf16 {
    fn fill_random(out: &mut [bf16], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, bf16::from_f32);
    }
    fn fill_exact(out: &mut [bf16], total_len: usize, seed: u64) {
        fill_integers(out, Self::exact_limit(total_len), seed, bf16::from_f64);
    }
    fn exact_limit(total_len: usize) -> u64 {
        f32::exact_limit(total_len)
    }
    fn check_with(got: f32, r: &Reference, depth: u64) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF, depth)
    }
}

impl Checked for i32 {
    fn fill_random(out: &mut [i32], total_len: usize, seed: u64) {
        let bound = i32_bound(total_len);
        let mut rng = SmallRng::seed_from_u64(seed);
        out.iter_mut().for_each(|x| *x = rng.gen_range(-bound..=bound));
    }
    fn exact_limit(total_len: usize) -> u64 {
        i32_bound(total_len) as u64
    }
    fn reference(xs: &[i32]) -> Reference {
        let sum_i64 = chunked(xs, exact_sum_i32, |a, b| a + b);
        Reference { n: xs.len(), sum_f64: sum_i64 as f64, sum_i64, abs_sum: 0.0, exact: true }
    }
    /// Integers are always exact (zeros included).
    fn exact_reference(xs: &[i32]) -> Result<Reference, String> {
        Ok(Self::reference(xs))
    }
    fn check_with(got: i32, r: &Reference, _depth: u64) -> Result<(), String> {
        if got as i64 == r.sum_i64 {
            Ok(())
        } else {
            Err(format!("got {got}, expected exactly {} for n = {} (off by {})", r.sum_i64, r.n, got as i64 - r.sum_i64))
        }
    }
}

/// `n` random values generated on every core: chunk `i` is seeded with `seed + i`, so the
/// result depends only on `n` and `seed`.
pub fn random_parallel<T: Checked>(n: usize, seed: u64) -> Vec<T> {
    random_parallel_for(n, n, seed)
}

/// As [`random_parallel`], with integer magnitudes chosen for sums of `sum_len` values.
pub fn random_parallel_for<T: Checked>(n: usize, sum_len: usize, seed: u64) -> Vec<T> {
    fill_parallel(n, sum_len, seed, T::fill_random)
}

/// `n` exact-by-construction values ([`Checked::fill_exact`]) generated on every core.
pub fn exact_parallel<T: Checked>(n: usize, seed: u64) -> Vec<T> {
    exact_parallel_for(n, n, seed)
}

/// As [`exact_parallel`], with magnitudes chosen for sums of up to `sum_len` values (a pool
/// whose prefixes are summed).
pub fn exact_parallel_for<T: Checked>(n: usize, sum_len: usize, seed: u64) -> Vec<T> {
    fill_parallel(n, sum_len, seed, T::fill_exact)
}

/// `n` values from `fill(chunk, sum_len, seed)`, chunk `i` seeded with `seed + i`, on every core.
fn fill_parallel<T: Checked>(n: usize, sum_len: usize, seed: u64, fill: fn(&mut [T], usize, u64)) -> Vec<T> {
    const CHUNK: usize = 1 << 22;
    let mut out = vec![T::default(); n];
    if n <= CHUNK {
        fill(&mut out, sum_len, seed);
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let mut by_worker: Vec<Vec<(usize, &mut [T])>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
        by_worker[i % workers].push((i, chunk));
    }
    std::thread::scope(|scope| {
        for mine in by_worker {
            scope.spawn(move || mine.into_iter().for_each(|(i, chunk)| fill(chunk, sum_len, seed.wrapping_add(i as u64))));
        }
    });
    out
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
