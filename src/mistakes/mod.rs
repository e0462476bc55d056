//! The common mistakes of the last part of the book: broken kernels (under `kernels/broken/`)
//! and broken host code, each run on the GPU in a child process under a deadline, so that a
//! hang, a fault or a dead CUDA context never reaches the process that asked.
//!
//! - [`catalogue`]: the mistakes, by number ([`all`]), and the broken kernels ([`kernel_files`]:
//!   a registry of their own, never in [`crate::kernels::all`], so never tested for correctness
//!   nor benchmarked).
//! - [`child`]: what a child does ([`run_in_process`], and `reduction mistake NAME`, which
//!   compute-sanitizer wraps); [`run_child_if_asked`] is the hook at the top of `main` of every
//!   binary that spawns children. [`experiments`]: the four kinds of run a child can do.
//! - [`supervisor`]: a child process under a deadline; [`protocol`]: the lines a child prints
//!   and how the parent reads them (together: [`guard`]).
//! - [`verdict`]: the parent's side, [`run_guarded`], and [`Mistake::verdict`], what the tests
//!   and `reduction mistakes` expect of each.
//! - [`records`]: what was observed, as `plots/data/mistakes/<gpu>.csv`; [`describe`]: in words.
//!   The chapter's tables are drawn from that file by [`crate::book::mistakes`].

pub mod catalogue;
pub mod child;
pub mod describe;
pub mod experiments;
pub mod protocol;
pub mod records;
pub mod supervisor;
pub mod verdict;

/// The child-process machinery under one name: the [`supervisor`] and the [`protocol`].
pub mod guard {
    pub use super::protocol::*;
    pub use super::supervisor::*;
}

pub use catalogue::{all, find, kernel_files, kernel_spec, run_order, sanitizer_command, sanitizer_log, unknown, Kind, Mistake, RunOptions, SharedMemory};
pub use child::{run_child_if_asked, run_in_process};
pub use describe::what_it_did;
pub use records::{header, parse_records, read_records, record_path, write_records, Recorded, Records};
pub use verdict::{parent_still_sums, run_guarded};
// The chapter's tables, drawn by the book layer; here too for the command line.
pub use crate::book::mistakes::{book_records, records_dir, sentence_markdown, table_markdown, write_mistakes_table, MEASURE_COMMAND, TABLE_COMMAND};

/// Environment variable that makes a binary a mistake's child: the mistake's name.
pub const CHILD_ENV: &str = "REDUCTION_MISTAKE";
/// The child's input length, run count and seed.
pub const CHILD_N_ENV: &str = "REDUCTION_MISTAKE_N";
pub const CHILD_RUNS_ENV: &str = "REDUCTION_MISTAKE_RUNS";
pub const CHILD_SEED_ENV: &str = "REDUCTION_MISTAKE_SEED";
/// Where a GPU run records what it observed: a CSV file, or a directory for `<gpu-slug>.csv`.
pub const RECORD_ENV: &str = "MISTAKES_RECORD";
