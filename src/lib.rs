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

// The layers, each using only those below it: the command line (src/cli/, run by src/main.rs) uses the
// experiments (measure, mistakes, multigpu) and the book's output (book), which use the
// kernels and checks, which use the runtime. The book's output never opens a GPU.
pub mod book;
pub mod check;
pub mod exercises;
pub mod kernels;
pub mod measure;
pub mod mistakes;
pub mod multigpu;
pub mod runtime;

// Short paths for the modules readers and chapters use most.
pub use book::{diagrams, plots, render, results, tables};
pub use check::{data, mutants};
pub use kernels::{plan, reducer, rows};
pub use measure::{accuracy, bench};
pub use mistakes::guard;
pub use multigpu::{allreduce, nccl};
pub use runtime::{arch, device_memory, element, error, gpu, limits, nvrtc};

pub use element::{Dtype, Element};
pub use error::{Error, Result};
pub use gpu::{DeviceInfo, Gpu};
pub use reducer::Reducer;
