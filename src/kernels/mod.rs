//! The kernels: the registry of every kernel file, the host's launch plans, and the reducers
//! that launch them (whole arrays and rows). Uses the runtime; knows nothing of benchmarks or
//! the book.

mod registry;
pub mod dispatch;
pub mod plan;
pub mod reducer;
pub mod rows;

pub use registry::*;
