//! The exercises: for each, the chapter it closes, the stub the reader edits, a reference
//! solution, the launch rules the checker keeps, and the near misses — the reference solution
//! with one classic mistake planted — that the checker must reject.

use super::launch::{Layout, Op, SharedRule};
use crate::child::Sanitizer;
use crate::element::Dtype;
use crate::kernels::names;

/// Who finds a near miss: the values the checker compares, or a compute-sanitizer tool (a race
/// can give the right sum on one GPU and a wrong one on the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaughtBy {
    Values,
    Sanitizer(Sanitizer),
    /// Only the case past 2^31 values ([`super::cases::LARGE_N`]) shows it; on a GPU without the
    /// memory for that case it is not caught, and the test says so.
    LargeCase,
    /// No case on one GPU can show it: the checker reads the source ([`super::fence`]).
    Source,
}

/// The reference solution with one classic mistake: `find` (exactly once in the solution)
/// replaced by `replace`.
#[derive(Debug)]
pub struct NearMiss {
    pub name: &'static str,
    pub mistake: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
    pub caught_by: CaughtBy,
}

/// One exercise of the book.
#[derive(Debug)]
pub struct Exercise {
    pub number: u32,
    /// The file stem under `kernels/exercises/` (and `solutions/`).
    pub stem: &'static str,
    /// The chapter file it closes.
    pub chapter: &'static str,
    pub title: &'static str,
    pub layout: Layout,
    pub shared: SharedRule,
    pub block: u32,
    pub op: Op,
    /// The book's kernel the solved exercise is timed beside.
    pub book_kernel: &'static str,
    /// Said with every failure of this exercise.
    pub hint: &'static str,
    pub stub: &'static str,
    pub solution: &'static str,
    pub near_misses: &'static [NearMiss],
}

/// The marker every untouched stub carries: a stub with it must fail the checker.
pub const TODO_MARKER: &str = "TODO(exercise)";

macro_rules! files {
    ($stem:literal) => {
        (
            include_str!(concat!("../../kernels/exercises/", $stem, ".cu")),
            include_str!(concat!("../../kernels/exercises/solutions/", $stem, ".cu")),
        )
    };
}

const F1: (&str, &str) = files!("01_strided_index");
const F2: (&str, &str) = files!("02_padded_shared");
const F3: (&str, &str) = files!("03_sequential");
const F4: (&str, &str) = files!("04_first_add");
const F5: (&str, &str) = files!("05_last_warp");
const F6: (&str, &str) = files!("06_block_of_300");
const F7: (&str, &str) = files!("07_grid_stride");
const F8: (&str, &str) = files!("08_warp_max");
const F9: (&str, &str) = files!("09_vector_loads");
const F10: (&str, &str) = files!("10_last_block");
const F11: (&str, &str) = files!("11_argmax_ties");
const F12: (&str, &str) = files!("12_welford_merge");
const F13: (&str, &str) = files!("13_half_max");
const F14: (&str, &str) = files!("14_online_merge");
const F15: (&str, &str) = files!("15_layer_norm_gamma");

/// The launch rules of the operator exercises are the book's operators' (OpReducer's), not a
/// layout of their own: these fields are unused for them.
const OPERATOR_RULES: (Layout, SharedRule) = (Layout::LastBlock, SharedRule::Static);

const DROP_LAST: NearMiss = NearMiss {
    name: "drops_last_element",
    mistake: "the load's bound is one short: the last value is never read",
    find: "= (i < n) ? in[i] : T(0);",
    replace: "= (i + 1 < n) ? in[i] : T(0);",
    caught_by: CaughtBy::Values,
};

const TILE_RULES: (Layout, SharedRule) = (Layout::Tiles { per_thread: 1 }, SharedRule::PerThread);

