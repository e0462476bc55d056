//! The kernel registry: every kernel the book runs, with its chapter, its source and the rules
//! for launching it (applied in `launch_rules.rs`; the text NVRTC compiles is made in
//! `source.rs`). The host owns every launch configuration; a kernel is an entry here, not a copy
//! of launch code.

use crate::arch::Arch;
use crate::element::{Dtype, Element};
use crate::error::{Error, Result};

/// The registered kernels' names: the one spelling of each, used by the registry below and by
/// every table, benchmark, experiment and command that names a kernel, so that a typo or a
/// rename is a compile error rather than a "not measured" cell in the book.
pub mod names {
    pub const REDUCE1: &str = "reduce1";
    pub const REDUCE2: &str = "reduce2";
    pub const REDUCE2_PADDED: &str = "reduce2_padded";
    pub const REDUCE3: &str = "reduce3";
    pub const REDUCE4: &str = "reduce4";
    pub const REDUCE5_VOLATILE: &str = "reduce5_volatile";
    pub const REDUCE5: &str = "reduce5";
    pub const REDUCE6: &str = "reduce6";
    pub const REDUCE7: &str = "reduce7";
    pub const REDUCE8_LAST_WARP: &str = "reduce8_last_warp";
    pub const REDUCE8: &str = "reduce8";
    pub const REDUCE9: &str = "reduce9";
    pub const REDUCE10_ATOMIC: &str = "reduce10_atomic";
    pub const REDUCE10_LAST_BLOCK: &str = "reduce10_last_block";
    pub const REDUCE11: &str = "reduce11";
    pub const REDUCE11_GRID: &str = "reduce11_grid";
    pub const REDUCE12: &str = "reduce12";
    pub const REDUCE_KAHAN: &str = "reduce_kahan";
    pub const REDUCE15_REPRODUCIBLE: &str = "reduce15_reproducible";
    pub const REDUCE15_NEUMAIER: &str = "reduce15_neumaier";
    pub const REDUCE15_F64: &str = "reduce15_f64";
    pub const REDUCE15_REPRODUCIBLE_B1024: &str = "reduce15_reproducible_b1024";
    pub const REDUCE15_NEUMAIER_B1024: &str = "reduce15_neumaier_b1024";
    pub const REDUCE15_REPRODUCIBLE_TWO_PASS: &str = "reduce15_reproducible_two_pass";
    pub const REDUCE15_NEUMAIER_TWO_PASS: &str = "reduce15_neumaier_two_pass";
    pub const REDUCE10_TILES: &str = "reduce10_tiles";
    pub const REDUCE10_TILES_TWO_PASS: &str = "reduce10_tiles_two_pass";
    /// The yardsticks and the row kernels (registered, but not in [`super::all`]).
    pub const COPY: &str = crate::records::bench::COPY_KERNEL;
    pub const READ_ONLY: &str = crate::records::bench::READ_ONLY_KERNEL;
    pub const ROWS: &str = "rows";
    /// Every name above, in registry order.
    pub const ALL: [&str; 30] = [REDUCE1, REDUCE2, REDUCE2_PADDED, REDUCE3, REDUCE4, REDUCE5_VOLATILE, REDUCE5, REDUCE6, REDUCE7, REDUCE8_LAST_WARP, REDUCE8, REDUCE9, REDUCE10_ATOMIC, REDUCE10_LAST_BLOCK, REDUCE11, REDUCE11_GRID, REDUCE12, REDUCE_KAHAN, REDUCE15_REPRODUCIBLE, REDUCE15_NEUMAIER, REDUCE15_F64, REDUCE15_REPRODUCIBLE_B1024, REDUCE15_NEUMAIER_B1024, REDUCE15_REPRODUCIBLE_TWO_PASS, REDUCE15_NEUMAIER_TWO_PASS, REDUCE10_TILES, REDUCE10_TILES_TWO_PASS, COPY, READ_ONLY, ROWS];
}

use names::*;

