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
mod tests {
    use super::*;

    #[test]
    fn random_data_is_reproducible_and_not_constant() {
        assert_eq!(random_f32(100, 1), random_f32(100, 1));
        assert_ne!(random_f32(100, 1), random_f32(100, 2));
        let xs = random_f32(10_000, 3);
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(xs.iter().any(|&x| x < -0.5) && xs.iter().any(|&x| x > 0.5));
        let ys = random_i32(10_000, 3);
        assert!(ys.iter().filter(|&&y| y == 0).count() < 100, "mostly zeros");
    }

    #[test]
    fn i32_inputs_cannot_overflow_any_partial_sum() {
        // Past i32::MAX values even ±1 can overflow; such sizes need a closed-form check.
        for n in [1usize, 1000, 1 << 20, (1 << 24) + 3, 1 << 26, i32::MAX as usize] {
            let worst = i32_bound(n) as i128 * n as i128;
            assert!(worst <= i32::MAX as i128, "n = {n}: worst partial sum {worst}");
        }
        assert_eq!(i32_bound(10), 1000);
    }

    #[test]
    fn the_bound_accepts_the_sequential_f32_sum_and_rejects_a_wrong_one() {
        let xs = random_f32(1 << 16, 9);
        let sequential: f32 = xs.iter().sum();
        assert!(f32::check_sum(sequential, &xs).is_ok());
        // On 64 values the bound is about 1e-4, so a sum that dropped an element is caught.
        // (On millions it is not: the worst-case bound grows with n·Σ|x|. That is why every
        // kernel is also tested on i32, where any dropped or doubled element shows exactly.)
        let xs = &xs[..64];
        let (exact, _) = sum_f64(xs);
        let largest = xs.iter().copied().fold(0.0f32, |m, x| if x.abs() > m.abs() { x } else { m });
        assert!(f32::check_sum((exact - largest as f64) as f32, xs).is_err());
        assert!(f32::check_sum(f32::NAN, &xs).is_err());
        assert!(f32::check_sum(f32::INFINITY, &xs).is_err());
    }

    #[test]
    fn a_single_value_must_come_back_exactly() {
        assert_eq!(any_order_error_bound(1, 0.75, F32_UNIT_ROUNDOFF), 0.75 * 4.0 * F64_UNIT_ROUNDOFF);
        assert!(f32::check_sum(0.75, &[0.75]).is_ok());
        assert!(f32::check_sum(0.7500001, &[0.75]).is_err());
    }

    #[test]
    fn parallel_generation_and_reference_match_the_serial_ones_in_distribution() {
        let n = (1 << 23) + 5;
        let xs: Vec<i32> = random_parallel(n, 4);
        assert_eq!(xs, random_parallel::<i32>(n, 4), "not reproducible");
        assert!(xs.iter().all(|x| x.abs() <= i32_bound(n)));
        assert_eq!(i32::reference(&xs).sum_i64, exact_sum_i32(&xs));
        let fs: Vec<f32> = random_parallel(n, 4);
        let (serial, _) = sum_f64(&fs);
        assert!((f32::reference(&fs).sum_f64 - serial).abs() < 1e-6 * n as f64);
    }

    #[test]
    fn f64_sums_are_checked_against_a_compensated_reference() {
        let xs = f64::random(1 << 16, 5);
        let naive: f64 = xs.iter().sum();
        assert!(f64::check_sum(naive, &xs).is_ok());
        // Off by a thousand f64 roundings of the total magnitude: caught.
        let (exact, abs) = compensated_sum(&xs);
        assert!(f64::check_sum(exact + 1e3 * abs * F64_UNIT_ROUNDOFF * (1u64 << 16) as f64, &xs).is_err());
    }

    #[test]
    fn half_inputs_are_checked_as_f32_sums() {
        let xs: Vec<f16> = f16::random(4096, 6).into_iter().map(|x| f16::from_f32(x.to_f32().abs())).collect();
        let sum32: f32 = xs.iter().map(|x| x.to_f32()).sum();
        assert!(f16::check_sum(sum32, &xs).is_ok());
        // Accumulating in f16 itself stalls once the sum's spacing (2 at 2048) exceeds the
        // values added: far outside the f32 bound.
        let sum16 = xs.iter().fold(f16::ZERO, |a, &x| a + x);
        assert!(f16::check_sum(sum16.to_f32(), &xs).is_err());
        let ys = bf16::random(4096, 6);
        assert!(bf16::check_sum(ys.iter().map(|y| y.to_f32()).sum(), &ys).is_ok());
    }

