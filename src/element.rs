//! The element types a reduction runs on, and what the host needs to know about each.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A type the kernels can sum. Each kernel file instantiates one entry point per type,
/// named with [`Element::SUFFIX`] (`reduce1_f32`, `reduce1_i32`).
pub trait Element:
    DeviceRepr + ValidAsZeroBits + Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// The entry-point suffix and the name used in tables and CSV files.
    const SUFFIX: &'static str;
    /// A value no correct kernel writes by chance; outputs are filled with it before a run so
    /// that an unwritten output cannot pass for a result.
    const POISON: Self;
    /// True for floating-point types, whose sums are checked against an error bound.
    const IS_FLOAT: bool;
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const SUFFIX: &'static str = "f32";
    const POISON: Self = f32::NAN;
    const IS_FLOAT: bool = true;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Element for i32 {
    const SUFFIX: &'static str = "i32";
    const POISON: Self = i32::MIN + 0x5a5a;
    const IS_FLOAT: bool = false;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// The element types as values, for command-line choices and tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32,
    I32,
}

impl Dtype {
    pub const ALL: [Dtype; 2] = [Dtype::F32, Dtype::I32];

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => f32::SUFFIX,
            Dtype::I32 => i32::SUFFIX,
        }
    }

    pub fn size_bytes(self) -> usize {
        4
    }

    pub fn parse(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s)
    }
}
