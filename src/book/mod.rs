//! The book's output, drawn from the records under `plots/data/` with no GPU: Markdown tables
//! (`tables`, and each experiment's chapter file), charts (`plots`), addressing diagrams and
//! figures, and the call that redraws them all (`render`). Reads [`crate::records`] and the
//! kernel registry; never an experiment.

pub mod accuracy;
pub mod allreduce;
pub mod determinism;
pub mod diagrams;
pub mod figures;
pub mod mistakes;
pub mod plots;
pub mod render;
pub mod review;
pub mod rows;
pub mod runs;
pub mod sanitizer;
pub mod tables;
pub mod tile;
