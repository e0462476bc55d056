//! The sum's entry point: which kernel, block and grid a sum of `n` values of a type gets. One
//! rule, a pure function of the size, the element type and the GPU ([`choose`], tested without a
//! GPU), the way CUB's `dispatch_reduce.cuh` makes every launch decision in one place; and as
//! CUB's tuning policies name the measurement behind each constant, every band of the rule names
//! the results file and the rows that chose it ([`Evidence`]), and a test reads that file and
//! checks that the band's choice is the fastest measured there, within [`EVIDENCE_SLACK`].
//!
//! Use it through [`crate::Reducer::auto`] (a reducer for inputs of a given length) or
//! [`crate::sum`] (one sum, one call).

use crate::element::Dtype;
use crate::gpu::DeviceInfo;
use crate::kernels::names::{REDUCE10_TILES_TWO_PASS, REDUCE12, REDUCE6, REDUCE9};
use crate::kernels::{find, KernelSpec};

/// The measurements a band of the rule rests on: the rows of `kernel` at `block` in `file` (a
/// results file under `plots/data/`), against every correct kernel measured there at the same
/// sizes and element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub file: &'static str,
    pub kernel: &'static str,
    pub block: u32,
}

/// How much slower than the fastest measured kernel a band's choice may be, at a size of its
/// band, for its evidence to hold: one run's medians of kernels that are the same within the
/// noise differ by about this much at large sizes (two rounds of one run agreed to 0.1%, runs on
/// different H200s to 2–3%). Below about 2^22 values, where a sum takes a few microseconds, the
/// same launch timed at two moments of one run differed by more (the entry point against its
/// kernel's own row: up to 14% in the run of 2026-12-02, 7.5% in 2026-12-05's and 6.9% in a
/// second run that day, the benchmark chapter's `entry_twins.md`; 3-15% by what the process timed
/// before it, `plots/data/experiments/entry-point-order/`), so there a band rests on one run's
/// ordering, which the small-n runs repeat at every block size.
pub const EVIDENCE_SLACK: f64 = 0.05;

/// One band of the rule: inputs of at most `up_to_bytes` get `kernel` at `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub up_to_bytes: u64,
    pub kernel: &'static str,
    pub block: u32,
    /// Launch one block, whatever the kernel's grid rule would give (the small-n path: one
    /// launch, no partial sums to add).
    pub one_block: bool,
    /// Why, in a few words, for `reduction sum` and the skeleton chapter.
    pub why: &'static str,
    pub evidence: Evidence,
}

const BENCH: &str = "plots/data/nvidia-h200.csv";
/// Kernels 9-12 and the tile kernel at every block from 128 to 1024, 2^10 … 2^14 (the benchmark
/// times each kernel at its preferred block only).
const SMALL_N: &str = "plots/data/experiments/small-n/nvidia-h200.csv";

// ANCHOR: bands
/// The rule for 4-byte elements (f32, i32), from the benchmark's own data on the H200: at each
/// size, the kernel and block that were fastest for both element types, within
/// [`EVIDENCE_SLACK`] (up to 2^14 values from every block size, `tests/gpu-host.sh small-n`,
/// 2026-12-05; above, `reduction bench`, 2026-12-02). Other element types use the band of their
/// size in bytes.
pub const BANDS: &[Band] = &[
    Band {
        up_to_bytes: 4 << 10,
        kernel: REDUCE12,
        block: 256,
        one_block: false,
        why: "up to 1024 f32 values: one block of 256 threads, one 16-byte load each, one launch",
        evidence: Evidence { file: SMALL_N, kernel: REDUCE12, block: 256 },
    },
    Band {
        up_to_bytes: 8 << 10,
        kernel: REDUCE12,
        block: 128,
        one_block: false,
        why: "up to 2048 f32 values: one block of 128 threads, one round of four 16-byte loads each, one launch",
        evidence: Evidence { file: SMALL_N, kernel: REDUCE12, block: 128 },
    },
    Band {
        up_to_bytes: 16 << 10,
        kernel: REDUCE12,
        block: 256,
        one_block: false,
        why: "up to 4096 f32 values: one block of 256 threads, one round of four 16-byte loads each, one launch",
        evidence: Evidence { file: SMALL_N, kernel: REDUCE12, block: 256 },
    },
    Band {
        up_to_bytes: 32 << 10,
        kernel: REDUCE12,
        block: 512,
        one_block: false,
        why: "up to 8192 f32 values: one block of 512 threads, one round of four 16-byte loads each, one launch",
        evidence: Evidence { file: SMALL_N, kernel: REDUCE12, block: 512 },
    },
    Band {
        up_to_bytes: 64 << 10,
        kernel: REDUCE10_TILES_TWO_PASS,
        block: 512,
        one_block: false,
        why: "up to 16384 f32 values: one tile, so one block of 512 threads, eight 16-byte loads each in flight, and one launch",
        evidence: Evidence { file: SMALL_N, kernel: REDUCE10_TILES_TWO_PASS, block: 512 },
    },
    Band {
        up_to_bytes: 1 << 20,
        kernel: REDUCE6,
        block: 256,
        one_block: false,
        why: "up to 2^18 f32 values: one block per tile of 512 values, two or three short launches",
        evidence: Evidence { file: BENCH, kernel: REDUCE6, block: 256 },
    },
    Band {
        up_to_bytes: 16 << 20,
        kernel: REDUCE12,
        block: 256,
        one_block: false,
        why: "up to 2^22 f32 values: 16-byte loads over a resident grid of 256-thread blocks, then one block",
        evidence: Evidence { file: BENCH, kernel: REDUCE12, block: 256 },
    },
    Band {
        up_to_bytes: u64::MAX,
        kernel: REDUCE10_TILES_TWO_PASS,
        block: 512,
        one_block: false,
        why: "past 2^22 f32 values: one 512-thread block per tile of 16-byte loads that leaves as soon as it has written its sum, then one block adds the sums",
        evidence: Evidence { file: BENCH, kernel: REDUCE10_TILES_TWO_PASS, block: 512 },
    },
];
// ANCHOR_END: bands

