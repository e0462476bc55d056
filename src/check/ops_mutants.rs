//! Planted bugs in the operator kernels (chapter 16): `kernels/operators.cuh` with one line
//! changed, each a mistake the operators' checks exist to catch — a max that starts from 0, ties
//! that go to the highest index, a Welford merge that drops the count, one block's state left out,
//! an index truncated to 32 bits, a NaN swallowed. `tests/ops.rs` runs each at every size 2^k ± 1
//! up to 2^26 (rows of up to 2^24 + 1 values), next to the unchanged kernel on the same input,
//! and prints the mutation score. Made exactly as [`crate::mutants`] makes its bugs: the change is
//! planted in the text NVRTC compiles ([`crate::mutants::plant_once`]), so a planted bug is the
//! book's own kernel with one mistake.

use crate::check::ops::Case;
use crate::element::Dtype;
use crate::error::{Error, Result};
use crate::kernels::ops::Op;
use crate::kernels::KernelSpec;
use crate::rows::Strategy;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The input that shows a bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shows {
    /// One of the extremes' planted cases ([`crate::check::ops::input`]).
    Case(Case),
    /// Normal values (mean 3, sd 2) with the share that block 0 (or a row's slice 0) reads moved
    /// by eight standard deviations: losing that share moves the variance by far more than the bound.
    ShiftedFirstShare,
    /// The largest value past index 2^31 (argmax of more than 2^31 values).
    PastInt32,
    /// Random values with a NaN as the last one (of the array, of each row).
    NanLast,
}

/// Where, besides `min_n`, the change can alter an answer at all: decided from the launch's
/// geometry alone (`tests/ops.rs` models which threads of a launch hold values), so that a size at
/// which no input could show the bug is named as such, never counted as caught or missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// At every size from `min_n` on.
    Always,
    /// Where a state that holds values is merged into another one's place: two states that hold
    /// values combined, or the identity first (the last block's and the split's finishes start
    /// from it). Lanes, warps and blocks put the lower state first, and the states that hold values
    /// are the lowest, so a merge that keeps the first count is right when one thread holds all.
    MergeIntoAnother,
    /// Where two states meet at all: a tie rule decides between two states that hold values, or
    /// between one and an empty state (an all-lowest input ties the identity).
    TwoStatesMeet,
    /// For argmax and argmin, where a state that holds no value is combined (a thread's first
    /// value replaces its empty state whatever the identity is); for max and min, always (the
    /// running value starts from the identity).
    EmptyState,
}

/// Where a bug is planted, and so which launches run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planted {
    /// In the operator itself: whole arrays, and rows with this strategy.
    Operator(Strategy),
    /// In the whole-array finish (reduce_whole).
    Whole,
    /// In the split row finish (rows_split_op).
    Split,
}

/// One planted bug.
#[derive(Debug)]
pub struct OpMutant {
    pub name: &'static str,
    /// The operators it is run on (all in one kernel file) and the input types.
    pub ops: &'static [Op],
    pub dtypes: &'static [Dtype],
    pub planted: Planted,
    /// The inputs that show it: a draw tries each; caught if any check fails.
    pub shows: &'static [Shows],
    pub reach: Reach,
    /// The smallest input (or row) on which it can show at all: below, every value goes through
    /// code the change does not touch (no 16-byte pack, one value).
    pub min_n: usize,
    /// The smallest compute capability whose code the change touches (sm_80's max.NaN).
    pub min_arch: u32,
    pub bug: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
}

const F32: &[Dtype] = &[Dtype::F32];
const EXTREME_OPS: &[Op] = &[Op::Max, Op::Argmin];

