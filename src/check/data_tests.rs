//! Tests of the inputs, references and bounds of `data.rs`.

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
    assert!(f32::check_sum(f32::NAN, xs).is_err());
    assert!(f32::check_sum(f32::INFINITY, xs).is_err());
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
