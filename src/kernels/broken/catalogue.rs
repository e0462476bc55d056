//! The catalogue: every mistake of the chapter, by number, what runs it and what catches it, and
//! the broken kernels it launches (`kernels/broken/`).

use crate::child::Sanitizer;
use crate::element::Dtype;
use crate::error::Result;
use crate::kernels::{GridRule, KernelSpec, Shape, Shared, Status};
use crate::records::mistakes::Class;
use crate::kernels::names;


/// A broken kernel: a [`KernelSpec`] so that [`crate::gpu::Gpu::function`] compiles and loads it like any
/// other, but kept out of [`crate::kernels::all`]. (`status` is unused for these: they are never
/// benchmarked; `chapter` 0 means "the mistakes chapter".)
const fn broken(name: &'static str, title: &'static str, file: &'static str, source: &'static str, min_block: u32, elements_per_thread: u32) -> KernelSpec {
    KernelSpec {
        name, chapter: 0, title, file, source, status: Status::Historical, min_block, max_block: 1024,
        block_in_entry_name: false, elements_per_thread, grid: GridRule::OneBlockPerTile,
        shape: Shape::MultiPass, shared: Shared::PerThread, dtypes: &Dtype::CLASSIC, needs_cuda_headers: false,
        min_arch: crate::arch::Arch::BOOK_MINIMUM,
        dependent_launch: false,
    }
}

static BROKEN: &[KernelSpec] = &[
    broken("sync_in_branch", "barrier inside a branch", "broken/01_sync_in_branch.cu",
        include_str!("../../../kernels/broken/01_sync_in_branch.cu"), 32, 1),
    broken("warp_no_volatile", "last warp without volatile", "broken/02_warp_no_volatile.cu",
        include_str!("../../../kernels/broken/02_warp_no_volatile.cu"), 64, 2),
    broken("tail_not_written", "tail of shared memory not written", "broken/04_tail_not_written.cu",
        include_str!("../../../kernels/broken/04_tail_not_written.cu"), 32, 1),
    broken("second_load_unchecked", "second load unchecked", "broken/06_second_load_unchecked.cu",
        include_str!("../../../kernels/broken/06_second_load_unchecked.cu"), 32, 2),
    broken("grid_barrier_spin", "grid barrier by spinning", "broken/08_grid_barrier_spin.cu",
        include_str!("../../../kernels/broken/08_grid_barrier_spin.cu"), 32, 1),
];

/// Every broken kernel file (paths relative to `kernels/`), for the compile check and the
/// book's check that every file under `kernels/broken/` is registered.
pub fn kernel_files() -> Vec<(&'static str, &'static KernelSpec)> {
    BROKEN.iter().map(|k| (k.file, k)).collect()
}

/// A broken kernel by name, or else a registered (correct) one.
pub fn kernel_spec(name: &str) -> Result<&'static KernelSpec> {
    match BROKEN.iter().find(|k| k.name == name) {
        Some(k) => Ok(k),
        None => crate::kernels::find(name),
    }
}

// ---- the mistakes ----

/// How the dynamic shared memory of a launch is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMemory {
    /// One element per thread, as every tree kernel of the book indexes.
    OnePerThread,
    /// Left out of the launch: zero bytes (mistake 7).
    LeftOut,
}

