//! The common mistakes of the last part of the book, as a catalogue: every mistake by number,
//! the broken kernel or broken launch it is, what catches it ([`catalogue`]), and what a recorded
//! run of it did, in words ([`describe`]). The broken kernels (`kernels/broken/`) are a registry
//! of their own, never in [`crate::kernels::all`], so never tested for correctness nor
//! benchmarked. The catalogue is data that both the experiment (`mistakes`, which runs
//! each mistake in a child process) and the chapter's tables (`book::mistakes`) read.

pub mod catalogue;
pub mod describe;

pub use catalogue::{all, find, kernel_files, kernel_spec, run_order, sanitizer_command, sanitizer_log, unknown, Kind, Mistake, SharedMemory};
pub use describe::what_it_did;