/// Sizes where no band's kernel is within the slack of the fastest measured kernel, each with
/// what the data shows (`tests/dispatch.rs` accepts these and only these, and fails when one of
/// them is no longer a gap, so that the list cannot go stale). The book prints them beside the
/// rule.
pub const KNOWN_GAPS: &[(Dtype, usize, &str)] = &[
    (
        Dtype::F32,
        1_000_000,
        "kernel 12 at block 256 is further behind the fastest kernel measured at this size than the slack of sizes that are not powers of two allows (in this run and in that of 2026-11-30; the [benchmark chapter](benchmark.md) has the times). At this size 880 threads of kernel 12's grid have three packs left after their rounds of four 16-byte loads, and the build this run timed loaded them one at a time. Kernel 12's 4-byte entries now load them in one predicated round: the skeleton chapter's tables of the switches, timed by turns on an H100 and on the H200, show what that did at this size; the H200's benchmark has not timed that build yet",
    ),
];

/// What the entry point launches for one sum.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    pub kernel: &'static KernelSpec,
    pub block: u32,
    pub one_block: bool,
    pub band: &'static Band,
}

/// The band of the rule for `n` values of `dtype`, and its kernel, before any GPU's limits (the
/// band of the input's size in bytes, or the next that has an entry point for the type).
pub fn band_for(n: usize, dtype: Dtype) -> (&'static Band, &'static KernelSpec) {
    let bytes = (n as u64).saturating_mul(dtype.size_bytes() as u64);
    let start = BANDS.iter().position(|b| bytes <= b.up_to_bytes).unwrap_or(BANDS.len() - 1);
    BANDS[start..].iter().find_map(|b| find(b.kernel).ok().filter(|k| k.supports(dtype)).map(|k| (b, k))).unwrap_or_else(|| {
        let last = &BANDS[BANDS.len() - 1];
        (last, find(last.kernel).expect("the last band's kernel is registered"))
    })
}

/// The launch for a sum of `n` values of `dtype` on `device`: the band of the input's size in
/// bytes, its block clamped to what the kernel and the GPU allow. A band whose kernel has no
/// entry point for the element type (kernel 6 takes f32 and i32 only) hands the size to the next
/// band that has one.
pub fn choose(n: usize, dtype: Dtype, device: &DeviceInfo) -> Choice {
    let (band, kernel) = band_for(n, dtype);
    // The largest power of two the GPU allows per block (every kernel takes powers of two).
    let device_max = 1u32 << (31 - device.max_threads_per_block.max(32).leading_zeros());
    let block = band.block.min(kernel.max_block).min(device_max).max(kernel.min_block);
    Choice { kernel, block, one_block: band.one_block, band }
}

/// [`choose`], on this machine: [`without_cuda_headers`] where NVRTC cannot find the CUDA
/// headers. What [`crate::Reducer::auto`] launches.
pub fn choose_here(n: usize, dtype: Dtype, device: &DeviceInfo) -> Choice {
    let choice = choose(n, dtype, device);
    if choice.kernel.needs_cuda_headers && crate::nvrtc::cuda_include_dir().is_err() {
        without_cuda_headers(choice)
    } else {
        choice
    }
}

