//! Inputs and references: fresh random data, exact or f64 reference sums, and the error bound
//! a float sum is checked against. Never zeros: an unwritten output or a skipped element would
//! pass unseen on zeros.

use crate::element::Element;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Uniform in [-1, 1): signs mixed, so that cancellation is exercised.
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
}

/// The largest magnitude `random_i32` draws for `n` values: small enough that no partial sum
/// of `n` of them can overflow `i32`, so the GPU's wrapping adds are exact.
pub fn i32_bound(n: usize) -> i32 {
    (i32::MAX as usize / n.max(1)).clamp(1, 1000) as i32
}

/// Uniform in [-i32_bound(n), i32_bound(n)].
pub fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    let bound = i32_bound(n);
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-bound..=bound)).collect()
}

/// The exact sum, in a type that cannot overflow.
pub fn exact_sum_i32(xs: &[i32]) -> i64 {
    xs.iter().map(|&x| x as i64).sum()
}

/// The sum in f64, and the sum of magnitudes (for the error bound).
pub fn sum_f64(xs: &[f32]) -> (f64, f64) {
    xs.iter().fold((0.0, 0.0), |(s, a), &x| (s + x as f64, a + (x as f64).abs()))
}

/// Unit roundoff of f32 and f64.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;
pub const F64_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 53) as f64;

/// How far an f32 sum of `n` values with magnitudes summing to `abs_sum` may be from the exact
/// sum, in any order of additions: `(n - 1)·u·Σ|x|` (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §4.2, to first order), plus the f64 reference's own error. A tree
/// does far better (`⌈log2 n⌉·u·Σ|x|`), but every correct kernel must meet this one.
pub fn f32_sum_error_bound(n: usize, abs_sum: f64) -> f64 {
    let n = n as f64;
    ((n - 1.0).max(0.0) * F32_UNIT_ROUNDOFF + n * F64_UNIT_ROUNDOFF) * abs_sum
}

/// Element types with a random generator and a reference check.
pub trait Checked: Element {
    /// Fresh random values for a test or a benchmark.
    fn random(n: usize, seed: u64) -> Vec<Self>;
    /// `Ok` if `got` is the sum of `xs` (exactly for integers, within the error bound for
    /// floats); `Err` says by how much it is not. NaN never passes.
    fn check_sum(got: Self, xs: &[Self]) -> Result<(), String>;
}

impl Checked for f32 {
    fn random(n: usize, seed: u64) -> Vec<f32> {
        random_f32(n, seed)
    }

    fn check_sum(got: f32, xs: &[f32]) -> Result<(), String> {
        let (exact, abs_sum) = sum_f64(xs);
        let bound = f32_sum_error_bound(xs.len(), abs_sum);
        let error = (got as f64 - exact).abs();
        if error <= bound {
            Ok(())
        } else {
            Err(format!("got {got:e}, expected {exact:e} (f64): error {error:.3e} exceeds the bound {bound:.3e} for n = {}", xs.len()))
        }
    }
}

impl Checked for i32 {
    fn random(n: usize, seed: u64) -> Vec<i32> {
        random_i32(n, seed)
    }

    fn check_sum(got: i32, xs: &[i32]) -> Result<(), String> {
        let exact = exact_sum_i32(xs);
        if got as i64 == exact {
            Ok(())
        } else {
            Err(format!("got {got}, expected exactly {exact} for n = {} (off by {})", xs.len(), got as i64 - exact))
        }
    }
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
        assert_eq!(f32_sum_error_bound(1, 0.75), 0.75 * F64_UNIT_ROUNDOFF);
        assert!(f32::check_sum(0.75, &[0.75]).is_ok());
        assert!(f32::check_sum(0.7500001, &[0.75]).is_err());
    }

    #[test]
    fn integer_sums_are_checked_exactly() {
        assert!(i32::check_sum(6, &[1, 2, 3]).is_ok());
        let err = i32::check_sum(7, &[1, 2, 3]).unwrap_err();
        assert!(err.contains("off by 1"), "{err}");
    }
}
