//! Results as data: every file under `plots/data/` that an experiment writes and a chapter reads,
//! in one format ([`csv`]: `# key: value` header lines, then CSV through serde), with the
//! machine it came from ([`machine`]) and the pure arithmetic on it (a median, a bus bandwidth).
//!
//! This layer sits just above the runtime and below everything else: the experiments
//! (`measure`, `mistakes`, `multigpu`, `exercises`) write records, the book (`book`) reads them,
//! and neither imports the other.
//!
//! | module | the file it reads and writes |
//! |---|---|
//! | [`bench`](mod@bench) | `plots/data/<gpu>.csv` (and `types/`, `rows/`, `tile/`): one [`bench::Row`] per measurement |
//! | [`rows`] | the row sums' conventions in those rows (`plots/data/rows/`) |
//! | [`dl`] | `plots/data/dl/<gpu>.csv` (+ `-peers`, `-peers-refused`): the deep-learning reductions, ours and the peers' |
//! | [`operators`] | `plots/data/operators/<gpu>.csv` and `-peers.csv`: the operators of chapter 16 (one [`operators::OpRow`] each) |
//! | [`tile`] | the tile languages' whole-array sums (`plots/data/tile/`) |
//! | [`accuracy`] | `plots/data/accuracy/<gpu>.csv` and `accuracy/conditioning/<gpu>.csv` |
//! | [`determinism`] | `plots/data/determinism/<gpu>.csv`, and the level each kernel reaches |
//! | [`allreduce`] | `plots/data/nccl/<gpu>-x<count>[-<algorithm>].csv`, and the bus-bandwidth formulas |
//! | [`nccl_model`] | no file: the latency–bandwidth model fitted to the all-reduce runs |
//! | [`rank_totals`] | `plots/data/ranks/*.csv`: one input's totals on 1, 2, 4 and 8 GPUs (CPU and GPU) |
//! | [`mistakes`] | `plots/data/mistakes/<gpu>.csv`: what each mistake did |
//! | [`exercises`] | `book/generated/exercises.md`: the checker's tally on a GPU |
//! | [`experiments`] | `plots/data/experiments/<gpu>.csv`: one change to a kernel, timed alone (CuPy) |
//! | [`ncu`] | `plots/data/ncu/<kernel>.csv`: Nsight Compute's raw metrics of one launch |
//! | [`sass`] | `plots/data/sass/<arch>/<entry>.sass`: the machine code NVRTC writes |
//! | [`machine`] | the header every results file starts with |
//! | [`summary`] | median, minimum and maximum of repeated timings |

pub mod accuracy;
pub mod allreduce;
pub mod bench;
pub mod csv;
pub mod determinism;
pub mod dl;
pub mod exercises;
pub mod experiments;
pub mod machine;
pub mod mistakes;
pub mod ncu;
pub mod nccl_model;
pub mod operators;
pub mod rank_totals;
pub mod registers;
pub mod rows;
pub mod sass;
pub mod summary;
pub mod tile;

pub use machine::{slug, today, Machine};
pub use summary::Summary;

use std::path::{Path, PathBuf};

/// Where the committed files (`book/`, `plots/`, `kernels/`) are, for tests and tools: the
/// crate's folder when it holds the book, else the working directory (a test binary run from a
/// copy of the tree, as the GPU bundle runs them, is not where it was built).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if manifest.join("book.toml").is_file() {
        manifest
    } else {
        PathBuf::from(".")
    }
}

/// The file that names the GPU the book shows: `plots/data/book-gpu.txt`, one slug.
pub const BOOK_GPU_FILE: &str = "book-gpu.txt";

/// The slug of the GPU the book shows, from `data_dir/book-gpu.txt` (the benchmark writes it);
/// `None` where there is no such file.
pub fn book_gpu_slug(data_dir: &Path) -> Option<String> {
    std::fs::read_to_string(data_dir.join(BOOK_GPU_FILE)).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Every `*.csv` directly in `dir`, sorted by name; none where `dir` does not exist.
pub fn csv_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "csv")).collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_files_are_found_and_name_the_book_gpu() {
        let root = repo_root();
        assert!(root.join("book.toml").is_file(), "{}", root.display());
        assert_eq!(book_gpu_slug(&root.join("plots/data")).as_deref(), Some("nvidia-h200"));
        assert!(csv_files(&root.join("plots/data/mistakes")).iter().all(|p| p.extension().unwrap() == "csv"));
        assert!(csv_files(Path::new("/no/such/folder")).is_empty());
    }
}