/// Entry points the host loads by a name of their own, not one made by
/// [`KernelSpec::entry_name`].
pub mod entries {
    /// `kernels/copy.cu`: the copy of 4-byte words that sets a pace.
    pub const COPY_U32: &str = "copy_u32";
    /// `kernels/14_accuracy.cu`, beside `reduce_kahan`'s: one partial sum per block, kept in f64
    /// (from f32 inputs), in f16 and in bf16 (from inputs of that type); the accuracy experiment
    /// adds the partial sums on the host.
    pub const F64_ACCUMULATOR: &str = "reduce_f64acc";
    pub const F16_ACCUMULATOR: &str = "reduce_f16acc";
    pub const BF16_ACCUMULATOR: &str = "reduce_bf16acc";
    /// `kernels/14_accuracy.cu`: where the bf16 rounding instruction and the integer path taken
    /// below sm_80 disagree, over a range of f32 bit patterns (tests/gpu.rs).
    pub const BF16_ROUNDING_MISMATCHES: &str = "bf16_rounding_mismatches";
}

/// How the grid of the first pass is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridRule {
    /// One block per tile of `block × elements_per_thread` inputs (kernels 1–6): the grid grows
    /// with n.
    OneBlockPerTile,
    /// As many blocks as the GPU holds at once (SMs × resident blocks per SM), each looping
    /// over the input with a grid-sized stride (kernel 7 on).
    ResidentBlocks,
    /// One tile of `block × elements_per_thread / 4` 16-byte packs per block, whatever the
    /// element type, and no loop: the grid grows with n (`reduce10_tiles`, the read-only kernel's
    /// shape). The loads per thread are part of the entry name (`reduce10_tiles_b512_l8_f32`).
    PackTiles,
}

/// How a kernel's launches combine the blocks' sums into one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One partial sum per block; the host launches again over the partial sums until one is
    /// left. Entry: `(in, out, n)`.
    MultiPass,
    /// One launch; each block adds its sum to `out[0]` with `atomicAdd`, after the host zeroes
    /// it. Entry: `(in, out, n)`. Float results vary in their last bits from run to run.
    AtomicAdd,
    /// One launch; the last block to finish adds the partial sums. Entry:
    /// `(in, out, n, partials, ticket)`.
    LastBlock,
    /// One cooperative launch; the grid synchronises and block 0 adds the partial sums. Entry:
    /// `(in, out, n, partials)`.
    GridSync,
    /// One launch over fixed chunks of [`CHUNK_VALUES`] values (a constant of the kernel, not of
    /// the launch): each chunk is summed in an order fixed by its indexes into one 8-byte
    /// partial, blocks loop over the chunks, and the last block to finish adds the partials in
    /// an order fixed by their count. The result does not depend on the grid or the block.
    /// Entry: `(in, out, n, partials, ticket)`, partials 8 bytes per chunk.
    Chunked,
    /// The chunks of [`Shape::Chunked`] in two launches: every block writes its chunks' sums and
    /// leaves, then one block of `<name>_fold(partials, out, chunks)` folds them in the same
    /// order (the same bits). Entry: `(in, partials, n)`.
    ChunkedTwoPass,
}

impl Shape {
    /// Summed chunk by chunk in an order fixed by n alone (kernel 15), in one launch or two.
    pub fn is_chunked(self) -> bool {
        matches!(self, Shape::Chunked | Shape::ChunkedTwoPass)
    }
}

/// Virtual lanes per chunk of the [`Shape::Chunked`] kernels (`CHUNK_LANES` in
/// `kernels/15_reproducible.cu`).
pub const CHUNK_LANES: u32 = 1024;
/// Values per chunk of the [`Shape::Chunked`] kernels: `CHUNK_LANES × LANE_VALUES` in
/// `kernels/15_reproducible.cu`.
pub const CHUNK_VALUES: u64 = CHUNK_LANES as u64 * 16;

/// The dynamic shared memory a launch needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// One accumulator per thread (the shared-memory trees of kernels 1–7).
    PerThread,
    /// One per thread and one padding word per 32 (kernel 2 without bank conflicts).
    PerThreadPadded,
    /// None: the kernel declares what it needs (one word per warp) statically.
    Static,
}

/// Whether a kernel is meant to be right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Correct on every GPU the book supports: tested against the reference, benchmarked.
    Correct,
    /// Harris's original form, kept for the lesson: it relies on warp lockstep, which Volta and
    /// later do not promise. Benchmarked and shown, never trusted.
    Historical,
}

