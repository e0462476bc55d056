//! The common mistakes of the last part of the book, run: each broken kernel or broken host code
//! of the catalogue ([`crate::kernels::broken`]) on the GPU in a child process under a deadline
//! ([`crate::child`]), so that a hang, a fault or a dead CUDA context never reaches the process
//! that asked.
//!
//! - [`child`]: what a child does ([`run_in_process`], and `reduction mistake NAME`, which
//!   compute-sanitizer wraps); [`CHILD`] is its [`crate::child::Role`]. [`experiments`]: the four
//!   kinds of run a child can do, with [`options`] for one run.
//! - [`report`]: what the child reports, what the parent observed ([`Observation`]), and the row
//!   of the results file it becomes ([`crate::records::mistakes`]).
//! - [`verdict`]: the parent's side, [`run_guarded`], and [`Mistake::verdict`], what the tests
//!   and `reduction mistakes` expect of each.
//!
//! The chapter's tables are drawn from the recorded run by `book::mistakes`, which reads the
//! catalogue and the records, not this module.

pub mod child;
pub mod experiments;
pub mod options;
pub mod report;
pub mod verdict;

pub use crate::kernels::broken::{all, find, kernel_files, kernel_spec, run_order, sanitizer_command, sanitizer_log, unknown, what_it_did, Kind, Mistake, SharedMemory};
pub use crate::records::mistakes::{header, parse_records, read_records, record_path, write_records, Class, CudaCode, Recorded, Records};
pub use child::{run_in_process, CHILD};
pub use options::RunOptions;
pub use report::{classify, Observation, Outcome, Report};
pub use verdict::{parent_still_sums, run_guarded};

/// Environment variable that makes a binary a mistake's child: the mistake's name.
pub const CHILD_ENV: &str = "REDUCTION_MISTAKE";
/// The child's input length, run count and seed.
pub const CHILD_N_ENV: &str = "REDUCTION_MISTAKE_N";
pub const CHILD_RUNS_ENV: &str = "REDUCTION_MISTAKE_RUNS";
pub const CHILD_SEED_ENV: &str = "REDUCTION_MISTAKE_SEED";
/// Where a GPU run records what it observed: a CSV file, or a directory for `<gpu-slug>.csv`.
pub const RECORD_ENV: &str = "MISTAKES_RECORD";
