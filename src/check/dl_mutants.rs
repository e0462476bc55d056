//! Planted bugs in the deep-learning kernels: each is a registered kernel file with one change,
//! made to the text NVRTC compiles ([`crate::mutants::plant_once`]: it must land exactly once), a
//! bug that a real implementation has had or could have. `tests/dl.rs` runs each on the GPU at
//! every tested shape and team, next to the unchanged kernel on the same input, and prints the
//! score; without a GPU, each planted file is compiled with NVRTC.

use crate::error::{Error, Result};
use crate::kernels::dl::{self, DlOp};
use crate::kernels::KernelSpec;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// One planted bug.
#[derive(Debug)]
pub struct DlMutant {
    pub name: &'static str,
    /// The op it is tested with (its file is the op's).
    pub op: DlOp,
    pub bug: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
    /// The inputs that expose it: `huge` rows (e^x overflows without the shift), `ignore`
    /// targets, exact integer `dy` for the column sums, or plain random values.
    pub inputs: Inputs,
    /// Only the teams whose code it changes run it (`tests/dl.rs`'s team names); empty: every team.
    pub only_teams: &'static [&'static str],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    Random,
    /// Every third row shifted by 10^4: e^x overflows f32 unless x − max is taken.
    HugeRows,
    /// One row in four ignored (and, in a batch of fewer than four rows, row 1).
    Ignored,
    /// One value of each row raised by 6, at a column of the row's own: the row's maximum lies in
    /// one lane's or one block's share, so that a merge that ignores a side's maximum is off by
    /// up to e^5 (on uniform values every share's maximum is about 1, and such a merge is not).
    Spike,
    /// dy small integers, so that dβ is exact and one row more or less shows.
    ExactDy,
    /// The first half of the rows, 16 at most, stand out (one logit of each raised by 12 + ln n,
    /// above what the row's other n values add to log Σ e^x, so that its loss is about 12 higher
    /// whatever the target; by 12 alone, 3 × 70001 was once not caught on the H200): a mean
    /// that leaves out a block's (sum, count) moves only as far as that block's losses differ from
    /// the mean, and on random rows, whose losses are all alike, that can be less than the bound
    /// (bf16 40000 × 64 on the H200: block 0's partial left out, not caught). Only half: where
    /// every row is raised they are alike again (f32 3 × 2, one row a block, not caught).
    LeadingRows,
    /// Random values in rows the tests' staged team (256 threads × 4 packs) holds in one chunk,
    /// with more packs than threads: each thread writes more than its first pack from the
    /// parameters it staged, so that a mix-up between its packs shows.
    HeldRows,
    /// Random values in rows whose last chunk, for the tests' split team (3 blocks × 128 threads
    /// × 8 packs), lacks at most one pack per thread: the rest that cross-entropy's split walks
    /// with a test on each thread's last pack only.
    RaggedTail,
}

