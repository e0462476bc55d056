//! The element types a reduction runs on, and what the host needs to know about each.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
pub use half::{bf16, f16};

/// A type the kernels can sum. Each kernel file instantiates one entry point per input type,
/// named with [`Element::SUFFIX`] (`reduce1_f32`, `reduce_vec_f16`). The sum is accumulated,
/// and returned, in [`Element::Acc`]: the type itself, except that half-precision inputs are
/// accumulated in `f32`.
pub trait Element:
    DeviceRepr + ValidAsZeroBits + Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// The type partial sums and the result are kept in.
    type Acc: Element<Acc = Self::Acc>;
    /// The entry-point suffix and the name used in tables and CSV files.
    const SUFFIX: &'static str;
    const DTYPE: Dtype;
    /// A value no correct kernel writes by chance; outputs are filled with it before a run so
    /// that an unwritten output cannot pass for a result.
    const POISON: Self;
    /// True for floating-point types, whose sums are checked against an error bound.
    const IS_FLOAT: bool;
    fn to_f64(self) -> f64;
}

macro_rules! element {
    ($t:ty, $acc:ty, $suffix:literal, $dtype:expr, $poison:expr, $float:literal, $to_f64:expr) => {
        impl Element for $t {
            type Acc = $acc;
            const SUFFIX: &'static str = $suffix;
            const DTYPE: Dtype = $dtype;
            const POISON: Self = $poison;
            const IS_FLOAT: bool = $float;
            fn to_f64(self) -> f64 {
                $to_f64(self)
            }
        }
    };
}

element!(f32, f32, "f32", Dtype::F32, f32::NAN, true, |x: f32| x as f64);
element!(i32, i32, "i32", Dtype::I32, i32::MIN + 0x5a5a, false, |x: i32| x as f64);
element!(f64, f64, "f64", Dtype::F64, f64::NAN, true, |x: f64| x);
element!(f16, f32, "f16", Dtype::F16, f16::NAN, true, |x: f16| x.to_f64());
element!(bf16, f32, "bf16", Dtype::BF16, bf16::NAN, true, |x: bf16| x.to_f64());

/// The element types as values, for command-line choices (`--dtype f64,f16,bf16`), the registry,
/// tables and results files: everywhere written as its [`Dtype::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    F32,
    I32,
    F64,
    F16,
    BF16,
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Dtype {
    pub const ALL: [Dtype; 5] = [Dtype::F32, Dtype::I32, Dtype::F64, Dtype::F16, Dtype::BF16];
    /// What Harris's kernels are instantiated for, and what the benchmark measures by default.
    pub const CLASSIC: [Dtype; 2] = [Dtype::F32, Dtype::I32];

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::I32 => "i32",
            Dtype::F64 => "f64",
            Dtype::F16 => "f16",
            Dtype::BF16 => "bf16",
        }
    }

    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::F64 => 8,
            Dtype::F16 | Dtype::BF16 => 2,
        }
    }

    /// Bytes of the accumulator (shared memory per thread, partial sums).
    pub fn acc_bytes(self) -> usize {
        match self {
            Dtype::F64 => 8,
            _ => 4,
        }
    }

    /// `f32` → [`Dtype::F32`]: the names the command line takes.
    pub fn parse(s: &str) -> Option<Dtype> {
        <Dtype as clap::ValueEnum>::from_str(s, false).ok()
    }
}

/// Run `$body` with `$t` standing for the Rust type that `$dtype` names, and give back its
/// value: one match from a [`Dtype`] chosen at run time to a generic call.
///
/// ```
/// use reduction::{with_dtype, Dtype, Element};
/// let suffix = with_dtype!(Dtype::BF16, T => <T as Element>::SUFFIX);
/// assert_eq!(suffix, "bf16");
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::Dtype::F32 => {
                type $t = f32;
                $body
            }
            $crate::Dtype::I32 => {
                type $t = i32;
                $body
            }
            $crate::Dtype::F64 => {
                type $t = f64;
                $body
            }
            $crate::Dtype::F16 => {
                type $t = $crate::element::f16;
                $body
            }
            $crate::Dtype::BF16 => {
                type $t = $crate::element::bf16;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sizes_and_suffixes_agree() {
        use clap::ValueEnum;
        assert_eq!(Dtype::value_variants(), Dtype::ALL);
        for d in Dtype::ALL {
            // The command line's name is the one tables and CSV files use.
            assert_eq!(d.to_possible_value().unwrap().get_name(), d.name());
            assert_eq!(Dtype::parse(d.name()), Some(d));
            assert_eq!(with_dtype!(d, T => <T as Element>::DTYPE), d);
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{}\"", d.name()));
        }
        assert_eq!(Dtype::parse("f8"), None);
        assert_eq!(<f16 as Element>::SUFFIX, Dtype::F16.name());
        assert_eq!(std::mem::size_of::<bf16>(), Dtype::BF16.size_bytes());
        assert_eq!(std::mem::size_of::<<bf16 as Element>::Acc>(), Dtype::BF16.acc_bytes());
        assert_eq!(std::mem::size_of::<f64>(), Dtype::F64.acc_bytes());
    }
}
