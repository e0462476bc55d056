//! The runtime: the GPU in hand, NVRTC, the element types, errors, what fits in memory, and how
//! GPU time is measured. Nothing here knows a kernel of the book.

pub mod arch;
pub mod device_memory;
pub mod element;
pub mod error;
pub mod gpu;
pub mod limits;
pub mod nvrtc;
pub mod timing;
