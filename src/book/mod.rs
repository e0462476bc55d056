//! The book's output, drawn from measured data with no GPU: results files (`csv_file`, the
//! benchmark's `results`, `accuracy`'s), Markdown tables (`tables`, and the row sums' in `rows`),
//! charts (`plots`), addressing diagrams, and the call that redraws them all (`render`).

pub mod accuracy;
pub mod determinism;
pub mod allreduce;
pub mod csv_file;
pub mod diagrams;
pub mod figures;
pub mod mistakes;
pub mod plots;
pub mod render;
pub mod results;
pub mod review;
pub mod sanitizer;
pub mod rows;
pub mod runs;
pub mod tables;
pub mod tile;
