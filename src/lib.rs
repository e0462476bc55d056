//! # GPU parallel reduction, executable
//!
//! The library behind the book: open the GPU ([`Gpu`]), pick a kernel from the registry
//! ([`kernels`]), and sum with it ([`Reducer`]). Kernels are CUDA C++ files under `kernels/`,
//! embedded in the binary and compiled by NVRTC for the GPU in hand, once per process.
//!
//! ```no_run
//! use reduction::{data, Gpu, Reducer};
//! let gpu = Gpu::open()?;
//! let xs = data::random_i32(1 << 20, 7);
//! let mut reducer = Reducer::<i32>::new(&gpu, "reduce1", 256)?;
//! assert_eq!(reducer.sum_host(&xs)? as i64, data::exact_sum_i32(&xs));
//! # Ok::<(), reduction::Error>(())
//! ```

// The layers, each using only those below it (`tests/layers.rs` checks it from the `use` lines):
//
//   cli (src/cli/, run by src/main.rs)
//   book                                 draws the chapters' tables and charts; never opens a GPU
//   measure, mistakes, multigpu, exercises   the experiments: run on the GPU, write records
//   check                                inputs, references, planted bugs
//   kernels                              the registry, the planner, the reducers
//   records, child                       results files and their arithmetic; child processes
//   runtime                              the GPU, NVRTC, errors, timing
//
// The book and the experiments meet only in records: neither imports the other.
pub mod book;
pub mod check;
pub mod child;
pub mod exercises;
pub mod kernels;
pub mod measure;
pub mod mistakes;
pub mod multigpu;
pub mod records;
pub mod runtime;

// Short paths for the library readers and chapters call most: the runtime, the kernels and the
// checks.
pub use check::{data, mutants};
pub use kernels::{plan, reducer, rows};
pub use runtime::{arch, device_memory, element, error, gpu, limits, nvrtc, timing};

pub use element::{Dtype, Element};
pub use error::{Error, Result};
pub use gpu::{DeviceInfo, Gpu};
pub use kernels::ops::{reduce, reduce_rows, Op, OpReducer, Value};
pub use reducer::{sum, Reducer};
pub use rows::{row_sums, RowLayout, RowReducer};
