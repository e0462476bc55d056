//! The generators of `book/generated/`, grouped by the chapter that includes what they write.
//! Each is a function of the loaded data ([`crate::book::context::Context`]) or of the rows in
//! it, returning the file's text; [`crate::book::manifest`] names the file each one writes.

pub mod accuracy;
pub mod benchmark;
pub mod classic;
pub mod common;
pub mod determinism;
pub mod dl;
pub mod dl_goal;
pub mod dl_limits;
pub mod dl_norms;
pub mod entry;
pub mod entry_ncu;
pub mod entry_scratch;
pub mod harris;
pub mod introduction;
pub mod mistakes;
pub mod modern;
pub mod multigpu;
pub mod operators;
pub mod rows;
pub mod rows_short;
pub mod sanitizers;
pub mod tile;
pub mod turns;
pub mod vec_switches;
#[cfg(test)]
mod tests;
