//! Exercises: kernels the reader writes, checked on their GPU.
//!
//! Each exercise closes a chapter: a stub under `kernels/exercises/` with the kernel's
//! signature and a `TODO(exercise)`, a reference solution under `solutions/`, and near misses
//! (the solution with one classic mistake) that the checker must reject. `reduction exercise N`
//! compiles the reader's file with NVRTC (errors name their file and line), runs it in a child
//! process under a deadline on hidden inputs ([`cases`]), and reports the first failing case,
//! what was expected, what came back and a hint; a solved exercise is timed beside the book's
//! kernel. `tests/exercises.rs` proves on a GPU that every solution passes and every stub and
//! near miss fails.
//!
//! - [`catalogue`]: the exercises and their near misses.
//! - [`cases`]: the hidden inputs and the diagnosis of a wrong result (pure).
//! - [`launch`]: the grid of each layout, and the launches (the host chooses the grid);
//!   [`fused`]: the two deep-learning exercises' own cases, launches and checks.
//! - [`child`]: the child process (its [`crate::child::Role`] is [`CHILD`]); [`check`](mod@check): the
//!   parent; [`report`]: what the child reports, and the verdict in words.
//! - [`fence`]: the source check no single-GPU test can replace (a last block's fence, pure).
//! - [`pace`]: "too slow" or "hung" for a kernel killed at the deadline, from its times (pure).

pub mod cases;
pub mod catalogue;
pub mod check;
pub mod child;
pub mod fence;
pub mod fused;
pub mod pace;
pub mod launch;
pub mod operators;
pub mod report;

pub use catalogue::{all, find, CaughtBy, Exercise, NearMiss, TODO_MARKER};
pub use check::{check, compile, Options, Which};
pub use child::CHILD;
pub use report::Verdict;

/// Environment variables that make a binary an exercise's child, and what it runs.
pub const CHILD_ENV: &str = "REDUCTION_EXERCISE";
pub const FILE_ENV: &str = "REDUCTION_EXERCISE_FILE";
pub const SOURCE_ENV: &str = "REDUCTION_EXERCISE_SOURCE";
pub const SEED_ENV: &str = "REDUCTION_EXERCISE_SEED";
pub const QUICK_ENV: &str = "REDUCTION_EXERCISE_QUICK";
pub const TIME_ENV: &str = "REDUCTION_EXERCISE_TIME";
/// The line a child prints before each case, so that a hang can be named.
pub const CASE_LINE: &str = "EXERCISE-CASE";
/// The line a child prints after each case it answered: `EXERCISE-CASE-DONE <n> <seconds>`, the
/// kernel's time, so that a kill at the deadline can be told "too slow" or "hung" ([`pace`]).
pub const CASE_DONE_LINE: &str = "EXERCISE-CASE-DONE";