/// One kernel of the book.
#[derive(Debug)]
pub struct KernelSpec {
    /// Registry name, and the stem of its entry points (`reduce1` → `reduce1_f32`).
    pub name: &'static str,
    /// The chapter (Harris's kernel number for 1–7) that explains it.
    pub chapter: u32,
    /// A few words for tables and legends.
    pub title: &'static str,
    /// The file under `kernels/`.
    pub file: &'static str,
    /// The file's text, embedded at build time.
    pub source: &'static str,
    pub status: Status,
    /// Smallest and largest block size it accepts; block sizes are powers of two.
    pub min_block: u32,
    pub max_block: u32,
    /// True when the block size is a template parameter: one entry point per block size.
    pub block_in_entry_name: bool,
    /// Inputs one thread loads per tile (2 once the first add happens during the load).
    pub elements_per_thread: u32,
    pub grid: GridRule,
    pub shape: Shape,
    pub shared: Shared,
    /// The input types it is instantiated for.
    pub dtypes: &'static [Dtype],
    /// True if it includes CUDA headers (cooperative groups, CUB), which NVRTC must find.
    pub needs_cuda_headers: bool,
    /// The oldest architecture its file compiles for: [`Arch::BOOK_MINIMUM`] unless it uses a
    /// newer feature without a portable path below it (every entry of one file says the same).
    /// On an older GPU it is not run: see [`KernelSpec::available_on`].
    pub min_arch: Arch,
    /// Its later passes may be queued as programmatic dependent launches (sm_90 on): the kernel
    /// waits in `griddepcontrol.wait` before it reads, so the launch can start while the one
    /// before it ends. Only a kernel that waits may be launched so.
    pub dependent_launch: bool,
}

macro_rules! kernel_file {
    ($file:literal) => {
        ($file, include_str!(concat!("../../kernels/", $file)))
    };
}

const K1: (&str, &str) = kernel_file!("01_interleaved_divergent.cu");
const K2: (&str, &str) = kernel_file!("02_interleaved_strided.cu");
const K3: (&str, &str) = kernel_file!("03_sequential.cu");
const K4: (&str, &str) = kernel_file!("04_first_add_during_load.cu");
const K5: (&str, &str) = kernel_file!("05_unroll_last_warp.cu");
const K6: (&str, &str) = kernel_file!("06_complete_unroll.cu");
const K7: (&str, &str) = kernel_file!("07_multiple_elements.cu");
const K8: (&str, &str) = kernel_file!("08_warp_shuffle.cu");
const K9: (&str, &str) = kernel_file!("09_vectorized.cu");
const K10: (&str, &str) = kernel_file!("10_single_pass.cu");
const K11: (&str, &str) = kernel_file!("11_cooperative_groups.cu");
const K12: (&str, &str) = kernel_file!("12_cub_block_reduce.cu");
const K14: (&str, &str) = kernel_file!("14_accuracy.cu");
const K15: (&str, &str) = kernel_file!("15_reproducible.cu");
const K10_TILES: (&str, &str) = kernel_file!("10_tiles.cu");

#[allow(clippy::too_many_arguments)] // a row of the const table below: every column named where it is used
const fn spec(
    name: &'static str,
    chapter: u32,
    title: &'static str,
    file: (&'static str, &'static str),
    min_block: u32,
    block_in_entry_name: bool,
    elements_per_thread: u32,
    grid: GridRule,
) -> KernelSpec {
    KernelSpec {
        name, chapter, title, file: file.0, source: file.1, status: Status::Correct,
        min_block, max_block: 1024, block_in_entry_name, elements_per_thread, grid,
        shape: Shape::MultiPass, shared: Shared::PerThread, dtypes: &Dtype::CLASSIC, needs_cuda_headers: false,
        min_arch: Arch::BOOK_MINIMUM,
        dependent_launch: false,
    }
}

/// A kernel of the modern chapters: every element type, a grid of resident blocks, one word of
/// shared memory per warp; `elements_per_thread` is per loop step, for 4-byte elements.
const fn modern(name: &'static str, chapter: u32, title: &'static str, file: (&'static str, &'static str), elements_per_thread: u32, shape: Shape) -> KernelSpec {
    KernelSpec {
        shape,
        shared: Shared::Static,
        dtypes: &Dtype::ALL,
        ..spec(name, chapter, title, file, 32, false, elements_per_thread, GridRule::ResidentBlocks)
    }
}

