//! The element types the multi-GPU sum takes, and the wider type their partial sums cross GPUs in.

use super::nccl::NcclElement;
use crate::data::{check_float, Checked, Reference, F32_UNIT_ROUNDOFF, F64_UNIT_ROUNDOFF};
use cudarc::driver::ValidAsZeroBits;

// ANCHOR: summable
/// An element type the multi-GPU sum takes. The per-GPU sums are widened before they cross
/// GPUs: 2^31 values per GPU of `(i mod 1000) − 500` sum to about −1.07·10^9 on each GPU, which
/// fits in an `i32`, but two GPUs' worth does not. The first level accumulates in the kernel's
/// type; the second needs a type that holds the whole sum.
pub trait Summable: Checked {
    /// The type the per-GPU sums are added in, across GPUs.
    type Wide: NcclElement + ValidAsZeroBits + Default + PartialEq + std::fmt::Debug;
    fn widen(partial: Self::Acc) -> Self::Wide;
    /// A value no all-reduce writes by chance: the output is filled with it first.
    const WIDE_POISON: Self::Wide;
    fn from_pattern(v: i32) -> Self;
    /// Whether a sum described by `r` fits in the kernel's accumulator.
    fn partial_fits(r: &Reference) -> bool;
    /// Check the total: exactly for integers and exact-by-construction inputs, within the error
    /// bound for floats, where `depth` is the deepest rank's addition depth (the f64 adds of the
    /// widened partials are far inside the f32 bound's margin).
    fn check_total(total: Self::Wide, r: &Reference, depth: u64) -> std::result::Result<(), String>;
}
// ANCHOR_END: summable

impl Summable for i32 {
    type Wide = i64;
    const WIDE_POISON: i64 = i64::MIN + 0x5a5a;
    fn widen(partial: i32) -> i64 {
        partial as i64
    }
    fn from_pattern(v: i32) -> i32 {
        v
    }
    fn partial_fits(r: &Reference) -> bool {
        i32::try_from(r.sum_i64).is_ok()
    }
    fn check_total(total: i64, r: &Reference, _depth: u64) -> std::result::Result<(), String> {
        if total == r.sum_i64 {
            Ok(())
        } else {
            Err(format!("got {total}, expected exactly {} for n = {} (off by {})", r.sum_i64, r.n, total.wrapping_sub(r.sum_i64)))
        }
    }
}

impl Summable for f32 {
    type Wide = f64;
    const WIDE_POISON: f64 = f64::NAN;
    fn widen(partial: f32) -> f64 {
        partial as f64
    }
    fn from_pattern(v: i32) -> f32 {
        v as f32
    }
    fn partial_fits(_: &Reference) -> bool {
        true
    }
    /// Each GPU's f32 sum has its launch's bound; the partials are then added in f64, whose
    /// roundings the bound's margin (a few f64 roundings of Σ|x|) covers for a few GPUs.
    fn check_total(total: f64, r: &Reference, depth: u64) -> std::result::Result<(), String> {
        check_float(total, r, F32_UNIT_ROUNDOFF, depth)
    }
}

impl Summable for f64 {
    type Wide = f64;
    const WIDE_POISON: f64 = f64::NAN;
    fn widen(partial: f64) -> f64 {
        partial
    }
    fn from_pattern(v: i32) -> f64 {
        v as f64
    }
    fn partial_fits(_: &Reference) -> bool {
        true
    }
    fn check_total(total: f64, r: &Reference, depth: u64) -> std::result::Result<(), String> {
        // The f64 adds across GPUs are roundings of the same size: one more level per doubling.
        check_float(total, r, F64_UNIT_ROUNDOFF, depth + 8)
    }
}