// ANCHOR: catalogue
pub const ALL: &[OpMutant] = &[
    OpMutant {
        name: "identity_zero",
        ops: &[Op::Max, Op::Argmin],
        dtypes: &[Dtype::F32, Dtype::F16],
        planted: Planted::Operator(Strategy::Block),
        shows: &[Shows::Case(Case::AllNegative)],
        reach: Reach::EmptyState,
        min_n: 1,
        min_arch: 0,
        bug: "max starts from 0 instead of −∞ (min from 0 instead of +∞)",
        find: "return __int_as_float(MAX ? 0xff800000 : 0x7f800000);",
        replace: "return 0.0f;",
    },
    OpMutant {
        name: "ties_to_highest_index",
        ops: &[Op::Argmax, Op::Argmin],
        dtypes: &[Dtype::F32, Dtype::BF16, Dtype::I32],
        planted: Planted::Operator(Strategy::Warp),
        shows: &[Shows::Case(Case::Ties), Shows::Case(Case::AllLowest)],
        reach: Reach::TwoStatesMeet,
        min_n: 1,
        min_arch: 0,
        bug: "of two equal values the combine keeps the higher index",
        find: "return b.index < a.index ? b : a;  // equal values: the lower index",
        replace: "return b.index > a.index ? b : a;  // equal values: the lower index",
    },
    OpMutant {
        name: "count_dropped_in_merge",
        ops: &[Op::MeanVar],
        dtypes: &[Dtype::F32, Dtype::F16],
        planted: Planted::Operator(Strategy::Block),
        shows: &[Shows::ShiftedFirstShare],
        reach: Reach::MergeIntoAnother,
        min_n: 2,
        min_arch: 0,
        bug: "Chan's merge keeps the first state's count instead of the sum of both",
        find: "r.count = count;",
        replace: "r.count = a.count;",
    },
    OpMutant {
        name: "block_state_left_out",
        ops: EXTREME_OPS,
        dtypes: F32,
        planted: Planted::Whole,
        shows: &[Shows::Case(Case::First)],
        // A grid of one block writes its result without the last block's loop: from two blocks
        // of 256 × 16 values on.
        reach: Reach::Always,
        min_n: 4097,
        min_arch: 0,
        bug: "the last block combines the blocks' states from block 1: block 0's is left out",
        find: "block_reduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x, blockDim.x)",
        replace: "block_reduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x + 1, blockDim.x)",
    },
    OpMutant {
        name: "block_state_left_out_mean_var",
        ops: &[Op::MeanVar, Op::Sumsq],
        dtypes: &[Dtype::F32, Dtype::BF16],
        planted: Planted::Whole,
        shows: &[Shows::ShiftedFirstShare],
        reach: Reach::Always,
        min_n: 4097,
        min_arch: 0,
        bug: "the last block combines the blocks' states from block 1: block 0's is left out",
        find: "block_reduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x, blockDim.x)",
        replace: "block_reduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x + 1, blockDim.x)",
    },
    OpMutant {
        name: "slice_state_left_out",
        ops: &[Op::Max],
        dtypes: F32,
        planted: Planted::Split,
        shows: &[Shows::Case(Case::First)],
        reach: Reach::Always,
        min_n: 1,
        min_arch: 0,
        bug: "the last row's finishing block combines its slices from slice 1: the row's first slice is left out",
        find: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) s = op.combine(s, load_cg_state(partials + row * slices + b));",
        replace: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) if (b > 0 || row + 1 < rows) s = op.combine(s, load_cg_state(partials + row * slices + b));",
    },
    OpMutant {
        name: "slice_state_left_out_mean_var",
        ops: &[Op::MeanVar],
        dtypes: F32,
        planted: Planted::Split,
        shows: &[Shows::ShiftedFirstShare],
        reach: Reach::Always,
        min_n: 1,
        min_arch: 0,
        bug: "the last row's finishing block combines its slices from slice 1: the row's first slice is left out",
        find: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) s = op.combine(s, load_cg_state(partials + row * slices + b));",
        replace: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) if (b > 0 || row + 1 < rows) s = op.combine(s, load_cg_state(partials + row * slices + b));",
    },
    OpMutant {
        name: "index_truncated_to_int32",
        ops: &[Op::Argmax],
        dtypes: &[Dtype::F16],
        planted: Planted::Whole,
        shows: &[Shows::PastInt32],
        reach: Reach::Always,
        // The change is in the index of a whole pack: the first pack that starts past 2^31 − 1
        // (at 2^31) is whole from 2^31 + 8 values on; below, the value past 2^31 is a tail's,
        // found one by one with its full index.
        min_n: (1 << 31) + 8,
        min_arch: 0,
        bug: "the index of the pack that holds a thread's best value is kept as a 32-bit int: past 2^31 it wraps",
        find: "t.index = first;",
        replace: "t.index = (u64)(int)first;",
    },
    OpMutant {
        name: "nan_swallowed",
        ops: &[Op::Max],
        dtypes: F32,
        planted: Planted::Operator(Strategy::Split),
        shows: &[Shows::Case(Case::Nan)],
        reach: Reach::Always,
        min_n: 1,
        min_arch: 80,
        bug: "max.f32 for max.NaN.f32: a NaN loses to any number, as in fmaxf",
        find: "if (MAX) asm(\"max.NaN.f32 %0, %1, %2;\"",
        replace: "if (MAX) asm(\"max.f32 %0, %1, %2;\"",
    },
    OpMutant {
        name: "nan_swallowed_f16",
        ops: &[Op::Max],
        dtypes: &[Dtype::F16],
        planted: Planted::Operator(Strategy::Block),
        shows: &[Shows::Case(Case::NanInFirstPack)],
        reach: Reach::Always,
        min_n: 8,
        min_arch: 80,
        bug: "max.f16x2 for max.NaN.f16x2 in the packed compare: a NaN in a pack loses to any number",
        find: "\"max.NaN.f16x2\", true",
        replace: "\"max.f16x2\", true",
    },
    OpMutant {
        name: "argmax_nan_swallowed",
        ops: &[Op::Argmax, Op::Argmin],
        dtypes: &[Dtype::F32, Dtype::BF16],
        planted: Planted::Operator(Strategy::Split),
        // A NaN that is a thread's first value is kept by any compare (so a NaN at index 0 can
        // hide the bug); one at the end always comes after a value or meets another state.
        shows: &[Shows::Case(Case::Nan), Shows::NanLast],
        reach: Reach::Always,
        // One value is its own argmax, whatever the compare.
        min_n: 2,
        min_arch: 0,
        bug: "argmax compares with > alone: a NaN is never better, so it never wins",
        find: "return is_nan(a) ? !is_nan(b) : (MAX ? a > b : a < b);",
        replace: "return MAX ? a > b : a < b;",
    },
];
// ANCHOR_END: catalogue