static KERNELS: &[KernelSpec] = &[
    spec(REDUCE1, 1, "interleaved, divergent", K1, 32, false, 1, GridRule::OneBlockPerTile),
    spec(REDUCE2, 2, "interleaved, strided index", K2, 32, false, 1, GridRule::OneBlockPerTile),
    KernelSpec { shared: Shared::PerThreadPadded, ..spec(REDUCE2_PADDED, 2, "strided index, padded shared array", K2, 32, false, 1, GridRule::OneBlockPerTile) },
    spec(REDUCE3, 3, "sequential addressing", K3, 32, false, 1, GridRule::OneBlockPerTile),
    spec(REDUCE4, 4, "first add during load", K4, 32, false, 2, GridRule::OneBlockPerTile),
    KernelSpec {
        status: Status::Historical,
        ..spec(REDUCE5_VOLATILE, 5, "last warp unrolled (2007, racy)", K5, 64, false, 2, GridRule::OneBlockPerTile)
    },
    spec(REDUCE5, 5, "last warp unrolled", K5, 64, false, 2, GridRule::OneBlockPerTile),
    spec(REDUCE6, 6, "complete unrolling", K6, 64, true, 2, GridRule::OneBlockPerTile),
    spec(REDUCE7, 7, "multiple elements per thread", K7, 64, true, 2, GridRule::ResidentBlocks),
    KernelSpec { min_block: 64, shared: Shared::PerThread, ..modern(REDUCE8_LAST_WARP, 8, "shuffles in the last warp", K8, 2, Shape::MultiPass) },
    modern(REDUCE8, 8, "warp shuffles, one word per warp", K8, 2, Shape::MultiPass),
    modern(REDUCE9, 9, "16-byte loads, 4 in flight", K9, 16, Shape::MultiPass),
    modern(REDUCE10_ATOMIC, 10, "one pass, atomicAdd per block", K10, 16, Shape::AtomicAdd),
    modern(REDUCE10_LAST_BLOCK, 10, "one pass, last block adds", K10, 16, Shape::LastBlock),
    KernelSpec { needs_cuda_headers: true, ..modern(REDUCE11, 11, "cooperative groups: cg::reduce", K11, 16, Shape::MultiPass) },
    KernelSpec { needs_cuda_headers: true, ..modern(REDUCE11_GRID, 11, "cooperative groups: grid.sync", K11, 16, Shape::GridSync) },
    KernelSpec { min_block: 64, block_in_entry_name: true, needs_cuda_headers: true, ..modern(REDUCE12, 12, "cub::BlockReduce", K12, 16, Shape::MultiPass) },
    KernelSpec { dtypes: &[Dtype::F32], ..modern(REDUCE_KAHAN, 14, "compensated (Kahan-Neumaier) sums", K14, 1, Shape::MultiPass) },
    chunked(REDUCE15_REPRODUCIBLE, "reproducible: order fixed by n"),
    chunked(REDUCE15_NEUMAIER, "reproducible and compensated (Neumaier)"),
    chunked(REDUCE15_F64, "reproducible, f64 accumulator"),
    // The same orders, one virtual lane per thread at blocks of 1024, bounded to 32 registers.
    KernelSpec { min_block: 1024, dtypes: &[Dtype::F32], ..chunked(REDUCE15_REPRODUCIBLE_B1024, "reproducible, one lane a thread, 32 registers") },
    KernelSpec { min_block: 1024, dtypes: &[Dtype::F32], ..chunked(REDUCE15_NEUMAIER_B1024, "reproducible Neumaier, one lane a thread, 32 registers") },
    // The same orders in two launches: the chunks' sums, then one block folds them.
    KernelSpec { shape: Shape::ChunkedTwoPass, ..chunked(REDUCE15_REPRODUCIBLE_TWO_PASS, "reproducible, a second launch folds the chunks") },
    KernelSpec { shape: Shape::ChunkedTwoPass, ..chunked(REDUCE15_NEUMAIER_TWO_PASS, "reproducible Neumaier, a second launch folds the chunks") },
    // The read-only kernel's tile (eight 16-byte loads per thread, one tile per block, no
    // loop), finished by the last block in the same launch.
    KernelSpec {
        grid: GridRule::PackTiles,
        min_block: 64,
        block_in_entry_name: true,
        ..modern(REDUCE10_TILES, 10, "one tile per block, no loop, the last block adds", K10_TILES, 32, Shape::LastBlock)
    },
    // The same tiles with nothing after them (the read-only kernel's blocks): a second launch of
    // one block adds the partial sums.
    KernelSpec {
        grid: GridRule::PackTiles,
        min_block: 64,
        block_in_entry_name: true,
        dependent_launch: true,
        ..modern(REDUCE10_TILES_TWO_PASS, 10, "one tile per block, no loop, a second launch adds", K10_TILES, 32, Shape::MultiPass)
    },
];

