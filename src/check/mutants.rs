//! Planted bugs: registered kernels with one line changed, each a bug the checks exist to catch
//! (a dropped value, a value counted twice, a lost or unwritten partial sum, a zero). A check
//! that has never caught anything proves nothing; `tests/mutation.rs` runs every planted bug on
//! exact-by-construction inputs at every size 2^k ± 1 up to 2^26 (rows up to 2^24 + 1 values)
//! and reports how many it caught, next to the unchanged kernel, which must pass.
//!
//! The change is made to the text NVRTC compiles (the kernel with its headers spliced in), so
//! a planted bug is the book's own kernel with one mistake, not a copy that could drift from it.
//! Each change must match exactly once; a test without a GPU checks that, and that every
//! mutated kernel still compiles.

use crate::error::{Error, Result};
use crate::kernels::KernelSpec;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use crate::kernels::names;

/// One planted bug.
#[derive(Debug)]
pub struct Mutant {
    /// Short name, for test names and the score.
    pub name: &'static str,
    /// The kernel it is planted in: a registry name, or `rows` (chapter 13's kernels).
    pub kernel: &'static str,
    /// For row kernels: the strategy whose kernel carries the change.
    pub strategy: Option<crate::rows::Strategy>,
    /// What goes wrong, in words.
    pub bug: &'static str,
    /// The line as it is in the kernel's source...
    pub find: &'static str,
    /// ...and as the bug has it.
    pub replace: &'static str,
}

// ANCHOR: catalogue
/// The bugs planted in the whole-array kernels. Each changes the result at every size, for any
/// input whose values are all nonzero (the exact inputs of [`crate::data`] are).
pub const WHOLE_ARRAY: &[Mutant] = &[
    Mutant {
        name: "skip_last_element",
        kernel: names::REDUCE3,
        strategy: None,
        bug: "the load's bound is one short: the last value is never read",
        find: "sdata[tid] = (i < n) ? in[i] : T(0);",
        replace: "sdata[tid] = (i + 1 < n) ? in[i] : T(0);",
    },
    Mutant {
        name: "tail_off_by_one",
        kernel: names::REDUCE9,
        strategy: None,
        bug: "the loop over the ragged tail after the last 16-byte pack stops one value early",
        find: "if (thread < n - tail) acc[0] += to_acc<Acc>(in[tail + thread]);",
        replace: "if (thread + 1 < n - tail) acc[0] += to_acc<Acc>(in[tail + thread]);",
    },
    Mutant {
        name: "count_one_twice",
        kernel: names::REDUCE9,
        strategy: None,
        bug: "`<=` for `<` in the head loop: the first value of the 16-byte body is counted twice",
        find: "if (thread < head) acc[0] += to_acc<Acc>(in[thread]);",
        replace: "if (thread <= head && thread < n) acc[0] += to_acc<Acc>(in[thread]);",
    },
    Mutant {
        name: "return_zero",
        kernel: names::REDUCE9,
        strategy: None,
        bug: "each block writes zero instead of its sum",
        find: "if (threadIdx.x == 0) out[blockIdx.x] = v;",
        replace: "if (threadIdx.x == 0) out[blockIdx.x] = Acc(0);",
    },
    Mutant {
        name: "skip_block_partial",
        kernel: names::REDUCE10_LAST_BLOCK,
        strategy: None,
        bug: "the last block adds the partial sums from index 1: block 0's partial is lost",
        find: "for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += __ldcg(partials + b);",
        replace: "for (unsigned b = threadIdx.x + 1; b < gridDim.x; b += blockDim.x) s += __ldcg(partials + b);",
    },
    Mutant {
        name: "partial_unwritten",
        kernel: names::REDUCE10_LAST_BLOCK,
        strategy: None,
        bug: "block 0 never writes its partial sum: the last block adds whatever was there before",
        find: "partials[blockIdx.x] = v;",
        replace: "if (blockIdx.x != 0) partials[blockIdx.x] = v;",
    },
    Mutant {
        name: "predicated_tail_off_by_one",
        kernel: names::REDUCE12,
        strategy: None,
        bug: "kernel 12's predicated last round (4-byte types) takes one value too few of the ragged tail after the last 16-byte pack",
        find: "has_tail = w.thread < n - w.tail;",
        replace: "has_tail = w.thread + 1 < n - w.tail;",
    },
    Mutant {
        name: "tile_tail_off_by_one",
        kernel: "reduce10_tiles",
        strategy: None,
        bug: "the last block's loop over the values after the last 16-byte pack stops one value early",
        find: "for (u64 i = tail + threadIdx.x; i < n; i += BLOCK) acc += to_acc<Acc>(in[i]);",
        replace: "for (u64 i = tail + threadIdx.x; i + 1 < n; i += BLOCK) acc += to_acc<Acc>(in[i]);",
    },
    Mutant {
        name: "tile_partial_lost",
        kernel: names::REDUCE10_TILES_TWO_PASS,
        strategy: None,
        bug: "block 0 writes zero for its tile's sum: its values never reach the second launch (or, alone, the result)",
        find: "if (threadIdx.x == 0) out[blockIdx.x] = v;",
        replace: "if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x == 0 ? Acc(0) : v;",
    },
    Mutant {
        name: "fold_misses_last_chunk",
        kernel: names::REDUCE15_NEUMAIER_TWO_PASS,
        strategy: None,
        bug: "the second launch folds one chunk sum too few: the last chunk's values are lost",
        find: "const Acc sum = fold_partials<Acc, FOLD_LOADS>(partials, chunks, warps);",
        replace: "const Acc sum = fold_partials<Acc, FOLD_LOADS>(partials, chunks - 1, warps);",
    },
];