pub static EXERCISES: &[Exercise] = &[
    Exercise {
        number: 1, stem: "01_strided_index", chapter: "01_interleaved_divergent.md",
        title: "take the divergence out of kernel 1",
        layout: TILE_RULES.0, shared: TILE_RULES.1, block: 256, op: Op::Sum, book_kernel: names::REDUCE2,
        hint: "at step s, thread tid adds sdata[2*s*tid + s] into sdata[2*s*tid] while 2*s*tid < blockDim.x, then every thread waits at __syncthreads()",
        stub: F1.0, solution: F1.1,
        near_misses: &[
            DROP_LAST,
            NearMiss { name: "stops_a_step_early", mistake: "the tree stops at s < blockDim.x / 2: the two halves are never added",
                find: "s < blockDim.x; s *= 2", replace: "s < blockDim.x / 2; s *= 2", caught_by: CaughtBy::Values },
            NearMiss { name: "no_barrier_in_tree", mistake: "no __syncthreads() between the tree's steps: a step reads words the previous one is still writing",
                find: "        }\n        __syncthreads();\n    }\n    // ANCHOR_END: solution", replace: "        }\n    }\n    // ANCHOR_END: solution",
                caught_by: CaughtBy::Sanitizer(Sanitizer::Racecheck) },
        ],
    },
    Exercise {
        number: 2, stem: "02_padded_shared", chapter: "02_interleaved_strided.md",
        title: "pad kernel 2's shared array, and beat kernel 2",
        layout: Layout::Tiles { per_thread: 1 }, shared: SharedRule::PerThreadPadded, block: 256, op: Op::Sum, book_kernel: names::REDUCE2,
        hint: "every index into sdata, in the load, in the tree and in the result, goes through PAD(); the array has blockDim.x + blockDim.x / 32 words",
        stub: F2.0, solution: F2.1,
        near_misses: &[
            NearMiss { name: "reads_unpadded", mistake: "the tree reads sdata[index + s] without PAD(): it adds the wrong word",
                find: "sdata[PAD(index)] += sdata[PAD(index + s)];", replace: "sdata[PAD(index)] += sdata[index + s];", caught_by: CaughtBy::Values },
            NearMiss { name: "load_unpadded", mistake: "the load writes sdata[tid], the tree reads padded words",
                find: "sdata[PAD(tid)] = (i < n)", replace: "sdata[tid] = (i < n)", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 3, stem: "03_sequential", chapter: "03_sequential.md",
        title: "sequential addressing",
        layout: TILE_RULES.0, shared: TILE_RULES.1, block: 256, op: Op::Sum, book_kernel: names::REDUCE3,
        hint: "s runs from blockDim.x / 2 down to 1; thread tid < s adds sdata[tid + s]; a __syncthreads() after every step",
        stub: F3.0, solution: F3.1,
        near_misses: &[
            NearMiss { name: "sums_99_percent", mistake: "the load stops at 99% of the input (a cheat that a uniform input would not catch)",
                find: "= (i < n) ? in[i] : T(0);", replace: "= (i < n - n / 100) ? in[i] : T(0);", caught_by: CaughtBy::Values },
            NearMiss { name: "load_unbounded", mistake: "the load has no bound: right only when n is a multiple of the block",
                find: "sdata[tid] = (i < n) ? in[i] : T(0);", replace: "sdata[tid] = in[i];", caught_by: CaughtBy::Values },
            NearMiss { name: "stops_before_last_step", mistake: "the loop ends at s > 1: sdata[1] is never added",
                find: "s > 0; s >>= 1", replace: "s > 1; s >>= 1", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 4, stem: "04_first_add", chapter: "04_first_add_during_load.md",
        title: "the first add during the load",
        layout: Layout::Tiles { per_thread: 2 }, shared: SharedRule::PerThread, block: 256, op: Op::Sum, book_kernel: names::REDUCE4,
        hint: "the tile of a block starts at blockIdx.x * 2 * blockDim.x; thread tid adds in[i] and in[i + blockDim.x], each only if it is inside the input",
        stub: F4.0, solution: F4.1,
        near_misses: &[
            NearMiss { name: "second_load_unchecked", mistake: "the second load has no bound: it reads past the end of the input",
                find: "if (i + blockDim.x < n) v += in[i + blockDim.x];", replace: "v += in[i + blockDim.x];", caught_by: CaughtBy::Values },
            NearMiss { name: "tiles_overlap", mistake: "the tile still starts at blockIdx.x * blockDim.x: neighbouring blocks read the same values",
                find: "(u64)blockIdx.x * (blockDim.x * 2) + tid", replace: "(u64)blockIdx.x * blockDim.x + tid", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 5, stem: "05_last_warp", chapter: "05_unroll_last_warp.md",
        title: "the last warp, with __syncwarp() or shuffles",
        layout: Layout::Tiles { per_thread: 2 }, shared: SharedRule::PerThread, block: 256, op: Op::Sum, book_kernel: names::REDUCE5,
        hint: "warp 0 still has 64 values to add (sdata[0 .. 64)): s = 32, 16, ..., 1, and a __syncwarp() between every read and the write after it",
        stub: F5.0, solution: F5.1,
        near_misses: &[
            NearMiss { name: "starts_at_16", mistake: "the last warp starts at s = 16: sdata[32 .. 64) is never added",
                find: "for (unsigned s = 32; s > 0; s >>= 1) {\n            w", replace: "for (unsigned s = 16; s > 0; s >>= 1) {\n            w", caught_by: CaughtBy::Values },
            NearMiss { name: "read_write_race", mistake: "no __syncwarp() between a lane's read and its neighbour's write (Harris's 2007 lockstep assumption)",
                find: "            __syncwarp();  // every lane has read before any lane writes\n", replace: "", caught_by: CaughtBy::Sanitizer(Sanitizer::Racecheck) },
        ],
    },
    Exercise {
        number: 6, stem: "06_block_of_300", chapter: "06_complete_unroll.md",
        title: "a block of 300 threads that still sums right",
        layout: TILE_RULES.0, shared: TILE_RULES.1, block: 300, op: Op::Sum, book_kernel: names::REDUCE3,
        hint: "halving 300 gives 150, 75, 37: the odd step loses a value; start from 512 and add sdata[tid + s] only where tid + s < blockDim.x",
        stub: F6.0, solution: F6.1,
        near_misses: &[
            NearMiss { name: "power_of_two_tree", mistake: "the tree starts from blockDim.x / 2, as if the block were a power of two",
                find: "unsigned width = 1;\n    while (width < blockDim.x) width *= 2;", replace: "unsigned width = blockDim.x;", caught_by: CaughtBy::Values },
            DROP_LAST,
        ],
    },
    Exercise {
        number: 7, stem: "07_grid_stride", chapter: "07_multiple_elements.md",
        title: "a grid-stride loop",
        layout: Layout::Resident { per_thread: 2 }, shared: SharedRule::PerThread, block: 256, op: Op::Sum, book_kernel: names::REDUCE7,
        hint: "start at blockIdx.x * 2 * blockDim.x + tid, add in[i] and in[i + blockDim.x] (if inside), step by 2 * blockDim.x * gridDim.x until i >= n",
        stub: F7.0, solution: F7.1,
        near_misses: &[
            NearMiss { name: "stride_too_short", mistake: "the stride is blockDim.x * gridDim.x: every value but the first tile's is read twice",
                find: "(u64)blockDim.x * 2 * gridDim.x", replace: "(u64)blockDim.x * gridDim.x", caught_by: CaughtBy::Values },
            NearMiss { name: "second_load_unchecked", mistake: "the second value of a step has no bound: past the end it reads what follows the input",
                find: "if (i + blockDim.x < n) sum += in[i + blockDim.x];", replace: "sum += in[i + blockDim.x];", caught_by: CaughtBy::Values },
            NearMiss { name: "int_index", mistake: "the index is a 32-bit int, as the seed's host code took `int N`: past 2^31 values it wraps and the walk stops",
                find: "u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;", replace: "int i = blockIdx.x * (blockDim.x * 2) + tid;", caught_by: CaughtBy::LargeCase },
        ],
    },
    Exercise {
        number: 8, stem: "08_warp_max", chapter: "08_warp_shuffle.md",
        title: "a maximum, with warp shuffles",
        layout: Layout::Resident { per_thread: 1 }, shared: SharedRule::Static, block: 256, op: Op::Max, book_kernel: names::REDUCE8,
        hint: "m = max(m, __shfl_down_sync(0xffffffff, m, offset)) for offset 16, 8, 4, 2, 1; lanes and threads with nothing to read start from lowest<T>(), never 0",
        stub: F8.0, solution: F8.1,
        near_misses: &[
            NearMiss { name: "starts_from_zero", mistake: "a thread starts from 0, which beats every value of an all-negative input",
                find: "T m = lowest<T>();", replace: "T m = T(0);", caught_by: CaughtBy::Values },
            NearMiss { name: "pads_with_zero", mistake: "warp 0's lanes past the last warp pass 0 instead of the lowest value",
                find: "warp_maxima[lane] : lowest<T>()", replace: "warp_maxima[lane] : T(0)", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 9, stem: "09_vector_loads", chapter: "09_vectorized.md",
        title: "16-byte loads, from an input that starts anywhere",
        layout: Layout::Resident { per_thread: 4 }, shared: SharedRule::Static, block: 256, op: Op::Sum, book_kernel: names::REDUCE9,
        hint: "head = ((16 - (address & 15)) & 15) / sizeof(T) elements come before the first 16-byte boundary (at most n); the packs start at in + head; what is left after the last whole pack is the tail",
        stub: F9.0, solution: F9.1,
        near_misses: &[
            NearMiss { name: "assumes_aligned", mistake: "no head: the packs are read from `in`, which may not be 16-byte aligned",
                find: "u64 head = ((16 - ((u64)in & 15)) & 15) / sizeof(T);", replace: "u64 head = 0;", caught_by: CaughtBy::Values },
            NearMiss { name: "tail_off_by_one", mistake: "the tail stops one value early",
                find: "if (thread < n - tail)", replace: "if (thread + 1 < n - tail)", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 10, stem: "10_last_block", chapter: "10_single_pass.md",
        title: "one launch, finished by the last block",
        layout: Layout::LastBlock, shared: SharedRule::Static, block: 256, op: Op::Sum, book_kernel: names::REDUCE10_LAST_BLOCK,
        hint: "thread 0 writes partials[blockIdx.x], calls __threadfence(), then last = atomicAdd(ticket, 1) == gridDim.x - 1; the last block adds the partials (read them with __ldcg), writes out[0] and sets *ticket = 0",
        stub: F10.0, solution: F10.1,
        near_misses: &[
            NearMiss { name: "ticket_not_reset", mistake: "the last block leaves the counter where it is: the next launch has no last block",
                find: "        *ticket = 0;  // ready for the next launch\n", replace: "", caught_by: CaughtBy::Values },
            NearMiss { name: "last_ticket_off_by_one", mistake: "the last block waits for ticket gridDim.x, which no block draws",
                find: "== gridDim.x - 1;", replace: "== gridDim.x;", caught_by: CaughtBy::Values },
            NearMiss { name: "first_partial_skipped", mistake: "the last block adds the partials from index 1: block 0's sum is lost",
                find: "for (unsigned b = threadIdx.x; b < gridDim.x;", replace: "for (unsigned b = threadIdx.x + 1; b < gridDim.x;", caught_by: CaughtBy::Values },
            NearMiss { name: "no_fence", mistake: "no __threadfence() between the partial's write and the ticket: right on one GPU, not promised by the memory model",
                find: "        __threadfence();  // the partial sum is visible before the ticket is taken\n", replace: "", caught_by: CaughtBy::Source },
            NearMiss { name: "ticket_before_partial", mistake: "the ticket is taken before the partial is written: the last block can add a partial not written yet",
                find: "        partials[blockIdx.x] = v;\n        __threadfence();  // the partial sum is visible before the ticket is taken\n        last = atomicAdd(ticket, 1u) == gridDim.x - 1;\n",
                replace: "        last = atomicAdd(ticket, 1u) == gridDim.x - 1;\n        partials[blockIdx.x] = v;\n        __threadfence();  // the partial sum is visible before the ticket is taken\n",
                caught_by: CaughtBy::Source },
        ],
    },
    Exercise {
        number: 11, stem: "11_argmax_ties", chapter: "operators.md",
        title: "argmax, with the tie rule",
        layout: OPERATOR_RULES.0, shared: OPERATOR_RULES.1, block: 256,
        op: Op::Operator { op: crate::kernels::ops::Op::Argmax, dtypes: &[Dtype::F32, Dtype::BF16, Dtype::I32] }, book_kernel: "argmax_whole",
        hint: "a NaN beats every number (a != a is true only of NaN); of two numbers the larger wins; on a tie (equal values, or two NaNs) keep the pair with the lower index",
        stub: F11.0, solution: F11.1,
        near_misses: &[
            NearMiss { name: "ties_to_higher_index", mistake: "on a tie the pair with the higher index is kept",
                find: "return a.index <= b.index ? a : b;", replace: "return a.index >= b.index ? a : b;", caught_by: CaughtBy::Values },
            NearMiss { name: "nan_not_first", mistake: "no NaN rule: a NaN loses or wins by the order the pairs come in",
                find: "        if (a_nan != b_nan) return a_nan ? a : b;                            // NaN beats every number\n", replace: "", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 12, stem: "12_welford_merge", chapter: "operators.md",
        title: "a Welford merge across a warp",
        layout: OPERATOR_RULES.0, shared: OPERATOR_RULES.1, block: 256,
        op: Op::Operator { op: crate::kernels::ops::Op::MeanVar, dtypes: &[Dtype::F32, Dtype::F16] }, book_kernel: "mean_var_whole",
        hint: "n = n_a + n_b (and if n is 0, return an empty state); delta = mean_b - mean_a; mean = mean_a + delta * n_b / n; M2 = M2_a + M2_b + delta * delta * n_a * n_b / n",
        stub: F12.0, solution: F12.1,
        near_misses: &[
            NearMiss { name: "count_dropped", mistake: "the merged state keeps the first state's count",
                find: "r.count = count;", replace: "r.count = a.count;", caught_by: CaughtBy::Values },
            NearMiss { name: "no_spread_term", mistake: "M2 adds the two states' M2 but not the spread between their means",
                find: "r.m2 = a.m2 + b.m2 + delta * delta * a.count * share;", replace: "r.m2 = a.m2 + b.m2;", caught_by: CaughtBy::Values },
            NearMiss { name: "empty_merge_0_by_0", mistake: "two empty states (count 0) are merged by dividing 0 by 0",
                find: "        if (count == 0.0f) return a;  // two empty states: nothing to weigh (and no 0 / 0)\n", replace: "", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 13, stem: "13_half_max", chapter: "operators.md",
        title: "a block max over f16, without converting a value",
        layout: OPERATOR_RULES.0, shared: OPERATOR_RULES.1, block: 256,
        op: Op::Operator { op: crate::kernels::ops::Op::Max, dtypes: &[Dtype::F16] }, book_kernel: "max_whole",
        hint: "a NaN has all exponent bits set and a fraction that is not zero ((bits & 0x7FFF) > 0x7C00); for the rest, map sign and magnitude to an int that orders like the value (negative: minus the magnitude) and compare those",
        stub: F13.0, solution: F13.1,
        near_misses: &[
            NearMiss { name: "bits_compared_unsigned", mistake: "the bits are compared as unsigned integers: every negative value orders backwards",
                find: "return ka >= kb ? a : b;", replace: "return a >= b ? a : b;", caught_by: CaughtBy::Values },
            NearMiss { name: "negative_nan_swallowed", mistake: "no NaN rule: a NaN with its sign bit set orders below -inf and is lost",
                find: "        if (a_nan || b_nan) return a_nan ? a : b;  // NaN propagates, whatever its sign\n", replace: "", caught_by: CaughtBy::Values },
            NearMiss { name: "starts_from_zero", mistake: "the identity is +0 (bits 0): larger than every value of an all-negative input",
                find: "{ return 0xFC00u; }", replace: "{ return 0u; }", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 14, stem: "14_online_merge", chapter: "dl_softmax.md",
        title: "the online-softmax merge",
        layout: Layout::Fused(super::fused::Fused::Softmax), shared: SharedRule::Static, block: super::fused::BLOCK, op: Op::Sum, book_kernel: "dl_softmax",
        hint: "M = max(a.m, b.m); each sum rescaled to M: s·e^(m − M); a side whose m equals M keeps its sum as it is (that also keeps an empty side, (-inf, 0), from giving NaN)",
        stub: F14.0, solution: F14.1,
        near_misses: &[
            NearMiss { name: "rescale_missing", mistake: "the two sums are added as they are, each still relative to its own maximum (the bug of KarhouTam/cuda-kernels issue 1)",
                find: "    return Pair{m, sa + sb};", replace: "    return Pair{m, a.s + b.s};", caught_by: CaughtBy::Values },
            NearMiss { name: "rescale_one_side", mistake: "only b's sum is rescaled: right whenever a holds the larger maximum, wrong otherwise",
                find: "    const float sa = a.m == m ? a.s : a.s * __expf(a.m - m);", replace: "    const float sa = a.s;", caught_by: CaughtBy::Values },
            NearMiss { name: "no_empty_guard", mistake: "both sums always multiplied by e^(m_side − M): an empty side (-inf, 0) meeting another gives e^(-inf + inf) = NaN",
                find: "    const float sa = a.m == m ? a.s : a.s * __expf(a.m - m);\n    const float sb = b.m == m ? b.s : b.s * __expf(b.m - m);",
                replace: "    const float sa = a.s * __expf(a.m - m);\n    const float sb = b.s * __expf(b.m - m);", caught_by: CaughtBy::Values },
        ],
    },
    Exercise {
        number: 15, stem: "15_layer_norm_gamma", chapter: "dl_norms.md",
        title: "LayerNorm's γ gradient, down the columns",
        layout: Layout::Fused(super::fused::Fused::Gamma), shared: SharedRule::Static, block: super::fused::BLOCK, op: Op::Sum, book_kernel: "dl_layer_norm_bwd_gamma_beta",
        hint: "warp w adds dy[r][col] · (x[r][col] − mean[r]) · rstd[r] for r = w, w + 8, ... < rows; sums[warp][lane] = g; __syncthreads(); warp 0 adds sums[1..8][lane] and writes dgamma[col] (col < cols)",
        stub: F15.0, solution: F15.1,
        near_misses: &[
            NearMiss { name: "last_row_dropped", mistake: "the walk stops one row early: the last row never reaches dγ",
                find: "for (u64 r = warp; r < rows; r += 8)", replace: "for (u64 r = warp; r + 1 < rows; r += 8)", caught_by: CaughtBy::Values },
            NearMiss { name: "forgets_rstd", mistake: "x − mean without rstd: the centred value, not the normalised one",
                find: "((x[r * cols + col] - mean[r]) * rstd[r])", replace: "(x[r * cols + col] - mean[r])", caught_by: CaughtBy::Values },
            NearMiss { name: "every_warp_every_row", mistake: "each warp walks every row from its own first: rows are counted by several warps",
                find: "for (u64 r = warp; r < rows; r += 8)", replace: "for (u64 r = warp; r < rows; r += 1)", caught_by: CaughtBy::Values },
            NearMiss { name: "no_barrier", mistake: "warp 0 reads the other warps' sums without waiting for them to be written",
                find: "    __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them\n", replace: "", caught_by: CaughtBy::Sanitizer(Sanitizer::Racecheck) },
        ],
    },
];

/// Every exercise, in book order.
pub fn all() -> &'static [Exercise] {
    EXERCISES
}

/// The sentence under the recorded counts (`book/generated/exercises.md`): the exercises of this
/// catalogue that the recorded GPU run did not check.
pub fn unchecked_sentence(note: &str) -> String {
    let numbers: Vec<u32> = all().iter().map(|e| e.number).collect();
    crate::records::exercises::unchecked_sentence(note, &numbers)
}

/// Write that sentence to `book/generated/exercises_unchecked.md` under `root` (the command
/// line's `bench --plot-only` does, after the book's own generated files).
pub fn write_unchecked_sentence(root: &std::path::Path) -> crate::Result<std::path::PathBuf> {
    let note = std::fs::read_to_string(root.join(crate::records::exercises::NOTE)).unwrap_or_default();
    let path = root.join(crate::records::exercises::UNCHECKED_NOTE);
    std::fs::write(&path, unchecked_sentence(&note)).map_err(|e| crate::error::io_error(&path, e))?;
    Ok(path)
}

/// The exercise with this number, or an error that lists them.
pub fn find(number: u32) -> Result<&'static Exercise, crate::Error> {
    EXERCISES.iter().find(|e| e.number == number).ok_or_else(|| crate::Error::Config {
        setting: format!("exercise {number}"),
        reason: format!("there is no such exercise; they are numbered 1 to {}", EXERCISES.len()),
    })
}

impl Exercise {
    /// The stub's path in the repository, as the reader edits it.
    pub fn stub_path(&self) -> String {
        format!("kernels/exercises/{}.cu", self.stem)
    }

    pub fn solution_path(&self) -> String {
        format!("kernels/exercises/solutions/{}.cu", self.stem)
    }

    pub fn near_miss(&self, name: &str) -> Option<&'static NearMiss> {
        let all: &'static [NearMiss] = self.near_misses;
        all.iter().find(|m| m.name == name)
    }

    /// The solution with `near_miss` planted; an error when its `find` is not there exactly once.
    pub fn near_miss_source(&self, near_miss: &NearMiss) -> Result<String, crate::Error> {
        crate::mutants::plant_once(self.solution, near_miss.find, near_miss.replace).map_err(|count| crate::Error::Compile {
            file: format!("{} [near miss: {}]", self.solution_path(), near_miss.name),
            log: format!("the near miss expects `{}` once in the solution, found it {count} times", near_miss.find),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_run_from_one_and_stubs_are_marked() {
        for (i, e) in all().iter().enumerate() {
            assert_eq!(e.number as usize, i + 1);
            assert!(e.stub.contains(TODO_MARKER), "{} has no {TODO_MARKER}", e.stem);
            assert!(!e.solution.contains(TODO_MARKER), "{}'s solution has a TODO", e.stem);
            assert!(e.solution.contains("ANCHOR: solution") && e.solution.contains("ANCHOR_END: solution"), "{}", e.stem);
            match e.op {
                // The book's operator the solved exercise is timed beside: `<op>_whole`.
                Op::Operator { op, .. } => assert_eq!(e.book_kernel, format!("{}_whole", op.name())),
                // The fused exercises are not timed (their checker has no whole-array kernel to time them beside).
                _ if matches!(e.layout, super::super::launch::Layout::Fused(_)) => {}
                _ => assert!(crate::kernels::find(e.book_kernel).is_ok(), "{}", e.book_kernel),
            }
            assert!(!e.near_misses.is_empty(), "{} has no near miss", e.stem);
        }
        assert!(all().len() >= 8);
    }

    #[test]
    fn every_near_miss_lands_exactly_once_and_changes_the_solution() {
        for e in all() {
            for m in e.near_misses {
                let planted = e.near_miss_source(m).unwrap_or_else(|err| panic!("{} {}: {err}", e.stem, m.name));
                assert_ne!(planted, e.solution);
            }
        }
        let stale = NearMiss { name: "x", mistake: "", find: "no such text", replace: "", caught_by: CaughtBy::Values };
        assert!(all()[0].near_miss_source(&stale).is_err());
    }

    #[test]
    fn an_unknown_number_is_refused_with_the_range() {
        let e = find(99).unwrap_err().to_string();
        assert!(e.contains("exercise 99") && e.contains(&format!("1 to {}", all().len())), "{e}");
    }

    /// The exercises chapter closes with the counts `tests/exercises.rs` wrote on the GPU
    /// (`EXERCISES_RECORD=book/generated/exercises.md`): every solution passed, every stub and
    /// near miss failed, and as many of each as the exercises that run checked; the exercises
    /// added since are named under it (`book/generated/exercises_unchecked.md`, written from the
    /// note and this catalogue by `reduction bench --plot-only`).
    #[test]
    fn the_exercise_counts_are_from_a_run_where_every_check_held() {
        use crate::records::exercises::{Tally, NOTE};
        let root = crate::records::repo_root();
        let note = std::fs::read_to_string(root.join(NOTE)).unwrap_or_else(|e| panic!("{NOTE}: {e}"));
        let tally = Tally::parse(note.lines().next().unwrap_or_default()).unwrap();
        assert!(tally.all_held(), "{tally:?}");
        let recorded = crate::records::exercises::recorded(&note);
        let checked: Vec<&Exercise> = all().iter().filter(|e| recorded.contains(&e.number)).collect();
        assert_eq!(recorded.len(), checked.len(), "the note names exercises this catalogue does not have: {recorded:?}");
        // Every near miss of a checked exercise is in the recorded table, or waits for its first
        // GPU run (and then is not in the table): the record's count is theirs less those.
        for (number, name) in NOT_YET_RUN_ON_A_GPU {
            assert!(checked.iter().any(|e| e.number == *number), "exercise {number} ({name}) is not in the record: drop it from NOT_YET_RUN_ON_A_GPU");
            assert!(find(*number).unwrap().near_miss(name).is_some(), "{number} {name} is no near miss");
            assert!(!note.contains(&format!("| {number} | near miss {name} |")), "{number} {name} has run: take it off NOT_YET_RUN_ON_A_GPU");
        }
        for e in &checked {
            for m in e.near_misses {
                let in_record = note.contains(&format!("| {} | near miss {} |", e.number, m.name));
                assert!(in_record || NOT_YET_RUN_ON_A_GPU.contains(&(e.number, m.name)), "near miss {} {} is in no record", e.number, m.name);
            }
        }
        let near_misses: usize = checked.iter().map(|e| e.near_misses.len()).sum::<usize>() - NOT_YET_RUN_ON_A_GPU.len();
        assert_eq!((tally.solutions, tally.stubs, tally.near_misses), (checked.len(), checked.len(), near_misses), "{tally:?}");
        let unchecked = std::fs::read_to_string(root.join(crate::records::exercises::UNCHECKED_NOTE)).unwrap_or_default();
        assert_eq!(unchecked, unchecked_sentence(&note), "run `reduction bench --plot-only`");
        let chapter = std::fs::read_to_string(root.join("book/exercises.md")).unwrap_or_default();
        assert!(chapter.contains("{{#include generated/exercises_unchecked.md}}"));
    }

    /// Near misses added since `book/generated/exercises.md` was recorded on the GPU host: the
    /// next `tests/gpu-host.sh book` records them, and this list is then emptied.
    const NOT_YET_RUN_ON_A_GPU: &[(u32, &str)] = &[];
}