    #[test]
    fn the_any_order_bound_says_nothing_past_n_u_of_one_but_a_launch_depth_does() {
        // At 2^26 values in [-1, 1) the any-order bound exceeds Σ|x|: a sum of 0 would pass.
        let n = 1usize << 26;
        let abs = n as f64 / 2.0;
        assert!(any_order_error_bound(n, abs, F32_UNIT_ROUNDOFF) >= abs);
        // A launch whose deepest value goes through 300 roundings bounds the error by 1.8e-5·Σ|x|.
        let bound = error_bound(300, abs, F32_UNIT_ROUNDOFF);
        assert!(bound < 2e-5 * abs, "{bound}");
        assert_eq!(error_bound(1 << 24, abs, F32_UNIT_ROUNDOFF), f64::INFINITY);
    }

    #[test]
    fn exact_inputs_are_nonzero_integers_within_the_limit_with_both_signs() {
        for n in [1usize, 7, 1000, (1 << 17) + 1, (1 << 20) + 3] {
            let xs = f32::exact(n, 11);
            let limit = f32::exact_limit(n) as f32;
            assert!(xs.iter().all(|&x| x != 0.0 && x.fract() == 0.0 && x.abs() <= limit), "n = {n}");
            // Every partial sum in any order is within 2^24 up to n = 2^24.
            assert!(n as u64 * f32::exact_limit(n) <= 1 << 24 || f32::exact_limit(n) == 1);
            if n >= 1000 {
                assert!(xs.iter().any(|&x| x < 0.0) && xs.iter().any(|&x| x > 0.0));
            }
        }
        assert_eq!(f32::exact_limit(10), 128);
        assert_eq!(f32::exact_limit(1 << 20), 16);
        assert_eq!(f32::exact_limit(1 << 26), 1);
        assert_eq!(bf16::exact_limit(3), 128, "bf16 holds the integers up to 256 exactly");
        let halves = bf16::exact(1000, 2);
        assert!(halves.iter().all(|h| h.to_f64().fract() == 0.0 && h.to_f64() != 0.0));
    }

    #[test]
    fn exact_references_are_exact_and_refuse_other_inputs() {
        let xs = f32::exact((1 << 23) + 5, 3);
        let r = f32::exact_reference(&xs).unwrap();
        assert!(r.exact);
        assert_eq!(r.sum_i64, xs.iter().map(|&x| x as i64).sum::<i64>());
        // The exact sum passes, bit for bit; one off does not, however large n is.
        assert!(f32::check(r.sum_i64 as f32, &r).is_ok());
        assert!(f32::check(r.sum_i64 as f32 + 1.0, &r).is_err());
        assert!(f32::check(f32::NAN, &r).is_err());
        // Random reals are not exact inputs.
        assert!(f32::exact_reference(&random_f32(100, 1)).is_err());
        assert!(f32::exact_reference(&[1000.0; 100]).is_err(), "magnitude above the limit for 100 values");
        assert!(f32::exact_reference(&[0.0; 4]).is_err(), "zeros hide a dropped element");
    }

    #[test]
    fn a_sequential_f32_loop_over_an_exact_input_is_exact() {
        // The claim the exact inputs rest on, checked in the worst order for a plain loop.
        for n in [(1 << 17) + 1, 1 << 24] {
            let xs = exact_parallel::<f32>(n, 5);
            let r = f32::exact_reference(&xs).unwrap();
            let looped: f32 = xs.iter().sum();
            assert_eq!(looped as i64, r.sum_i64, "n = {n}");
        }
    }

    #[test]
    fn integer_sums_are_checked_exactly() {
        assert!(i32::check_sum(6, &[1, 2, 3]).is_ok());
        let err = i32::check_sum(7, &[1, 2, 3]).unwrap_err();
        assert!(err.contains("off by 1"), "{err}");
    }
}