/// The bugs planted in the row kernels, each run with the strategy whose kernel carries it.
pub const ROWS: &[Mutant] = &[
    Mutant {
        name: "row_tile_left_out",
        kernel: "rows",
        strategy: Some(crate::rows::Strategy::Split),
        bug: "the last block of the last row adds its slices' partials from slice 1: the row's first tile is left out",
        find: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) s += __ldcg(partials + row * slices + b);",
        replace: "for (unsigned b = threadIdx.x; b < slices; b += blockDim.x) if (b > 0 || row + 1 < rows) s += __ldcg(partials + row * slices + b);",
    },
    Mutant {
        name: "row_tail_off_by_one",
        kernel: "rows",
        strategy: Some(crate::rows::Strategy::Block),
        bug: "the loop over a row's ragged tail stops one value early",
        find: "for (u64 i = t; i < n - tail; i += threads) acc[0] += to_acc<float>(p[tail + i]);",
        replace: "for (u64 i = t; i + 1 < n - tail; i += threads) acc[0] += to_acc<float>(p[tail + i]);",
    },
    Mutant {
        name: "row_sum_unwritten",
        kernel: "rows",
        strategy: Some(crate::rows::Strategy::Warp),
        bug: "the warp of the last row never writes its sum",
        find: "if (lane == 0) out[row] = v;",
        replace: "if (lane == 0 && row + 1 < rows) out[row] = v;",
    },
    Mutant {
        name: "row_taken_as_whole_packs",
        kernel: "rows",
        strategy: Some(crate::rows::Strategy::Warp),
        bug: "a team skips the alignment walk for rows on 16-byte boundaries without asking whether their length is whole packs: the values after a row's last pack are left out",
        find: "const bool whole_packs = (((u64)in | stride * sizeof(In)) & 15) == 0 && cols % PER == 0;",
        replace: "const bool whole_packs = (((u64)in | stride * sizeof(In)) & 15) == 0;",
    },
];
// ANCHOR_END: catalogue