impl OpMutant {
    /// The kernel file it is planted in (its operators' file).
    pub fn original(&self) -> &'static KernelSpec {
        self.ops[0].spec()
    }

    /// The file name it is compiled (and cached) under.
    pub fn file_name(&self) -> String {
        format!("{} [planted: {}]", self.original().file, self.name)
    }

    /// The source NVRTC compiles: the file with its headers spliced in, `find` replaced (an error
    /// if `find` is not there exactly once), and only its operators' entry points instantiated
    /// (a fifth of the file's: compiled in a fifth of the time).
    pub fn source(&self) -> Result<String> {
        let planted = crate::mutants::plant_once(&self.original().full_source(), self.find, self.replace).map_err(|count| Error::Compile {
            file: self.file_name(),
            log: format!("the planted bug expects `{}` once in {}, found it {count} times", self.find, self.original().file),
        })?;
        let mine = |line: &str| {
            let Some(args) = line.strip_prefix("OP_ENTRIES(").or_else(|| line.strip_prefix("OP_ENTRIES_I32(")) else { return true };
            let name = args.split(',').next().unwrap_or("");
            self.ops.iter().any(|op| op.name() == name)
        };
        Ok(planted.lines().filter(|l| mine(l)).map(|l| format!("{l}\n")).collect())
    }

    /// The kernel with the bug, as a registry entry an [`crate::kernels::ops::OpReducer`] loads
    /// like the original. Made once per process.
    pub fn spec(&'static self) -> Result<&'static KernelSpec> {
        static MADE: OnceLock<Mutex<HashMap<&'static str, &'static KernelSpec>>> = OnceLock::new();
        let mut made = MADE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(spec) = made.get(self.name) {
            return Ok(spec);
        }
        // Leaked: a few small strings per process, alive as long as the compiled module.
        let file: &'static str = Box::leak(self.file_name().into_boxed_str());
        let source: &'static str = Box::leak(self.source()?.into_boxed_str());
        let spec: &'static KernelSpec = Box::leak(Box::new(KernelSpec { file, source, ..*self.original() }));
        made.insert(self.name, spec);
        Ok(spec)
    }

    /// The row strategy its row runs use (`None`: it is run on whole arrays only).
    pub fn row_strategy(&self) -> Option<Strategy> {
        match self.planted {
            Planted::Operator(s) => Some(s),
            Planted::Split => Some(Strategy::Split),
            Planted::Whole => None,
        }
    }

    /// Whether it is run on whole arrays.
    pub fn whole(&self) -> bool {
        self.planted != Planted::Split
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_lands_exactly_once_and_changes_the_source() {
        for m in ALL {
            let mutated = m.source().unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert!(mutated.contains(m.replace) && !mutated.contains(m.find) || m.replace.contains(m.find), "{}", m.name);
            for op in m.ops {
                assert!(mutated.contains(&format!("OP_ENTRIES({}, ", op.name())), "{}: {op}'s entries are instantiated", m.name);
            }
            assert!(m.ops.iter().all(|op| op.spec().file == m.original().file), "{}: its operators live in one file", m.name);
            assert!(m.ops.iter().all(|op| m.dtypes.iter().all(|&d| op.supports(d))), "{}", m.name);
        }
        let names: std::collections::HashSet<_> = ALL.iter().map(|m| m.name).collect();
        assert_eq!(names.len(), ALL.len(), "names are unique");
    }

    #[test]
    fn the_issues_bug_classes_are_all_planted() {
        for needed in ["identity_zero", "ties_to_highest_index", "count_dropped_in_merge", "block_state_left_out", "index_truncated_to_int32", "nan_swallowed"] {
            assert!(ALL.iter().any(|m| m.name == needed), "{needed}");
        }
    }
}