/// A kernel of `kernels/15_reproducible.cu`: f32, f16 and bf16 inputs, one block per chunk.
const fn chunked(name: &'static str, title: &'static str) -> KernelSpec {
    KernelSpec {
        grid: GridRule::OneBlockPerTile,
        dtypes: &[Dtype::F32, Dtype::F16, Dtype::BF16],
        ..modern(name, 15, title, K15, 16, Shape::Chunked)
    }
}

/// The copy kernel that sets a pace (reads and writes every byte; a sum only reads, so it is no ceiling for one) (not a reduction: never in [`all`]).
pub static COPY: KernelSpec = KernelSpec {
    name: names::COPY,
    chapter: 0,
    title: "copy kernel (read + write)",
    file: "copy.cu",
    source: include_str!("../../kernels/copy.cu"),
    status: Status::Correct,
    min_block: 256,
    max_block: 256,
    block_in_entry_name: false,
    elements_per_thread: 4,
    grid: GridRule::ResidentBlocks,
    shape: Shape::MultiPass,
    shared: Shared::Static,
    dtypes: &[],
    needs_cuda_headers: false,
    min_arch: Arch::BOOK_MINIMUM,
    dependent_launch: false,
};

/// The read-only kernel that measures the ceiling of a sum: every input byte read once with
/// 16-byte loads, one partial value written per block, nothing else (`kernels/read_only.cu`). Not
/// a reduction the book teaches, so never in [`all`]; the benchmark launches it itself, at every
/// shape of [`READ_ONLY_SHAPES`](super::READ_ONLY_SHAPES), next to the copy (`measure::read_only`).
pub static READ_ONLY: KernelSpec = KernelSpec {
    name: names::READ_ONLY,
    chapter: 0,
    title: "read-only sum (every byte read once)",
    file: "read_only.cu",
    source: include_str!("../../kernels/read_only.cu"),
    status: Status::Correct,
    // The smallest and largest BLOCK of READ_ONLY_SHAPES.
    min_block: 128,
    max_block: 1024,
    block_in_entry_name: true,
    // Per 16-byte load, in 4-byte values; a thread makes `loads` of them (see ReadOnlyShape).
    elements_per_thread: 4,
    grid: GridRule::OneBlockPerTile,
    shape: Shape::MultiPass,
    shared: Shared::Static,
    dtypes: &Dtype::ALL,
    needs_cuda_headers: false,
    min_arch: Arch::BOOK_MINIMUM,
    dependent_launch: false,
};

/// The row sums of chapter 13 (`f32` sums of each row of an f32, f16 or bf16 matrix): entry points with a
/// signature of their own, launched by [`crate::rows::RowReducer`], which owns their launch
/// rules; never by [`crate::Reducer`], so not in [`all`]. Registered for the compile checks.
pub static ROWS: KernelSpec = KernelSpec {
    name: names::ROWS,
    chapter: 13,
    title: "row sums: a warp, a block or several blocks per row",
    file: "13_rows.cu",
    source: include_str!("../../kernels/13_rows.cu"),
    status: Status::Correct,
    min_block: 32,
    max_block: 1024,
    block_in_entry_name: false,
    elements_per_thread: 16,
    grid: GridRule::ResidentBlocks,
    shape: Shape::LastBlock,
    shared: Shared::Static,
    dtypes: &[Dtype::F32, Dtype::F16, Dtype::BF16],
    needs_cuda_headers: false,
    min_arch: Arch::BOOK_MINIMUM,
    dependent_launch: false,
};

/// The operator kernels of chapter 16 (`kernels/operators.cuh` instantiated per operator, shape and
/// input type): entry points `<op>_<shape>_<type>` with signatures of their own, launched by
/// [`crate::kernels::ops::OpReducer`], never by [`crate::Reducer`], so not in [`all`]. Registered for
/// the compile checks; [`crate::kernels::ops::Op::spec`] says which file holds an operator.
const fn operator_file(name: &'static str, title: &'static str, file: (&'static str, &'static str), dtypes: &'static [Dtype]) -> KernelSpec {
    KernelSpec {
        name, chapter: 16, title, file: file.0, source: file.1, status: Status::Correct,
        min_block: 32, max_block: 1024, block_in_entry_name: false, elements_per_thread: 16,
        grid: GridRule::ResidentBlocks, shape: Shape::LastBlock, shared: Shared::Static, dtypes, needs_cuda_headers: false,
        min_arch: Arch::BOOK_MINIMUM,
        dependent_launch: false,
    }
}