/// The choice where NVRTC cannot find the CUDA headers (a driver and NVRTC, no toolkit and no
/// header wheels): a kernel that includes CUB or cooperative groups gives way to kernel 9, the
/// same 16-byte walk with the book's own warp and block sums, at the same block (clamped to
/// kernel 9's range). Every other choice is kept.
pub fn without_cuda_headers(choice: Choice) -> Choice {
    if !choice.kernel.needs_cuda_headers {
        return choice;
    }
    let kernel = find(REDUCE9).expect("kernel 9 is registered");
    Choice { kernel, block: choice.block.clamp(kernel.min_block, kernel.max_block), ..choice }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn h200() -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            l2_cache_bytes: 60 << 20,
            memory_bus_width_bits: 6016,
            memory_clock_khz: 3_201_000,
            total_memory_bytes: 141 << 30,
            max_threads_per_block: 1024,
            max_shared_memory_per_block: 48 << 10,
            sm_clock_khz: 1_980_000,
            driver_cuda_version: (13, 0),
        }
    }

    #[test]
    fn bands_grow_and_every_choice_takes_its_element_type() {
        for pair in BANDS.windows(2) {
            assert!(pair[0].up_to_bytes < pair[1].up_to_bytes, "{pair:?}");
        }
        assert_eq!(BANDS.last().unwrap().up_to_bytes, u64::MAX, "the last band takes every size");
        // Whatever the size, the choice has an entry point for the element type (a band whose
        // kernel lacks one hands the size to the next band's).
        for dtype in Dtype::ALL {
            for band in BANDS {
                let n = (band.up_to_bytes.min(1 << 40) / dtype.size_bytes() as u64) as usize;
                let c = choose(n, dtype, &h200());
                assert!(c.kernel.supports(dtype), "{dtype} n={n}: {} has no entry point for it", c.kernel.name);
            }
        }
        for band in BANDS {
            let k = find(band.kernel).unwrap_or_else(|e| panic!("{}: {e}", band.kernel));
            assert!(k.supports(Dtype::F32) && k.supports(Dtype::I32), "{}: the bands are measured on f32 and i32", band.kernel);
            assert!(k.block_sizes().any(|b| b == band.block), "{} has no block {}", band.kernel, band.block);
            assert_eq!((band.evidence.kernel, band.evidence.block), (band.kernel, band.block), "a band's evidence is its own choice's rows");
            // One block is a grid cap, which only kernels that loop over their input honour.
            assert!(!band.one_block || k.grid == crate::kernels::GridRule::ResidentBlocks, "{}: one block needs a resident-grid kernel", band.kernel);
        }
    }

    #[test]
    fn the_choice_follows_the_size_in_bytes() {
        let d = h200();
        let pick = |n: usize, dtype| {
            let c = choose(n, dtype, &d);
            (c.kernel.name, c.block)
        };
        assert_eq!(pick(1, Dtype::F32), ("reduce12", 256));
        assert_eq!(pick(1024, Dtype::F32), ("reduce12", 256));
        assert_eq!(pick(1025, Dtype::F32), ("reduce12", 128));
        assert_eq!(pick(2048, Dtype::F32), ("reduce12", 128));
        assert_eq!(pick(4096, Dtype::F32), ("reduce12", 256));
        assert_eq!(pick(4097, Dtype::F32), ("reduce12", 512));
        assert_eq!(pick(8193, Dtype::F32), ("reduce10_tiles_two_pass", 512));
        assert_eq!(pick(1 << 15, Dtype::F32), ("reduce6", 256));
        assert_eq!(pick(1 << 22, Dtype::F32), ("reduce12", 256));
        assert_eq!(pick((1 << 22) + 1, Dtype::F32), ("reduce10_tiles_two_pass", 512));
        assert_eq!(pick(1 << 30, Dtype::F32), ("reduce10_tiles_two_pass", 512));
        assert_eq!(pick(1 << 30, Dtype::I32), ("reduce10_tiles_two_pass", 512));
        // Half the bytes per value: an f16 input of 8192 values is the f32 band of 4096.
        assert_eq!(pick(8192, Dtype::F16), ("reduce12", 256));
        assert_eq!(pick(2048, Dtype::F64), pick(4096, Dtype::F32));
        // A GPU that allows fewer threads per block gets a block it can launch.
        let small = DeviceInfo { max_threads_per_block: 512, ..h200() };
        assert_eq!(choose(1 << 14, Dtype::F32, &small).block, 512);
        let smaller = DeviceInfo { max_threads_per_block: 256, ..h200() };
        assert_eq!(choose(1 << 14, Dtype::F32, &smaller).block, 256);
        // Sizes past any band, and zero, still get a launch rule.
        assert_eq!(pick(usize::MAX, Dtype::F64).0, "reduce10_tiles_two_pass");
        assert_eq!(pick(0, Dtype::F32), ("reduce12", 256));
    }

    #[test]
    fn without_the_cuda_headers_every_choice_needs_none() {
        for dtype in Dtype::ALL {
            for band in BANDS {
                let n = (band.up_to_bytes.min(1 << 40) / dtype.size_bytes() as u64) as usize;
                let chosen = choose(n, dtype, &h200());
                let c = without_cuda_headers(chosen);
                assert!(!c.kernel.needs_cuda_headers && c.kernel.supports(dtype), "{dtype} n={n}: {}", c.kernel.name);
                assert!(c.kernel.block_sizes().any(|b| b == c.block), "{dtype} n={n}: {} has no block {}", c.kernel.name, c.block);
                if !chosen.kernel.needs_cuda_headers {
                    assert_eq!((c.kernel.name, c.block), (chosen.kernel.name, chosen.block), "a choice that needs no headers is kept");
                }
            }
        }
        assert_eq!(without_cuda_headers(choose(4096, Dtype::F32, &h200())).kernel.name, "reduce9");
    }
}