// ANCHOR: catalogue
pub const ALL: &[DlMutant] = &[
    DlMutant {
        name: "shift_missing",
        op: DlOp::Softmax,
        bug: "e^x / Σ e^x without subtracting the max: every state claims a max of 0",
        find: "    ShiftedExpSumOf e{exp_shift(m == -infinity() ? 0.0f : m), 0.0f};  // −∞ values then give 0, NaN stays NaN\n    values(e);\n    return MaxSum{m, e.s * e.k.scale};",
        replace: "    ShiftedExpSumOf e{exp_shift(0.0f), 0.0f};\n    values(e);\n    return MaxSum{0.0f, e.s * e.k.scale};",
        inputs: Inputs::HugeRows,
        only_teams: &[],
    },
    DlMutant {
        name: "rescale_missing",
        op: DlOp::Softmax,
        bug: "the merge adds the two sums without rescaling each to the larger maximum: each lane's own max is ignored",
        find: "        return MaxSum{m, rescaled(a.max, a.sum, m) + rescaled(b.max, b.sum, m)};",
        replace: "        return MaxSum{m, a.sum + b.sum};",
        inputs: Inputs::Spike,
        only_teams: &[],
    },
    DlMutant {
        name: "row_tail_dropped",
        op: DlOp::Softmax,
        bug: "the row is taken one value short: its last value (its last 16-byte pack on the fast path) is neither summed nor written",
        find: "    r.n = task.cols;",
        replace: "    r.n = task.cols - 1;",
        inputs: Inputs::Random,
        only_teams: &[],
    },
    DlMutant {
        name: "gamma_beta_swapped",
        op: DlOp::LayerNorm,
        bug: "γ and β passed to the task in each other's place",
        find: "(dl::LayerNormTask<T>{x, gamma, beta, y, mean, rstd, rows, cols, ld, eps})",
        replace: "(dl::LayerNormTask<T>{x, beta, gamma, y, mean, rstd, rows, cols, ld, eps})",
        inputs: Inputs::Random,
        only_teams: &[],
    },
    DlMutant {
        name: "ignore_index_ignored",
        op: DlOp::CrossEntropy,
        bug: "the test for ignore_index is gone: an ignored row's target (-100) is taken as an index",
        find: "        if (t == ignore_index) {",
        replace: "        if (t == ignore_index && false) {",
        inputs: Inputs::Ignored,
        only_teams: &[],
    },
    DlMutant {
        name: "column_last_row_dropped",
        op: DlOp::LayerNormBwdGammaBeta,
        bug: "the chunk of rows ends one row early where it ends the matrix: the last row never reaches dγ and dβ",
        find: "r1 = min(rows, r0 + rows_per_chunk);",
        replace: "r1 = min(rows - 1, r0 + rows_per_chunk);",
        inputs: Inputs::ExactDy,
        only_teams: &[],
    },
    DlMutant {
        name: "cluster_block_dropped",
        op: DlOp::Softmax,
        bug: "the cluster's merge starts at slot 1: block 0's state, pushed like the others, is never combined",
        find: "slot[lane % C].state, C)",
        replace: "lane % C > 0 ? slot[lane % C].state : op.identity(), C)",
        inputs: Inputs::Random,
        only_teams: &["cluster", "cluster16"],
    },
    DlMutant {
        name: "split_tail_untested",
        op: DlOp::CrossEntropy,
        bug: "the split row's last chunk taken as whole: each thread's last pack, past the row's end, is summed as logits of 0",
        find: "HeldValues<T, VPT, VPT - 1>{h, h, packs, whole, s}",
        replace: "HeldValues<T, VPT, VPT>{h, h, packs, whole, s}",
        inputs: Inputs::RaggedTail,
        only_teams: &["split"],
    },
    DlMutant {
        name: "mean_partial_dropped",
        op: DlOp::CrossEntropy,
        // Block 0's, not the last block's: a block of one row may hold an ignored row (every 16th
        // of the tests' targets), whose partial is (0, 0), and leaving out nothing changes nothing.
        bug: "the mean leaves out block 0's partial (sum, count): its rows' losses are written but never averaged",
        find: "block_allreduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x, blockDim.x)",
        replace: "block_allreduce(op, ordered_fold<8>(op, partials, gridDim.x, threadIdx.x + 1, blockDim.x)",
        inputs: Inputs::LeadingRows,
        // The split's mean adds the rows' losses, not blocks' partials.
        only_teams: &["lanes", "lanes8", "block"],
    },
    DlMutant {
        name: "staged_pack_misread",
        op: DlOp::LayerNorm,
        bug: "the staged write takes each pack's γ and β from the slots of the thread's previous pack (its first pack's own)",
        find: "raw[p] = p < S ? *slot(k, p) :",
        replace: "raw[p] = p < S ? *slot(k > 0 ? k - 1 : 0, p) :",
        inputs: Inputs::HeldRows,
        only_teams: &["staged"],
    },
];
// ANCHOR_END: catalogue

impl DlMutant {
    /// The registered file the bug is planted in.
    pub fn original(&self) -> &'static KernelSpec {
        self.op.spec()
    }

    pub fn file_name(&self) -> String {
        format!("{} [planted: {}]", self.original().file, self.name)
    }

    /// The text NVRTC compiles: the original's, headers spliced in, with `find` replaced.
    pub fn source(&self) -> Result<String> {
        crate::mutants::plant_once(&self.original().full_source(), self.find, self.replace).map_err(|count| Error::Compile {
            file: self.file_name(),
            log: format!("the planted bug expects `{}` once in {} (headers spliced in), found it {count} times", self.find, self.original().file),
        })
    }

    /// The planted file as a registry entry that [`dl::runner::DlRunner::replacing`] launches
    /// in place of the original. Made once per process.
    pub fn spec(&'static self) -> Result<&'static KernelSpec> {
        static MADE: OnceLock<Mutex<HashMap<&'static str, &'static KernelSpec>>> = OnceLock::new();
        let mut made = MADE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(spec) = made.get(self.name) {
            return Ok(spec);
        }
        let original = self.original();
        // Leaked: a few strings per process, alive as long as the compiled module.
        let file: &'static str = Box::leak(self.file_name().into_boxed_str());
        let source: &'static str = Box::leak(self.source()?.into_boxed_str());
        let spec: &'static KernelSpec = Box::leak(Box::new(KernelSpec { file, source, ..*original }));
        made.insert(self.name, spec);
        Ok(spec)
    }
}

/// The planted bugs of one kernel file.
pub fn of_file(file: &str) -> impl Iterator<Item = &'static DlMutant> + '_ {
    ALL.iter().filter(move |m| m.original().file == file)
}

/// Every planted bug lands in a file the registry knows.
pub fn files() -> Vec<&'static KernelSpec> {
    dl::files().into_iter().filter(|f| of_file(f.file).next().is_some()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_lands_exactly_once_and_changes_the_source() {
        for m in ALL {
            let planted = m.source().unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert_ne!(planted, m.original().full_source(), "{}", m.name);
            assert!(planted.contains(m.replace), "{}", m.name);
        }
        let names: std::collections::HashSet<_> = ALL.iter().map(|m| m.name).collect();
        assert_eq!(names.len(), ALL.len());
        // The six (shift, rescale, tail, γ/β, ignore_index, a column's last row), the
        // cluster exchange's, the split's tested last pack, the mean over blocks' partials and
        // the staged blocks' write.
        assert_eq!(ALL.len(), 10);
    }
}