/// max, min, argmax, argmin (`kernels/16_extremes.cu`).
pub static EXTREMES: KernelSpec = operator_file("extremes", "max, min, argmax, argmin", kernel_file!("16_extremes.cu"), &[Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I32]);
/// sum, sum of squares, mean and variance (`kernels/16_moments.cu`).
pub static MOMENTS: KernelSpec = operator_file("moments", "sum, sum of squares, mean and variance", kernel_file!("16_moments.cu"), &[Dtype::F32, Dtype::F16, Dtype::BF16]);
/// The other ways to fold a mean and a variance, and the textbook formula (`kernels/16_mean_var_walks.cu`).
pub static MEAN_VAR_WALKS: KernelSpec = operator_file("mean_var_walks", "mean and variance: four walks and the textbook formula", kernel_file!("16_mean_var_walks.cu"), &[Dtype::F32, Dtype::F16, Dtype::BF16]);

/// Every registered kernel, in book order.
pub fn all() -> &'static [KernelSpec] {
    KERNELS
}

/// The kernels that must give the right answer (everything but the historical forms).
pub fn correct() -> impl Iterator<Item = &'static KernelSpec> {
    KERNELS.iter().filter(|k| k.status == Status::Correct)
}

/// Look a kernel up by name.
pub fn find(name: &str) -> Result<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.name == name).ok_or_else(|| Error::UnknownKernel {
        name: name.to_string(),
        known: KERNELS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
    })
}

/// Every distinct kernel file, for the compile check.
pub fn files() -> Vec<(&'static str, &'static KernelSpec)> {
    let mut seen: Vec<(&'static str, &'static KernelSpec)> = Vec::new();
    for k in KERNELS.iter().chain([&COPY, &READ_ONLY, &ROWS, &EXTREMES, &MOMENTS, &MEAN_VAR_WALKS]).chain(crate::kernels::dl::files()) {
        if !seen.iter().any(|(f, _)| *f == k.file) {
            seen.push((k.file, k));
        }
    }
    seen
}

impl KernelSpec {
    /// The refusal of an element type this kernel has no entry point for.
    pub fn unsupported(&self, dtype: Dtype) -> Error {
        Error::UnsupportedDtype { kernel: self.name.to_string(), dtype, supported: self.dtypes.to_vec() }
    }

    /// The entry point for element type `T` at this block size.
    pub fn entry_name<T: Element>(&self, block: u32) -> String {
        self.entry_name_of(T::DTYPE, block)
    }

    /// [`KernelSpec::entry_name`] for an element type chosen at run time.
    pub fn entry_name_of(&self, dtype: Dtype, block: u32) -> String {
        if self.grid == GridRule::PackTiles {
            format!("{}_b{}_l{}_{}", self.name, block, self.loads_per_thread(), dtype.name())
        } else if self.block_in_entry_name {
            format!("{}_b{}_{}", self.name, block, dtype.name())
        } else {
            format!("{}_{}", self.name, dtype.name())
        }
    }

