//! Measurements on the GPU: the benchmark of every kernel, and the accuracy experiment.

pub mod accuracy;
pub mod bench;
