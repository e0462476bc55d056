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

pub mod accuracy;
pub mod allreduce;
pub mod bench;
pub mod data;
pub mod diagrams;
pub mod element;
pub mod error;
pub mod gpu;
pub mod guard;
pub mod kernels;
pub mod limits;
pub mod mistakes;
pub mod multigpu;
pub mod mutants;
pub mod nccl;
pub mod nvrtc;
pub mod plan;
pub mod plots;
pub mod render;
pub mod reducer;
pub mod results;
pub mod rows;
pub mod tables;

pub use element::{Dtype, Element};
pub use error::{Error, Result};
pub use gpu::{DeviceInfo, Gpu};
pub use reducer::Reducer;