/// Planted bugs in code that only the 4-byte types' entries run (kernels/vector_load.cuh's
/// predicated round): the other types' entries of the same kernel do not have the line.
const FOUR_BYTE_ONLY: &[&str] = &["predicated_tail_off_by_one"];

impl Mutant {
    /// Whether the planted line is in the code `dtype`'s entries run.
    pub fn applies_to(&self, dtype: crate::element::Dtype) -> bool {
        !FOUR_BYTE_ONLY.contains(&self.name) || dtype.size_bytes() == 4
    }

    /// The kernel the bug is planted in, unchanged.
    pub fn original(&self) -> Result<&'static KernelSpec> {
        if self.kernel == "rows" {
            Ok(&crate::kernels::ROWS)
        } else {
            crate::kernels::find(self.kernel)
        }
    }

    /// The source NVRTC compiles for the planted bug: the original's, headers spliced in, with
    /// `find` replaced. An error if `find` does not occur exactly once (the kernel changed and
    /// the bug no longer lands where it should).
    pub fn source(&self) -> Result<String> {
        plant_once(&self.original()?.full_source(), self.find, self.replace).map_err(|count| Error::Compile {
            file: self.file_name(),
            log: format!("the planted bug expects `{}` once in {}, found it {count} times", self.find, self.original().map_or(self.kernel, |k| k.file)),
        })
    }

    /// The file name the mutated kernel is compiled (and cached) under.
    pub fn file_name(&self) -> String {
        let file = self.original().map(|k| k.file).unwrap_or(self.kernel);
        format!("{file} [planted: {}]", self.name)
    }

    /// The kernel with the bug, as a registry entry that [`crate::Reducer::with_spec`] or
    /// [`crate::rows::RowReducer::with_spec`] launches like any other. Made once per process.
    pub fn spec(&'static self) -> Result<&'static KernelSpec> {
        static MADE: OnceLock<Mutex<HashMap<&'static str, &'static KernelSpec>>> = OnceLock::new();
        let mut made = MADE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(spec) = made.get(self.name) {
            return Ok(spec);
        }
        let original = self.original()?;
        // Leaked: a handful of small strings per process, alive as long as the compiled module.
        let file: &'static str = Box::leak(self.file_name().into_boxed_str());
        let source: &'static str = Box::leak(self.source()?.into_boxed_str());
        // A dependent launch is only safe for a kernel that still waits for the launch before it.
        let dependent_launch = original.dependent_launch && source.contains("griddepcontrol.wait");
        let spec: &'static KernelSpec = Box::leak(Box::new(KernelSpec { file, source, dependent_launch, ..*original }));
        made.insert(self.name, spec);
        Ok(spec)
    }
}

/// `source` with `find` replaced by `replace`, where `find` occurs exactly once; otherwise the
/// number of times it occurs (the source changed, and the bug would land elsewhere or nowhere).
/// The planted bugs here and the exercises' near misses are both made this way.
pub fn plant_once(source: &str, find: &str, replace: &str) -> std::result::Result<String, usize> {
    match source.matches(find).count() {
        1 => Ok(source.replacen(find, replace, 1)),
        count => Err(count),
    }
}

/// Every planted bug.
pub fn all() -> impl Iterator<Item = &'static Mutant> {
    WHOLE_ARRAY.iter().chain(ROWS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_lands_exactly_once_and_changes_the_source() {
        for m in all() {
            let mutated = m.source().unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert_ne!(mutated, m.original().unwrap().full_source(), "{}", m.name);
            assert!(mutated.contains(m.replace), "{}", m.name);
        }
        assert!(all().map(|m| m.name).collect::<std::collections::HashSet<_>>().len() == all().count(), "names are unique");
    }

    #[test]
    fn a_bug_that_no_longer_lands_is_an_error() {
        let stale = Mutant { name: "stale", kernel: "reduce3", strategy: None, bug: "", find: "no such line", replace: "" };
        assert!(matches!(stale.source(), Err(Error::Compile { .. })));
    }
}