    /// Every entry point a [`crate::Reducer`] of this kernel may load: each element type it
    /// takes and the accumulator type its later passes read, at every block size it accepts
    /// where the block size is in the name. What the compile check looks for in the CUBIN.
    pub fn entry_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for &dtype in self.dtypes {
            let acc = crate::with_dtype!(dtype, T => <<T as Element>::Acc as Element>::DTYPE);
            let blocks: Vec<u32> = if self.block_in_entry_name { self.block_sizes().collect() } else { vec![self.min_block] };
            for block in blocks {
                for d in [dtype, acc] {
                    let name = self.entry_name_of(d, block);
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        if let Some(fold) = self.fold_entry_name() {
            names.push(fold);
        }
        names
    }

    /// The second launch of a two-launch chunked kernel ([`Shape::ChunkedTwoPass`]), which
    /// folds the chunks' sums whatever the input type: `<name>_fold`.
    pub fn fold_entry_name(&self) -> Option<String> {
        (self.shape == Shape::ChunkedTwoPass).then(|| format!("{}_fold", self.name))
    }

    /// Whether two runs on the same input give bitwise the same sum.
    pub fn deterministic(&self, dtype: Dtype) -> bool {
        self.shape != Shape::AtomicAdd || dtype == Dtype::I32
    }

    /// Whether this kernel is on a GPU of architecture `device`: `Err(Error::NotOnThisGpu)` with
    /// the reason if it needs a newer one ([`crate::arch::runs_on`]). Tests ignore, benchmarks
    /// skip and `reduction sum` refuses a kernel for which this is an error.
    pub fn available_on(&self, device: Arch) -> Result<()> {
        crate::arch::runs_on(self.name, self.min_arch, device)
    }

    /// True if this kernel has an entry point for `dtype`.
    pub fn supports(&self, dtype: Dtype) -> bool {
        self.dtypes.contains(&dtype)
    }
}

/// The `status` column of a kernel's benchmark rows.
impl From<Status> for crate::records::bench::Status {
    fn from(status: Status) -> crate::records::bench::Status {
        match status {
            Status::Correct => crate::records::bench::Status::Correct,
            Status::Historical => crate::records::bench::Status::Historical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_entry_point_is_in_its_file() {
        for (i, k) in all().iter().enumerate() {
            assert!(all()[..i].iter().all(|other| other.name != k.name), "duplicate {}", k.name);
            // Entry points come from INSTANTIATE(...) macros, so look for the macro argument.
            assert!(k.source.contains("INSTANTIATE") || k.source.contains("FOR_EACH_DTYPE(") || k.source.contains("ENTRY_IN_OUT_N("),
                "{} instantiates nothing", k.file);
            assert!(k.source.contains(k.name), "{} does not mention {}", k.file, k.name);
        }
    }

    #[test]
    fn entry_names_follow_the_instantiation_macros() {
        assert_eq!(find("reduce1").unwrap().entry_name::<f32>(256), "reduce1_f32");
        assert_eq!(find("reduce6").unwrap().entry_name::<i32>(128), "reduce6_b128_i32");
    }

    #[test]
    fn every_kernel_of_one_file_needs_the_same_architecture() {
        // NVRTC compiles a file whole: an entry that needs more would break its neighbours.
        for (file, first) in files() {
            for k in all().iter().chain([&COPY, &READ_ONLY, &ROWS]).filter(|k| k.file == file) {
                assert_eq!(k.min_arch, first.min_arch, "{} and {} share {file}", k.name, first.name);
            }
            assert!(first.min_arch >= Arch::BOOK_MINIMUM, "{file}");
        }
    }

    #[test]
    fn a_kernel_is_on_a_gpu_from_its_minimum_architecture() {
        let k = find(names::REDUCE_KAHAN).unwrap();
        assert_eq!(k.available_on(Arch::SM_75), Ok(()));
        assert_eq!(k.available_on(Arch::SM_90), Ok(()));
        assert!(matches!(k.available_on(Arch::new(7, 0)), Err(Error::NotOnThisGpu { .. })));
        // The same entry with a newer minimum, as a Hopper-only kernel would be registered.
        let hopper = KernelSpec { min_arch: Arch::SM_90, ..modern("hopper_only", 99, "test", K9, 16, Shape::MultiPass) };
        let err = hopper.available_on(Arch::SM_89).unwrap_err();
        assert_eq!(err.to_string(), "hopper_only is not on this GPU: it needs sm_90 or newer, and this GPU is sm_89");
        assert_eq!(hopper.available_on(Arch::new(10, 0)), Ok(()));
    }

    #[test]
    fn every_name_is_registered_and_every_registered_kernel_has_a_name() {
        for k in all().iter().chain([&COPY, &READ_ONLY, &ROWS]) {
            assert!(names::ALL.contains(&k.name), "{} has no constant in names", k.name);
        }
        for name in names::ALL {
            assert!(find(name).is_ok() || [COPY.name, READ_ONLY.name, ROWS.name].contains(&name), "{name} is not registered");
        }
        assert_eq!(names::ALL.len(), all().len() + 3);
    }

    #[test]
    fn unknown_kernel_error_lists_the_known_ones() {
        let e = find("reduce99").unwrap_err().to_string();
        assert!(e.contains("reduce99") && e.contains("reduce1") && e.contains("reduce7"), "{e}");
    }
}
