//! Inputs and references: fresh random data, exact or f64 reference sums, and the error bound
//! a float sum is checked against. Never zeros: an unwritten output or a skipped element would
//! pass unseen on zeros.

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

/// How far an f32 sum of `n` values with magnitudes summing to `abs_sum` may be from the exact
/// sum, in any order of additions: `(n - 1)·u·Σ|x|` (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §4.2, to first order), plus the f64 reference's own error. A tree
/// does far better (`⌈log2 n⌉·u·Σ|x|`), but every correct kernel must meet this one.
pub fn f32_sum_error_bound(n: usize, abs_sum: f64) -> f64 {
    sum_error_bound(n, abs_sum, F32_UNIT_ROUNDOFF)
}

/// The same bound for an accumulator with unit roundoff `u`, plus a few f64 roundings of the
/// compensated reference.
pub fn sum_error_bound(n: usize, abs_sum: f64, u: f64) -> f64 {
    let n = n as f64;
    ((n - 1.0).max(0.0) * u + 4.0 * F64_UNIT_ROUNDOFF) * abs_sum
}

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
    /// What the check needs to know of the input: computed once, reusable for every kernel.
    fn reference(xs: &[Self]) -> Reference {
        let (sum_f64, abs_sum) = chunked(xs, compensated_sum, |a, b| (a.0 + b.0, a.1 + b.1));
        Reference { n: xs.len(), sum_f64, sum_i64: 0, abs_sum }
    }
    /// `Ok` if `got` is the sum the reference describes (exactly for integers, within the error
    /// bound of the accumulator type for floats); `Err` says by how much it is not. NaN never
    /// passes.
    fn check(got: Self::Acc, reference: &Reference) -> Result<(), String>;
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

/// A float sum `got` (accumulated with unit roundoff `u`) against the reference.
fn check_float(got: f64, r: &Reference, u: f64) -> Result<(), String> {
    let bound = sum_error_bound(r.n, r.abs_sum, u);
    let error = (got - r.sum_f64).abs();
    if error <= bound {
        Ok(())
    } else {
        Err(format!("got {got:e}, expected {:e}: error {error:.3e} exceeds the bound {bound:.3e} for n = {}", r.sum_f64, r.n))
    }
}

/// Uniform in [-1, 1), rounded to the element type.
fn fill_uniform<T>(out: &mut [T], seed: u64, from_f32: impl Fn(f32) -> T) {
    let mut rng = SmallRng::seed_from_u64(seed);
    out.iter_mut().for_each(|x| *x = from_f32(rng.gen_range(-1.0f32..1.0)));
}

impl Checked for f32 {
    fn fill_random(out: &mut [f32], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, |x| x);
    }

    fn check(got: f32, r: &Reference) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF)
    }
}

impl Checked for f64 {
    fn fill_random(out: &mut [f64], _total_len: usize, seed: u64) {
        // Full 53-bit mantissas, not f32 values widened: those would sum exactly in f64.
        let mut rng = SmallRng::seed_from_u64(seed);
        out.iter_mut().for_each(|x| *x = rng.gen_range(-1.0f64..1.0));
    }

    fn check(got: f64, r: &Reference) -> Result<(), String> {
        check_float(got, r, F64_UNIT_ROUNDOFF)
    }
}

impl Checked for f16 {
    fn fill_random(out: &mut [f16], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, f16::from_f32);
    }

    /// Accumulated in f32, so the f32 bound applies; the inputs are exact in f64.
    fn check(got: f32, r: &Reference) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF)
    }
}

impl Checked for bf16 {
    fn fill_random(out: &mut [bf16], _total_len: usize, seed: u64) {
        fill_uniform(out, seed, bf16::from_f32);
    }

    fn check(got: f32, r: &Reference) -> Result<(), String> {
        check_float(got as f64, r, F32_UNIT_ROUNDOFF)
    }
}

impl Checked for i32 {
    fn fill_random(out: &mut [i32], total_len: usize, seed: u64) {
        let bound = i32_bound(total_len);
        let mut rng = SmallRng::seed_from_u64(seed);
        out.iter_mut().for_each(|x| *x = rng.gen_range(-bound..=bound));
    }

    fn reference(xs: &[i32]) -> Reference {
        let sum_i64 = chunked(xs, exact_sum_i32, |a, b| a + b);
        Reference { n: xs.len(), sum_f64: sum_i64 as f64, sum_i64, abs_sum: 0.0 }
    }

    fn check(got: i32, r: &Reference) -> Result<(), String> {
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
    const CHUNK: usize = 1 << 22;
    let mut out = vec![T::default(); n];
    if n <= CHUNK {
        T::fill_random(&mut out, sum_len, seed);
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let mut by_worker: Vec<Vec<(usize, &mut [T])>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
        by_worker[i % workers].push((i, chunk));
    }
    std::thread::scope(|scope| {
        for mine in by_worker {
            scope.spawn(move || mine.into_iter().for_each(|(i, chunk)| T::fill_random(chunk, sum_len, seed.wrapping_add(i as u64))));
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
        assert_eq!(f32_sum_error_bound(1, 0.75), 0.75 * 4.0 * F64_UNIT_ROUNDOFF);
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
    fn integer_sums_are_checked_exactly() {
        assert!(i32::check_sum(6, &[1, 2, 3]).is_ok());
        let err = i32::check_sum(7, &[1, 2, 3]).unwrap_err();
        assert!(err.contains("off by 1"), "{err}");
    }
}
