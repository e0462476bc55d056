//! The kernels: the registry of every kernel file, the host's launch plans, and the reducers
//! that launch them (whole arrays and rows); and the catalogue of the broken ones ([`broken`]).
//! Uses the runtime and the records' types; knows nothing of benchmarks or the book.

pub mod broken;
mod launch_rules;
mod registry;
pub mod dl;
pub mod dispatch;
pub mod plan;
pub mod reducer;
pub mod ops;
mod copy_shapes;
mod read_only_shapes;
pub mod rows;
mod source;

pub use copy_shapes::*;
pub use read_only_shapes::*;
pub use registry::*;
pub use source::{spliced_source, HEADERS};
