//! GPU architectures: which ones the book runs on, which ones the NVRTC in use compiles for, and
//! the rule that decides whether a kernel is on a given GPU.
//!
//! The rule ([`runs_on`]) is a pure function of (what the kernel needs, what the GPU is), so
//! that it is tested without a GPU, and without an old GPU: a kernel that needs a newer
//! architecture than the reader's is "not on this GPU" — refused before it is compiled, its
//! tests ignored and its benchmark rows skipped with that reason — never a compile failure.

use crate::error::{Error, Result};
use std::fmt;

/// An architecture, as a compute capability: 7.5 is `sm_75` (T4, RTX 20xx), 9.0 `sm_90`
/// (H100, H200), 12.0 `sm_120` (RTX 50xx). Ordered by (major, minor): a kernel for `sm_80`
/// runs on every later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
}

impl Arch {
    pub const fn new(major: u32, minor: u32) -> Arch {
        Arch { major, minor }
    }

    /// Turing: T4, RTX 20xx — the free GPU most learners start on.
    pub const SM_75: Arch = Arch::new(7, 5);
    /// Ampere A100: bf16 conversions in hardware (`cvt.rn.bf16.f32`), `cp.async`.
    pub const SM_80: Arch = Arch::new(8, 0);
    /// Ampere RTX 30xx.
    pub const SM_86: Arch = Arch::new(8, 6);
    /// Ada RTX 40xx.
    pub const SM_89: Arch = Arch::new(8, 9);
    /// Hopper H100 / H200: thread block clusters, TMA.
    pub const SM_90: Arch = Arch::new(9, 0);

    /// The oldest architecture the book runs on: CUDA 13's NVRTC compiles nothing older, and
    /// every kernel of the book compiles for it (tests/nvrtc.rs checks each one).
    pub const BOOK_MINIMUM: Arch = Arch::SM_75;

    /// From the driver's compute capability (`cuDeviceGetAttribute`'s major and minor).
    pub fn from_compute_capability((major, minor): (i32, i32)) -> Arch {
        Arch::new(major.max(0) as u32, minor.max(0) as u32)
    }

    /// From NVRTC's numbering (`nvrtcGetSupportedArchs`): 75 is 7.5, 90 is 9.0, 120 is 12.0.
    pub fn from_sm_number(number: u32) -> Arch {
        Arch::new(number / 10, number % 10)
    }

    /// The name NVRTC's `--gpu-architecture` takes: `sm_75`, `sm_90`, `sm_120`.
    pub fn sm(self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

/// Whether `kernel`, which needs `needs` or newer, runs on a GPU of architecture `device`:
/// `Err(Error::NotOnThisGpu)` with the reason when not. A kernel never needs less than
/// [`Arch::BOOK_MINIMUM`], whatever its registry entry says.
pub fn runs_on(kernel: &str, needs: Arch, device: Arch) -> Result<()> {
    let needs = needs.max(Arch::BOOK_MINIMUM);
    if device >= needs {
        Ok(())
    } else {
        Err(Error::NotOnThisGpu { kernel: kernel.to_string(), needs, device })
    }
}

/// The architectures that the test suite compiles every kernel for: those of `supported` (what
/// NVRTC says it can target) from the book's minimum on, oldest first, each once.
pub fn book_targets(supported: &[Arch]) -> Vec<Arch> {
    let mut targets: Vec<Arch> = supported.iter().copied().filter(|a| *a >= Arch::BOOK_MINIMUM).collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_are_named_and_ordered_as_nvrtc_and_the_driver_number_them() {
        assert_eq!(Arch::from_sm_number(75), Arch::SM_75);
        assert_eq!(Arch::from_sm_number(120).sm(), "sm_120");
        assert_eq!(Arch::from_sm_number(103), Arch::new(10, 3));
        assert_eq!(Arch::from_compute_capability((9, 0)), Arch::SM_90);
        assert_eq!(Arch::SM_86.to_string(), "sm_86");
        // Ordered by (major, minor), not by the digits run together: 10.0 is after 8.9.
        assert!(Arch::SM_75 < Arch::SM_80 && Arch::SM_89 < Arch::SM_90 && Arch::SM_90 < Arch::new(10, 0));
        assert!(Arch::new(8, 7) < Arch::SM_89);
    }

    #[test]
    fn a_kernel_runs_from_its_minimum_on_and_is_refused_with_the_reason_below_it() {
        // A kernel of the book's minimum on every GPU from sm_75, and on none before.
        for device in [Arch::SM_75, Arch::SM_80, Arch::SM_86, Arch::new(8, 7), Arch::SM_89, Arch::SM_90, Arch::new(10, 0), Arch::new(12, 1)] {
            assert_eq!(runs_on("reduce9", Arch::BOOK_MINIMUM, device), Ok(()), "{device}");
        }
        // A kernel that needs sm_80: not on a T4, on an A100 and everything after.
        let err = runs_on("bf16_kernel", Arch::SM_80, Arch::SM_75).unwrap_err();
        assert_eq!(err, Error::NotOnThisGpu { kernel: "bf16_kernel".into(), needs: Arch::SM_80, device: Arch::SM_75 });
        assert_eq!(err.to_string(), "bf16_kernel is not on this GPU: it needs sm_80 or newer, and this GPU is sm_75");
        assert_eq!(runs_on("bf16_kernel", Arch::SM_80, Arch::SM_80), Ok(()));
        assert_eq!(runs_on("bf16_kernel", Arch::SM_80, Arch::SM_90), Ok(()));
        // A Hopper-only kernel on an Ada card, and on a Blackwell one.
        assert!(matches!(runs_on("cluster", Arch::SM_90, Arch::SM_89), Err(Error::NotOnThisGpu { .. })));
        assert_eq!(runs_on("cluster", Arch::SM_90, Arch::new(12, 0)), Ok(()));
        // Below the book's minimum nothing runs, and the reason names the book's minimum even
        // where the registry entry claims less.
        let err = runs_on("reduce1", Arch::new(5, 0), Arch::new(7, 0)).unwrap_err();
        assert_eq!(err, Error::NotOnThisGpu { kernel: "reduce1".into(), needs: Arch::SM_75, device: Arch::new(7, 0) });
    }

    #[test]
    fn the_compile_targets_are_nvrtcs_architectures_from_the_books_minimum() {
        let nvrtc_13_0 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121].map(Arch::from_sm_number);
        let targets = book_targets(&nvrtc_13_0);
        assert_eq!(targets.first(), Some(&Arch::SM_75));
        assert_eq!(targets.len(), nvrtc_13_0.len());
        // An NVRTC 12 also targets Maxwell to Volta: those are left out, and nothing is twice.
        let nvrtc_12 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 90].map(Arch::from_sm_number);
        assert_eq!(book_targets(&nvrtc_12), [75, 80, 86, 87, 89, 90].map(Arch::from_sm_number).to_vec());
        assert!(book_targets(&[Arch::new(7, 0)]).is_empty());
    }
}
