//! The element types the multi-GPU sum takes, and the wider type their partial sums cross GPUs in.

use super::nccl::NcclElement;
use crate::data::{check_float, Checked, Reference, F32_UNIT_ROUNDOFF, F64_UNIT_ROUNDOFF};
use crate::error::{Error, Result};
use crate::reducer::Reducer;
use cudarc::driver::ValidAsZeroBits;

// ANCHOR: summable
/// An element type the multi-GPU sum takes. The per-GPU sums are widened before they cross
/// GPUs: 2^31 values per GPU of `(i mod 1000) − 500` sum to about −1.07·10^9 on each GPU, which
/// fits in an `i32`, but two GPUs' worth does not. The first level accumulates in the kernel's
/// type; the second needs a type that holds the whole sum.
pub trait Summable: Checked {
    /// The type the per-GPU sums are added in, across GPUs.
    type Wide: NcclElement + ValidAsZeroBits + Default + PartialEq + std::fmt::Debug + Into<Value>;
    fn widen(partial: Self::Acc) -> Self::Wide;
    /// A partial sum (in the kernel's accumulator) as a [`Value`].
    fn partial_value(partial: Self::Acc) -> Value;
    /// A value no all-reduce writes by chance: the output is filled with it first.
    const WIDE_POISON: Self::Wide;
    fn from_pattern(v: i32) -> Self;
    /// Whether a sum described by `r` fits in the kernel's accumulator.
    fn partial_fits(r: &Reference) -> bool;
    /// Check the total: exactly for integers and exact-by-construction inputs, within the error
    /// bound for floats, where `depth` is the deepest rank's addition depth (the f64 adds of the
    /// widened partials are far inside the f32 bound's margin).
    fn check_total(total: Self::Wide, r: &Reference, depth: u64) -> std::result::Result<(), String>;
    /// The chunk sums a chunked kernel left after summing `n` values
    /// ([`Reducer::chunk_partials`], for the gathered sum); an error for types it does not take.
    fn chunk_partials(reducer: &Reducer<Self>, n: usize) -> Result<Vec<u64>> {
        let _ = (reducer, n);
        Err(Error::Config { setting: format!("the chunk sums of a {} sum", Self::SUFFIX), reason: "only f32 sums are gathered".into() })
    }
}
// ANCHOR_END: summable

/// A sum as a value of its own type: a rank's partial sum (in the kernel's accumulator) or the
/// total it holds after the all-reduce (in the wide type). Two are equal when they are the
/// same bits (a NaN equals the same NaN), which is what "every rank holds the same total" means;
/// printed as Rust's `{:?}` prints the number, which reads back to the same value.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (*self, *other) {
            (Value::I32(a), Value::I32(b)) => a == b,
            (Value::I64(a), Value::I64(b)) => a == b,
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::I32(x) => write!(f, "{x:?}"),
            Value::I64(x) => write!(f, "{x:?}"),
            Value::F32(x) => write!(f, "{x:?}"),
            Value::F64(x) => write!(f, "{x:?}"),
        }
    }
}

impl From<i32> for Value {
    fn from(x: i32) -> Value {
        Value::I32(x)
    }
}

impl From<i64> for Value {
    fn from(x: i64) -> Value {
        Value::I64(x)
    }
}

impl From<f32> for Value {
    fn from(x: f32) -> Value {
        Value::F32(x)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::F64(x)
    }
}

impl Summable for i32 {
    type Wide = i64;
    const WIDE_POISON: i64 = i64::MIN + 0x5a5a;
    fn widen(partial: i32) -> i64 {
        partial as i64
    }
    fn partial_value(partial: i32) -> Value {
        partial.into()
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
    fn partial_value(partial: f32) -> Value {
        partial.into()
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
    fn chunk_partials(reducer: &Reducer<f32>, n: usize) -> Result<Vec<u64>> {
        reducer.chunk_partials(n)
    }
}

impl Summable for f64 {
    type Wide = f64;
    const WIDE_POISON: f64 = f64::NAN;
    fn widen(partial: f64) -> f64 {
        partial
    }
    fn partial_value(partial: f64) -> Value {
        partial.into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_equal_when_their_bits_are_and_print_as_rust_reads_them() {
        assert_eq!(Value::F64(f64::NAN), Value::F64(f64::NAN));
        assert_ne!(Value::F64(0.0), Value::F64(-0.0));
        assert_ne!(Value::I64(3), Value::F64(3.0));
        assert_eq!(Value::F64(3.0).to_string(), "3.0");
        assert_eq!(Value::F32(0.1).to_string(), "0.1");
        assert_eq!(Value::I64(-1_073_741_824).to_string(), "-1073741824");
        assert_eq!(<f32 as Summable>::partial_value(1.5), Value::F32(1.5));
    }
}