/// What the child runs for a mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Kernel decomposition on `i32` (exact, so any lost or extra element shows), with a broken
    /// kernel or a correct one launched wrongly. Each pass is waited for, so that an error
    /// names its pass.
    Passes { kernel: &'static str, block: u32, shared: SharedMemory },
    /// One launch of a kernel with a grid barrier, one block per tile.
    GridBarrier { kernel: &'static str, block: u32 },
    /// A correct kernel's `f32` sum compared with `==` against the CPU loop (the mistake is in
    /// the test), and against the error bound (the fix).
    FloatEquality { kernel: &'static str, block: u32 },
    /// A correct kernel's passes with the partial sums copied to the host and back between
    /// them, timed against the same passes back to back on the GPU.
    HostRoundTrips { kernel: &'static str, block: u32 },
}

/// One mistake of the chapter.
#[derive(Clone, Copy, Debug)]
pub struct Mistake {
    pub number: u32,
    /// The name on the command line and in file names.
    pub name: &'static str,
    /// A few words, in Markdown, for tables.
    pub title: &'static str,
    /// What finds it, in Markdown.
    pub caught_by: &'static str,
    /// The compute-sanitizer tool whose report the chapter shows, if any.
    pub sanitizer: Option<Sanitizer>,
    /// The outcome the GPU tests assert, where it does not depend on luck (the kernel is wrong
    /// by construction); `None` where the outcome is only recorded.
    pub asserted: Option<Class>,
    pub kind: Kind,
}

static MISTAKES: &[Mistake] = &[
    Mistake {
        number: 1, name: "sync_in_branch", title: "`__syncthreads()` inside `if (tid < s)`",
        caught_by: "reading the code against the rule (synccheck is the tool for barriers: its verdict is below)", sanitizer: Some(Sanitizer::Synccheck), asserted: None,
        kind: Kind::Passes { kernel: "sync_in_branch", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 2, name: "warp_no_volatile", title: "warp-synchronous last warp without `volatile`",
        caught_by: "an exact (`i32`) test; racecheck", sanitizer: None, asserted: Some(Class::WrongResult),
        kind: Kind::Passes { kernel: "warp_no_volatile", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 3, name: "warp_volatile_no_syncwarp", title: "warp-synchronous last warp, `volatile`, no `__syncwarp()`",
        caught_by: "compute-sanitizer racecheck", sanitizer: Some(Sanitizer::Racecheck), asserted: None,
        kind: Kind::Passes { kernel: names::REDUCE5_VOLATILE, block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 4, name: "tail_not_written", title: "shared memory not written for threads past `n`",
        caught_by: "an exact test at a size that is not a multiple of the block", sanitizer: None, asserted: Some(Class::WrongResult),
        kind: Kind::Passes { kernel: "tail_not_written", block: 256, shared: SharedMemory::OnePerThread },
    },
    // ANCHOR: block_300
    Mistake {
        number: 5, name: "block_not_power_of_two", title: "300 threads per block in a halving tree",
        caught_by: "`KernelSpec::check_block`, before any launch", sanitizer: None, asserted: Some(Class::WrongResult),
        // Kernel 3, unchanged. The launcher of the mistakes does not call check_block, on
        // purpose: that check is what refuses this block size.
        kind: Kind::Passes { kernel: names::REDUCE3, block: 300, shared: SharedMemory::OnePerThread },
    },
    // ANCHOR_END: block_300
    Mistake {
        number: 6, name: "second_load_unchecked", title: "second load `in[i + blockDim.x]` without its bound check",
        caught_by: "compute-sanitizer memcheck", sanitizer: Some(Sanitizer::Memcheck), asserted: None,
        kind: Kind::Passes { kernel: "second_load_unchecked", block: 256, shared: SharedMemory::OnePerThread },
    },
    Mistake {
        number: 7, name: "shared_size_missing", title: "dynamic shared memory size left out of the launch",
        caught_by: "the driver's error at the next wait; memcheck names the access", sanitizer: None, asserted: Some(Class::LaunchError),
        kind: Kind::Passes { kernel: names::REDUCE3, block: 256, shared: SharedMemory::LeftOut },
    },
    Mistake {
        number: 8, name: "grid_barrier_spin", title: "blocks spinning on a global counter as a grid barrier",
        caught_by: "a deadline (no tool reports it)", sanitizer: None, asserted: Some(Class::Hang),
        kind: Kind::GridBarrier { kernel: "grid_barrier_spin", block: 256 },
    },
    Mistake {
        number: 9, name: "float_equality", title: "an `f32` sum compared with `==`",
        caught_by: "the error bound `(n − 1)·u·Σ|x|`", sanitizer: None, asserted: None,
        kind: Kind::FloatEquality { kernel: names::REDUCE3, block: 256 },
    },
    Mistake {
        number: 10, name: "partials_to_host", title: "partial sums copied to the host between passes",
        caught_by: "timing it against the passes on the GPU", sanitizer: None, asserted: None,
        kind: Kind::HostRoundTrips { kernel: names::REDUCE3, block: 256 },
    },
];

/// Every mistake, by number.
pub fn all() -> &'static [Mistake] {
    MISTAKES
}

/// A mistake by name.
pub fn find(name: &str) -> Option<&'static Mistake> {
    MISTAKES.iter().find(|m| m.name == name)
}

/// The message for a name that is not a mistake.
pub fn unknown(name: &str) -> String {
    format!("unknown mistake {name:?}; the mistakes are: {}", MISTAKES.iter().map(|m| m.name).collect::<Vec<_>>().join(", "))
}

/// The order the guard runs them in: by number, except that the ones expected to hang go last,
/// so that the teardown of a killed context cannot slow another mistake's measurement.
pub fn run_order() -> Vec<&'static Mistake> {
    let mut order: Vec<&'static Mistake> = MISTAKES.iter().collect();
    order.sort_by_key(|m| (m.asserted == Some(Class::Hang), m.number));
    order
}

/// The compute-sanitizer command whose output the chapter shows for this mistake, as run from
/// the project root on a GPU host with the release bundle; `None` for a mistake without one.
pub fn sanitizer_command(mistake: &Mistake) -> Option<String> {
    mistake.sanitizer.map(|tool| {
        format!("compute-sanitizer --tool {tool} --print-limit 3 --show-backtrace no .gpu-bundle/bin/reduction mistake {} --n 10000 --runs 1", mistake.name)
    })
}

/// Where the chapter expects that output: `plots/data/sanitizer/<tool>-<name>.log`.
pub fn sanitizer_log(mistake: &Mistake) -> Option<String> {
    mistake.sanitizer.map(|tool| format!("plots/data/sanitizer/{tool}-{}.log", mistake.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_are_numbered_in_order_with_unique_names() {
        for (i, m) in all().iter().enumerate() {
            assert_eq!(m.number as usize, i + 1, "{}", m.name);
            assert!(all()[..i].iter().all(|o| o.name != m.name), "duplicate {}", m.name);
            assert_eq!(find(m.name).unwrap().number, m.number);
        }
        assert!(unknown("nope").contains("sync_in_branch") && unknown("nope").contains("partials_to_host"));
    }

    #[test]
    fn every_kernel_a_mistake_names_exists_and_every_broken_kernel_is_used() {
        for m in all() {
            let name = match m.kind {
                Kind::Passes { kernel, .. } | Kind::GridBarrier { kernel, .. } | Kind::FloatEquality { kernel, .. } | Kind::HostRoundTrips { kernel, .. } => kernel,
            };
            kernel_spec(name).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        }
        for k in BROKEN {
            assert!(all().iter().any(|m| matches!(m.kind, Kind::Passes { kernel, .. } | Kind::GridBarrier { kernel, .. } if kernel == k.name)), "{} unused", k.name);
            assert!(k.source.contains(k.name), "{} does not define {}", k.file, k.name);
            assert!(crate::kernels::find(k.name).is_err(), "{} is also in the correct registry", k.name);
        }
    }

    #[test]
    fn the_hang_runs_last() {
        let order = run_order();
        assert_eq!(order.len(), all().len());
        assert_eq!(order.last().unwrap().name, "grid_barrier_spin");
        assert_eq!(order[0].name, "sync_in_branch");
    }

    #[test]
    fn the_block_of_300_is_one_check_block_refuses() {
        let m = find("block_not_power_of_two").unwrap();
        let Kind::Passes { kernel, block, .. } = m.kind else { panic!() };
        assert!(crate::kernels::find(kernel).unwrap().check_block(block, 4, 1024, 48 * 1024).is_err());
    }

}
